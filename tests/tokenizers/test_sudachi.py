"""Golden tables for text normalisation and the Sudachi tokenizer in each split mode, and
whether a question's words meet a passage's in the index."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from shirabe.embedders.protocol import Matrix, Vector
from shirabe.indexing.passages import chunk_terms
from shirabe.records import Chunk
from shirabe.retrieval.query import Query
from shirabe.settings import TokenizerSettings
from shirabe.text.normalize import normalize
from shirabe.tokenizers.protocol import Tokenizer
from shirabe.tokenizers.registry import make_tokenizer
from shirabe.tokenizers.sudachi import SplitModeName, SudachiTokenizer, cjk_bigrams

NORMALIZE_TESTS = [
    ("ＥＲＲ－１０７", "ERR-107"),
    ("ＡＢＣ１２３", "ABC123"),
    ("ｶﾀｶﾅ", "カタカナ"),
    ("ｷﾞｬｰ", "ギャー"),
    ("ERRー107", "ERR-107"),
    ("ABCｰ12", "ABC-12"),
    ("ラーメン", "ラーメン"),
    ("ラーメンー1", "ラーメンー1"),
    ("A\u2010B", "A-B"),
    ("A\u2011B", "A-B"),
    ("A\u2013B", "A-B"),
    ("A\u2014B", "A-B"),
    ("1\u22122", "1-2"),
    ("\u2014見出し", "\u2014見出し"),
    ("A \u2013 B", "A \u2013 B"),
    ("１，２００ｍＬ", "1,200mL"),
    ("有給休暇の申請方法は？", "有給休暇の申請方法は?"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), NORMALIZE_TESTS)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(("text", "_expected"), NORMALIZE_TESTS)
def test_normalize_is_idempotent(text: str, _expected: str) -> None:
    assert normalize(normalize(text)) == normalize(text)


@pytest.fixture(scope="module")
def words() -> SudachiTokenizer:
    return SudachiTokenizer(mode="C", bigrams=False)


@pytest.fixture(scope="module")
def with_bigrams() -> SudachiTokenizer:
    return SudachiTokenizer(mode="C", bigrams=True)


MODES: tuple[SplitModeName, ...] = ("A", "B", "C")


@pytest.fixture(scope="module")
def by_mode() -> dict[str, SudachiTokenizer]:
    return {mode: SudachiTokenizer(mode=mode, bigrams=False) for mode in MODES}


# Phrases every split mode reads the same way: codes and numbers kept whole, units, dates,
# width variants, particles and auxiliaries dropped, words apart at a middle dot.
EVERY_MODE: list[tuple[str, list[str]]] = [
    ("INC-2024-0004", ["inc-2024-0004"]),
    ("INC-2024-0004の対応記録", ["inc-2024-0004", "対応", "記録"]),
    ("ERR-107", ["err-107"]),
    ("ERR-107が出た", ["err-107", "出る"]),
    ("ＥＲＲ－１０７", ["err-107"]),
    ("ＥＲＲ－１０７が出た", ["err-107", "出る"]),
    ("v2.3.1", ["v2.3.1"]),
    ("v2.3.1に更新する", ["v2.3.1", "更新", "為る"]),
    ("AQ-300", ["aq-300"]),
    ("AQ-300の仕様", ["aq-300", "仕様"]),
    ("ＡＱ－３００の在庫", ["aq-300", "在庫"]),
    ("0120-123-456に電話", ["0120-123-456", "電話"]),
    ("Ｗｉ－Ｆｉ", ["wi-fi"]),
    ("Wi-Fiに接続できない", ["wi-fi", "接続", "出来る"]),
    ("5G対応のスマートフォン", ["5g", "5", "g", "対応", "スマートフォン"]),
    ("170mL", ["170ml", "170", "ml"]),
    ("1,200円", ["1200", "円"]),
    ("１，２００円", ["1200", "円"]),
    ("価格は1,200円です", ["価格", "1200", "円"]),
    ("10,000,000円", ["10000000", "円"]),
    ("約9.2kg", ["約", "9.2kg"]),  # see KNOWN_GAPS: no term for the unit
    ("1.5mLずつ使う", ["1.5ml", "使う"]),  # see KNOWN_GAPS: no term for the unit
    ("25℃", ["25", "c"]),  # NFKC: 25°C
    ("25℃以下で保存", ["25", "c", "以下", "保存"]),
    ("35℃を超える", ["35", "c", "越える"]),
    ("①から③まで", ["1", "3"]),
    ("チャイルドロック", ["チャイルド", "ロック"]),
    ("チャイルドロックを解除する", ["チャイルド", "ロック", "解除", "為る"]),
    ("ｶﾀｶﾅ", ["片仮名"]),
    ("ﾊﾟｽﾜｰﾄﾞを変更", ["パスワード", "変更"]),
    ("ﾃﾞｰﾀを保存", ["データ", "保存"]),
    ("ｷﾞｬﾗﾘｰ", ["ギャラリー"]),
    ("サーバーが落ちている", ["サーバー", "落ちる"]),
    ("コンピュータの設定", ["コンピューター", "設定"]),
    ("勤怠システムで申請", ["勤怠", "システム", "申請"]),
    ("問い合わせ窓口", ["問い合わせ", "窓口"]),
    ("国際電気通信連合", ["国際", "電気", "通信", "連合"]),
    ("申請は上長の承認を得てから行うこと", ["申請", "上長", "承認", "得る", "行う", "こと"]),
    ("２０２４年４月１日", ["2024", "年", "4", "月", "1", "日"]),
    ("2024年4月1日から", ["2024", "年", "4", "月", "1", "日"]),
    ("2024/04/01に実施", ["2024/04/01", "実施"]),
    ("2024-04-01に発生", ["2024-04-01", "発生"]),
    ("令和6年4月1日", ["令和", "6", "年", "4", "月", "1", "日"]),
    ("平成31年3月31日まで", ["平成", "31", "年", "3", "月", "31", "日"]),
    ("4月22日（月）", ["4", "月", "22", "日", "月"]),
    ("午前9時〜午後5時", ["午前", "9", "時", "午後", "5", "時"]),
    ("第3条第2項", ["第", "3", "条", "第", "2", "項"]),
    ("毎月25日締め", ["毎月", "25", "日", "締め"]),
    ("課長・部長", ["課長", "部長"]),
    ("入社・退社の手続き", ["入社", "退社", "手続き"]),
    ("ヨハネス・グーテンベルク", ["ヨハネス", "グーテンベルク"]),
    # see KNOWN_GAPS: 用紙 after B5 comes out as 用 + 紙
    ("A4用紙・B5用紙", ["a4", "a", "4", "用紙", "b5", "b", "5", "用", "紙"]),
]

# Phrases the modes cut differently: A gives the shortest units, C the longest compounds.
BY_MODE: list[tuple[str, list[str], list[str], list[str]]] = [
    (
        "詰め替え用は170mLです",
        ["詰める", "替える", "用", "170ml", "170", "ml"],
        ["詰め替える", "用", "170ml", "170", "ml"],
        ["詰め替える", "用", "170ml", "170", "ml"],
    ),
    ("3営業日", ["3", "営業", "日"], ["3", "営業日"], ["3", "営業日"]),
    (
        "3営業日以内に返送",
        ["3", "営業", "日", "以内", "返送"],
        ["3", "営業日", "以内", "返送"],
        ["3", "営業日", "以内", "返送"],
    ),
    (
        "重さは約9.2kg",
        ["重い", "さ", "約", "9.2kg"],
        ["重さ", "約", "9.2kg"],
        ["重さ", "約", "9.2kg"],
    ),
    (
        "カスタマーサポートセンター",
        ["カスタマー", "サポート", "センター"],
        ["カスタマー", "サポート", "センター"],
        ["カスタマーサポートセンター"],
    ),
    (
        "カスタマーサポートセンターに連絡",
        ["カスタマー", "サポート", "センター", "連絡"],
        ["カスタマー", "サポート", "センター", "連絡"],
        ["カスタマーサポートセンター", "連絡"],
    ),
    (
        "エラーコードERR-107について",  # see test_ni_tsuite_is_not_a_verb
        ["エラー", "コード", "err-107", "つく"],
        ["エラー", "コード", "err-107", "つく"],
        ["エラーコード", "err-107", "つく"],
    ),
    (
        "メールアドレスとパスワード",
        ["メール", "アドレス", "パスワード"],
        ["メール", "アドレス", "パスワード"],
        ["メールアドレス", "パスワード"],
    ),
    (
        "有給休暇の申請方法",
        ["有給", "休暇", "申請", "方法"],
        ["有給", "休暇", "申請", "方法"],
        ["有給休暇", "申請方法"],
    ),
    (
        "東京都に住んでいます",
        ["東京", "都", "住む"],
        ["東京都", "住む"],
        ["東京都", "住む"],
    ),
    (
        "会議室を予約してください",
        ["会議", "室", "予約", "為る"],
        ["会議室", "予約", "為る"],
        ["会議室", "予約", "為る"],
    ),
    (
        "電源を切ってから再起動する",
        ["電源", "切る", "再", "起動", "為る"],
        ["電源", "切る", "再起動", "為る"],
        ["電源", "切る", "再起動", "為る"],
    ),
    (
        "サーバの再起動",
        ["サーバー", "再", "起動"],
        ["サーバー", "再起動"],
        ["サーバー", "再起動"],
    ),
    (
        "選挙管理委員会",
        ["選挙", "管理", "委員", "会"],
        ["選挙", "管理", "委員会"],
        ["選挙管理委員会"],
    ),
    ("出張旅費規程", ["出張", "旅費", "規程"], ["出張", "旅費", "規程"], ["出張旅費", "規程"]),
    ("在宅勤務制度", ["在宅", "勤務", "制度"], ["在宅", "勤務", "制度"], ["在宅勤務制度"]),
    (
        "個人情報保護方針",
        ["個人", "情報", "保護", "方針"],
        ["個人", "情報", "保護", "方針"],
        ["個人情報保護", "方針"],
    ),
    (
        "社員番号を入力",
        ["社員", "番号", "入力"],
        ["社員", "番号", "入力"],
        ["社員番号", "入力"],
    ),
    (
        "取扱説明書を読む",
        ["取り扱い", "説明", "書", "読む"],
        ["取り扱い", "説明書", "読む"],
        ["取扱説明書", "読む"],
    ),
    (
        "月曜日から金曜日まで",
        ["月曜", "日", "金曜", "日"],
        ["月曜日", "金曜日"],
        ["月曜日", "金曜日"],
    ),
    ("第３四半期", ["第", "3", "四半", "期"], ["第", "3", "四半期"], ["第", "3", "四半期"]),
]

GOLDEN_BY_MODE: list[tuple[str, SplitModeName, list[str]]] = [
    *((text, mode, tokens) for text, tokens in EVERY_MODE for mode in MODES),
    *(
        (text, mode, tokens)
        for text, *per_mode in BY_MODE
        for mode, tokens in zip(MODES, per_mode, strict=True)
    ),
]


@pytest.mark.parametrize(("text", "mode", "expected"), GOLDEN_BY_MODE)
def test_words_in_each_split_mode(
    by_mode: dict[str, SudachiTokenizer], text: str, mode: SplitModeName, expected: list[str]
) -> None:
    assert by_mode[mode].tokenize(text) == expected


# Rows above that a reader of Japanese would not expect; each test fails (strictly) once fixed.
KNOWN_GAPS = [
    # a decimal quantity has no term for its unit: 170mL gives ml, 9.2kg gives no kg
    pytest.param("約9.2kg", "kg", id="decimal-kg"),
    pytest.param("1.5mLずつ使う", "ml", id="decimal-ml"),
    # Sudachi reads B5用紙 as b + 5 + 用 (suffix) + 紙 (suffix), so 用紙 is lost
    pytest.param("B5用紙", "用紙", id="b5-paper"),
]


@pytest.mark.xfail(strict=True, reason="known gap of the word rules or the dictionary")
@pytest.mark.parametrize(("text", "term"), KNOWN_GAPS)
def test_known_gaps(words: SudachiTokenizer, text: str, term: str) -> None:
    assert term in words.tokenize(text)


@pytest.mark.xfail(strict=True, reason="known gap: について is a particle, not the verb 付く")
def test_ni_tsuite_is_not_a_verb(words: SudachiTokenizer) -> None:
    assert words.tokenize("エラーコードERR-107について") == ["エラーコード", "err-107"]


# Bigrams add every overlapping pair of a CJK run (never across a middle dot or a code), the
# same in every mode; the words in front are as in the tables above.
BIGRAMS_BY_MODE: list[tuple[str, SplitModeName, list[str]]] = [
    (
        "選挙管理委員会",
        "A",
        ["選挙", "管理", "委員", "会", "~選挙", "~挙管", "~管理", "~理委", "~委員", "~員会"],
    ),
    (
        "選挙管理委員会",
        "C",
        ["選挙管理委員会", "~選挙", "~挙管", "~管理", "~理委", "~委員", "~員会"],
    ),
    ("ＥＲＲ－１０７が出た", "A", ["err-107", "出る", "~が出", "~出た"]),
    ("ＥＲＲ－１０７が出た", "C", ["err-107", "出る", "~が出", "~出た"]),
    (
        "170mLの詰め替え用",
        "A",
        [
            *["170ml", "170", "ml", "詰める", "替える", "用"],
            *["~の詰", "~詰め", "~め替", "~替え", "~え用"],
        ],
    ),
    (
        "170mLの詰め替え用",
        "C",
        ["170ml", "170", "ml", "詰め替える", "用", "~の詰", "~詰め", "~め替", "~替え", "~え用"],
    ),
    ("ｶﾀｶﾅ", "A", ["片仮名", "~カタ", "~タカ", "~カナ"]),
    ("課長・部長", "C", ["課長", "部長", "~課長", "~部長"]),
    ("v2.3.1に更新", "C", ["v2.3.1", "更新", "~に更", "~更新"]),
    (
        "カスタマーサポートセンター",
        "C",
        [
            "カスタマーサポートセンター",
            *["~カス", "~スタ", "~タマ", "~マー", "~ーサ", "~サポ", "~ポー", "~ート", "~トセ"],
            *["~セン", "~ンタ", "~ター"],
        ],
    ),
    ("3営業日以内", "A", ["3", "営業", "日", "以内", "~営業", "~業日", "~日以", "~以内"]),
    ("3営業日以内", "C", ["3", "営業日", "以内", "~営業", "~業日", "~日以", "~以内"]),
    ("2024年4月1日", "C", ["2024", "年", "4", "月", "1", "日"]),  # no run of two
    ("変更方法", "A", ["変更", "方法", "~変更", "~更方", "~方法"]),
    ("変更方法", "C", ["変更方法", "~変更", "~更方", "~方法"]),
    ("ア・イ", "C", ["ア", "イ"]),
]


@pytest.mark.parametrize(("text", "mode", "expected"), BIGRAMS_BY_MODE)
def test_words_and_bigrams_in_each_split_mode(
    text: str, mode: SplitModeName, expected: list[str]
) -> None:
    assert SudachiTokenizer(mode=mode, bigrams=True).tokenize(text) == expected


WAKATI_TESTS = [
    ("INC-2024-0004はどんな障害ですか", ["inc-2024-0004", "どんな", "障害"]),
    ("詰め替え用には何mL入っていますか", ["詰め替える", "用", "何", "ml", "入る"]),
    ("有給休暇の申請方法は？", ["有給休暇", "申請方法"]),
    ("ＥＲＲ－１０７が出た", ["err-107", "出る"]),
    ("東京都に住んでいます。", ["東京都", "住む"]),
    ("ｶﾀｶﾅで書いてある", ["片仮名", "書く"]),
    ("サーバーが落ちています", ["サーバー", "落ちる"]),
    ("パスワードを変更してください", ["パスワード", "変更", "為る"]),
    ("コンピュータの設定", ["コンピューター", "設定"]),
    ("価格は1,200円です", ["価格", "1200", "円"]),
    ("10,000,000円", ["10000000", "円"]),
    ("1,2,3番", ["1", "2", "3", "番"]),
    ("２０２４年４月１日", ["2024", "年", "4", "月", "1", "日"]),
    ("https://example.com/docs を参照", ["https", "example.com/docs", "参照"]),
    ("𠮷野家の𩸽", ["𠮷", "野家", "𩸽"]),
    ("α線と※印、〒100", ["α", "線", "印", "100"]),
    ("※注意♪", ["注意"]),
    ("。、！？「」", []),
    (" \n\u3000", []),
    ("", []),
]


@pytest.mark.parametrize(("text", "expected"), WAKATI_TESTS)
def test_word_tokens(words: SudachiTokenizer, text: str, expected: list[str]) -> None:
    assert words.tokenize(text) == expected


CONTAINS_TESTS = [
    ("ＥＲＲ－１０７が出た", ["err-107"]),
    ("ERRー107が出た", ["err-107"]),
    ("v2.3.1で170mLの5G対応", ["v2.3.1", "170ml", "5g", "対応"]),
    ("容量は1,200mLです", ["1200ml", "容量"]),
    ("Ａ４用紙", ["a4", "用紙"]),
]


@pytest.mark.parametrize(("text", "expected"), CONTAINS_TESTS)
def test_word_tokens_contain(words: SudachiTokenizer, text: str, expected: list[str]) -> None:
    tokens = words.tokenize(text)
    for token in expected:
        assert token in tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("INC-2024-0004", ["inc-2024-0004"]),
        ("v2.3.1", ["v2.3.1"]),
        ("170mL", ["170ml", "170", "ml"]),
        ("1,200mL", ["1200ml", "1200", "ml"]),
        ("5G", ["5g", "5", "g"]),
        ("API", ["api"]),
        ("2024", ["2024"]),
    ],
)
def test_ascii_runs(words: SudachiTokenizer, text: str, expected: list[str]) -> None:
    assert words.tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ("見ている", "居る"),
        ("書いてある", "有る"),
        ("確認しておいてください", "下さる"),
        ("住んでいます", "居る"),
    ],
)
def test_auxiliary_verbs_after_te_are_dropped(
    words: SudachiTokenizer, text: str, dropped: str
) -> None:
    assert dropped not in words.tokenize(text)


def test_independent_verbs_are_kept(words: SudachiTokenizer) -> None:
    assert "有る" in words.tokenize("問い合わせがあります")


BIGRAM_TESTS = [
    ("東京都", ["東京都", "~東京", "~京都"]),
    (
        "有給休暇の申請方法は？",
        [
            "有給休暇",
            "申請方法",
            *["~有給", "~給休", "~休暇", "~暇の", "~の申", "~申請", "~請方", "~方法", "~法は"],
        ],
    ),
    ("ERR-107が出た", ["err-107", "出る", "~が出", "~出た"]),
    ("ｶﾀｶﾅ", ["片仮名", "~カタ", "~タカ", "~カナ"]),
    ("ア", ["ア"]),
    ("A・B", ["a", "b"]),
]


@pytest.mark.parametrize(("text", "expected"), BIGRAM_TESTS)
def test_bigram_tokens(with_bigrams: SudachiTokenizer, text: str, expected: list[str]) -> None:
    assert with_bigrams.tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("東京", ["~東京"]),
        ("東", []),
        ("東 京", []),
        ("々々ー", ["~々々", "~々ー"]),
        ("ア・イウ", ["~イウ"]),
        ("ABC漢字", ["~漢字"]),
    ],
)
def test_cjk_bigrams(text: str, expected: list[str]) -> None:
    assert cjk_bigrams(text) == expected


def test_bigrams_never_collide_with_words(
    words: SudachiTokenizer, with_bigrams: SudachiTokenizer
) -> None:
    text = "詰め替え用には何mL入っていますか。東京都に住んでいます。"
    word_tokens = words.tokenize(text)
    grams = with_bigrams.tokenize(text)[len(word_tokens) :]
    assert grams
    assert all(gram.startswith("~") and len(gram) == 3 for gram in grams)
    assert not any(token.startswith("~") for token in word_tokens)


SENTENCES = [
    "INC-2024-0004はどんな障害ですか",
    "詰め替え用には何mL入っていますか",
    "v2.3.1で170mLの5G対応、価格は1,200円です。\n東京都に住んでいます。",
]


@pytest.mark.parametrize("text", SENTENCES)
def test_tokens_have_no_whitespace(with_bigrams: SudachiTokenizer, text: str) -> None:
    tokens = with_bigrams.tokenize(text)
    assert tokens
    assert all(token and not any(ch.isspace() for ch in token) for token in tokens)


class NoVectors:
    """An embedder for queries whose vector is never asked for."""

    name = "none"
    dim = 2

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        raise AssertionError("the lexical side needs no vectors")

    def embed_query(self, text: str) -> Vector:
        raise AssertionError("the lexical side needs no vectors")


def query_and_passage_terms(
    settings: TokenizerSettings, question: str, passage: Chunk
) -> tuple[list[str], list[str]]:
    """A question's terms as a search makes them and a passage's as an ingest indexes them,
    with the tokenizer the settings name."""
    tokenizer = make_tokenizer(settings)
    query = Query(question, tokenizer=tokenizer, embedder=NoVectors())
    terms, _ = chunk_terms(passage, tokenizer.tokenize)
    return query.tokens, terms


@pytest.mark.parametrize(
    ("question", "heading", "text", "unmatched"),
    [
        (
            "ＥＲＲ－１０７が出たらどうする？",
            "障害対応",
            "ERR-107が出た場合は再起動する。",
            ["どう"],
        ),
        ("サーバを再起動するには", "保守", "サーバーの再起動手順", ["為る"]),
        ("申し込みの締め切りは？", "", "申込の締切は毎月25日。", []),
        ("１，２００円の商品", "", "価格は1,200円", ["商品"]),
        ("コンピュータが落ちた", "", "コンピューターが落ちている", []),
        ("ｖ２．３．１の変更点", "", "v2.3.1の変更点をまとめる", []),
        ("取り扱い説明書はどこ？", "", "取扱説明書を同梱", ["どこ"]),
        ("問合せ先を教えて", "", "問い合わせ先は総務部", ["教える"]),
        ("ﾃﾞｰﾀを保存したい", "", "データの保存方法", ["為る"]),
        ("AQ-300の容量は？", "仕様", "ＡＱ－３００：容量1,200mL", []),
        ("有給休暇の規程", "有給休暇の規程", "申請は前日まで。", []),  # words of the heading
        pytest.param(
            "詰め替え用の容量",
            "",
            "詰替用は170mL、容量は十分。",
            [],
            marks=pytest.mark.xfail(
                strict=True,
                reason="known gap: 詰め替え is read as the verb 詰め替える, 詰替 as the noun "
                "詰め替え, so the two spellings share no word (and no bigram)",
            ),
            id="tsumekae-spellings",
        ),
    ],
)
def test_a_question_finds_its_words_in_a_passage_written_differently(
    question: str, heading: str, text: str, unmatched: list[str]
) -> None:
    """Width, long vowels, okurigana and inflection differ between question and passage; the
    words still meet in the index. Only the question's own extra words are left over."""
    passage = Chunk(text=text, source="docs/a.md", heading_path=(heading,) if heading else ())
    settings = TokenizerSettings(sudachi_mode="C", bigrams=False)
    question_terms, passage_terms = query_and_passage_terms(settings, question, passage)
    assert sorted(set(question_terms) - set(passage_terms)) == sorted(unmatched)


def test_bigrams_bridge_a_compound_the_passage_writes_apart() -> None:
    """Mode C reads 変更方法 as one word; a passage saying 変更する方法 still shares its
    bigrams, and only through them."""
    passage = Chunk(text="パスワードを変更する方法", source="docs/a.md")
    words = query_and_passage_terms(
        TokenizerSettings(sudachi_mode="C", bigrams=False), "変更方法", passage
    )
    assert words == (["変更方法"], ["パスワード", "変更", "為る", "方法"])
    question_terms, passage_terms = query_and_passage_terms(
        TokenizerSettings(sudachi_mode="C", bigrams=True), "変更方法", passage
    )
    assert question_terms == ["変更方法", "~変更", "~更方", "~方法"]
    assert sorted(set(question_terms) & set(passage_terms)) == ["~変更", "~方法"]


@pytest.mark.parametrize(
    ("full", "half"),
    [
        ("ＥＲＲ－１０７が出たのでｶﾀｶﾅで報告", "ERR-107が出たのでカタカナで報告"),
        ("ｖ２．３．１で１７０ｍＬの５Ｇ対応", "v2.3.1で170mLの5G対応"),
        ("ﾊﾟｽﾜｰﾄﾞを変更してください", "パスワードを変更してください"),
    ],
)
def test_width_variants_give_identical_tokens(
    with_bigrams: SudachiTokenizer, full: str, half: str
) -> None:
    assert with_bigrams.tokenize(full) == with_bigrams.tokenize(half)


def test_thread_safety(with_bigrams: SudachiTokenizer) -> None:
    texts = SENTENCES * 50
    expected = [with_bigrams.tokenize(text) for text in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(with_bigrams.tokenize, texts)) == expected


def test_long_text_is_split_for_sudachi(words: SudachiTokenizer) -> None:
    text = "東京都に住んでいます。" * 3000
    tokens = words.tokenize(text)
    assert tokens.count("東京都") == 3000
    assert tokens.count("住む") == 3000


def test_signature_tracks_options() -> None:
    signatures = {
        SudachiTokenizer(mode=mode, bigrams=bigrams).signature
        for mode in ("A", "B", "C")
        for bigrams in (True, False)
    }
    assert len(signatures) == 6
    assert all(signature.startswith("sudachi") for signature in signatures)


def test_make_tokenizer_follows_settings() -> None:
    tokenizer: Tokenizer = make_tokenizer(TokenizerSettings(sudachi_mode="A", bigrams=False))
    assert isinstance(tokenizer, SudachiTokenizer)
    assert tokenizer.mode == "A"
    assert not tokenizer.bigrams
    assert tokenizer.tokenize("有給休暇の申請方法は？") == ["有給", "休暇", "申請", "方法"]


@pytest.mark.slow
def test_importing_the_engine_does_not_load_sudachi() -> None:
    code = (
        "import sys, shirabe.engine, shirabe.tokenizers.registry; print('sudachipy' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("・課長　１泊", ["課長", "1", "泊"]),
        ("・宿泊費は実費", ["宿泊費", "実費"]),
        ("ヨハネス・グーテンベルク", ["ヨハネス", "グーテンベルク"]),
    ],
)
def test_middle_dot_separates_words(text: str, expected: list[str]) -> None:
    assert SudachiTokenizer(bigrams=False).tokenize(text) == expected


def test_a_line_read_again_gives_the_same_terms_and_a_list_of_its_own(
    with_bigrams: SudachiTokenizer,
) -> None:
    tok = with_bigrams
    line = "AQ-300の運転音は約35dBです。"
    first = tok.tokenize(line)
    first.append("書き足した語")  # the caller's list is its own
    again = tok.tokenize(line)
    assert "書き足した語" not in again
    assert again == SudachiTokenizer().tokenize(line)  # kept terms are the terms
    long = "運転音" * 200  # longer than a line: read each time, same terms
    assert tok.tokenize(long) == tok.tokenize(long)
