"""Pure pieces of the extractive answerer."""

from __future__ import annotations

import pytest

from shirabe.answering import fit
from shirabe.answering.context import Candidate
from shirabe.answering.extractive import clip, coverage
from shirabe.answering.fit import answer_kind, short_answer
from shirabe.answering.showing import (
    NAMES,
    asked_fields_first,
    companion,
    dated_first,
    may_count,
    names_someone,
    naming_first,
    summaries_last,
)
from shirabe.answering.tables import (
    clean,
    is_header,
    names_row,
    other_row,
    table_header,
    with_header,
)
from shirabe.chunking.markdown import summary_texts
from shirabe.records import Chunk, Hit
from shirabe.retrieval.query import Query
from shirabe.tokenizers.sudachi import SudachiTokenizer


@pytest.mark.parametrize(
    ("query", "sentence", "expected"),
    [
        (["有給休暇", "申請"], ["有給休暇", "申請", "方法"], 1.0),
        (["有給休暇", "申請"], ["申請"], 0.5),
        (["有給休暇", "~有給"], ["有給休暇"], 1.0 / 1.5),
        (["有給休暇", "~有給"], ["~有給"], 0.5 / 1.5),
        ([], ["申請"], 0.0),
    ],
)
def test_coverage(query: list[str], sentence: list[str], expected: float) -> None:
    assert coverage(query, sentence) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("- 原因：証明書の期限切れ。", "原因：証明書の期限切れ。"),
        ("1. 勤怠システムから申請する。", "勤怠システムから申請する。"),
        ("・宿泊費は実費。", "宿泊費は実費。"),
        ("（2）上長が承認する。", "上長が承認する。"),
        ("| 詰め替え用 | MC-1200 | 1,200mL |", "詰め替え用 / MC-1200 / 1,200mL"),
        ("2024年4月22日に発生した。", "2024年4月22日に発生した。"),
        # a plain-text table row laid out with spaces reads as 項目: 値, never glued cells
        ("部長　　　　１泊あたり１４，０００円", "部長: １泊あたり１４，０００円"),
        ("課長      1泊あたり12,000円", "課長: 1泊あたり12,000円"),
        ("第2章　旅費", "第2章 旅費"),
        ("有給休暇は  3営業日前　　までに申請する。", "有給休暇は 3営業日前 までに申請する。"),
    ],
)
def test_clean(sentence: str, expected: str) -> None:
    assert clean(sentence) == expected


def test_clip() -> None:
    assert clip("短い文。", 10) == "短い文。"
    assert clip("あいうえおかきくけこ", 5) == "あいうえ…"
    assert len(clip("あ" * 300, 150)) == 150


TABLE = """| 項目 | AQ-300（新製品） | AQ-250（従来機種） |
|---|---|---|
| 質量 | 約9.2kg | 約8.0kg |
| メーカー希望小売価格（税込） | 54,780円 | 43,780円 |"""


def test_a_table_row_is_shown_with_its_column_headers() -> None:
    row = "| メーカー希望小売価格（税込） | 54,780円 | 43,780円 |"
    header = table_header(TABLE, row)
    assert header == ["項目", "AQ-300（新製品）", "AQ-250（従来機種）"]
    assert with_header(row, header) == (
        "メーカー希望小売価格（税込） — AQ-300（新製品）: 54,780円 / AQ-250（従来機種）: 43,780円"
    )
    assert with_header("| 質量 | 約9.2kg |", ["項目", "仕様"]) == "質量: 約9.2kg"
    assert table_header(TABLE, "| 項目 | AQ-300（新製品） | AQ-250（従来機種） |") is None
    assert table_header(TABLE, "| 品番 | AQ-300 | AQ-250 |") is None  # not in the table


@pytest.mark.parametrize(
    ("question", "line", "short"),
    [
        ("重さは何kgですか？", "質量: 約9.2kg（給水タンクの水を除く）", "約9.2kgです。"),
        (
            "何日前までに申し込めば？",
            "利用日の5営業日前までに申し込んでください。",
            "5営業日前までです。",
        ),
        ("いくらですか？", "再発行手数料1,000円は翌月の給与から控除します。", "1,000円です。"),
        ("いくらですか？", "部長: 14,000円 / 課長: 12,000円", None),  # two figures need their rows
        ("どこですか？", "本社ビル3階 研修室A", None),
    ],
)
def test_the_asked_figure_alone_as_a_first_line(
    question: str, line: str, short: str | None
) -> None:
    kind = answer_kind(question)
    assert kind is not None
    assert short_answer(kind, line) == short


@pytest.mark.parametrize(
    ("cell", "question", "named"),
    [
        ("住民票の写し", "コンビニで住民票を出すと1枚いくら？", True),  # 住民 and 民票
        ("住民票記載事項証明書", "戸籍謄本を窓口でとると1通いくら？", False),
        ("所得・課税証明書", "納税証明書を1枚とると手数料はいくら？", False),  # 3 of 7 pairs
        ("3年6か月", "勤続3年6か月の社員の有給休暇は何日？", True),  # written as in the question
        ("AQF-30H（集じん）", "AQF-30Hはいくら？", True),  # a code
        ("専用除菌液「ミナモクリア」詰め替え用", "詰め替え用はいくら？", True),  # its last word
        ("専用除菌液「ミナモクリア」本体ボトル", "お試し用ボトルはいくら？", False),
        ("B", "手数料が800円の区分は何cm？", False),
        ("65歳以上の方", "70歳の父がプールを使うといくら？", True),  # in the range
        ("65歳以上の方", "60歳の母がプールを使うといくら？", False),
        ("0歳～3歳未満", "2歳の子の手当はいくら？", True),
        ("0歳～3歳未満", "3歳の子の手当はいくら？", False),  # 未満 excludes 3
        ("6人以下", "5人で使うといくら？", True),
        ("6人以下", "5歳の子はいくら？", False),  # another unit
        ("6か月", "入社して6か月たつと有給休暇は何日？", True),
        ("6年6か月以上", "入社して6か月たつと有給休暇は何日？", False),  # 6年6か月 is one figure
        ("配偶者の出産", "妻が出産するとき、特別休暇は何日もらえますか？", True),  # 妻: 配偶者
        ("子の結婚", "妻が出産するとき、特別休暇は何日もらえますか？", False),
        (  # a case told in words, half of its character pairs in the question
            "ほかの市区町村からかすみ野市に引っ越してきたとき",
            "よその市からかすみ野市に引っ越してきました。何日のうちに届けを出せば？",
            True,
        ),
        (  # kana pairs alone (から, してきたとき) do not name a case
            "市外から転入してきたとき",
            "海外から帰国してきたときの手続きは？",
            False,
        ),
        (
            "かすみ野市からほかの市区町村へ引っ越すとき",
            "よその市からかすみ野市に引っ越してきました。何日のうちに届けを出せば？",
            False,
        ),
    ],
)
def test_a_question_names_a_table_cell(cell: str, question: str, named: bool) -> None:
    assert names_row(cell, question) is named


FEES = """## 交付手数料

| 証明書 | 手数料 |
| --- | --- |
| 住民票の写し | 300円 |
| 住民票記載事項証明書 | 300円 |
| 本体の質量 | 約9.2kg |
"""


@pytest.mark.parametrize(
    ("question", "focus", "row", "other"),
    [
        ("戸籍謄本は1通いくら？", [], "| 住民票記載事項証明書 | 300円 |", "住民票記載事項証明書"),
        ("住民票は1通いくら？", [], "| 住民票の写し | 300円 |", None),
        ("住民票の写しの郵送料はいくら？", ["郵送料"], "| 住民票の写し | 300円 |", "住民票の写し"),
        ("住民票の写しの手数料はいくら？", ["手数料"], "| 住民票の写し | 300円 |", None),  # header
        ("重さは何kg？", [], "| 本体の質量 | 約9.2kg |", None),  # a key naming the kind of fact
        ("戸籍謄本は1通いくら？", [], "住民票の写しは300円です。", None),  # no table row
    ],
)
def test_a_row_about_something_else(
    question: str, focus: list[str], row: str, other: str | None
) -> None:
    kind = answer_kind(question)
    assert kind is not None
    chunk = Chunk(text=FEES, source="住民票の写しの交付.md", id=1, heading_path=("交付手数料",))
    assert other_row(question, kind, focus, chunk, row) == other


INCIDENTS = summary_texts(
    "障害記録（2024年）",
    ["INC-2024-0001 勤怠システムにログインできない", "INC-2024-0007 経費精算システムの応答遅延"],
    ["INC-2024-0001", "INC-2024-0007", "AQ-300"],
    400,
)[0]


@pytest.mark.parametrize(
    ("line", "focus", "counts"),
    [
        (INCIDENTS.splitlines()[0], ["障害"], True),  # 2024年の障害は何件
        (INCIDENTS.splitlines()[0], ["タイムアウト", "申請"], False),  # タイムアウトした申請は何件
        (INCIDENTS.splitlines()[1], ["コード"], False),  # codes of every kind, counted together
        ("申請の一部（12件）がタイムアウトした。", ["申請"], True),  # no summary: not judged here
        (INCIDENTS.splitlines()[0], [], True),
    ],
)
def test_what_a_section_summary_counts(line: str, focus: list[str], counts: bool) -> None:
    assert may_count(line, focus) is counts


FACILITIES = """市立保育所の一覧です。
| 施設名 | 施設コード | 定員 |
|---|---|---|
| 中央保育所 | H-101 | 120人 |
| 北町保育所 | H-102 | 90人 |"""


@pytest.mark.parametrize(
    ("row", "header"),
    [
        ("| 施設名 | 施設コード | 定員 |", True),  # names the columns, holds no value
        ("| 中央保育所 | H-101 | 120人 |", False),
        ("市立保育所の一覧です。", False),
        ("| 施設名 | 施設コード |", False),  # no such line
    ],
)
def test_a_tables_header_row(row: str, header: bool) -> None:
    assert is_header(FACILITIES, row) is header


def test_a_key_value_tables_first_row_is_a_row() -> None:
    """Loaders make a table's first row its header; with a figure it is one of the rows."""
    spec = "| 質量 | 約9.2kg |\n|---|---|\n| 高さ | 約60cm |"
    assert not is_header(spec, "| 質量 | 約9.2kg |")


def test_codes_in_a_header_are_not_figures() -> None:
    """A comparison table has a column per product: its header names them by code."""
    table = "| 項目 | AQ-300（新製品） | AQ-250 |\n|---|---|---|\n| 価格 | 54,780円 | 43,780円 |"
    assert is_header(table, "| 項目 | AQ-300（新製品） | AQ-250 |")
    assert not is_header(table, "| 価格 | 54,780円 | 43,780円 |")


def _sentences(*texts: str) -> list[Candidate]:
    return [Candidate(0, order, text, 0.0, None) for order, text in enumerate(texts)]


@pytest.mark.parametrize(
    ("texts", "best", "expected"),
    [
        # the next sentence goes on about the best one: it names what the question asks
        (
            [
                "梅雨の期間中ほとんど雨が降らない場合がある。",
                "このような梅雨のことを空梅雨という。",
            ],
            0,
            1,
        ),
        (["拍の周期の長短によって、音楽の速度を感じる。", "これをテンポという。"], 0, 1),
        (["打楽器には音高を持つものと持たないものとがある。", "後者はリズムを奏でる。"], 0, 1),
        # a sentence without a topic of its own: the nearest one before with は names it
        (
            [
                "豊岡市は、兵庫県の北部に位置する市。",
                "但馬県民局管轄地域。",
                "但馬地域の中心都市である。",
            ],
            2,
            0,
        ),
        (
            ["公用語はオランダ語。", "フリースラント州では西フリジア語も公用語。", "識字率は99%。"],
            1,
            0,
        ),
        # a sentence before that refers back itself names no topic
        (
            [
                "建築家協会は、自主建築家のグループである。",
                "同法は、用語の使用を統制する。",
                "同グループは、ロビー活動もしている。",
            ],
            2,
            0,
        ),
        # a topic named after a word that refers back
        (
            [
                "オランダは合理的。",
                "その中でもオランダは経済大国と言える。",
                "成長の原動力となってきた。",
            ],
            2,
            1,
        ),
        # には names no topic
        (["ハノーファーは北ドイツの都市。", "事業の場合には比較検討する。", "州都である。"], 2, 0),
        # は inside または names no topic; the topic four sentences back is too far
        (["人口は53万人。", "または州都。", "一", "二", "三である。"], 4, None),
        # nothing before with a topic, and the next sentence is about something else
        (["人口53万人。", "州都である。", "識字率は99%。"], 1, None),
    ],
)
def test_the_sentence_that_says_what_an_echo_of_the_question_leaves_out(
    texts: list[str], best: int, expected: int | None
) -> None:
    ranked = _sentences(*texts)
    found = companion(ranked[best], ranked)
    assert [c.order for c in found] == ([] if expected is None else [expected])


def test_only_sentences_of_the_same_passage_go_with_an_echo() -> None:
    ranked = [
        *_sentences("州都である。"),
        Candidate(1, 1, "これをテンポという。", 0.0, None),  # next in order, another passage
        Candidate(2, 0, "ハノーファーは都市。", 0.0, None),
    ]
    assert companion(ranked[0], ranked) == []


class NoVectors:
    name = "none"
    dim = 1

    def embed_query(self, text: str) -> None:
        raise AssertionError("no vector is needed")


@pytest.mark.parametrize(
    ("question", "texts", "first"),
    [
        # the best sentence names no one: the sentence of its passage naming a person comes first
        (
            "生物の自然発生を実験によって証明したのは誰ですか",
            [
                "生物の自然発生は実験によって証明された」とした。",
                "18世紀、イングランドのジョン・ニーダムは実験をした。",
            ],
            1,
        ),
        # the best sentence names someone the question does not: it stays first
        (
            "1993年6月にリスバが首相に任命したのは誰ですか？",
            [
                "1993年6月にはリスバがヨンビ＝オパンゴを首相に任命した。",
                "その後、サスヌゲソが大統領に復帰した。",
            ],
            0,
        ),
        # a field names its answer under its own key; a department answers 誰 without a name
        ("経費精算の承認者は誰ですか？", ["承認者: 所属部長", "作成者: 総務部 山田太郎"], 0),
        (
            "問い合わせ窓口はどこですか？",
            ["問い合わせは総務部で受け付けます。", "本社は大阪市にある。"],
            0,
        ),
        # a name the question gives is no answer
        (
            "ジョン・ニーダムと実験をしたのは誰ですか",
            [
                "実験は成功した。",
                "ジョン・ニーダムは実験をした。",
                "ラザロ・スパランツァーニも実験をした。",
            ],
            2,
        ),
        # a place for どこ
        (
            "最古級の生命の痕跡が見つかった場所はどこか",
            [
                "生命の痕跡としては最古級と推定している。",
                "研究チームは、カナダのケベック州で採取した岩石を調べた。",
            ],
            1,
        ),
    ],
)
def test_a_sentence_naming_who_or_where_comes_before_one_naming_no_one(
    question: str, texts: list[str], first: int
) -> None:
    query = Query(question, tokenizer=SudachiTokenizer(), embedder=NoVectors())  # type: ignore[arg-type]
    kind = answer_kind(question)
    assert kind is not None
    assert naming_first(query, NAMES[kind.kind], _sentences(*texts))[0].order == first


@pytest.mark.parametrize(
    ("question", "text", "names"),
    [
        # the role the question names is no one
        (
            "異動する前に証明書の更新を担当していた人は誰ですか？",
            "期限の通知が異動前の担当者宛てに送られていた。",
            False,
        ),
        ("INC-2024-0004の担当は誰ですか？", "担当: 例田 次郎", True),  # the field asked
        ("保険料を納めるのは誰ですか？", "保険料は世帯主に納めていただきます。", True),
        ("窓口の担当は誰ですか？", "総務部が受け付けます。", True),  # a department
        ("実験をしたのは誰ですか", "ジョン・ニーダムは実験をした。", True),
        ("実験をしたのは誰ですか", "実験は成功した。", False),
        ("建築を行なっていたのは誰か", "修道士が建築を行っていた。", True),  # a person's noun
        ("アルマに宛てた書簡は何通か", "アルマは手紙を受け取った。", False),  # the question's
        ("ジョン・ニーダムと実験をしたのは誰ですか", "ジョン・ニーダムは実験をした。", False),
    ],
)
def test_a_person_answer_names_someone_the_question_does_not(
    question: str, text: str, names: bool
) -> None:
    query = Query(question, tokenizer=SudachiTokenizer(), embedder=NoVectors())  # type: ignore[arg-type]
    assert names_someone(query, text) is names


@pytest.mark.parametrize(
    ("question", "texts", "first"),
    [
        # the field named for the event asked dates it; a time in passing does not
        (
            "画面が遅くなった障害はいつ起きましたか？",
            [
                "原因：精算期限日（毎月10日）にアクセスが集中した。",
                "発生日時：2024年10月10日（木）",
            ],
            1,
        ),
        (
            "メールはいつ復旧しましたか？",
            ["発生日時：2024年4月22日 9:10", "復旧日時：2024年4月22日 15:30"],
            1,
        ),
        # a field that only dates what its section announces
        (
            "防災訓練はいつ行われますか？",
            [
                "「防災訓練の実施について」の項目（1件）: 当日の流れ",
                "対象: 全従業員（工場は別途実施）",
                "日時: 2025年9月1日（月）14:00～14:40",
            ],
            2,
        ),
        # a deadline asked: no field is named for it, the order stays
        (
            "精算期限はいつまで延ばされましたか？",
            ["対応：精算期限を10月11日まで延長した。", "発生日時：2024年10月10日（木）"],
            0,
        ),
    ],
)
def test_the_field_named_for_the_event_asked_dates_it(
    question: str, texts: list[str], first: int
) -> None:
    query = Query(question, tokenizer=SudachiTokenizer(), embedder=NoVectors())  # type: ignore[arg-type]
    assert dated_first(query, _sentences(*texts))[0].order == first


ROW = Chunk(text="管理番号: INC-2024-0004", source="障害一覧.csv", position=4, locator={"row": 5})
SECTION = Chunk(
    text="- 原因：証明書", source="障害記録.md", position=3, heading_path=("INC-2024-0004",)
)


@pytest.mark.parametrize(
    ("question", "lines", "first"),
    [
        # a row's field that is not asked, before the section's field named as asked
        (
            "INC-2024-0004の原因は何ですか？",
            [
                (0, "概要: サーバー証明書の期限切れでメール送受信が停止"),
                (1, "- 原因：証明書の期限切れ"),
            ],
            "- 原因：証明書の期限切れ",
        ),
        # the row holds the field asked: it stays first
        (
            "INC-2024-0004で影響を受けたのは何人ですか？",
            [(0, "影響: 全社（約500名）"), (1, "- 影響範囲：全社")],
            "影響: 全社（約500名）",
        ),
        # a section's line leads: nothing moves
        (
            "INC-2024-0004の原因は何ですか？",
            [(1, "- 発生日時：2024年4月22日"), (0, "概要: 停止"), (1, "- 原因：証明書")],
            "- 発生日時：2024年4月22日",
        ),
        # no field is named with a word of the question: nothing moves
        (
            "INC-2024-0004はどんな障害ですか？",
            [(0, "概要: サーバー証明書の期限切れ"), (1, "- 原因：証明書の期限切れ")],
            "概要: サーバー証明書の期限切れ",
        ),
    ],
)
def test_a_field_named_as_asked_comes_before_a_rows_other_fields(
    question: str, lines: list[tuple[int, str]], first: str
) -> None:
    query = Query(question, tokenizer=SudachiTokenizer(), embedder=NoVectors())  # type: ignore[arg-type]
    hits = [Hit(ROW, 1.0), Hit(SECTION, 0.9)]
    candidates = [Candidate(hit, order, text, 0.0, None) for order, (hit, text) in enumerate(lines)]
    codes = fit.codes(question)
    assert asked_fields_first(query, codes, hits, candidates)[0].text == first


def test_a_summary_names_a_section_and_the_section_answers() -> None:
    summary = Chunk(
        text="「給与規程」の項目（1件）: 支払日", source="人事/給与規程.md", is_summary=True
    )
    section = Chunk(
        text="給与は毎月25日に支払う。", source="人事/給与規程.md", heading_path=("支払日",)
    )
    other = Chunk(
        text="「障害記録」の項目（8件）: INC-2024-0001", source="障害記録.md", is_summary=True
    )
    hits = [Hit(summary, 0.9), Hit(section, 0.8), Hit(other, 0.7)]
    ranked = [Candidate(i, 0, h.chunk.text, 0.0, None) for i, h in enumerate(hits)]
    # the summary last, as its file's section was found; one of a file with no passage stays
    got = summaries_last(hits, ranked, answer_kind("給与の支払日は？"))
    assert [c.hit_index for c in got] == [1, 2, 0]
    # how many: the summary's count is the answer
    got = summaries_last(hits, ranked, answer_kind("給与規程の項目は何件ありますか？"))
    assert [c.hit_index for c in got] == [0, 1, 2]
