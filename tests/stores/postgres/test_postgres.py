"""What only the PostgreSQL store has: numbered migrations, connection errors, the sample
evaluation matching the embedded store, and no silent skipping without a server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import psycopg
import pytest
from typer.testing import CliRunner

from shirabe.cli.app import app as cli
from shirabe.engine import Shirabe
from shirabe.errors import ShirabeError
from shirabe.evaluation.cases import load_cases
from shirabe.evaluation.metrics import report
from shirabe.evaluation.run import run, run_settings
from shirabe.records import Filters, ScoredId
from shirabe.settings import Settings, StoreSettings
from shirabe.stores.postgres import blocks, dense, search
from shirabe.stores.postgres.schema import MIGRATIONS, migrate, schema_version
from shirabe.stores.postgres.store import PostgresStore, redacted

from tests.stores.test_contract import DIM, K1, MODEL, B, put_file, unit
from tests.support import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

runner = CliRunner()


def test_migrations_are_numbered_and_run_once(database_url: str) -> None:
    assert schema_version(database_url) == 0
    assert migrate(database_url) == list(range(1, len(MIGRATIONS) + 1))
    assert migrate(database_url) == []
    assert schema_version(database_url) == len(MIGRATIONS)
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT version FROM shirabe_schema ORDER BY version").fetchall()
        extensions = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
    assert [r[0] for r in rows] == list(range(1, len(MIGRATIONS) + 1))
    assert "vector" in extensions
    result = runner.invoke(cli, ["migrate", "--database", database_url])
    assert result.exit_code == 0 and "up to date" in result.output


def test_a_newer_schema_or_no_server_is_a_clear_error(database_url: str) -> None:
    migrate(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO shirabe_schema (version) VALUES (%s)", (len(MIGRATIONS) + 1,))
    with pytest.raises(ShirabeError, match="newer than this shirabe"):
        PostgresStore(database_url)
    result = runner.invoke(
        cli, ["status"], env={"SHIRABE_STORE__DATABASE_URL": "postgresql://x@127.0.0.1:9/none"}
    )
    assert result.exit_code == 1
    assert "cannot connect to the database" in result.output


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://app:s3cret@db:5432/x", "postgresql://app:***@db:5432/x"),
        ("postgresql://app@db/x", "postgresql://app@db/x"),
        ("host=db user=app password=s3cret dbname=x", "host=db user=app password=*** dbname=x"),
    ],
)
def test_connection_strings_are_shown_without_passwords(url: str, shown: str) -> None:
    assert redacted(url) == shown


def test_sample_evaluation_matches_the_embedded_store(
    sample_app: Shirabe, database_url: str, tmp_path: Path
) -> None:
    cases = load_cases(ROOT / "eval" / "sample_docs.yaml")
    embedded = report(run(sample_app, cases), run_settings(sample_app))
    docs = tmp_path / "sample_docs"
    shutil.copytree(ROOT / "sample_docs", docs)
    settings = Settings(home=tmp_path / "home", store=StoreSettings(database_url=database_url))
    with Shirabe(settings, embedder=sample_app.embedder) as app:
        assert isinstance(app.store, PostgresStore)
        copied = runner.invoke(
            cli,
            ["migrate", "--database", database_url, "--embeddings-from",
             str(sample_app.settings.home), "--json"],
        )  # fmt: skip
        assert copied.exit_code == 0, copied.output
        assert json.loads(copied.output)["embeddings"] > 0
        ingested = app.ingest([docs])
        assert ingested.failures == [] and ingested.counts["added"] == len(
            sample_app.store.list_sources()
        )
        server = report(run(app, cases), run_settings(app))
    for metric in ("hit@1", "hit@3", "mrr@10", "containment", "false_refusal_rate"):
        a, b = embedded["metrics"][metric], server["metrics"][metric]
        assert abs(a - b) <= 0.005, (metric, a, b, json.dumps(server["metrics"]))


def test_a_missing_server_fails_unless_skipping_is_asked_for(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHIRABE_TEST_")}
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/stores/test_contract.py::test_binding_refuses_another_model",
    ]  # fmt: skip
    failed = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True)
    assert failed.returncode != 0
    assert "SHIRABE_TEST_DATABASE_URL is not set" in failed.stdout
    skipped = subprocess.run(
        [*command, "-rs"],
        check=False,
        cwd=ROOT,
        env=env | {"SHIRABE_TEST_SKIP_POSTGRES": "1"},
        capture_output=True,
        text=True,
    )
    assert skipped.returncode == 0, skipped.stdout[-2000:]
    assert "1 passed, 1 skipped" in skipped.stdout and "skipped on request" in skipped.stdout


def test_long_posting_lists_are_read_by_each_terms_best_postings(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past EXACT_POSTINGS, chunk BM25 takes its candidates from each term's best postings
    (its first merged blocks, and its fresh ones) and scores them exactly: with every posting
    among a term's best, the ranking is the exact one; with few, the chunk a rare term names
    still leads and every score returned is its exact score."""
    monkeypatch.setattr(blocks, "BLOCK", 4)
    store = PostgresStore(database_url, k1=K1, b=B)
    store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
    try:
        for f in range(6):  # 300 chunks: common words in every one, a rare word in one
            texts = [
                " ".join(["規程", "申請", "承認"][: 1 + (f + c) % 3] * (1 + c % 4))
                + (f" 項目{c % 7}" if c % 5 else "")
                + (" 特別休暇" if (f, c) == (3, 17) else "")
                for c in range(50)
            ]
            put_file(store, f"/d/{f}.md", texts)
        queries = [
            {"規程": 1.0, "申請": 1.0},
            {"規程": 1.0, "承認": 0.5, "項目3": 1.0},
            {"申請": 1.0, "特別休暇": 1.0, "承認": 1.0},
        ]

        def ranked(found: list[ScoredId]) -> list[tuple[float, int]]:
            """Scores summed in another order differ in the last bits: ties by id."""
            return sorted((round(-s.score, 9), s.chunk_id) for s in found)

        monkeypatch.setattr(search, "EXACT_POSTINGS", 10**9)
        exact = [store.search_lexical(q, 10) for q in queries]
        monkeypatch.setattr(search, "EXACT_POSTINGS", 0)
        monkeypatch.setattr(search, "PER_TERM", 1000)  # every posting is among the best
        assert [ranked(store.search_lexical(q, 10)) for q in queries] == [ranked(e) for e in exact]
        monkeypatch.setattr(search, "PER_TERM", 5)
        monkeypatch.setattr(search, "RESCORED", 10)
        pruned = store.search_lexical(queries[2], 10)
        assert pruned[0] == exact[2][0]  # the chunk with 特別休暇
        assert "特別休暇" in store.get_chunks([pruned[0].chunk_id])[pruned[0].chunk_id].text
        scores = {s.chunk_id: s.score for s in store.search_lexical(queries[2], 300)}
        monkeypatch.setattr(search, "EXACT_POSTINGS", 10**9)
        everything = {s.chunk_id: s.score for s in store.search_lexical(queries[2], 300)}
        assert len(pruned) == 10
        assert all(abs(everything[i] - s) < 1e-6 for i, s in scores.items())
        # under a filter, each term's best postings are read deeper (by the share it keeps)
        # and filtered after: the readable chunk with 特別休暇 still leads, none other is in
        only = Filters(path_glob="3.md")
        monkeypatch.setattr(search, "EXACT_POSTINGS", 10**9)
        exact_only = store.search_lexical(queries[2], 50, only)
        monkeypatch.setattr(search, "EXACT_POSTINGS", 0)
        filtered = store.search_lexical(queries[2], 10, only)
        chunks = store.get_chunks([s.chunk_id for s in filtered])
        assert {c.source for c in chunks.values()} == {"/d/3.md"}
        assert filtered[0] == exact_only[0] and len(filtered) >= 5
        exact_scores = {s.chunk_id: s.score for s in exact_only}
        assert all(abs(exact_scores[s.chunk_id] - s.score) < 1e-6 for s in filtered)
    finally:
        store.close()


def test_filtered_vector_search_reads_the_index_then_filters(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``exact_below``, a filter is applied to the HNSW index's nearest chunks read
    unfiltered (as many more as the filter keeps fewer), or inside the index scan when those
    would be too many or hold too few readable chunks. Every way gives the readable chunks
    nearest to the query, a full k of them (300 chunks of 8 dimensions: the index is exact)."""
    store = PostgresStore(database_url, k1=K1, b=B, hnsw=dense.HnswSearch(exact_below=0))
    store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
    try:
        vectors = {}
        for f in range(10):
            texts = [f"文書{f} 項目{c}" for c in range(30)]
            put_file(store, f"/d/{f}.md", texts, groups=(f"g{f}",), sentences=False)
            # as stored: in half precision
            vectors.update({(f"/d/{f}.md", t): unit(t).astype(np.float16) for t in texts})
        store.optimize()
        q = unit("問い合わせ")

        def nearest(groups: int, k: int) -> list[tuple[str, str]]:
            readable = [key for key in vectors if int(key[0][3]) < groups]
            return sorted(readable, key=lambda key: -float(vectors[key].astype(np.float32) @ q))[:k]

        def found(groups: int, k: int) -> list[tuple[str, str]]:
            only = Filters(groups=frozenset(f"g{g}" for g in range(groups)))
            hits = store.search_dense(q, k, only)
            chunks = store.get_chunks([h.chunk_id for h in hits])
            return [(chunks[h.chunk_id].source, chunks[h.chunk_id].text) for h in hits]

        after = dense._filtered_after
        filtered_after: list[bool] = []

        def spy(*args: object, **kwargs: object) -> list[ScoredId] | None:
            out = after(*args, **kwargs)  # type: ignore[arg-type]
            filtered_after.append(out is not None)
            return out

        monkeypatch.setattr(dense, "_filtered_after", spy)
        ways: list[dict[str, float]] = [
            {},  # read k / share × OVERSAMPLE, filter after
            {"MAX_FETCH": 20},  # too many to read: the filter goes inside the scan
            {"OVERSAMPLE": 0.2},  # too few readable among those read: inside the scan
        ]
        for way in ways:
            with monkeypatch.context() as patched:
                for name, value in way.items():
                    patched.setattr(dense, name, value)
                filtered_after.clear()
                for groups in (9, 5, 1):
                    assert found(groups, 20) == nearest(groups, 20), (way, groups)
                assert filtered_after[:2] == ([True, True] if not way else [False, False])
    finally:
        store.close()
