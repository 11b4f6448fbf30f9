"""ID-like code extraction: a golden table."""

from __future__ import annotations

import pytest

from shirabe.text.identifiers import find_identifiers

GOLDEN: list[tuple[str, list[str]]] = [
    ("", []),
    ("ERR-101 と ERR-102、再び ERR-101", ["ERR-101", "ERR-102"]),
    ("INC-2024-0004 の対応記録", ["INC-2024-0004"]),
    ("AQ-300 の型番と SR-12A の部品", ["AQ-300", "SR-12A"]),
    ("2024-01-05 に発生", []),
    ("ＥＲＲ－１０７ が出た", ["ERR-107"]),
    ("ERRー107 が出た", ["ERR-107"]),
    ("ERR\u2212108 が出た", ["ERR-108"]),
    ("Wi-Fi と e-mail と ABC-DEF", []),
    ("err-101 は小文字", []),
    ("xERR-101 は別の語", []),
    ("ERR101 はハイフンなし", []),
    ("（ERR-101）を参照。", ["ERR-101"]),
    ("エラーERR-103が発生", ["ERR-103"]),
    ("ERR-104-", ["ERR-104"]),
    ("HTTP と JSON", []),
    ("ＡＱ－３００Ａの部品", ["AQ-300A"]),
    ("エラー番号ＥＲＲ－１０７番", ["ERR-107"]),
    ("ｴﾗｰERR-107", ["ERR-107"]),
    ("INC-2024-0004/ERR-107", ["INC-2024-0004", "ERR-107"]),
    ("ERR-107、ERR-108・ERR-109", ["ERR-107", "ERR-108", "ERR-109"]),
    ("型番AQ-300とaq-300", ["AQ-300"]),
    ("v2.3.1 と ISO-9001", ["ISO-9001"]),
    ("JIS-X-0208 の文字", ["JIS-X-0208"]),
    ("ERR-107.", ["ERR-107"]),
    ("ERR_107 と ERR-A", []),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_find_identifiers_golden(text: str, expected: list[str]) -> None:
    assert find_identifiers(text) == expected
