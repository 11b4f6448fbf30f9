"""Cell values as a person reads them in a sheet: numbers, dates, kinds and column names."""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Literal

Kind = Literal["text", "number", "date", "bool"]

_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"[-+−]?[¥$€£]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?|[-+]?\.\d+%?")
_DATE = re.compile(
    r"(?:\d{4}[-/.年]\d{1,2}(?:[-/.月]\d{1,2}日?)?|\d{1,2}[/月]\d{1,2}日?|\d{1,2}:\d{2}(?::\d{2})?)"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?"
)
_DECIMALS = re.compile(r"0\.(0+)")
_QUOTED = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')
_DATE_KEY = re.compile(r"年月|年月日|日付|期日|生年月日|(?i:date)")
_EXCEL_EPOCH = dt.datetime(1899, 12, 30)


def clean_text(text: str) -> str:
    """``text`` on one line: whitespace runs (line breaks too) become one space."""
    return _SPACE.sub(" ", text).strip()


def infer_kind(text: str) -> Kind:
    """The kind of a cell given only its text (CSV): number, date, boolean or text."""
    stripped = text.strip()
    if _NUMBER.fullmatch(stripped):
        return "number"
    if _DATE.fullmatch(stripped):
        return "date"
    if stripped.upper() in {"TRUE", "FALSE"}:
        return "bool"
    return "text"


def format_number(value: float, number_format: str = "General") -> str:
    """A number as a person reads it in the sheet, without binary float noise.

    Integral values lose their ``.0``; percentages (``0.0%``) are scaled and rounded to the
    format's decimals; a format with fixed decimals (``0.00``, ``#,##0.0``, ``0_``) rounds
    to them; anything else keeps 15 significant digits, which turns 0.30000000000000004
    back into 0.3. Thousands separators and currency signs are not added: the digits are
    what a search matches.
    """
    if math.isnan(value) or math.isinf(value):
        return str(value)
    fmt = _QUOTED.sub("", number_format.split(";", maxsplit=1)[0]) if number_format else ""
    percent = "%" in fmt
    if percent:
        value *= 100
    decimals: int | None = None
    if fmt and fmt.lower() != "general" and ("0" in fmt or "#" in fmt):
        match = _DECIMALS.search(fmt)
        decimals = len(match[1]) if match else 0
    if decimals is not None:
        text = f"{value:.{decimals}f}"
        if text.startswith("-") and float(text) == 0:
            text = text[1:]
    else:
        text = _general(value)
    return text + "%" if percent else text


def _general(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}"


def format_datetime(value: dt.datetime | dt.date | dt.time | dt.timedelta) -> str:
    """ISO dates (``2024-04-01``), with the time only when it is not midnight; times as
    ``9:00``; durations as total hours (``158:00``, as Excel's ``[h]:mm``)."""
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return f"{value.date().isoformat()} {_clock(value.time())}"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return _clock(value)
    seconds = round(value.total_seconds())
    sign = "-" if seconds < 0 else ""
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


def _clock(value: dt.time) -> str:
    text = f"{value.hour}:{value.minute:02d}"
    return text + f":{value.second:02d}" if value.second else text


def format_value(value: object, number_format: str = "General") -> tuple[str, Kind] | None:
    """A cell value as ``(text, kind)``, or ``None`` when the cell shows nothing."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE"), "bool"
    if isinstance(value, int | float):
        return format_number(value, number_format), "number"
    if isinstance(value, dt.datetime | dt.date | dt.time | dt.timedelta):
        return format_datetime(value), "date"
    text = clean_text(str(value))
    return (text, "text") if text else None


def serial_to_date(serial: float) -> str | None:
    """An Excel date serial (days since 1899-12-30) as an ISO date, if it is plausible
    (1950 to 2100); used only for values under a header that names a date."""
    if not 18264 <= serial <= 73415:
        return None
    return format_datetime(_EXCEL_EPOCH + dt.timedelta(days=serial))


def names_a_date(header: str) -> bool:
    """Whether a header or key says its values are dates (``対象年月``, ``日付``, ``Date``)."""
    return bool(_DATE_KEY.search(header))


def column_letter(column: int) -> str:
    """``1`` → ``A``, ``27`` → ``AA``."""
    letters = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def letter_name(column: int) -> str:
    """The name of a column without a header in a sheet: ``列C``."""
    return f"列{column_letter(column)}"


def number_name(column: int) -> str:
    """The name of a column without a header in a CSV file: ``列3``."""
    return f"列{column}"
