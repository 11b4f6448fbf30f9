"""Document titles from file metadata, kept only when a person chose them.

Office and PDF metadata titles are often left over from a template or a generator: "Slide 1",
"PowerPoint Presentation", "Microsoft Word - 規程.docx", a file name, a scanner's job id. Such a
title would hide the better one in the document's first heading, so it is dropped.
"""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")
_CJK = re.compile(
    r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\u2e80-\u2fdf]"
)
"""Characters written without spaces between words: a title with them needs no space."""
_GENERATOR_PREFIX = re.compile(r"^(?:Microsoft (?:Word|Excel|PowerPoint) - |untitled\b)", re.I)
_DOCUMENT_SUFFIX = re.compile(r"\.(?:docx?|xlsx?|pptx?|txt|rtf|odt)$", re.I)
_FILENAME_LIKE = re.compile(r"^[\w.\- ]+\.(?:docx?|xlsx?|pptx?|txt|pdf|rtf|odt|tex|dvi|ps)$", re.I)
_MACHINE_MADE = re.compile(r"_|\d{4}")
"""Underscores and runs of four digits mark job ids, scans and dates ("scan0001", "IMG_2024")."""
_PLACEHOLDERS = re.compile(
    r"^(?:untitled|無題|document\d*|文書\d*|title|タイトル|表題|"
    r"presentation\d*|powerpoint presentation|powerpoint プレゼンテーション|"
    r"プレゼンテーション\d*|(?:slide|スライド)\s*\d+)$",
    re.IGNORECASE,
)


def meaningful_title(raw: str | None) -> str | None:
    """A metadata title worth showing, whitespace runs made one space, or ``None``.

    A generator's prefix and a document file suffix are taken off ("Microsoft Word -
    規程.docx" becomes "規程"). Rejected: empty titles, template defaults ("Slide 1",
    "PowerPoint Presentation", "無題", "Document1"), file names, and machine-made identifiers
    with neither a space nor Japanese ("MEDRPT-2024_scan", "scan0001"); a word such as
    "Handbook" or "AQ-300" is kept.
    """
    if not raw:
        return None
    title = _SPACE.sub(" ", raw).strip()
    title = _GENERATOR_PREFIX.sub("", title).strip()
    stem = _DOCUMENT_SUFFIX.sub("", title)
    if stem != title and not _CJK.search(stem):
        return None  # an ASCII file name is not a title
    title = stem.strip()
    if not title or _FILENAME_LIKE.match(title) or _PLACEHOLDERS.match(title):
        return None
    if not _CJK.search(title) and " " not in title and _MACHINE_MADE.search(title):
        return None
    return title
