"""Sentence boundaries: a golden table plus structural properties of the spans."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shirabe.text.sentences import sentence_spans, split_sentences

GOLDEN: list[tuple[str, list[str]]] = [
    ("", []),
    ("   \n\n　", []),
    ("今日は晴れ。明日は雨！", ["今日は晴れ。", "明日は雨！"]),
    ("本当？！すごい。", ["本当？！", "すごい。"]),
    ("What?! Yes", ["What?!", "Yes"]),
    ("「はい。」と言った。", ["「はい。」", "と言った。"]),
    ("『終わり！』（完）", ["『終わり！』", "（完）"]),
    ("(注意!) 次へ", ["(注意!)", "次へ"]),
    ("よ！」。次", ["よ！」。", "次"]),
    ('"Stop!" he said', ['"Stop!"', "he said"]),
    ("全角ピリオド．次の文", ["全角ピリオド．", "次の文"]),
    ("v2.3.1 を 1.5mL 使う。", ["v2.3.1 を 1.5mL 使う。"]),
    ("一行目\n二行目", ["一行目", "二行目"]),
    ("  前後の空白。  \n\n  ", ["前後の空白。"]),
    ("手順:\n- 電源を切る。\n- 待つ", ["手順:", "- 電源を切る。", "- 待つ"]),
    ("【重要】必ず確認。", ["【重要】必ず確認。"]),
    ("。。", ["。。"]),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_split_sentences_golden(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_spans_are_offsets_into_the_text() -> None:
    text = "　文A。　文B。\n"
    assert sentence_spans(text) == [(1, 4), (5, 8)]


@given(st.text(alphabet="あ漢A1 .。！？!?」）\n　", max_size=60))
def test_spans_are_ordered_trimmed_and_cover_every_visible_character(text: str) -> None:
    spans = sentence_spans(text)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end
        assert not text[start].isspace()
        assert not text[end - 1].isspace()
        assert "\n" not in text[start:end]
        previous_end = end
    covered = "".join(text[start:end] for start, end in spans)
    assert [c for c in covered if not c.isspace()] == [c for c in text if not c.isspace()]
