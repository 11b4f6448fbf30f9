"""Table rows in answers: how a row is quoted (``項目: 値`` with its header), and whether a
row is the one the question names (住民票の写し, not 住民票記載事項証明書, for 住民票の手数料)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from itertools import pairwise
from typing import Final

from shirabe.answering import asking, fit, mentions
from shirabe.records import Chunk
from shirabe.text.normalize import folded

LIST_MARKER = re.compile(r"^\s*(?:[-*+・•●■□◆◇]|\d{1,3}[.)．）]|[（(]\d{1,3}[)）])\s*")


_ALIGNED = re.compile(r"^([^\s:：|]{0,19}[^\s:：|\u3041-\u309f])[ \u3000]{2,}(\S.*[^。.])$")
"""A row of a table laid out with spaces, as plain-text rule books write them:
``部長　　　　１泊あたり１４，０００円``; not prose (a label ending in a particle such as
``は``, or a line ending in ``。``)."""
_SPACES = re.compile(r"[ \u3000]+")


def clean(sentence: str) -> str:
    """A sentence as quoted in an answer: without list markers or table pipes; a row laid out
    with spaces as ``項目: 値``; runs of spaces (full-width too) as one space."""
    text = LIST_MARKER.sub("", sentence).strip()
    if is_row(text):
        text = " / ".join(cell.strip() for cell in text.strip("|").split("|") if cell.strip())
    aligned = _ALIGNED.match(text)
    if aligned:
        text = f"{aligned[1]}: {aligned[2]}"
    return _SPACES.sub(" ", text)


def label(item: str) -> str | None:
    """What a list item or row is the case of: its key (部長 of ``・部長　　１泊あたり…``, of
    ``部長：１泊あたり…`` or of ``| 部長 | 14,000円 |``); None for an item without one."""
    text = LIST_MARKER.sub("", item).strip()
    if text.startswith("|"):
        cells = row_cells(text)
        return cells[0] or None if len(cells) >= 2 else None
    aligned = _ALIGNED.match(text)
    if aligned:
        return aligned[1]
    key = re.match(r"^([^:：、。]{1,20})[:：]\s*\S", text)
    return key[1].strip() if key else None


def is_item(text: str) -> bool:
    """A list item, a table row or a row laid out with spaces: not a sentence of prose."""
    stripped = text.strip()
    return bool(
        LIST_MARKER.match(stripped)
        or stripped.startswith("|")
        or _ALIGNED.match(stripped)
        or (len(stripped) <= 30 and not stripped.endswith("。"))
    )


def is_row(text: str) -> bool:
    """A row of a Markdown table (``| 運転音 | 19〜52dB |``)."""
    stripped = text.strip()
    return stripped.startswith("|") and stripped.endswith("|")


def row_cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_header(text: str, row: str) -> list[str] | None:
    """The header cells of the Markdown table in ``text`` that holds ``row``; None when the
    row is in no table, is the header itself, or the table has no header."""
    wanted = row.strip()
    if not wanted.startswith("|"):
        return None  # prose, not a row
    lines = [line.strip() for line in text.splitlines()]
    for i, line in enumerate(lines):
        if line != wanted:
            continue
        top = i
        while top > 0 and lines[top - 1].startswith("|"):
            top -= 1
        if top + 1 < len(lines) and set(lines[top + 1]) <= set("|-: ") and i > top + 1:
            return row_cells(lines[top])
        return None
    return None


_CODES = re.compile(r"[A-Za-z]+[-_]?\d[0-9A-Za-z]*(?:[-_][0-9A-Za-z]+)*")
"""Product and model codes (AQ-300, MC500) as written in a table's header."""


def is_header(text: str, row: str) -> bool:
    """Whether ``row`` is the header of a Markdown table in ``text`` (a line of column names
    followed by the ``|---|`` line) holding no figure: it names what the rows hold. A first
    row with a figure (``| 質量 | 約9.2kg |`` of a key-value table whose loader made it the
    header) is a row like the others; the digits of a code (``| 項目 | AQ-300（新製品） |``,
    one column per product) are not a figure."""
    wanted = row.strip()
    plain = _CODES.sub("", unicodedata.normalize("NFKC", wanted))
    if not wanted.startswith("|") or re.search(r"\d", plain):
        return False
    lines = [line.strip() for line in text.splitlines()]
    return any(
        line == wanted
        and (i == 0 or not lines[i - 1].startswith("|"))
        and i + 1 < len(lines)
        and lines[i + 1].startswith("|")
        and set(lines[i + 1]) <= set("|-: ")
        for i, line in enumerate(lines)
    )


def with_header(row: str, header: Sequence[str]) -> str:
    """A table row as 項目: 値 pairs: ``質量: 約9.2kg`` for a two-column table, else the row's
    key then each header with its cell (``メーカー希望小売価格（税込） — AQ-300（新製品）:
    54,780円 / AQ-250（従来機種）: 43,780円``), so that no figure loses its column."""
    cells = row_cells(row)
    if len(cells) != len(header) or len(cells) < 2:
        return clean(row)
    if len(cells) == 2:
        return _SPACES.sub(" ", f"{cells[0]}: {cells[1]}")
    pairs = " / ".join(f"{h}: {c}" for h, c in zip(header[1:], cells[1:], strict=True) if c)
    return _SPACES.sub(" ", f"{cells[0]} — {pairs}")


def names_kind(cell: str) -> bool:
    """Whether a table cell names a kind of fact (質量, 希望小売価格) rather than a thing."""
    plain = folded(cell)
    kinds = asking.ATTRIBUTES | {w for ws in mentions.SPELLINGS.values() for w in ws}
    return any(len(word) > 1 and word in plain for word in kinds)


_RANGE = re.compile(
    r"(\d+)\s*(歳|才|人|cm|kg|m|時間|日|か月|年)?\s*(以上|以下|未満|超|[～〜~\-－])\s*(?:(\d+)\s*\2?)?"
)
_AMOUNT = re.compile(r"(\d+)\s*(歳|才|人|cm|kg|m|時間|日|か月|年)")


_LARGER_UNIT = re.compile(r"\d\s*(?:年|か月|ヶ月|カ月|日|時間)\s*$")
"""A figure right before another (6年 of 6年6か月): the two are one quantity."""


def _in_range(cell: str, question: str) -> bool:
    """Whether a figure of the question falls in a range the cell states (70歳 in 65歳以上,
    2歳 in 0歳～3歳未満), counted in the same unit."""
    for m in _RANGE.finditer(cell):
        if _LARGER_UNIT.search(cell[: m.start()]):
            continue  # 6か月以上 of 6年6か月以上 is no range of months
        low, unit, bound, high = int(m[1]), m[2], m[3], m[4]
        unit = (
            unit or (re.match(r"\s*(歳|才|人|cm|kg|m|時間|日|か月|年)", cell[m.end() :]) or [""])[0]
        )
        for q in _AMOUNT.finditer(question):
            if unit and q[2] != unit.strip():
                continue
            n = int(q[1])
            below = cell[m.end() : m.end() + 2] == "未満"
            if bound in {"以上", "超"} and (n > low if bound == "超" else n >= low):
                return True
            if bound in {"以下", "未満"} and (n < low if bound == "未満" else n <= low):
                return True
            if high is not None and low <= n and (n < int(high) if below else n <= int(high)):
                return True
    return False


def _named_pairs(text: str) -> set[str]:
    """Character pairs of kanji and katakana (particles and okurigana left out)."""
    return {
        a + b
        for a, b in pairwise(text)
        if mentions.is_cjk(a) and mentions.is_cjk(b) and a >= "\u30a0" and b >= "\u30a0"
    }


_FORMAL: Final = {
    "妻": "配偶者",
    "夫": "配偶者",
    "奥さん": "配偶者",
    "両親": "父母",
    "息子": "子",
    "娘": "子",
    "子ども": "子",
    "子供": "子",
}
"""How rules and tables name the family a question names (妻 → 配偶者の出産)."""


def names_row(cell: str, question: str) -> bool:
    """Whether a question names a table cell: half of its kanji and katakana pairs are in the
    question (住民票 for 住民票の写し), its last word is (詰め替え用 of 専用除菌液「ミナモクリア」
    詰め替え用), or half of all its pairs, one of kanji or katakana
    among them, for a case told in words (ほかの市区町村から引っ越してきたとき), a code or
    number of it is (AQF-30H, 800円), or a figure of the question falls in its range (70歳 in
    65歳以上)."""
    plain, asked = folded(cell), folded(question)
    asked += "".join(f" {formal}" for word, formal in _FORMAL.items() if word in asked)
    if plain in asked:
        return True  # 3年6か月
    last = re.search(r"[^\s「」『』()（）・、,]{2,}$", plain)
    if last and not last.group().isascii() and last.group() in asked:
        return True  # 詰め替え用 of 専用除菌液「ミナモクリア」詰め替え用
    pairs = _named_pairs(plain)
    if pairs and len(pairs & _named_pairs(asked)) * 2 >= len(pairs):
        return True
    spelled = mentions.char_pairs(plain)  # a case told in words: ほかの市区町村から…引っ越してきた
    shared = spelled & mentions.char_pairs(asked)
    if len(spelled) >= 8 and len(shared) * 2 >= len(spelled) and shared & pairs:
        return True
    if any(len(w) > 1 and w in asked for w in re.findall(r"[0-9a-z][0-9a-z\-.,]*", plain)):
        return True
    return _in_range(plain, asked)


def other_row(
    question: str, asked: fit.AnswerKind, focus: Sequence[str], chunk: Chunk, line: str
) -> str | None:
    """The key of a table row (its first cell) when the row holds the figure of something the
    question does not ask about: none of its cells but those holding the asked kind of fact is
    named by the question (住民票記載事項証明書 for 戸籍謄本), or what the question asks about
    (``focus``: 空調 in 空調の料金) is neither in the row, its header nor its headings. None
    for a row keyed by a kind of fact (質量, 価格), a row the question names, or a line that is
    no table row."""
    header = table_header(chunk.text, line)
    row = [c for c in row_cells(line) if c] if header else []
    if not row or names_kind(row[0]):
        return None
    named = [row[0], *(c for c in row[1:] if not fit.has_kind(asked, c))]
    if not any(names_row(c, question) for c in named):
        return row[0]
    own = " ".join([line, *(header or ()), *chunk.heading_path, chunk.source])
    return row[0] if mentions.missing_terms(focus, own) else None
