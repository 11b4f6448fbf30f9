"""Golden tables for the layout of a sheet: titles, key/value blocks, headers, records, notes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from shirabe.loaders.tabular.layout import Note, Record, Title, layout
from shirabe.loaders.tabular.rows import Cell, Row, is_vertical
from shirabe.loaders.tabular.values import number_name

from tests.loaders.tabular.builders import row


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

    def rows() -> Iterator[Row]:
        nonlocal consumed
        yield row(1, "id", "name")
        for n in range(2, 100_000):
            consumed = n
            yield row(n, n, f"name{n}")

    events = layout(rows())
    first = next(e for e in events if isinstance(e, Record))
    assert first == Record(("id: 2", "name: name2"), 2)
    assert consumed < 50
