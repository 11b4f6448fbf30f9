"""End to end on the sample corpus with the real model: IDs, paraphrases, refusals."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from shirabe.answering.refusal import REFUSAL_TEXT
from shirabe.engine import Shirabe
from shirabe.records import Filters

pytestmark = pytest.mark.slow


def name(path: str) -> str:
    return Path(path).name


def test_id_question_is_answered_through_bm25(sample_app: Shirabe) -> None:
    answer = sample_app.ask("INC-2024-0004の原因は何ですか？")
    assert not answer.refused
    assert "証明書" in answer.text
    assert name(answer.hits[0].chunk.source) == "障害記録.md"
    [first, *_] = answer.citations
    assert name(first.source) == "障害記録.md"
    assert "INC-2024-0004" in first.label()
    assert "有効期限切れ" in answer.text
    [cited] = [h for h in answer.hits if h.chunk_id == first.chunk_id]
    assert cited.ranks["bm25_sentence"] == 1  # the sentence that holds the answer


def test_error_code_kept_whole(sample_app: Shirabe) -> None:
    hits = sample_app.search("ERR-105", k=3)
    assert any("ERR-105" in h.chunk.heading for h in hits)


def test_paraphrase_is_found_through_vectors(sample_app: Shirabe) -> None:
    # the rule book says 宿泊費 and 課長 in a table; the question says ホテル代
    answer = sample_app.ask("課長が出張で泊まるホテル代はいくらまで会社が出してくれますか？")
    assert not answer.refused
    top = answer.hits[0]
    assert "宿泊費" in top.chunk.heading
    assert top.ranks["dense"] == 1
    assert top.ranks["bm25"] > top.ranks["dense"]
    assert "12,000" in unicodedata.normalize("NFKC", answer.text)


def test_unanswerable_question_is_refused(sample_app: Shirabe) -> None:
    for question in ("社長の誕生日はいつですか？", "INC-2024-0009の原因は何ですか？"):
        answer = sample_app.ask(question)
        assert answer.refused, answer.text
        assert answer.text == REFUSAL_TEXT
        assert answer.citations == []


def test_aggregate_question_finds_the_section_summary(sample_app: Shirabe) -> None:
    hits = sample_app.search("AQ-300のエラーコードは何種類ありますか？", k=5)
    summaries = [h for h in hits if h.chunk.is_summary]
    assert summaries
    assert "8件" in summaries[0].chunk.text


def test_full_width_numbers_and_units(sample_app: Shirabe) -> None:
    answer = sample_app.ask("詰め替え用には何mL入っていますか")
    assert not answer.refused
    assert "1,200" in answer.text.replace("１，２００", "1,200")


def test_heading_path_citations(sample_app: Shirabe) -> None:
    answer = sample_app.ask("有給休暇の申請方法は？")
    assert not answer.refused
    assert "ミナモ勤怠" in answer.text
    labels = [c.label() for c in answer.citations]
    assert any("休暇規程.md › " in label and "申請方法" in label for label in labels)


def test_path_filter_applies_before_ranking(sample_app: Shirabe) -> None:
    hits = sample_app.search("申請", k=5, filters=Filters(path_glob="経理/*"))
    assert hits
    assert all("/経理/" in h.chunk.source for h in hits)


def test_mmr_diversifies_without_losing_the_best_hit(sample_app: Shirabe) -> None:
    question = "ERR-105が表示されたらどうすればいいですか？"
    plain = sample_app.search(question, k=5)
    settings = sample_app.settings.updated(retrieval={"mmr_lambda": 0.3})
    diverse = Shirabe(settings, embedder=sample_app.embedder).search(question, k=5)
    assert diverse[0].chunk_id == plain[0].chunk_id
    assert len({h.chunk_id for h in diverse}) == 5
    assert [h.chunk_id for h in diverse] != [h.chunk_id for h in plain]


@pytest.mark.parametrize(
    ("question", "file", "locator", "expected"),
    [
        ("INC-2025-0005で影響を受けたのは何人ですか？", "障害一覧.csv", {"row": 14}, "約210名"),
        (
            "ヘルプデスク委託のアカウントの利用期限はいつまでですか？",
            "利用者台帳.xlsx",
            {"sheet": "利用者一覧"},
            "2025年9月30日",
        ),
        ("AQ-300の開発コードネームは何でしたか？", "AQ-300_製品紹介.pptx", {"slide": 2}, "しずく"),
        ("経費精算の領収書画像は何年保存しますか？", "文書管理規程.docx", {}, "7年"),
        (
            "ミナモリンクはAndroidのどのバージョンから使えますか？",
            "AQ-300_かんたんガイド.pdf",
            {"page": 4},
            "Android 10",
        ),
        ("防災訓練の避難場所はどこですか？", "社内ポータル_お知らせ.html", {}, "みなと第二公園"),
    ],
)
def test_every_format_answers_with_its_locator(
    sample_app: Shirabe, question: str, file: str, locator: dict[str, object], expected: str
) -> None:
    answer = sample_app.ask(question)
    assert not answer.refused
    assert expected in answer.text
    first = answer.citations[0]
    assert name(first.source) == file
    assert locator.items() <= first.locator.items()


def test_a_row_answers_as_a_record(sample_app: Shirabe) -> None:
    answer = sample_app.ask("INC-2025-0005で影響を受けたのは何人ですか？")
    # the key field first, then the field that answers, in row order
    assert answer.text.startswith("管理番号: INC-2025-0005 / ")
    assert answer.text.index("INC-2025-0005") < answer.text.index("影響: ")
    assert [c.number for c in answer.citations] == [1]
