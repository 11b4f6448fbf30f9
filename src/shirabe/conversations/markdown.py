"""A conversation as a Markdown file: each question, its answer, and the answer's sources
(file › heading path › page / sheet / slide).

Every text in it (questions, answers, titles, file names, headings) comes from users or
documents, so it is escaped: no link, image, autolink, HTML or heading can come out of it,
only the text it is. Lists, tables and emphasis in an answer stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from shirabe.records import (
    CITATION_SEPARATOR,
    HEADING_SEPARATOR,
    Conversation,
    StoredTurn,
    format_locator,
)

_INLINE = re.compile(r"([\\`\[\]<>!&])")
"""Characters that open links, images, HTML, entities or code, escaped wherever they are."""
_SCHEME = re.compile(r"(?i)\b(https?|ftp|mailto|file|javascript|vbscript|data)(:)")
_WWW = re.compile(r"(?i)\b(www)(\.)")
_LINE_START = re.compile(r"^( {0,3})(#{1,6}|[+-]|\d{1,9}[.)])(?=[ \t]|$)")
"""A line that opens a heading or a list item."""
_RULE = re.compile(r" {0,3}(?:[-=*_][ \t]*)+")
"""A line of dashes, equals signs, stars or underscores: a rule, or a heading's underline."""
CUT_NOTE = "（ここから先は、書き出せる大きさの上限を超えるため省きました。）"


def escape(text: str, *, lists: bool = False) -> str:
    """``text`` as Markdown that shows it as it is; with ``lists``, its own list items,
    tables and emphasis stay Markdown (links, images, HTML and headings never do)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(_escaped_line(line, lists=lists) for line in lines)


def _escaped_line(line: str, *, lists: bool) -> str:
    text = _INLINE.sub(r"\\\1", line)
    text = _SCHEME.sub(r"\1\\\2", text)
    text = _WWW.sub(r"\1\\\2", text).replace("@", "\\@")
    if _RULE.fullmatch(text):
        return "\\" + text.lstrip()
    if lists:
        return _LINE_START.sub(_heading_escaped, text)
    text = text.replace("*", "\\*").replace("_", "\\_").replace("|", "\\|")
    return _LINE_START.sub(_mark_escaped, text)


def _mark_escaped(match: re.Match[str]) -> str:
    """The line's opening mark shown as text (``1.`` as ``1\\.``, ``-`` as ``\\-``)."""
    indent, mark = match.group(1), match.group(2)
    return f"{indent}{mark[:-1]}\\{mark[-1]}"


def _heading_escaped(match: re.Match[str]) -> str:
    """A list item of an answer stays one; a heading or underline is shown as text."""
    indent, mark = match.group(1), match.group(2)
    return f"{indent}\\{mark}" if mark.startswith("#") else indent + mark


def source_line(citation: Mapping[str, Any]) -> str:
    """``[n] file › heading path › p.3`` for a stored citation, escaped."""
    parts = [str(citation.get("source", ""))]
    heading = [str(h) for h in citation.get("heading_path") or []]
    if heading:
        parts.append(HEADING_SEPARATOR.join(heading))
    locator = citation.get("locator") or {}
    parts.extend(label for label in format_locator(locator) if label not in heading)
    return f"- \\[{citation.get('number', '?')}\\] " + escape(CITATION_SEPARATOR.join(parts))


def turn_markdown(turn: StoredTurn, note: str = "") -> str:
    """One turn: its question, its answer (or ``note`` in its place), then its sources."""
    version = f"（回答 {turn.version}/{turn.versions}）" if turn.versions > 1 else ""
    lines = [f"## 質問 {turn.position}", "", escape(turn.question), "", f"### 回答{version}", ""]
    lines += [escape(note or turn.answer, lists=not note), ""]
    if turn.refused and turn.refusal_reason and not note:
        lines += ["理由: " + escape(turn.refusal_reason), ""]
    if turn.citations and not note:
        lines += ["出典:", "", *(source_line(c) for c in turn.citations), ""]
    return "\n".join(lines) + "\n"


def conversation_markdown(
    conversation: Conversation,
    turns: Iterable[tuple[StoredTurn, str]],
    *,
    exported_at: str,
    limit_bytes: int,
) -> str:
    """The whole conversation, turn by turn (each with the note to show instead of its
    answer, if any), cut before the first turn that would take it over ``limit_bytes``."""
    head = f"# {escape(conversation.title or '無題の会話')}\n\n書き出し: {exported_at}\n\n"
    parts: list[str] = [head]
    size = len(head.encode("utf-8"))
    for turn, note in turns:
        text = turn_markdown(turn, note)
        size += len(text.encode("utf-8"))
        if size > limit_bytes:
            parts.append(CUT_NOTE + "\n")
            break
        parts.append(text)
    return "".join(parts)


def file_name(title: str, fallback: str) -> str:
    """A download name for the conversation: its title without characters file systems
    refuse, else ``fallback``."""
    name = re.sub(r'[\\/:*?"<>|\x00-\x1f\x7f]+', " ", title).strip(" .")
    return (name[:60].strip() or fallback) + ".md"
