"""Delimiter sniffing on CSV-like samples."""

from __future__ import annotations

import pytest

from shirabe.loaders.tabular.delimited import sniff_delimiter


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
