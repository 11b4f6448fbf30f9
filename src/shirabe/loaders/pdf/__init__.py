"""PDF loading: the document (``loader``), one page's text (``pages``), page geometry
(``layout``), lines to Markdown (``lines``), text quality (``quality``) and OCR (``ocr``)."""

from shirabe.loaders.pdf.loader import PdfLoader

__all__ = ["PdfLoader"]
