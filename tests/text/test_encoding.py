"""Encoding detection on real Japanese files and on text encoded here."""

from __future__ import annotations

import codecs
import csv
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shirabe.text.encoding import EncodingError, decode_bytes, detect_encoding

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
