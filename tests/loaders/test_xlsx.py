"""The Excel loader on the real fixtures and on small generated workbooks."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import openpyxl
import pytest

from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for
from shirabe.loaders.xlsx import XlsxLoader
from shirabe.records import Document, Part


def load(path: Path) -> Document:
    return XlsxLoader().load(path, LoadOptions())


def texts(document: Document) -> str:
    return "\n\n".join(part.text for part in document.parts)


def part_with(document: Document, phrase: str, sheet: object = None) -> Part:
    return next(
        part
        for part in document.parts
        if phrase in part.text and sheet in (None, part.locator.get("sheet"))
    )


def test_registered_for_both_suffixes() -> None:
    assert isinstance(loader_for(Path("a.xlsx")), XlsxLoader)
    assert isinstance(loader_for(Path("b.XLSM")), XlsxLoader)


@pytest.mark.parametrize(
    ("name", "phrase", "locator"),
    [
        (
            "attendance.xlsx",
            "作業内容: 要件定義の打ち合わせ。資料修正。",
            {"sheet": "作業報告書", "row": 12},
        ),
        ("attendance.xlsx", "作業者: 山田 太郎", {"sheet": "作業報告書", "row": 3}),
        (
            "attendance.xlsx",
            "作業日数: 19\n作業合計時間: 157:00",
            {"sheet": "作業報告書", "row": 40},
        ),
        (
            "anno_IterateTables.xlsx",
            "No.: 3\n氏名: 山田太郎\n誕生日: 1999-04-03",
            {"sheet": "通常の表", "row": 18},
        ),
        (
            "anno_IterateTables.xlsx",
            "氏名: 泉太郎\n誕生日: 2000-04-02",
            {"sheet": "縦方向の表", "row": 7, "column": "C"},
        ),
        ("51519.xlsx", "Name: 豊田\n", {"sheet": "Sheet1", "row": 2}),
        (
            "2023-half-year-analyses-by-segment.xlsx",
            "In millions of CHF: Zone EUR\nSales (a): 9467",
            {"sheet": "OS-Rev.and results 30 06 2023", "row": 10},
        ),
        ("test.xlsx", "ColA: 13", {"sheet": "09060124-b5e7-4717-9d07-3c046eb", "row": 5}),
    ],
)
def test_fixture_records(
    fixtures: Path, name: str, phrase: str, locator: dict[str, object]
) -> None:
    document = load(fixtures / "office" / name)
    assert part_with(document, phrase, locator["sheet"]).locator == locator


def test_fixture_titles_and_headings(fixtures: Path) -> None:
    attendance = load(fixtures / "office" / "attendance.xlsx")
    assert attendance.parts[0].text == "# attendance"
    assert "## 作業報告書" in texts(attendance)
    assert "### ■作業時間/作業内容" in texts(attendance)
    assert "### 作業報告書" not in texts(attendance)  # same as the sheet name
    segment = load(fixtures / "office" / "2023-half-year-analyses-by-segment.xlsx")
    assert "### 3. Analyses by segment / 3.1 Operating segments / Revenue and results" in texts(
        segment
    )


def test_furigana_fixture_reads_base_text_only(fixtures: Path) -> None:
    text = texts(load(fixtures / "office" / "51519.xlsx"))
    assert "Name: 豊田\n" in text
    assert "豊田トヨ" not in text
    assert "Name: 本田\n" in text


def test_each_data_row_is_one_part_of_bounded_size(fixtures: Path) -> None:
    document = load(fixtures / "office" / "test.xlsx")
    rows = [p for p in document.parts if "row" in p.locator and p.locator["sheet"] == "Sheet1"]
    assert [p.locator["row"] for p in rows] == list(range(2, 25))
    assert all(len(p.text) < 400 for p in rows)


@pytest.mark.parametrize(
    ("name", "reason"),
    [("password_protected.xlsx", "encrypted, password required"), ("invalid.xlsx", "not a valid")],
)
def test_unreadable_fixtures(fixtures: Path, name: str, reason: str) -> None:
    with pytest.raises(LoadError) as info:
        load(fixtures / "office" / name)
    assert reason in info.value.reason


def test_corrupt_workbook_part_is_a_load_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "x"
    workbook.save(path)
    damaged = tmp_path / "damaged.xlsx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(damaged, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "xl/workbook.xml":
                data = data[: len(data) // 2]
            dst.writestr(item, data)
    with pytest.raises(LoadError) as info:
        load(damaged)
    assert "corrupt or unreadable Excel file" in info.value.reason


def test_generated_workbook(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "売上"
    sheet["A1"] = "2024年度 売上一覧"
    sheet.merge_cells("A1:E1")
    sheet["A3"] = "担当"
    sheet["B3"] = "山田太郎"
    sheet.append([])
    sheet.append(["日付", "地域", "金額", "達成率", "確定"])  # row 5
    sheet.merge_cells("B5:C5")  # a merged header over two columns
    sheet.append([dt.datetime(2024, 4, 1), "東京", 1200.0, 0.125, True])
    sheet.append([dt.datetime(2024, 4, 2, 13, 30), "大阪", 0.1 + 0.2, 1.0, False])
    sheet["D6"].number_format = "0.0%"
    sheet["D7"].number_format = "0%"
    sheet["F5"] = "合計"
    sheet["F6"] = "=C6*2"  # a formula never calculated: no cached value
    sheet.merge_cells("A8:A9")
    sheet["A8"] = dt.datetime(2024, 4, 3)
    sheet["B8"] = "福岡"
    sheet["B9"] = "札幌"
    hidden = workbook.create_sheet("隠し")
    hidden.sheet_state = "hidden"
    hidden.append(["コード", "名称", "数量"])
    hidden.append(["A-1", "秘密の品目", 3])
    workbook.create_sheet("空")
    path = tmp_path / "sales.xlsx"
    workbook.save(path)

    document = load(path)
    text = texts(document)
    assert "### 2024年度 売上一覧" in text
    assert part_with(document, "担当: 山田太郎").locator == {"sheet": "売上", "row": 3}
    first = part_with(document, "日付: 2024-04-01")
    assert first.locator == {"sheet": "売上", "row": 6}
    assert first.text.split("\n") == [
        "日付: 2024-04-01",
        "地域: 東京 1200",
        "達成率: 12.5%",
        "確定: TRUE",
    ]
    second = part_with(document, "日付: 2024-04-02 13:30")
    assert "地域: 大阪 0.3" in second.text
    assert "達成率: 100%" in second.text
    assert "確定: FALSE" in second.text
    assert "=C6" not in text and "合計:" not in text
    assert "地域: 札幌" in part_with(document, "地域: 札幌").text
    assert part_with(document, "地域: 札幌").text.startswith("日付: 2024-04-03")  # vertical merge
    assert part_with(document, "名称: 秘密の品目").locator == {"sheet": "隠し", "row": 2}
    assert "## 空" not in text


_SST = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _with_furigana(path: Path, target: Path) -> None:
    """Rewrite a one-sheet workbook so its cells carry phonetic runs as Japanese Excel saves
    them: shared strings (plain and rich text) and an inline string, each with ``<rPh>``."""
    strings = (
        f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{_MAIN}" count="3" uniqueCount="3">'
        '<si><t>氏名</t><phoneticPr fontId="1"/></si>'
        '<si><t>豊田</t><rPh sb="0" eb="2"><t>トヨタ</t></rPh><phoneticPr fontId="1"/></si>'
        "<si><r><t>本田</t></r><r><rPr><b/></rPr><t>技研</t></r>"
        '<rPh sb="0" eb="2"><t>ホンダ</t></rPh><phoneticPr fontId="1"/></si>'
        "</sst>"
    )
    cells = (
        '<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c>'
        '<c r="B1" t="inlineStr"><is><t>番号</t></is></c>'
        '<c r="C1" t="inlineStr"><is><t>備考</t></is></c></row>'
        '<row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>1</v></c></row>'
        '<row r="3"><c r="A3" t="s"><v>2</v></c><c r="B3"><v>2</v></c></row>'
        '<row r="4"><c r="A4" t="inlineStr"><is><t>日本</t>'
        '<rPh sb="0" eb="2"><t>ニホン</t></rPh></is></c><c r="B4"><v>3</v></c></row>'
        "</sheetData>"
    )
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            data = src.read(item).decode()
            if item.filename == "xl/worksheets/sheet1.xml":
                start, end = data.index("<sheetData"), data.index("</sheetData>") + 12
                data = data[:start] + cells + data[end:]
            elif item.filename == "[Content_Types].xml":
                override = f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_SST}"/>'
                data = data.replace("</Types>", override + "</Types>")
            dst.writestr(item, data)
        dst.writestr("xl/sharedStrings.xml", strings)


def test_furigana_runs_are_dropped(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "placeholder"
    plain = tmp_path / "plain.xlsx"
    workbook.save(plain)
    rewritten = tmp_path / "furigana.xlsx"
    _with_furigana(plain, rewritten)
    text = texts(load(rewritten))
    assert "氏名: 豊田" in text
    assert "氏名: 本田技研" in text
    assert "氏名: 日本" in text
    assert "トヨタ" not in text and "ホンダ" not in text and "ニホン" not in text
