"""Dense text encoders."""

from shirabe.embedders.factory import make_embedder
from shirabe.embedders.protocol import Embedder, Matrix, Vector

__all__ = ["Embedder", "Matrix", "Vector", "make_embedder"]
