"""Tokenizers for the lexical index, found through the ``shirabe.tokenizers`` entry points."""
