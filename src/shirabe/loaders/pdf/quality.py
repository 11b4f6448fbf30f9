"""Whether extracted text is real text or noise: ``(cid:N)`` runs, replacement and private-use
characters, controls, mojibake, and glyph ids mapped to a jumble of scripts.

The loader asks it of every text layer, pypdf's second opinion and OCR output alike.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

GARBAGE_RATIO = 0.10
"""A text whose share of suspicious characters reaches this is treated as having no text."""
MIN_TEXT_CHARS = 3
"""Fewer visible characters than this on a page means no usable text layer."""

_CID = re.compile(r"\(cid:\d+\)")
_SPACE = re.compile(r"\s+")
_ALLOWED_CONTROLS = frozenset("\t\n\r\f")
# Windows-1252 characters in 0x80-0x9F: what UTF-8 continuation bytes look like in cp1252.
_CP1252_SPECIALS = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"
_MOJIBAKE = re.compile(rf"[\u00c2-\u00f4][\u0080-\u00bf{_CP1252_SPECIALS}]+")
_RARE_SYMBOL_RUN = re.compile(rf"[\u00a1-\u00bf\u00d7\u00f7\u02b0-\u02ff{_CP1252_SPECIALS}]{{3,}}")
_COMMON_SCRIPTS = frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "FULLWIDTH"})


@dataclass(frozen=True, slots=True)
class TextQuality:
    """How much of a text looks like noise, and why."""

    visible: int
    """Visible characters, counting each ``(cid:N)`` as one."""
    suspicious: int
    reasons: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        return self.suspicious / self.visible if self.visible else 0.0

    @property
    def usable(self) -> bool:
        """Enough visible characters, and few enough of them suspicious."""
        return self.visible >= MIN_TEXT_CHARS and self.ratio < GARBAGE_RATIO


def text_quality(text: str) -> TextQuality:
    """Count the characters of ``text`` that real text almost never contains.

    Suspicious are: ``(cid:N)`` placeholders (glyphs without a Unicode mapping), U+FFFD,
    private-use and unassigned code points, control characters, UTF-8 read as Latin-1 or
    cp1252 ("ã\\x81\\x82", "Ã©"), runs of three or more rare Latin-1 symbols ("™—›"),
    combining marks with no letter to sit on, and letters of minor scripts when three or more
    of them are mixed (glyph ids mapped to arbitrary code points give Greek, Syriac, Bengali and
    Thai side by side). A few odd glyphs in a long page stay under :data:`GARBAGE_RATIO`.
    """
    cids = len(_CID.findall(text))
    text = _CID.sub("", text)
    compact = _SPACE.sub("", text)
    visible = len(compact) + cids
    counts: Counter[str] = Counter()
    if cids:
        counts["cid"] = cids
    counts["mojibake"] = sum(len(m) for m in _MOJIBAKE.findall(compact) if _is_mojibake(m))
    counts["rare symbols"] = sum(len(m) for m in _RARE_SYMBOL_RUN.findall(compact))
    scripts: Counter[str] = Counter()
    previous = ""
    for char in compact:
        category = unicodedata.category(char)
        if char == "\ufffd":
            counts["replacement"] += 1
        elif category in ("Co", "Cn", "Cs"):
            counts["private use"] += 1
        elif category == "Cc" and char not in _ALLOWED_CONTROLS:
            counts["control"] += 1
        elif category == "Mn" and not (previous and unicodedata.category(previous)[0] == "L"):
            counts["stray marks"] += 1
        elif category[0] == "L":
            scripts[_script(char)] += 1
        previous = char
    minor = {s: n for s, n in scripts.items() if s not in _COMMON_SCRIPTS}
    if len(minor) >= 3:
        counts["mixed scripts"] = sum(minor.values())
    suspicious = sum(counts.values())
    reasons = tuple(sorted(name for name, n in counts.items() if n))
    return TextQuality(visible=visible, suspicious=suspicious, reasons=reasons)


def _is_mojibake(run: str) -> bool:
    """Whether ``run`` is UTF-8 bytes decoded as Latin-1 or cp1252."""
    for codec in ("cp1252", "latin-1"):
        try:
            run.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        return True
    return False


def _script(char: str) -> str:
    """The first word of the character's Unicode name: LATIN, CJK, GREEK, BENGALI, ..."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


GLUED_PER_1000 = 4.0
"""Figures glued to the words around them per 1,000 visible characters from which a page reads
as broken: its table cells or list items were joined in the wrong order."""
_KATAKANA_UNITS = (
    "キロ|メートル|センチ|ミリ|グラム|トン|リットル|ヘクタール|パーセント|ポイント|ドル|ユーロ"
    "|ポンド|ページ|ビット|バイト|ヶ月|カ月|ヵ月|ケ月|ヶ所|カ所|ヵ所|ケ所|ヶ国|カ国|ヵ国|ケ国"
    "|マイル|フィート|インチ|カロリー|ボルト|ワット|アンペア|ヘルツ|モル|ドット|ピクセル|フレーム"
    "|バーツ|ウォン|ルピー|ルーブル|フラン|マルク|セント|ペンス|ヤード|ノット|シーベルト|ベクレル"
    "|リッター|サイズ|パターン|タイプ|メガ|ギガ|テラ|ナノ|マイクロ|デシ|ケース|セット|コマ"
    "|[ヶカヵケ][一-龥]"  # 3カ条, 5ヶ年
)
_COUNTERS = "年月日時分秒回名人件割度条項号階歳円枚個本台週"
# "0.30パラクロル…": a figure (not part of a word, a code or 第N) with a katakana word after
# it, no space, that is not its unit
_FIGURE_THEN_WORD = re.compile(
    rf"(?<![\dA-Za-z\-第.,])\d(?:[\d.,]*\d)?(?!\d|[.,]\d|{_KATAKANA_UNITS})[ァ-ヶ]"
)
# "…サン2 アミノ…": a list number between two words, glued to the first (not 第3 条, 表2 参照,
# 令和6年4 月: a counter after it)
_NUMBER_INSIDE_WORDS = re.compile(
    rf"[ァ-ヶ一-龥々](?<![第表図])\d{{1,2}} (?=[ァ-ヶ一-龥々])(?![{_COUNTERS}])"
)
# a table cell holding the figures of several rows: "| 1.0g 1.0g 2.0g |"
_CELL = re.compile(r"(?<=\|)[^|\n]+(?=\|)")
_FIGURE = re.compile(r"(?:\d+(?:\.\d+)?[a-zA-Z%％]{0,2}|[○〇])")


def glued_figures(text: str) -> int:
    """How many figures in ``text`` sit glued between words, as when a PDF's table columns or
    numbered list items are read across: 「0.30パラクロルフェノール」, 「ジオキサン2 アミノ…」.
    A table cell with three figures or more side by side, each a word of its own, holds the
    figures of several rows (「| 1.0g 1.0g 2.0g |」) and counts once per figure beyond the
    first. A katakana unit after a figure (3キロ, 6ヶ月) and 「第3 条」 are not counted."""
    glued = len(_FIGURE_THEN_WORD.findall(text)) + len(_NUMBER_INSIDE_WORDS.findall(text))
    for cell in _CELL.findall(text):
        figures = sum(1 for word in cell.split() if _FIGURE.fullmatch(word))
        if figures >= 3:
            glued += figures - 1
    return glued


def looks_garbled(text: str) -> bool:
    """Whether a page's text, although readable, is in a broken order: enough glued figures
    for its length (:data:`GLUED_PER_1000`), at least two."""
    glued = glued_figures(text)
    visible = len(_SPACE.sub("", text))
    return glued >= 2 and glued * 1000 >= GLUED_PER_1000 * max(visible, 1)
