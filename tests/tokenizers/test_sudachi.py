"""Golden tables for text normalisation and the Sudachi tokenizer."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from shirabe.settings import Settings
from shirabe.text.normalize import normalize
from shirabe.tokenizers.protocol import Tokenizer
from shirabe.tokenizers.registry import make_tokenizer
from shirabe.tokenizers.sudachi import SudachiTokenizer, cjk_bigrams

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


@pytest.mark.parametrize("text", SENTENCES)
def test_query_and_document_sides_agree(text: str) -> None:
    settings = Settings(sudachi_mode="C", bigrams=True)
    document_side = make_tokenizer(settings)
    query_side = make_tokenizer(settings)
    assert query_side.tokenize(text) == document_side.tokenize(text)
    assert query_side.signature == document_side.signature


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
    tokenizer: Tokenizer = make_tokenizer(Settings(sudachi_mode="A", bigrams=False))
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
