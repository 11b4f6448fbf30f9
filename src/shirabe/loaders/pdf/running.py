"""Running headers and footers: lines a PDF prints at the top or bottom of every page (page
numbers such as ``3／11`` or ``- 3 -``, the document's short title, a department name).

They are not part of the text: left in, they end paragraphs mid-sentence, turn up in answers
and make every page look alike to the search. A line is running when it sits among the first
or last :data:`EDGE` lines of at least half of the pages (and of :data:`MIN_PAGES` pages; two
for a page number). Lines are compared as written, except that a number equal to the page's
own number is a page number (「総務部規程集 p.3」 on page 3 is the same line as 「… p.4」 on page
4), so pages that begin with their own identifiers (INC-2024-0001, INC-2024-0002 …) or figures
keep them. Headings, table rows and long lines are never removed, and a page keeps its text
when nothing but running lines would be left of it that are not page numbers.
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
LONGEST = 40
"""Characters a running line has at most; longer lines are text."""
_NUMBER = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"^[-‐—–(\[]?(?:p\.?|page|ページ)?#(?:/\d+)?(?:ページ|頁)?[-‐—–)\]]?$", re.I
)
"""A line that is only its page's number (``#``), as in 3, - 3 -, 3/11, p.3, 3ページ."""


def running_key(line: str, page: int) -> str | None:
    """What a line on page ``page`` is compared by: NFKC without spaces, the page's own number
    as ``#``; None for a line that may not be removed (empty, a heading, a table row, long)."""
    text = line.strip()
    if not text or text.startswith(("#", "|")):
        return None
    text = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))
    if len(text) > LONGEST:
        return None
    for match in _NUMBER.finditer(text):  # the first one only: 4/4 on page 4 is #/4
        if int(match.group()) == page:
            return text[: match.start()] + "#" + text[match.end() :]
    return text


def is_page_number(key: str) -> bool:
    return bool(_PAGE_NUMBER.match(key))


def _edges(lines: list[str]) -> tuple[list[int], list[int]]:
    """Indexes of the first and last :data:`EDGE` non-empty lines."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return filled[:EDGE], filled[-EDGE:]


def strip_running(pages: Sequence[str], numbers: Sequence[int] | None = None) -> list[str]:
    """``pages`` without their running headers and footers; ``numbers`` are the pages'
    numbers (1, 2, 3 … by default)."""
    numbers = list(numbers) if numbers is not None else list(range(1, len(pages) + 1))
    split = [page.split("\n") for page in pages]
    keys = [
        [running_key(line, n) for line in lines] for lines, n in zip(split, numbers, strict=True)
    ]
    tops: Counter[str] = Counter()
    bottoms: Counter[str] = Counter()
    edges = []
    for lines, found in zip(split, keys, strict=True):
        top, bottom = _edges(lines)
        edges.append((top, bottom))
        tops.update({k for i in top if (k := found[i])})
        bottoms.update({k for i in bottom if (k := found[i])})
    counted = sum(1 for page in pages if page.strip())

    def running(key: str | None, seen: Counter[str]) -> bool:
        if key is None:
            return False
        least = 2 if is_page_number(key) else MIN_PAGES
        return seen[key] >= max(least, (counted + 1) // 2)

    out = []
    for lines, found, (top, bottom) in zip(split, keys, edges, strict=True):
        drop = {i for i in top if running(found[i], tops)}
        drop |= {i for i in bottom if running(found[i], bottoms)}
        left = [i for i, line in enumerate(lines) if line.strip() and i not in drop]
        if not left:  # only what repeats: keep it, all but its page number
            drop = {i for i in drop if is_page_number(found[i] or "")}
        kept = [line for i, line in enumerate(lines) if i not in drop]
        out.append("\n".join(kept).strip("\n"))
    return out
