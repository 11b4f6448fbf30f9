"""Word documents: styles, list numbering, the body walk and its Markdown."""

from shirabe.loaders.docx.loader import DocxLoader

__all__ = ["DocxLoader"]
