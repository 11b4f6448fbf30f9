"""Turn a plain-text office document into Markdown with headings.

Plain-text rules and manuals mark their structure with ``第1章``, ``第2節``, ``第3条（目的）``
and short captions such as ``【交通費】`` or ``■ 宿泊費``. Making those ``#`` headings lets the
heading-aware chunker cite "第1章 総則 > 第3条（目的）" instead of a bare file name.
"""

from __future__ import annotations

import re

from shirabe.text.markdown import escape_line

MAX_CAPTION_CHARS = 40
"""Longer lines are prose, not captions, whatever they start with."""

_NUMBER = r"(?:[0-9０-９]+|[一二三四五六七八九十百千〇零]+)"
_UNIT = re.compile(
    rf"^(?P<label>第{_NUMBER}(?P<unit>[章節条])(?:の{_NUMBER})*)"
    r"(?P<caption>\s*[（(][^）)]*[）)])?"
    r"(?P<rest>.*)$"
)
_BRACKETED = re.compile(r"^【(?P<text>[^【】]+)】$")
_MARKED = re.compile(r"^[■□◆◇●]\s*(?P<text>\S.*)$")


def plain_text_to_markdown(text: str, *, escape: bool = True) -> str:
    """``text`` with structural lines turned into ``#`` headings and the other lines escaped.

    Levels follow the document: 章 is ``#``, 節 is ``##``, and 条 and captions sit one level
    below the innermost 章 or 節 seen so far. Every heading gets a blank line on both sides.
    Other lines are kept as they are, except that a line the chunker would read as a heading,
    a code fence or a table row is escaped (:func:`~shirabe.text.markdown.escape_line`);
    ``escape=False`` leaves them for text that is Markdown already, such as a Word body whose
    own tables must stay tables.
    """
    out: list[str] = []
    chapter = section = False
    after_heading = False
    for line in text.split("\n"):
        stripped = line.strip()
        if after_heading and not stripped:
            continue
        after_heading = False
        found = _structure(stripped)
        if found is None:
            out.append(escape_line(line) if escape else line)
            continue
        kind, title, body = found
        if kind == "章":
            chapter, section = True, False
            level = 1
        elif kind == "節":
            section = True
            level = 2
        else:
            level = 3 if section else 2 if chapter else 1
        if out and out[-1].strip():
            out.append("")
        out.extend(("#" * level + " " + title, ""))
        if body:
            out.extend((escape_line(body), ""))
        after_heading = True
    return "\n".join(out)


def _structure(line: str) -> tuple[str, str, str] | None:
    """``(kind, heading text, body)`` for a structural line, else ``None``.

    ``kind`` is 章, 節, 条 or ``"caption"``. A 第N条 line that goes on into a sentence is split
    into the 第N条 heading and the sentence as ``body``.
    """
    unit = _unit(line)
    if unit:
        label = unit["label"] + (unit["caption"] or "")
        if not _is_caption(label):
            return None
        rest = unit["rest"].strip()
        if rest and not _is_caption(line):
            return unit["unit"], label.strip(), rest
        return unit["unit"], line, ""
    caption = _caption(line)
    return ("caption", caption, "") if caption else None


def _unit(line: str) -> re.Match[str] | None:
    """A ``第N章/節/条`` match, unless the number runs into prose as in ``第1章で述べた``."""
    match = _UNIT.match(line)
    if match is None:
        return None
    rest = match["rest"]
    if rest and not match["caption"] and not rest[0].isspace():
        return None
    return match


def _caption(line: str) -> str | None:
    """The heading text of a ``【...】`` or ``■ ...`` caption line, else ``None``."""
    if not _is_caption(line):
        return None
    match = _BRACKETED.match(line) or _MARKED.match(line)
    return match["text"].strip() if match else None


def _is_caption(line: str) -> bool:
    return len(line) <= MAX_CAPTION_CHARS and "。" not in line
