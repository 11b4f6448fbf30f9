"""Encoding detection on real Japanese files and on text encoded here."""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from shirabe.text.encoding import (
    BINARY,
    UNKNOWN,
    EncodingError,
    decode_bytes,
    decode_declared,
    detect_encoding,
)

from tests.support import FIXTURES, shared

SENTENCES = [
    "経費精算",
    "出張旅費規程",
    "交通費は実費を支給する。",
    "この規程は、社員が業務のため出張する場合の旅費について定める。",
    "宿泊費は一泊につき一万円を上限とする。",
    "申請は事前に上長の承認を得ること。",
    "お問い合わせは総務部まで",
    "東京都千代田区霞が関",
    "ファイルを添付してください",
    "第1条（目的）",
]


@dataclass(frozen=True, slots=True)
class Case:
    """Bytes and what detection must make of them: a codec and the text, or an error."""

    data: bytes
    codec: str | None = None
    text: str | None = None
    error: str | None = None


GOLDEN: dict[str, Case] = {
    "utf-8": Case("経費精算規程\n".encode(), "utf-8", "経費精算規程\n"),
    "utf-8 with BOM and CRLF": Case(
        codecs.BOM_UTF8 + "第1条（目的）\r\n本文\r\n".encode(),
        "utf-8-sig",
        "第1条（目的）\n本文\n",
    ),
    "ASCII": Case(b"ERR-101 retry\r\n", "utf-8", "ERR-101 retry\n"),
    "utf-16-le with BOM": Case(
        codecs.BOM_UTF16_LE + "出張旅費規程\r\n".encode("utf-16-le"), "utf-16", "出張旅費規程\n"
    ),
    "utf-16-be with BOM": Case(
        codecs.BOM_UTF16_BE + "出張旅費規程\r\n".encode("utf-16-be"), "utf-16", "出張旅費規程\n"
    ),
    "utf-16-le without BOM": Case(
        "Expense 2024: 交通費 1200 yen\n".encode("utf-16-le"),
        "utf-16-le",
        "Expense 2024: 交通費 1200 yen\n",
    ),
    "utf-16-be without BOM": Case(
        "Expense 2024: 交通費 1200 yen\n".encode("utf-16-be"),
        "utf-16-be",
        "Expense 2024: 交通費 1200 yen\n",
    ),
    "utf-32 with BOM": Case("規程".encode("utf-32"), "utf-32", "規程"),
    "cp932": Case(
        b"\x82\xb1\x82\xcc\x8bK\x92\xf6\x82\xcd\x81A\x8e\xd0\x88\xf5\x82\xcc\x8fo\x92\xa3"
        b"\x97\xb7\x94\xef\x82\xc9\x82\xc2\x82\xa2\x82\xc4\x92\xe8\x82\xdf\x82\xe9\x81B",
        "cp932",
        "この規程は、社員の出張旅費について定める。",
    ),
    "cp932 half-width kana in a sentence": Case(
        "ﾃﾞｰﾀ入力はｶﾀｶﾅで行う。".encode("cp932"), "cp932", "ﾃﾞｰﾀ入力はｶﾀｶﾅで行う。"
    ),
    "cp932 half-width kana only": Case("ｼｬﾁｮｳ ﾀﾅｶ ｲﾁﾛｳ".encode("cp932"), "cp932", "ｼｬﾁｮｳ ﾀﾅｶ ｲﾁﾛｳ"),
    "cp932 NEC circled digits": Case(
        b"\x87\x40\x82\xcc\x8e\xe8\x8f\x87\x82\xc5\x90\x5c\x90\xbf\x82\xb7\x82\xe9",
        "cp932",
        "①の手順で申請する",
    ),
    "cp932 NEC symbols": Case(
        "㈱ミナモ電機 ℡ 03-1234 №5".encode("cp932"), "cp932", "㈱ミナモ電機 ℡ 03-1234 №5"
    ),
    "cp932 IBM extension kanji": Case(b"\xee\xe0\x8b\xb4\x82\xb3\x82\xf1", "cp932", "髙橋さん"),
    "euc-jp": Case(
        "この規程は、社員の出張旅費について定める。".encode("euc_jp"),
        "euc_jp",
        "この規程は、社員の出張旅費について定める。",
    ),
    "euc-jp half-width kana in a sentence": Case(
        "お名前（ﾌﾘｶﾞﾅ）を記入してください。".encode("euc_jp"),
        "euc_jp",
        "お名前（ﾌﾘｶﾞﾅ）を記入してください。",
    ),
    "short euc-jp hiragana": Case(b"\xa4\xa2", "euc_jp", "あ"),
    "short cp932 hiragana": Case(b"\x82\xa0", "cp932", "あ"),
    "short euc-jp kanji": Case(b"\xc6\xfc\xcb\xdc", "euc_jp", "日本"),
    # Both readings are legal: ｶﾀｶﾅ in CP932, two common kanji in EUC-JP. The kanji look more
    # like Japanese text, so a file of nothing but half-width kana is read as EUC-JP.
    "short ambiguous half-width kana": Case(b"\xb6\xc0\xb6\xc5", "euc_jp", "鏡凝"),
    "empty": Case(b"", "utf-8", ""),
    "PNG": Case(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00", error=BINARY),
    "zip": Case(b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00", error=BINARY),
    "NULs": Case(b"\x00" * 64, error=BINARY),
    "control characters": Case(b"\x01\x02\x03\x04\x05abc\x06\x07\x08", error=BINARY),
    "latin-1": Case(b"caf\xe9", error=UNKNOWN),
    "utf-16 BOM with a broken surrogate": Case(
        codecs.BOM_UTF16_LE + b"\x00\xd8", error=f"{UNKNOWN} (invalid utf-16)"
    ),
}


@pytest.mark.parametrize("case", GOLDEN.values(), ids=GOLDEN.keys())
def test_golden_table(case: Case) -> None:
    if case.error is not None:
        with pytest.raises(EncodingError) as detected:
            detect_encoding(case.data)
        assert detected.value.reason == case.error
        with pytest.raises(EncodingError) as decoded:
            decode_bytes(case.data)
        assert decoded.value.reason == case.error
        return
    assert detect_encoding(case.data) == case.codec
    assert decode_bytes(case.data) == case.text


DECLARATION_WARNING = "declared charset euc_jp does not match the bytes; detected instead"


@pytest.mark.parametrize(
    ("data", "declared", "text", "warning"),
    [
        ("規程\r\n".encode("euc_jp"), "euc_jp", "規程\n", None),
        ("ｶﾀｶﾅ".encode("cp932"), "cp932", "ｶﾀｶﾅ", None),  # detection alone would say 鏡凝
        (codecs.BOM_UTF8 + "規程".encode(), "cp932", "規程", None),  # a BOM beats the declaration
        ("日本語の本文です".encode("cp932"), "euc_jp", "日本語の本文です", DECLARATION_WARNING),
        ("日本語の本文です".encode("cp932"), None, "日本語の本文です", None),
    ],
    ids=["fits", "settles an ambiguity", "BOM first", "does not fit", "none"],
)
def test_decode_declared(data: bytes, declared: str | None, text: str, warning: str | None) -> None:
    assert decode_declared(data, declared) == (text, warning)


def test_decode_declared_rejects_binary_without_a_declaration() -> None:
    with pytest.raises(EncodingError) as info:
        decode_declared(b"\x00" * 64, None, "blob.html")
    assert info.value.reason == BINARY


@pytest.fixture
def text_dir() -> Path:
    return shared(FIXTURES / "text")


def _decode_fixture(text_dir: Path, name: str) -> str:
    path = text_dir / name
    return decode_bytes(path.read_bytes(), str(path))


def _csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize(
    "name",
    [
        "cp932-mskanji.csv",
        "localgovjp-sjis.csv",
        "localgovjp-utf8-bom.csv",
        "prefjp-utf8-bom.csv",
        "shiftjis.txt",
        "utf16-bom.csv",
    ],
)
def test_every_text_fixture_decodes_cleanly(text_dir: Path, name: str) -> None:
    text = _decode_fixture(text_dir, name)
    assert text.strip()
    assert "\ufeff" not in text[:1]
    assert "\r" not in text
    assert "\ufffd" not in text


@pytest.mark.parametrize("name", ["prefjp-utf8-bom.csv", "localgovjp-utf8-bom.csv"])
def test_utf8_bom_does_not_reach_the_first_header(text_dir: Path, name: str) -> None:
    assert detect_encoding((text_dir / name).read_bytes()) == "utf-8-sig"
    text = _decode_fixture(text_dir, name)
    assert text[0] != "\ufeff"
    assert _csv_rows(text)[0][0] == "pid"


def test_shift_jis_and_utf8_copies_decode_to_the_same_table(text_dir: Path) -> None:
    sjis_bytes = (text_dir / "localgovjp-sjis.csv").read_bytes()
    assert detect_encoding(sjis_bytes) == "cp932"
    sjis = _csv_rows(_decode_fixture(text_dir, "localgovjp-sjis.csv"))
    utf8 = _csv_rows(_decode_fixture(text_dir, "localgovjp-utf8-bom.csv"))
    assert sjis[0] == utf8[0]
    assert len(sjis) == len(utf8) == 1917
    header = sjis[0]
    for column in ("pid", "pref"):
        index = header.index(column)
        assert [row[index] for row in sjis] == [row[index] for row in utf8]
    # The two copies are different snapshots (http→https, a few renamed municipalities),
    # so city names must agree everywhere except for those few real renames.
    city = header.index("city")
    renamed = [(a[city], b[city]) for a, b in zip(sjis, utf8, strict=True) if a[city] != b[city]]
    assert len(renamed) <= 3
    assert sjis[1][city] == "札幌市"


def test_cp932_extension_kanji_decodes(text_dir: Path) -> None:
    data = (text_dir / "cp932-mskanji.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("shift_jis")
    assert detect_encoding(data) == "cp932"
    text = decode_bytes(data)
    assert "髙橋淳" in text
    assert text.startswith("名前,年齢,住所\n")


def test_utf16_with_bom_fixture(text_dir: Path) -> None:
    text = _decode_fixture(text_dir, "utf16-bom.csv")
    assert _csv_rows(text)[:2] == [
        ["Stanley Cups", "", ""],
        ["Team", "Location", "Stanley Cups"],
    ]


def test_shift_jis_text_is_readable(text_dir: Path) -> None:
    text = _decode_fixture(text_dir, "shiftjis.txt")
    assert text.startswith("全文検索の技術調査について")
    assert "ライセンス：Apache Lisence 2.0" in text
    assert "開発環境：Java" in text


@pytest.mark.parametrize("codec", ["cp932", "euc_jp", "utf-8"])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_japanese_sentences_detected(codec: str, sentence: str) -> None:
    data = sentence.encode(codec)
    assert detect_encoding(data) == codec
    assert decode_bytes(data) == sentence


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom_encoded_here(codec: str) -> None:
    bom = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
    data = bom + "出張旅費規程\r\n第1条（目的）\r\n".encode(codec)
    assert decode_bytes(data) == "出張旅費規程\n第1条（目的）\n"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_detected_from_nul_pattern(codec: str) -> None:
    data = "Expense report 2024: 交通費 1200 yen\n".encode(codec)
    assert detect_encoding(data) == codec
    assert decode_bytes(data) == "Expense report 2024: 交通費 1200 yen\n"


def test_repeated_boms_are_all_removed() -> None:
    data = codecs.BOM_UTF8 + "\ufeff\ufeff規程".encode()
    assert decode_bytes(data) == "規程"


def test_newlines_are_normalised() -> None:
    data = "一行目\r\n二行目\r三行目\n四行目\r\n".encode("cp932")
    assert decode_bytes(data) == "一行目\n二行目\n三行目\n四行目\n"


def test_empty_input_is_empty_text() -> None:
    assert decode_bytes(b"") == ""


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00",
        b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00",
        bytes(range(256)) * 4,
        b"\x00" * 64,
    ],
    ids=["png", "zip", "all-bytes", "nuls"],
)
def test_binary_is_rejected(data: bytes) -> None:
    with pytest.raises(EncodingError) as excinfo:
        decode_bytes(data, "blob.bin")
    assert excinfo.value.reason == "binary file, not text"
    assert excinfo.value.name == "blob.bin"
    assert "blob.bin" in str(excinfo.value)


@pytest.mark.parametrize("data", [b"caf\xe9", b"\x85\x40abc", b"\xff\xfd\xa0abc"])
def test_undecodable_bytes_are_unknown_encoding(data: bytes) -> None:
    with pytest.raises(ValueError, match="unknown text encoding"):
        decode_bytes(data)
    with pytest.raises(EncodingError):
        detect_encoding(data)


_TEXT = st.text(st.characters(exclude_categories=("Cc", "Cs"), exclude_characters="\ufeff"))


@given(_TEXT)
def test_utf8_round_trips(text: str) -> None:
    assert decode_bytes(text.encode("utf-8")) == text
    assert decode_bytes(codecs.BOM_UTF8 + text.encode("utf-8")) == text


@given(_TEXT)
def test_utf16_with_bom_round_trips(text: str) -> None:
    assert decode_bytes(text.encode("utf-16")) == text
