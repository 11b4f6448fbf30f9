"""Golden tables for the spreadsheet helpers: values, header detection, layout, delimiters."""

from __future__ import annotations

import datetime as dt

import pytest

from shirabe.loaders.tabular import (
    Cell,
    Kind,
    Note,
    Record,
    Row,
    Title,
    escape_line,
    find_header,
    format_datetime,
    format_number,
    format_value,
    infer_kind,
    is_vertical,
    layout,
    number_name,
    sniff_delimiter,
)


def row(number: int, *values: object, start: int = 1) -> Row:
    """A row from plain values (``None`` leaves a cell empty); kinds as a CSV reader infers."""
    cells = []
    for offset, value in enumerate(values):
        if value is None:
            continue
        if isinstance(value, Cell):
            cells.append(value)
            continue
        formatted = format_value(value)
        assert formatted is not None
        text, kind = formatted
        cells.append(Cell(start + offset, text, infer_kind(text) if kind == "text" else kind))
    return Row(number, tuple(cells))


@pytest.mark.parametrize(
    ("value", "number_format", "expected"),
    [
        (1.0, "General", "1"),
        (12553, "#,##0\\ ;\\(#,##0\\)", "12553"),
        (0.1 + 0.2, "General", "0.3"),
        (1 / 3, "General", "0.333333333333333"),
        (0.25, "0%", "25%"),
        (0.1234, "0.0%", "12.3%"),
        (73.33333333333333, "0_ ", "73"),
        (3.14159, "0.00", "3.14"),
        (1234.5, "#,##0.0", "1234.5"),
        (-0.0001, "0.00", "0.00"),
        (-81, '_(* #,##0_);_(* \\(#,##0\\);_(* "—"_);_(@_)', "-81"),
        (2.5, '0.0"円"', "2.5"),
        (1e20, "General", "1e+20"),
    ],
)
def test_format_number(value: float, number_format: str, expected: str) -> None:
    assert format_number(value, number_format) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.datetime(2024, 4, 1), "2024-04-01"),
        (dt.datetime(2024, 4, 1, 9, 30), "2024-04-01 9:30"),
        (dt.datetime(2024, 4, 1, 9, 30, 15), "2024-04-01 9:30:15"),
        (dt.date(2018, 4, 2), "2018-04-02"),
        (dt.time(0, 0), "0:00"),
        (dt.time(18, 5), "18:05"),
        (dt.timedelta(days=6, hours=13), "157:00"),
    ],
)
def test_format_datetime(
    value: dt.datetime | dt.date | dt.time | dt.timedelta, expected: str
) -> None:
    assert format_datetime(value) == expected


def test_format_value_kinds() -> None:
    assert format_value(None) is None
    assert format_value("  \n ") is None
    assert format_value(True) == ("TRUE", "bool")
    assert format_value(3) == ("3", "number")
    assert format_value("山田\u3000太郎\n様") == ("山田 太郎 様", "text")
    assert format_value(dt.datetime(2000, 4, 1)) == ("2000-04-01", "date")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("42", "number"),
        ("-1,234.5", "number"),
        ("12.5%", "number"),
        ("43.06208877", "number"),
        ("2024/04/01", "date"),
        ("2024年4月1日", "date"),
        ("9:30", "date"),
        ("TRUE", "bool"),
        ("札幌市", "text"),
        ("JP-01", "text"),
        ("https://www.pref.iwate.jp/", "text"),
    ],
)
def test_infer_kind(text: str, kind: Kind) -> None:
    assert infer_kind(text) == kind


def test_escape_line_guards_markdown_structure() -> None:
    assert escape_line("# 見出し: 1") == "\\# 見出し: 1"
    assert escape_line("| a: b") == "\\| a: b"
    assert escape_line("```: x") == "\\```: x"
    assert escape_line("氏名: #1") == "氏名: #1"


def test_find_header_prefers_the_row_with_most_words() -> None:
    rows = [
        row(5, "番号", 1),
        row(6, "クラス名", "1年2組", "備考"),
        row(7, "No.", "氏名", "誕生日", "住所"),
        row(8, 1, "阿部一郎", dt.datetime(2000, 4, 1), "東京"),
    ]
    assert find_header(rows) == 2


def test_find_header_counts_merged_width_on_ties() -> None:
    rows = [
        row(6, "クラス名", "1年", "2組", start=2),
        Row(7, (Cell(2, "No."), Cell(3, "氏名"), Cell(4, "電話番号", span=3))),
        row(8, 1, "阿部一郎", "090", "1111", "2222", start=2),
    ]
    assert find_header(rows) == 1


def test_find_header_none_when_data_starts_at_once() -> None:
    assert find_header([row(1, 1, 2, 3), row(2, 4, 5, 6)]) is None


def test_layout_title_key_values_header_and_rows() -> None:
    rows = [
        row(1, "作業報告書", start=6),
        row(3, "対象年月", 43191, start=7),
        row(4, "作業者", "山田太郎", start=7),
        row(7, "■作業時間", start=2),
        row(8, "月日", "開始時刻", "作業内容", start=2),
        row(9, dt.datetime(2018, 4, 2), dt.time(9, 0), "要件定義", start=2),
        row(10, dt.datetime(2018, 4, 3), None, "設計", start=2),
    ]
    events = list(layout(rows))
    assert events == [
        Title("作業報告書", 1),
        Record(("対象年月: 2018-04-01", "作業者: 山田太郎"), 3),
        Title("■作業時間", 7),
        Record(("月日: 2018-04-02", "開始時刻: 9:00", "作業内容: 要件定義"), 9),
        Record(("月日: 2018-04-03", "作業内容: 設計"), 10),
    ]


def test_layout_header_separated_from_data_by_a_blank_row() -> None:
    rows = [
        row(6, "In millions of CHF", None, None, "January–June 2023"),
        row(7, None, "Sales", "Profit", "Depreciation"),
        row(9, "Zone NA", 12553, 2713, -337),
    ]
    events = list(layout(rows))
    assert events == [
        Title("January–June 2023", 6),
        Record(
            ("In millions of CHF: Zone NA", "Sales: 12553", "Profit: 2713", "Depreciation: -337"),
            9,
        ),
    ]


def test_layout_tables_separated_by_blank_rows_each_get_a_header() -> None:
    rows = [
        row(1, "名前", "点数"),
        row(2, "阿部", 90),
        row(3, "泉", 80),
        row(4, "鈴木", 70),
        row(5, "林", 60),
        row(6, "山田", 50),
        row(7, "佐藤", 40),
        row(8, "高橋", 30),
        row(9, "田中", 20),
        row(10, "伊藤", 10),
        row(11, "渡辺", 5),
        row(14, "クラス", "担任", "人数"),
        row(15, "1組", "山本", 30),
    ]
    events = list(layout(rows))
    records = [e for e in events if isinstance(e, Record)]
    assert records[0] == Record(("名前: 阿部", "点数: 90"), 2)
    assert records[-1] == Record(("クラス: 1組", "担任: 山本", "人数: 30"), 15)
    assert len(records) == 11


def test_layout_first_row_is_data_gets_column_names() -> None:
    rows = [row(1, "佐藤", 30, "東京"), row(2, "三木", 25, "大阪")]
    events = list(layout(rows, number_name))
    assert events[0] == Record(("列1: 佐藤", "列2: 30", "列3: 東京"), 1)


def test_layout_vertical_table_gives_one_record_per_column() -> None:
    rows = [
        row(7, "No.", 1, 2),
        row(8, "氏名", "阿部一郎", "泉太郎"),
        row(9, "誕生日", dt.datetime(2000, 4, 1), dt.datetime(2000, 4, 2)),
    ]
    assert is_vertical(rows)
    events = list(layout(rows))
    assert events == [
        Record(("No.: 1", "氏名: 阿部一郎", "誕生日: 2000-04-01"), 7, 2),
        Record(("No.: 2", "氏名: 泉太郎", "誕生日: 2000-04-02"), 7, 3),
    ]


def test_horizontal_table_is_not_vertical() -> None:
    rows = [
        row(7, "No.", "氏名", "誕生日"),
        row(8, 1, "阿部一郎", dt.datetime(2000, 4, 1)),
        row(9, 2, "泉太郎", dt.datetime(2000, 4, 2)),
    ]
    assert not is_vertical(rows)


def test_layout_totals_row_keeps_its_own_labels() -> None:
    rows = [row(8, "月日", "開始", "終了")]
    rows += [row(n, dt.datetime(2018, 4, n), dt.time(9), dt.time(18)) for n in range(9, 13)]
    rows.append(row(13, "作業日数", 19, None))
    events = list(layout(rows))
    assert events[-1] == Record(("作業日数: 19",), 13)


def test_layout_merged_header_joins_the_values_beneath() -> None:
    rows = [
        Row(7, (Cell(2, "No."), Cell(3, "氏名"), Cell(4, "電話番号", span=3))),
        row(8, 1, "阿部一郎", "090", "1111", "1111", start=2),
    ]
    events = list(layout(rows))
    assert events == [Record(("No.: 1", "氏名: 阿部一郎", "電話番号: 090 1111 1111"), 8)]


def test_layout_trailing_long_text_is_a_note() -> None:
    rows = [
        row(1, "名前", "点数"),
        row(2, "阿部", 90),
        row(5, "■その他連絡事項"),
        row(6, "スケジュール通り完了しました。品質は問題ありません。"),
    ]
    events = list(layout(rows))
    assert events[-2:] == [
        Title("■その他連絡事項", 5),
        Note("スケジュール通り完了しました。品質は問題ありません。", 6),
    ]


def test_layout_one_column_list_uses_its_first_cell_as_header() -> None:
    rows = [row(2, "対象年月"), row(3, 43101), row(4, 43132), row(5, 43160)]
    events = list(layout(rows))
    assert events == [
        Record(("対象年月: 2018-01-01",), 3),
        Record(("対象年月: 2018-02-01",), 4),
        Record(("対象年月: 2018-03-01",), 5),
    ]


def test_layout_streams_without_reading_ahead() -> None:
    consumed = 0

    def rows() -> object:
        nonlocal consumed
        yield row(1, "id", "name")
        for n in range(2, 100_000):
            consumed = n
            yield row(n, n, f"name{n}")

    events = layout(rows())  # type: ignore[arg-type]
    first = next(e for e in events if isinstance(e, Record))
    assert first == Record(("id: 2", "name: name2"), 2)
    assert consumed < 50


@pytest.mark.parametrize(
    ("sample", "delimiter"),
    [
        ("a,b,c\n1,2,3\n4,5,6\n", ","),
        ("a\tb\tc\n1\t2\t3\n", "\t"),
        ("a;b;c\n1,5;2;3\n4;5,5;6\n", ";"),
        ("a|b|c\n1|2|3\n", "|"),
        ("名前,住所,備考\n山田,東京都千代田区,「はい、いいえ」\n", ","),
        ('氏名\t備考\n山田\t"a,b,c,d"\n佐藤\t"e,f\ng,h"\n', "\t"),
        ('id,text\n1,"改行を\n含む、文"\n2,"引用""符"\n', ","),
        ("1 only\n2 only\n", ","),
    ],
)
def test_sniff_delimiter(sample: str, delimiter: str) -> None:
    assert sniff_delimiter(sample) == delimiter


def test_sniff_delimiter_ignores_a_cut_last_record() -> None:
    sample = "a;b;c\n1;2;3\n4;5;6\n7,8"
    assert sniff_delimiter(sample, complete=False) == ";"
