"""One page of a PDF as a PNG image, with a passage's text marked, so a reader can check a
citation against the page itself (pypdfium2, in the ``pdf`` extra)."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from shirabe.errors import PageImageError

MAX_PIXELS = 1600
"""The longer side of a page image, in pixels."""
MARK = (255, 214, 10, 90)
"""The passage's marking: translucent yellow."""
_PROBE_CHARS = 24


def probes(text: str) -> list[str]:
    """The lines of a passage to look for on the page, without the table pipes and repeated
    spaces that extraction adds."""
    found: list[str] = []
    for line in text.splitlines():
        plain = re.sub(r"\s+", " ", line.replace("|", " ")).strip(" -#*")
        if len(plain) >= 4 and not re.fullmatch(r"[-:\s]+", plain) and plain not in found:
            found.append(plain)
    return found


def _places(text: object, mark: str) -> list[tuple[int, int]]:
    """Where ``mark`` is written on the page (character index and count): the whole line,
    else its start (extraction may have joined or split what the page shows)."""
    for probe in (mark, mark[:_PROBE_CHARS]) if len(mark) > _PROBE_CHARS else (mark,):
        searcher = text.search(probe, match_case=False)  # type: ignore[attr-defined]
        places: list[tuple[int, int]] = []
        for _ in range(50):  # a phrase repeated on the page: at most 50 places
            found = searcher.get_next()
            if found is None:
                break
            places.append(found)
        if places:
            return places
    return []


def render_page(
    path: str, page: int, marks: Sequence[str] = (), password: str | None = None
) -> bytes:
    """Page ``page`` (1-based) of the PDF at ``path`` as PNG bytes, every place where one of
    ``marks`` is written highlighted."""
    try:
        import pypdfium2 as pdfium
        from PIL import Image, ImageDraw
    except ImportError:
        raise PageImageError("page images need the pdf extra: pip install 'shirabe[pdf]'") from None
    try:
        document = pdfium.PdfDocument(path, password=password)
    except (pdfium.PdfiumError, OSError) as exc:
        raise PageImageError(f"{path}: cannot open the PDF ({exc})", path) from None
    try:
        if not 1 <= page <= len(document):
            raise PageImageError(f"{path}: no page {page} (it has {len(document)})", path)
        sheet = document[page - 1]
        width, height = sheet.get_size()
        scale = MAX_PIXELS / max(width, height, 1)
        image = sheet.render(scale=scale).to_pil().convert("RGBA")
        layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        text = sheet.get_textpage()
        for mark in marks:
            for start, count in _places(text, mark):
                for i in range(text.count_rects(start, count)):
                    left, bottom, right, top = text.get_rect(i)
                    draw.rectangle(
                        (
                            left * scale,
                            (height - top) * scale,
                            right * scale,
                            (height - bottom) * scale,
                        ),
                        fill=MARK,
                    )
        out = io.BytesIO()
        Image.alpha_composite(image, layer).convert("RGB").save(out, format="PNG", optimize=True)
        return out.getvalue()
    finally:
        document.close()
