"""Golden tables for cell values: numbers, dates and kinds as a person reads them."""

from __future__ import annotations

import datetime as dt

import pytest

from shirabe.loaders.tabular.values import (
    Kind,
    format_datetime,
    format_number,
    format_value,
    infer_kind,
)


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
