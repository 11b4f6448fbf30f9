"""The canonical form of a name compared for identity (categories, access-map names, groups):
hand-written pairs of names that only look alike."""

from __future__ import annotations

import pytest

from shirabe.text.paths import canonical_name


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("人事", "人事"),
        ("\u2f08事", "人事"),  # ⼈: the Kangxi radical, not the ideograph
        ("人事.", "人事"),
        ("人事. .", "人事"),
        ("人事 ", "人事"),
        ("人事\u3000", "人事"),  # an ideographic space
        (" 人事", "人事"),
        ("人\u200b事", "人事"),  # a zero-width space
        ("\ufeff人事", "人事"),
        ("人事\ufe0f", "人事"),  # a variation selector: drawn as nothing
        ("人事\U000e0100", "人事"),  # an ideographic variation selector
        ("人\u034f事", "人事"),  # the combining grapheme joiner
        ("人事\u3164", "人事"),  # a Hangul filler, blank where it is drawn
        ("人事\uffa0", "人事"),  # its half-width form
        ("人事\u115f", "人事"),
        ("\u2800人事\u2800", "人事"),  # the braille blank, white space to the eye
        ("e\u034f\u0301", "\u00e9"),  # what dropping leaves is composed
        ("ＨＲ", "HR"),
        ("ｶﾞｲﾄﾞ", "ガイド"),  # half-width katakana, the voiced mark composed
        ("\u30ab\u3099\u30a4\u30c8\u3099", "ガイド"),  # NFD
        ("経理.v2", "経理.v2"),  # a dot inside a name stays
        ("Hr", "Hr"),  # case is part of a name
        ("...", ""),
        ("", ""),
    ],
)
def test_names_that_only_look_alike_are_one(name: str, canonical: str) -> None:
    assert canonical_name(name) == canonical
    assert canonical_name(canonical) == canonical  # once is enough
