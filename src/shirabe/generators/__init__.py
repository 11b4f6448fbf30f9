"""Writing answers from hits."""

from shirabe.generators.factory import make_generator
from shirabe.generators.protocol import Generator

__all__ = ["Generator", "make_generator"]
