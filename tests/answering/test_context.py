"""What a candidate sentence says beyond the question (Sudachi, no model)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from shirabe.answering import mentions
from shirabe.answering.asking import needs
from shirabe.answering.context import (
    Candidate,
    another_item,
    another_kind,
    echoes,
    lacking,
    line,
    restates,
    shortened,
)
from shirabe.answering.fit import answer_kind
from shirabe.records import Chunk, Hit, Locator
from shirabe.retrieval.query import Query
from shirabe.tokenizers.sudachi import SudachiTokenizer


class NoVectors:
    name = "none"
    dim = 1

    def embed_query(self, text: str) -> np.ndarray:
        raise AssertionError("no vector is needed")


@pytest.fixture(scope="module")
def tokenizer() -> SudachiTokenizer:
    return SudachiTokenizer()


@pytest.mark.parametrize(
    ("check", "question", "sentence", "says_no_more"),
    [
        # a reason that only says the question again
        (
            restates,
            "INC-2024-0002でフロアスイッチの電源ユニットが故障したのはなぜですか？",
            "原因：フロアスイッチの電源ユニットの故障。",
            True,
        ),
        (
            restates,
            "INC-2024-0002で会議システムがつながらなかったのはなぜですか？",
            "原因：フロアスイッチの電源ユニットの故障。",
            False,
        ),
        (
            restates,
            "証明書の期限切れに誰も気づかなかったのはなぜですか？",
            "更新担当者の異動時に引き継ぎが漏れたため。",
            False,
        ),
        (restates, "なぜ故障したのですか？", "故障のため。", True),
        # a sentence that only echoes the question it matches best
        (
            echoes,
            "梅雨の期間中ほとんど雨が降らない場合をなんという？",
            "梅雨の期間中ほとんど雨が降らない場合がある。",
            True,
        ),
        (
            echoes,
            "拍の周期の長短によって、音楽の速度を何と呼ぶ?",
            "拍の周期の長短によって、音楽の速度を感じる。",
            True,
        ),
        (
            echoes,
            "梅雨の期間中ほとんど雨が降らない場合をなんという？",
            "このような梅雨のことを空梅雨という。",
            False,
        ),
        (
            echoes,
            "有給休暇の申請方法は？",
            "有給休暇は勤怠システムから3営業日前までに申請する。",
            False,
        ),
    ],
)
def test_a_sentence_that_says_no_more_than_the_question(
    tokenizer: SudachiTokenizer,
    check: Callable[[Query, str], bool],
    question: str,
    sentence: str,
    says_no_more: bool,
) -> None:
    query = Query(question, tokenizer=tokenizer, embedder=NoVectors())  # type: ignore[arg-type]
    assert check(query, sentence) is says_no_more


@pytest.mark.parametrize(
    ("question", "sentence", "missing"),
    [
        # the passage names 宿泊費 and leaves 出張 to the other articles of the same document
        ("一般社員の出張の宿泊費はいくらですか？", "一般社員は1泊10,000円とする。", []),
        # the car park of another place, though the document names 東出張所 elsewhere
        ("東出張所の駐車場は何台ですか？", "総合運動公園の駐車場は320台です。", ["東", "出張所"]),
    ],
)
def test_what_the_asked_thing_belongs_to_may_be_named_elsewhere_in_its_document(
    tokenizer: SudachiTokenizer, question: str, sentence: str, missing: list[str]
) -> None:
    query = Query(question, tokenizer=tokenizer, embedder=NoVectors())  # type: ignore[arg-type]
    kind = answer_kind(question)
    assert kind is not None
    need = needs(query.words(), kind)
    hits = [
        Hit(Chunk(text=sentence, source="規程.md", heading_path=("宿泊費",)), 1.0),
        Hit(Chunk(text="出張の手続きと東出張所の案内。", source="規程.md"), 0.5),
    ]
    candidate = Candidate(0, 0, sentence, 0.0, None)
    assert lacking(query, hits, candidate, need.terms, need) == missing


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        # one noun of a long condition may be said otherwise (内線 is a 電話's)
        ("保育所の入所について保育課に電話で聞くときの内線番号は何番ですか？", []),
        # two are too many
        ("保育所の入所について福祉課に電話で聞くときの内線番号は何番ですか？", ["福祉課", "電話"]),
        # a short condition is named whole
        ("東京に出張したときの内線番号は何番ですか？", ["東京"]),
    ],
)
def test_a_long_condition_may_leave_one_noun_to_other_words(
    tokenizer: SudachiTokenizer, question: str, missing: list[str]
) -> None:
    query = Query(question, tokenizer=tokenizer, embedder=NoVectors())  # type: ignore[arg-type]
    kind = answer_kind(question)
    assert kind is not None
    need = needs(query.words(), kind)
    row = "課名: 保育課\n内線: 2270\n主な取扱い: 保育所の入所、出張の精算"
    hits = [Hit(Chunk(text=row, source="窓口一覧.csv"), 1.0)]
    candidate = Candidate(0, 1, "内線: 2270", 0.0, None)
    assert lacking(query, hits, candidate, need.terms, need) == missing


@pytest.mark.parametrize(
    ("sentence", "passage", "found"),
    [
        # the sentence tells of the other filters
        (
            "集じんフィルターを交換してください。",
            "集じんフィルターを交換してください。",
            ["加湿フィルター"],
        ),
        # a sentence of the filter alone, in a passage of the other filters only
        (
            "交換するまでの間も運転はできます。",
            "集じんフィルターの交換時期です。交換するまでの間も運転はできます。",
            ["加湿フィルター"],
        ),
        # the same sentence where the passage names the asked filter too
        (
            "交換するまでの間も運転はできます。",
            "加湿フィルターの交換時期です。交換するまでの間も運転はできます。",
            [],
        ),
        # a compound the question names itself is no other kind
        ("予防注射は集合注射で受けられます。", "予防注射は集合注射で受けられます。", []),
    ],
)
def test_another_kind_of_the_thing_asked(
    tokenizer: SudachiTokenizer, sentence: str, passage: str, found: list[str]
) -> None:
    question = "集合注射の加湿フィルターと予防注射はいくらですか？"
    query = Query(question, tokenizer=tokenizer, embedder=NoVectors())  # type: ignore[arg-type]
    whole = [("加湿フィルター", "フィルター"), ("予防注射", "注射")]
    hits = [Hit(Chunk(text=passage, source="説明書.md"), 1.0)]
    candidate = Candidate(0, 0, sentence, 0.0, None)
    assert another_kind(query, hits, candidate, whole, {}) == found


@pytest.mark.parametrize(
    ("short", "long", "abbreviates"),
    [
        ("国保", "国民健康保険", True),
        ("年休", "年次有給休暇", True),
        ("年休", "年末年始休業", True),  # the letters fit: the dictionary tells them apart
        ("電気代", "電気料金", False),
        ("保険", "国民健康保険", False),  # not from its first character
        ("国民健康保険", "国保", False),
    ],
)
def test_a_short_form_keeps_the_long_forms_characters_in_order(
    short: str, long: str, abbreviates: bool
) -> None:
    assert mentions.abbreviates(short, long) is abbreviates


@pytest.mark.parametrize(
    ("terms", "said", "missing"),
    [
        (["国保", "保険料"], "国民健康保険の保険料は年10回に分けて納めます。", ["保険料"]),
        (["国民健康保険"], "国保係（1階8番窓口）", []),
        (["年休"], "年次有給休暇は3営業日前までに申請する。", []),
        (["年休"], "年末年始休業は12月29日から1月3日までです。", ["年休"]),  # no synonym
        (["社員"], "職員は名札を着用する。", ["社員"]),  # synonyms, but no shortening
    ],
)
def test_a_term_written_in_its_long_or_short_form(
    tokenizer: SudachiTokenizer, terms: list[str], said: str, missing: list[str]
) -> None:
    query = Query("質問", tokenizer=tokenizer, embedder=NoVectors())  # type: ignore[arg-type]
    assert shortened(query, terms, said) == missing


BENEFITS = (
    "主な給付\n・高額療養費\n　1か月の医療費の自己負担額が限度額を超えた場合に、超えた分を支給"
    "します。対象になる世帯には、診療月のおおむね3か月後に申請書をお送りします。\n"
    "・葬祭費　5万円\n　葬祭を行った方に支給します。申請期限は葬祭を行った日の翌日から2年です。\n"
)


@pytest.mark.parametrize(
    ("question", "passage", "sentence", "item"),
    [
        (
            "高額療養費はいつまでに申請しますか？",
            BENEFITS,
            "申請期限は葬祭を行った日の翌日から2年です。",
            ["高額療養費"],
        ),
        (
            "葬祭費はいつまでに申請しますか？",
            BENEFITS,
            "申請期限は葬祭を行った日の翌日から2年です。",
            [],
        ),
        (
            "高額療養費はいつ届きますか？",
            BENEFITS,
            "対象になる世帯には、診療月のおおむね3か月後に申請書をお送りします。",
            [],
        ),
        (
            "申請期限はいつですか？",
            BENEFITS,
            "申請期限は葬祭を行った日の翌日から2年です。",
            [],
        ),  # no item named
        (
            "高額療養費の申請期限は？",
            "・高額療養費\n申請期限は2年です。",
            "申請期限は2年です。",
            [],
        ),  # one item
    ],
)
def test_a_sentence_under_another_item_of_a_list(
    question: str, passage: str, sentence: str, item: list[str]
) -> None:
    assert another_item(question, passage, sentence) == item


FIELD = "概要: 認証サーバーの時刻ずれでワンタイムコードが認証されない"
RECORD = f"管理番号: INC-2025-0005\n発生日: 2025/3/24\n{FIELD}"


@pytest.mark.parametrize(
    ("locator", "named"),
    [
        ({"row": 14}, True),  # a record: its first field names it
        ({}, False),  # prose: only its headings
    ],
)
def test_a_field_of_a_record_is_read_with_the_record_key(locator: Locator, named: bool) -> None:
    chunk = Chunk(text=RECORD, source="障害一覧.csv", heading_path=("障害一覧",), locator=locator)
    said = line([Hit(chunk, 1.0)], Candidate(0, 2, FIELD, 1.0, None))
    assert said.startswith(FIELD) and said.endswith("障害一覧")
    assert ("INC-2025-0005" in said) is named
