"""Loader for Word ``.docx`` files: the body in document order as one Markdown part.

The body XML is walked directly rather than through ``doc.paragraphs`` and ``doc.tables``,
because those lose the order in which paragraphs and tables interleave, drop text inside
content controls, and keep tracked deletions. What comes out:

* heading styles (English or Japanese names, styles based on a heading, or an outline
  level) become ``#`` headings; ``Title``/``表題`` is level 1 and pushes ``Heading n`` to
  level n+1, so a titled document keeps one top heading;
* list paragraphs keep their markers: bullets become ``- ``, decimal numbering ``1. `` with
  the numbers Word would show, other numbering its own text (``(1)``, ``第1条``, ``ア``);
* tables become pipe tables on the layout grid: missing cells are padded, a horizontal
  merge keeps its text in the first column, a vertical merge repeats its text on every row
  it covers (so each row still reads on its own once a long table is split between rows),
  and nested tables are flattened into their cell;
* tracked deletions, moved-away text, field codes, headers and footers are left out;
  tracked insertions are kept.

Word has no reliable page numbers, so the whole body is one part with an empty locator.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.docx.body import Walker, first_heading_text, render
from shirabe.loaders.docx.elements import Element
from shirabe.loaders.docx.numbering import parse_numbering
from shirabe.loaders.docx.styles import parse_styles
from shirabe.loaders.ooxml import check_package
from shirabe.loaders.plaintext import plain_text_to_markdown
from shirabe.loaders.protocol import LoadError, LoadOptions, describe_error
from shirabe.loaders.titles import meaningful_title
from shirabe.records import Document, Part

logger = logging.getLogger(__name__)


class DocxLoader:
    """Word documents as one Markdown part (see the module docstring)."""

    extensions: ClassVar[tuple[str, ...]] = (".docx",)

    def load(self, path: Path, options: LoadOptions) -> Document:
        check_package(path, max_unzipped_bytes=options.max_unzipped_bytes, part="word/document.xml")
        try:
            import docx
        except ImportError as exc:
            raise LoadError(path, "needs python-docx: pip install 'shirabe[office]'") from exc
        try:
            doc = docx.Document(str(path))
        except Exception as exc:
            logger.debug("python-docx cannot open %s", path, exc_info=True)
            reason = f"corrupt or unreadable Word file ({describe_error(exc)})"
            raise LoadError(path, reason) from exc
        try:
            walker = Walker(parse_styles(_styles_root(doc)), parse_numbering(_numbering_root(doc)))
            blocks = walker.blocks(doc.element.body)
            core_title = doc.core_properties.title
            metadata = _metadata(doc)
        except Exception as exc:
            logger.debug("cannot read %s", path, exc_info=True)
            reason = f"corrupt or unreadable Word file ({describe_error(exc)})"
            raise LoadError(path, reason) from exc
        text = render(blocks)
        if not any(b.kind == "heading" for b in blocks):
            # No heading styles: 第1章, 【別紙】 lines become headings; the body is escaped already.
            text = plain_text_to_markdown(text, escape=False)
        title = meaningful_title(core_title) or first_heading_text(blocks)
        warnings = [] if text.strip() else ["no text found"]
        return Document(
            path=str(path),
            parts=[Part(text)],
            title=title,
            metadata=metadata,
            warnings=warnings,
        )


def _styles_root(doc: Any) -> Element | None:
    try:
        return doc.styles.element
    except Exception:
        logger.debug("no styles part", exc_info=True)
        return None


def _numbering_root(doc: Any) -> Element | None:
    try:
        return doc.part.numbering_part.element
    except (KeyError, NotImplementedError):
        return None


def _metadata(doc: Any) -> dict[str, str]:
    props = doc.core_properties
    found = {"author": props.author, "subject": props.subject, "keywords": props.keywords}
    return {key: " ".join(value.split()) for key, value in found.items() if value and value.strip()}
