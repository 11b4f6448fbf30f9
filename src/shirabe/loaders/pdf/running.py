"""Running headers and footers: lines a PDF prints at the top or bottom of every page (page
numbers such as ``3／11`` or ``- 3 -``, the document's short title, a department name).

They are not part of the text: left in, they end paragraphs mid-sentence, turn up in answers
and make every page look alike to the search. A line is running when, with its digits
ignored, it sits among the first or last :data:`EDGE` lines of at least half of the pages
(and of :data:`MIN_PAGES` pages; two for a line that is only a page number). Headings and
table rows are never removed: a slide deck repeats its section title on purpose.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

EDGE = 2
"""Lines at each end of a page that may be a running header or footer."""
MIN_PAGES = 3
"""Pages a line must repeat on (page numbers: two)."""
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"^[-‐—–(\[]?(?:p\.?|page|ページ)?0(?:/0)?(?:ページ|頁)?[-‐—–)\]]?$", re.I
)


def running_key(line: str) -> str | None:
    """What a line is compared by: NFKC, digits as ``0``, no spaces; None for a line that
    may not be removed (empty, a heading, a table row)."""
    text = line.strip()
    if not text or text.startswith(("#", "|")):
        return None
    text = unicodedata.normalize("NFKC", text)
    return _DIGITS.sub("0", re.sub(r"\s+", "", text))


def _edges(lines: list[str]) -> tuple[list[int], list[int]]:
    """Indexes of the first and last :data:`EDGE` non-empty lines."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return filled[:EDGE], filled[-EDGE:]


def strip_running(pages: Sequence[str]) -> list[str]:
    """``pages`` without their running headers and footers."""
    split = [page.split("\n") for page in pages]
    tops: Counter[str] = Counter()
    bottoms: Counter[str] = Counter()
    edges = []
    for lines in split:
        top, bottom = _edges(lines)
        edges.append((top, bottom))
        tops.update({k for i in top if (k := running_key(lines[i]))})
        bottoms.update({k for i in bottom if (k := running_key(lines[i]))})
    counted = sum(1 for page in pages if page.strip())

    def running(key: str | None, seen: Counter[str]) -> bool:
        if key is None:
            return False
        least = 2 if _PAGE_NUMBER.match(key) else MIN_PAGES
        return seen[key] >= max(least, (counted + 1) // 2)

    out = []
    for lines, (top, bottom) in zip(split, edges, strict=True):
        drop = {i for i in top if running(running_key(lines[i]), tops)}
        drop |= {i for i in bottom if running(running_key(lines[i]), bottoms)}
        kept = [line for i, line in enumerate(lines) if i not in drop]
        out.append("\n".join(kept).strip("\n"))
    return out
