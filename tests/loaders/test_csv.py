"""The CSV/TSV loader on the real fixtures and on small generated files."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from shirabe.loaders.csv import CsvLoader
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for
from shirabe.records import Document, Part


def load(path: Path) -> Document:
    return CsvLoader().load(path, LoadOptions())


def part_with(document: Document, phrase: str) -> Part:
    return next(part for part in document.parts if phrase in part.text)


def rows_by_number(document: Document) -> dict[object, str]:
    return {part.locator["row"]: part.text for part in document.parts if "row" in part.locator}


def test_module_name_does_not_shadow_the_standard_library() -> None:
    assert hasattr(csv, "reader") and csv.__file__ is not None
    assert "shirabe" not in csv.__file__


def test_registered_for_both_suffixes() -> None:
    assert isinstance(loader_for(Path("a.csv")), CsvLoader)
    assert isinstance(loader_for(Path("a.TSV")), CsvLoader)


@pytest.mark.parametrize(
    ("name", "phrase", "row"),
    [
        ("cp932-mskanji.csv", "名前: 髙橋淳\n年齢: 35\n住所: 名古屋", 4),
        ("utf16-bom.csv", "Team: Maple Leafs\nLocation: TOR\nStanley Cups: 13", 5),
        ("prefjp-utf8-bom.csv", "pid: 3\npref: 岩手県", 4),
        ("localgovjp-utf8-bom.csv", "city: 札幌市 中央区", 3),
        ("localgovjp-sjis.csv", "city: 札幌市 中央区", 3),
    ],
)
def test_fixture_records(fixtures: Path, name: str, phrase: str, row: int) -> None:
    document = load(fixtures / "text" / name)
    assert part_with(document, phrase).locator == {"row": row}


@pytest.mark.parametrize(
    "name", ["prefjp-utf8-bom.csv", "localgovjp-utf8-bom.csv", "localgovjp-sjis.csv"]
)
def test_no_header_keeps_a_byte_order_mark(fixtures: Path, name: str) -> None:
    document = load(fixtures / "text" / name)
    assert all("\ufeff" not in part.text for part in document.parts)
    assert document.parts[1].text.startswith("pid: 1\n")


def test_title_line_above_the_header(fixtures: Path) -> None:
    document = load(fixtures / "text" / "utf16-bom.csv")
    assert document.parts[1].text == "## Stanley Cups"


def test_localgov_encodings_agree_where_the_source_rows_agree(fixtures: Path) -> None:
    folder = fixtures / "text"
    utf8_rows = list(
        csv.reader(io.StringIO((folder / "localgovjp-utf8-bom.csv").read_text("utf-8-sig")))
    )
    sjis_rows = list(csv.reader(io.StringIO((folder / "localgovjp-sjis.csv").read_text("cp932"))))
    assert len(utf8_rows) == len(sjis_rows)
    same = {n for n, (a, b) in enumerate(zip(utf8_rows, sjis_rows, strict=True), 1) if a == b}
    utf8 = rows_by_number(load(folder / "localgovjp-utf8-bom.csv"))
    sjis = rows_by_number(load(folder / "localgovjp-sjis.csv"))
    assert set(utf8) == set(sjis) == set(range(2, len(utf8_rows) + 1))
    for number in same - {1}:
        assert utf8[number] == sjis[number], number
    for other in set(utf8) - same:
        assert utf8[other] != sjis[other], other


def test_generated_cp932_with_vendor_kanji(tmp_path: Path) -> None:
    path = tmp_path / "社員.csv"
    path.write_bytes("氏名,部署\n髙橋,総務\n﨑山,営業\n".encode("cp932"))
    document = load(path)
    assert part_with(document, "氏名: 髙橋").text == "氏名: 髙橋\n部署: 総務"
    assert part_with(document, "氏名: 﨑山").locator == {"row": 3}


def test_generated_utf16_tsv(tmp_path: Path) -> None:
    path = tmp_path / "list.tsv"
    path.write_bytes("名前\t値段\t備考\nりんご\t120\t青森, 長野\n".encode("utf-16"))
    assert part_with(load(path), "名前: りんご").text == "名前: りんご\n値段: 120\n備考: 青森, 長野"


@pytest.mark.parametrize("delimiter", [";", "|", "\t"])
def test_generated_delimiters(tmp_path: Path, delimiter: str) -> None:
    path = tmp_path / "data.csv"
    lines = ["商品,区分", "数量", "単価"], ["ペン,黒", "3", "1,200"], ["紙", "10", "5"]
    path.write_text("\n".join(delimiter.join(line) for line in lines) + "\n", encoding="utf-8")
    assert (
        part_with(load(path), "商品,区分: ペン,黒").text
        == "商品,区分: ペン,黒\n数量: 3\n単価: 1,200"
    )


def test_generated_quoted_newlines_blank_lines_and_titles(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text(
        "受付一覧,,\n"
        "出力日,2024-04-01,\n"
        "\n"
        "番号,件名,内容\n"
        '1,照明,"2階の照明が\n点かない"\n'
        "\n"
        "2,空調,冷えない\n",
        encoding="utf-8-sig",
    )
    document = load(path)
    texts = [part.text for part in document.parts]
    assert "## 受付一覧" in texts
    assert part_with(document, "出力日: 2024-04-01").locator == {"row": 2}
    first = part_with(document, "件名: 照明")
    assert first.text == "番号: 1\n件名: 照明\n内容: 2階の照明が 点かない"
    assert first.locator == {"row": 5}
    assert part_with(document, "件名: 空調").locator == {"row": 7}


def test_generated_headerless_file_gets_column_names(tmp_path: Path) -> None:
    path = tmp_path / "raw.csv"
    path.write_text("佐藤,30,東京\n三木,25,大阪\n", encoding="utf-8")
    document = load(path)
    assert part_with(document, "列1: 佐藤").text == "列1: 佐藤\n列2: 30\n列3: 東京"
    assert part_with(document, "列1: 佐藤").locator == {"row": 1}


def test_generated_late_non_utf8_bytes_fall_back_to_full_detection(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    head = "".join(f"{n},item{n},ok\n" for n in range(6000))  # > 64 KiB of ASCII
    path.write_bytes(("id,name,note\n" + head + "9999,髙島屋,東京\n").encode("cp932"))
    document = load(path)
    assert part_with(document, "name: 髙島屋").locator == {"row": 6002}


def test_empty_and_binary_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    assert load(empty).warnings == ["empty file"]
    binary = tmp_path / "binary.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(LoadError):
        load(binary)


def test_large_file_streams(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    with path.open("w", encoding="utf-8") as fh:
        fh.write("id,name,city\n")
        for n in range(20_000):
            fh.write(f"{n},名前{n},都市{n % 47}\n")
    document = load(path)
    assert len(document.parts) == 20_001
    assert document.parts[-1].locator == {"row": 20_001}
