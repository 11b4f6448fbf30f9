"""Row shapes: header detection and tables that read down their columns."""

from __future__ import annotations

import datetime as dt

from shirabe.loaders.tabular.rows import Cell, Row, find_header, is_vertical

from tests.loaders.tabular.builders import row


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


def test_horizontal_table_is_not_vertical() -> None:
    rows = [
        row(7, "No.", "氏名", "誕生日"),
        row(8, 1, "阿部一郎", dt.datetime(2000, 4, 1)),
        row(9, 2, "泉太郎", dt.datetime(2000, 4, 2)),
    ]
    assert not is_vertical(rows)
