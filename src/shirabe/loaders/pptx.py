"""Loader for PowerPoint ``.pptx`` files: one Markdown part per slide.

Headings are chosen so that a chunk's heading path names the slide and, when the file has
one, the presentation:

* a presentation title (the core ``title`` property unless it is a default such as
  "PowerPoint Presentation") is a ``#`` heading at the top of the first slide, and slide
  titles are ``##`` beneath it; a slide whose title repeats the presentation title (the
  title slide) gets no second heading; an untitled slide, like one titled as the
  presentation, repeats the ``#`` presentation heading, so its chunks cite
  ``file › presentation › スライド4`` rather than inheriting the previous slide's title;
* without a presentation title, slide titles are ``#`` and an untitled slide is headed
  ``スライド n``, the only way to stop it inheriting the previous slide's title.

Within a slide, shapes are read top to bottom, then left to right (group members
recursively, in the same order); tables become pipe tables, bulleted or numbered paragraphs
``- `` / ``1. `` items nested by level, charts give their title and pictures their alt text.
Speaker notes follow under a ``ノート`` sub-heading, so they are searchable and cited with
their slide. Hidden slides are included: they are part of what the author wrote, and a
search for their content should find them. Slide-number and footer placeholders are left
out (they repeat on every slide).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.ooxml import check_package
from shirabe.loaders.protocol import LoadError, LoadOptions, describe_error
from shirabe.loaders.titles import meaningful_title
from shirabe.records import Document, Part
from shirabe.text.markdown import escape_line, markdown_table

logger = logging.getLogger(__name__)

A = "http://schemas.openxmlformats.org/drawingml/2006/main"

NOTES_HEADING = "ノート"
UNTITLED_SLIDE = "スライド {number}"
ROW_TOLERANCE_EMU = 91440 // 4
"""Shapes whose tops differ by less than a quarter inch count as one row, read left to right."""

_SPACE = re.compile(r"[ \t\u3000]+")
_SKIPPED_PLACEHOLDERS = frozenset({"SLIDE_NUMBER", "FOOTER", "HEADER"})
_TITLE_PLACEHOLDERS = frozenset({"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"})
_BODY_PLACEHOLDERS = frozenset({"BODY", "OBJECT", "VERTICAL_BODY", "VERTICAL_OBJECT"})


@dataclass(frozen=True, slots=True)
class Line:
    """One paragraph of a text frame: its text, list marker (``-``, ``1.`` or none) and level."""

    text: str
    marker: str | None = None
    level: int = 0


def render_lines(lines: Iterable[Line]) -> str:
    """Markdown for the paragraphs of one shape: list items on consecutive lines, nested two
    spaces per level; other paragraphs separated by blank lines."""
    out: list[str] = []
    previous_item = False
    for line in lines:
        if not line.text:
            continue
        is_item = line.marker is not None
        if line.marker is not None:
            text = "  " * line.level + f"{line.marker} " + " ".join(line.text.split("\n"))
        else:
            text = line.text
        if out:
            out.append("\n" if is_item and previous_item else "\n\n")
        out.append(text)
        previous_item = is_item
    return "".join(out)


def clean_text(text: str) -> str:
    """Paragraph text with PowerPoint's vertical-tab line breaks as newlines, whitespace runs
    collapsed, lines trimmed, empty lines dropped and lines that would read as Markdown
    structure escaped."""
    lines = (_SPACE.sub(" ", line).strip() for line in re.split(r"[\v\n]", text))
    return "\n".join(escape_line(line) for line in lines if line)


def reading_order(boxes: Iterable[tuple[int | None, int | None, int]]) -> list[int]:
    """The indices of ``(top, left, index)`` boxes top to bottom, then left to right.

    Tops within ``ROW_TOLERANCE_EMU`` of the first box of a row share the row; a shape with
    no position (one that inherits it from a layout that has none) goes first, keeping its
    place in the file.
    """
    ordered = sorted(boxes, key=lambda b: (b[0] if b[0] is not None else -1, b[2]))
    rows: list[list[tuple[int, int, int]]] = []
    row_top: int | None = None
    for top, left, index in ordered:
        y = top if top is not None else -1
        if row_top is None or y - row_top >= ROW_TOLERANCE_EMU:
            rows.append([])
            row_top = y
        rows[-1].append((left if left is not None else -1, index, index))
    return [index for row in rows for _, _, index in sorted(row)]


def slide_markdown(
    number: int, title: str | None, body: str, notes: str, deck_title: str | None
) -> str:
    """The Markdown of one slide part (heading rules in the module docstring)."""
    blocks: list[str] = []
    if deck_title is not None:
        if number == 1 or not title or title == deck_title:
            blocks.append(f"# {deck_title}")
        if title and title != deck_title:
            blocks.append(f"## {title}")
        level = "###" if title and title != deck_title else "##"
    else:
        blocks.append(f"# {title or UNTITLED_SLIDE.format(number=number)}")
        level = "##"
    if body:
        blocks.append(body)
    elif title and not notes:
        blocks.append(title)  # a title-only slide is still found by its title
    if notes:
        blocks.extend((f"{level} {NOTES_HEADING}", notes))
    return "\n\n".join(blocks)


class _SlideReader:
    """Text of the shapes of one slide, in reading order."""

    def __init__(self) -> None:
        self.title: str | None = None

    def shapes(self, shapes: Iterable[Any]) -> list[str]:
        items = list(shapes)
        boxes = [(_position(s, "top"), _position(s, "left"), i) for i, s in enumerate(items)]
        blocks: list[str] = []
        for index in reading_order(boxes):
            blocks.extend(self.shape(items[index]))
        return blocks

    def shape(self, shape: Any) -> list[str]:
        placeholder = _placeholder_type(shape)
        if placeholder in _SKIPPED_PLACEHOLDERS:
            return []
        if placeholder in _TITLE_PLACEHOLDERS and self.title is None and shape.has_text_frame:
            title = " ".join(clean_text(shape.text_frame.text).split("\n"))
            if title:
                self.title = title
                return []
        if _shape_type(shape) == "GROUP":
            return self.shapes(shape.shapes)
        blocks: list[str] = []
        if getattr(shape, "has_table", False):
            table = markdown_table(
                [[clean_text(cell.text) for cell in row.cells] for row in shape.table.rows]
            )
            if table:
                blocks.append(table)
        if getattr(shape, "has_chart", False):
            chart = shape.chart
            if chart.has_title:
                name = clean_text(chart.chart_title.text_frame.text)
                if name:
                    blocks.append(f"グラフ: {name}")
        if getattr(shape, "has_text_frame", False):
            text = render_lines(_lines(shape.text_frame, placeholder in _BODY_PLACEHOLDERS))
            if text:
                blocks.append(text)
        description = _alt_text(shape)
        if description and _shape_type(shape) == "PICTURE":
            blocks.append(f"画像: {description}")
        return blocks


def _lines(text_frame: Any, body: bool) -> Iterator[Line]:
    """The paragraphs of a text frame with their list markers.

    An explicit bullet character makes ``-``, automatic numbering ``1.`` counted per level
    (restarting when a shallower paragraph intervenes); ``buNone`` no marker. Without an
    explicit choice, paragraphs of body placeholders (which inherit bullets from the master)
    and indented paragraphs are ``-`` items.
    """
    counters: dict[int, int] = {}
    for paragraph in text_frame.paragraphs:
        text = clean_text(paragraph.text)
        level = int(paragraph.level or 0)
        ppr = paragraph._p.pPr
        kind = _bullet_kind(ppr)
        for deeper in [k for k in counters if k > level]:
            del counters[deeper]
        if not text:
            continue
        if kind == "number":
            start = _auto_number_start(ppr)
            counters[level] = counters.get(level, start - 1) + 1
            yield Line(text, f"{counters[level]}.", level)
            continue
        counters.pop(level, None)
        if kind == "bullet" or (kind is None and (body or level > 0)):
            yield Line(text, "-", level)
        else:
            yield Line(text, None, 0)


def _bullet_kind(ppr: Any) -> str | None:
    if ppr is None:
        return None
    for child in ppr.iterchildren():
        name = child.tag.rsplit("}", 1)[-1] if isinstance(child.tag, str) else ""
        if name in {"buChar", "buBlip"}:
            return "bullet"
        if name == "buAutoNum":
            return "number"
        if name == "buNone":
            return "none"
    return None


def _auto_number_start(ppr: Any) -> int:
    node = ppr.find(f"{{{A}}}buAutoNum")
    try:
        return int(node.get("startAt", "1"))
    except (TypeError, ValueError, AttributeError):
        return 1


def _position(shape: Any, name: str) -> int | None:
    try:
        value = getattr(shape, name)
    except Exception:
        return None
    return int(value) if value is not None else None


def _placeholder_type(shape: Any) -> str | None:
    if not getattr(shape, "is_placeholder", False):
        return None
    try:
        kind = shape.placeholder_format.type
    except Exception:
        return None
    return getattr(kind, "name", None)


def _shape_type(shape: Any) -> str | None:
    try:
        kind = shape.shape_type
    except Exception:
        return None
    return getattr(kind, "name", None)


def _alt_text(shape: Any) -> str:
    """The ``descr`` (alt text) of a shape's non-visual properties, if any."""
    try:
        properties = shape._element.xpath("./*[1]/p:cNvPr")
    except Exception:
        return ""
    if not properties:
        return ""
    return " ".join(str(properties[0].get("descr") or "").split())


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    if frame is None:
        return ""
    return render_lines(_lines(frame, body=False))


class PptxLoader:
    """PowerPoint presentations, one part per slide (see the module docstring)."""

    extensions: ClassVar[tuple[str, ...]] = (".pptx",)

    def load(self, path: Path, options: LoadOptions) -> Document:
        check_package(
            path, max_unzipped_bytes=options.max_unzipped_bytes, part="ppt/presentation.xml"
        )
        try:
            import pptx
        except ImportError as exc:
            raise LoadError(path, "needs python-pptx: pip install 'shirabe[office]'") from exc
        try:
            presentation = pptx.Presentation(str(path))
            deck_title = meaningful_title(presentation.core_properties.title)
            slides: list[tuple[str | None, str, str]] = []
            for slide in presentation.slides:
                reader = _SlideReader()
                body = "\n\n".join(reader.shapes(slide.shapes))
                slides.append((reader.title, body, _notes(slide)))
        except Exception as exc:
            logger.debug("cannot read %s", path, exc_info=True)
            raise LoadError(
                path, f"corrupt or unreadable PowerPoint file ({describe_error(exc)})"
            ) from exc
        parts = [
            Part(slide_markdown(n, title, body, notes, deck_title), {"slide": n})
            for n, (title, body, notes) in enumerate(slides, start=1)
        ]
        title = deck_title or next((t for t, _, _ in slides if t), None)
        warnings: list[str] = []
        if not slides:
            warnings.append("no slides")
        elif not any(body or notes or t for t, body, notes in slides):
            warnings.append("no text found")
        return Document(path=str(path), parts=parts, title=title, warnings=warnings)
