"""Tokenizers for the lexical index."""

from shirabe.tokenizers.factory import make_tokenizer
from shirabe.tokenizers.protocol import Tokenizer
from shirabe.tokenizers.sudachi import SudachiTokenizer

__all__ = ["SudachiTokenizer", "Tokenizer", "make_tokenizer"]
