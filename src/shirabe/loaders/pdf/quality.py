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
