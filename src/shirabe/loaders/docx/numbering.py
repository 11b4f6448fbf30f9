"""List numbering (``numbering.xml``): the markers Word shows, counted as the list goes on."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from shirabe.loaders.docx.elements import Element, to_int, val, w


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a numbering definition."""

    fmt: str = "decimal"
    text: str = "%1."
    start: int = 1


_IROHA = (
    "イロハニホヘトチリヌルヲワカヨタレソツネナラムウヰノオクヤマケフコエテアサキユメミシヱヒモセス"
)
_AIUEO = (
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン"
)
_KANJI_DIGITS = "〇一二三四五六七八九"
_ROMAN = (
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)


def _roman(n: int) -> str:
    out = []
    for value, letters in _ROMAN:
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)


def _letters(n: int) -> str:
    """Word's letter numbering: a..z, then aa..zz, aaa..."""
    if n < 1:
        return str(n)
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def _kanji(n: int) -> str:
    """一, 十, 二十三 ... for counting numbers below 10,000."""
    if not 0 < n < 10000:
        return str(n)
    out = []
    for unit, mark in ((1000, "千"), (100, "百"), (10, "十")):
        digit, n = divmod(n, unit)
        if digit:
            out.append(("" if digit == 1 else _KANJI_DIGITS[digit]) + mark)
    if n:
        out.append(_KANJI_DIGITS[n])
    return "".join(out)


def format_number(n: int, fmt: str) -> str:
    """``n`` in a Word ``numFmt``; unknown formats fall back to Arabic digits."""
    if fmt in ("upperLetter", "lowerLetter"):
        text = _letters(n)
        return text.upper() if fmt == "upperLetter" else text
    if fmt in ("upperRoman", "lowerRoman"):
        text = _roman(n) if n > 0 else str(n)
        return text if fmt == "upperRoman" else text.lower()
    if fmt in ("decimalFullWidth", "decimalFullWidth2"):
        return str(n).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt == "decimalEnclosedCircle" and 1 <= n <= 20:
        return chr(0x2460 + n - 1)
    if fmt in ("decimalEnclosedParen",):
        return f"({n})"
    if fmt in ("aiueo", "aiueoFullWidth") and 1 <= n <= len(_AIUEO):
        return _AIUEO[n - 1]
    if fmt in ("iroha", "irohaFullWidth") and 1 <= n <= len(_IROHA):
        return _IROHA[n - 1]
    if fmt in ("japaneseCounting", "chineseCounting", "ideographTraditional"):
        if fmt == "ideographTraditional" and 1 <= n <= 10:
            return "甲乙丙丁戊己庚辛壬癸"[n - 1]
        return _kanji(n)
    if fmt in ("ideographDigital", "japaneseDigitalTenThousand"):
        return "".join(_KANJI_DIGITS[int(d)] for d in str(n)) if n >= 0 else str(n)
    return str(n)


@dataclass(slots=True)
class Numbering:
    """List definitions (``numbering.xml``) and the running counters of each list."""

    levels: dict[str, dict[int, Level]] = field(default_factory=dict)
    counters: dict[str, dict[int, int]] = field(default_factory=dict)

    def marker(self, num_id: str, ilvl: int) -> str | None:
        """The marker Word shows for the next item of list ``num_id`` at ``ilvl``, counting
        it: ``"-"`` for bullets, the rendered level text (``1.``, ``(2)``, ``第3条``)
        otherwise, ``None`` when the list is unknown or shows nothing."""
        levels = self.levels.get(num_id)
        if levels is None:
            return None
        level = levels.get(ilvl, Level())
        if level.fmt == "bullet":
            return "-"
        counts = self.counters.setdefault(num_id, {})
        counts[ilvl] = counts.get(ilvl, level.start - 1) + 1
        for deeper in [k for k in counts if k > ilvl]:
            del counts[deeper]
        if level.fmt == "none":
            return None

        def number(match: re.Match[str]) -> str:
            k = int(match[1]) - 1
            shown = levels.get(k, Level())
            return format_number(counts.get(k, shown.start), shown.fmt)

        text = re.sub(r"%([1-9])", number, level.text).strip()
        return text or None


def parse_numbering(root: Element | None) -> Numbering:
    """The list levels of a ``numbering.xml`` root, by ``numId`` and level."""
    if root is None:
        return Numbering()
    abstract: dict[str, dict[int, Level]] = {}
    for node in root.iterchildren(w("abstractNum")):
        abstract_id = val(node, "abstractNumId")
        if abstract_id is not None:
            abstract[abstract_id] = _levels(node)
    levels: dict[str, dict[int, Level]] = {}
    for num in root.iterchildren(w("num")):
        num_id = val(num, "numId")
        base = abstract.get(val(num.find(w("abstractNumId"))) or "", {})
        if num_id is None:
            continue
        merged = dict(base)
        for override in num.iterchildren(w("lvlOverride")):
            ilvl = to_int(val(override, "ilvl"))
            if ilvl is None:
                continue
            redefined = override.find(w("lvl"))
            if redefined is not None:
                merged.update(_levels_of([redefined]))
            start = to_int(val(override.find(w("startOverride"))))
            if start is not None:
                old = merged.get(ilvl, Level())
                merged[ilvl] = Level(old.fmt, old.text, start)
        levels[num_id] = merged
    return Numbering(levels)


def _levels(abstract_num: Element) -> dict[int, Level]:
    return _levels_of(abstract_num.iterchildren(w("lvl")))


def _levels_of(nodes: Any) -> dict[int, Level]:
    found: dict[int, Level] = {}
    for lvl in nodes:
        ilvl = to_int(val(lvl, "ilvl"))
        if ilvl is None:
            continue
        found[ilvl] = Level(
            fmt=val(lvl.find(w("numFmt"))) or "decimal",
            text=val(lvl.find(w("lvlText"))) or "",
            start=to_int(val(lvl.find(w("start")))) or 0,
        )
    return found
