"""PDF loading: text layer and layout, text quality, and OCR of pages without usable text."""

from shirabe.loaders.pdf.loader import PdfLoader

__all__ = ["PdfLoader"]
