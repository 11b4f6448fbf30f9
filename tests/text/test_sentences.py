"""Sentence boundaries: a golden table plus structural properties of the spans."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from shirabe.text.sentences import sentence_spans, split_sentences

# (text, the sentences as (start, end, text[start:end])): offsets are exact, the text is there to
# read the table by.
GOLDEN: list[tuple[str, list[tuple[int, int, str]]]] = [
    ("", []),
    ("   \n\n　", []),
    ("終わりのない文", [(0, 7, "終わりのない文")]),
    ("。", [(0, 1, "。")]),
    ("。。", [(0, 2, "。。")]),
    ("今日は晴れ。明日は雨！", [(0, 6, "今日は晴れ。"), (6, 11, "明日は雨！")]),
    ("価格は1,200円。送料は無料！", [(0, 10, "価格は1,200円。"), (10, 16, "送料は無料！")]),
    # runs of terminators stay together
    ("本当？！すごい。", [(0, 4, "本当？！"), (4, 8, "すごい。")]),
    ("えっ！？！？本当。", [(0, 6, "えっ！？！？"), (6, 9, "本当。")]),
    ("What?! Yes", [(0, 6, "What?!"), (7, 10, "Yes")]),
    ("ERR-107が出た?再起動!", [(0, 11, "ERR-107が出た?"), (11, 15, "再起動!")]),
    ("全角ピリオド．次の文", [(0, 7, "全角ピリオド．"), (7, 10, "次の文")]),
    # a full-width full stop between digits is a decimal point
    ("満水（約３．６Ｌ）です。次", [(0, 12, "満水（約３．６Ｌ）です。"), (12, 13, "次")]),
    ("第３．次の章", [(0, 3, "第３．"), (3, 6, "次の章")]),
    # closing brackets and quotes after a terminator belong to its sentence
    ("「はい。」と言った。", [(0, 5, "「はい。」"), (5, 10, "と言った。")]),
    ("「これは？」「それだ。」", [(0, 6, "「これは？」"), (6, 12, "「それだ。」")]),
    ("彼は「本当？」』と聞いた。", [(0, 8, "彼は「本当？」』"), (8, 13, "と聞いた。")]),
    ("『終わり！』（完）", [(0, 6, "『終わり！』"), (6, 9, "（完）")]),
    ("よ！」。次", [(0, 4, "よ！」。"), (4, 5, "次")]),
    ("(注意!) 次へ", [(0, 5, "(注意!)"), (6, 8, "次へ")]),
    ('"Stop!" he said', [(0, 7, '"Stop!"'), (8, 15, "he said")]),
    ("【重要】必ず確認。", [(0, 9, "【重要】必ず確認。")]),  # an opening bracket ends nothing
    # an ASCII full stop never ends a sentence
    ("v2.3.1 を 1.5mL 使う。", [(0, 18, "v2.3.1 を 1.5mL 使う。")]),
    (
        "バージョンはv2.3.1です。容量は1.5mL。",
        [(0, 15, "バージョンはv2.3.1です。"), (15, 24, "容量は1.5mL。")],
    ),
    # every line break ends a sentence; blank lines give none
    ("一行目\n二行目", [(0, 3, "一行目"), (4, 7, "二行目")]),
    ("一行目\r\n二行目", [(0, 3, "一行目"), (5, 8, "二行目")]),
    ("文。\n\n\n次。", [(0, 2, "文。"), (5, 7, "次。")]),
    (
        "手順:\n- 電源を切る。\n- 待つ",
        [(0, 3, "手順:"), (4, 12, "- 電源を切る。"), (13, 17, "- 待つ")],
    ),
    # whitespace around a sentence is not part of it
    ("  前後の空白。  \n\n  ", [(2, 8, "前後の空白。")]),
    ("　文A。　文B。\n", [(1, 4, "文A。"), (5, 8, "文B。")]),
    ("本当？ はい。", [(0, 3, "本当？"), (4, 7, "はい。")]),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_sentence_spans_golden(text: str, expected: list[tuple[int, int, str]]) -> None:
    assert sentence_spans(text) == [(start, end) for start, end, _ in expected]


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_split_sentences_golden(text: str, expected: list[tuple[int, int, str]]) -> None:
    assert split_sentences(text) == [sentence for _, _, sentence in expected]


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
