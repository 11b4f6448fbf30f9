"""Questions and keywords a chat model writes per passage (doc2query): what is kept of a
reply, the cache that makes them written once, and which passages get them. The model here is
a small fake that records its calls (the real model's run is in test_enrich_model.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from shirabe.errors import GeneratorError
from shirabe.indexing.enrich import MAX_CHARS, Enricher, EnrichmentCache, clean
from shirabe.llm.protocol import Message
from shirabe.records import Chunk


class Recorder:
    """A chat model that answers every passage in the expected form and counts its calls."""

    name = "fake-model"
    context_window = 4096
    max_tokens = 200

    def __init__(self) -> None:
        self.calls: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text)

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        prompt = messages[-1]["content"]
        self.calls.append(prompt)
        return "質問: 何日前までに申請しますか？\nキーワード: 有休、年休、申請期限"

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        yield self.complete(messages)

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ("質問: 申請はいつまで？\nキーワード: 有休、年休", "申請はいつまで？\n有休、年休"),
        ("以下のとおりです。\n1. 質問：申請は誰に？\n- キーワード: 承認", "申請は誰に？\n承認"),
        ("質問: <passage id=1>の内容は？", "の内容は？"),
        ("質問: 詳細は https://example.com を参照", "詳細は  を参照"),
        ("質問: 同じ\n質問: 同じ", "同じ"),
        ("答えられません。", ""),
        ("キーワード: …", ""),
        ("キーワード: 、…、…、…、", ""),
    ],
)
def test_only_the_questions_and_keywords_of_a_reply_are_kept(reply: str, kept: str) -> None:
    assert clean(reply) == kept


def test_what_is_kept_is_bounded() -> None:
    reply = "\n".join(f"質問: {'長い質問' * 40}{n}" for n in range(20))
    assert len(clean(reply)) == MAX_CHARS


def passage(text: str, *, summary: bool = False) -> Chunk:
    return Chunk(text=text, source="人事/休暇規程.md", heading_path=("休暇規程", "申請"),
                 is_summary=summary)  # fmt: skip


def test_each_passage_is_written_once_and_kept_across_runs(tmp_path: Path) -> None:
    model = Recorder()
    cache = EnrichmentCache(tmp_path / "enrichment.sqlite3")
    enricher = Enricher(model, cache)
    chunks = [
        passage("3営業日前までに申請する。"),
        passage("要約", summary=True),
        passage("上長が承認する。"),
    ]
    assert [bool(t) for t in enricher.texts(chunks)] == [True, False, True]
    assert len(model.calls) == 2  # not the summary
    assert "見出し: 休暇規程 > 申請" in model.calls[0] and "3営業日前" in model.calls[0]
    cache.close()

    again = Enricher(model, EnrichmentCache(tmp_path / "enrichment.sqlite3"))
    assert again.missing(chunks) == []
    assert again.texts(chunks)[0] == "何日前までに申請しますか？\n有休、年休、申請期限"
    assert len(model.calls) == 2  # from the cache
    changed = passage("5営業日前までに申請する。")
    assert again.missing([*chunks, changed]) == [changed]
    assert again.mean_seconds() is not None


def test_the_signature_names_the_model_and_the_prompt(tmp_path: Path) -> None:
    enricher = Enricher(Recorder(), EnrichmentCache(tmp_path / "e.sqlite3"))
    assert enricher.signature.startswith("doc2query:") and "fake-model" in enricher.signature
    moved = Chunk(text="3営業日前までに申請する。", source="x.md", heading_path=("別の見出し",))
    assert enricher.key(passage("3営業日前までに申請する。")) != enricher.key(moved)


class Failing(Recorder):
    """A model server that is down."""

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        raise GeneratorError("model server http://gpu:8000 is not answering")


def test_a_failing_model_leaves_the_passage_without_questions_and_asks_again(
    tmp_path: Path,
) -> None:
    cache = EnrichmentCache(tmp_path / "e.sqlite3")
    down = Enricher(Failing(), cache)
    chunks = [passage("3営業日前までに申請する。")]
    assert down.texts(chunks) == [""]
    assert down.failed == 1
    assert down.missing(chunks) == chunks  # nothing cached: written when the model is back
    up = Enricher(Recorder(), cache)
    assert up.texts(chunks) == ["何日前までに申請しますか？\n有休、年休、申請期限"]


def test_the_model_s_location_is_part_of_the_signature(tmp_path: Path) -> None:
    cache = EnrichmentCache(tmp_path / "e.sqlite3")
    one = Enricher(Recorder(), cache, "http://a:1234/v1")
    other = Enricher(Recorder(), cache, "http://b:1234/v1")
    assert one.signature != other.signature
    assert one.key(passage("x")) != other.key(passage("x"))
