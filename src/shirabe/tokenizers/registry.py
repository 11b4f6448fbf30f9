"""Chooses the tokenizer named in the settings among the ``shirabe.tokenizers`` entry points."""

from __future__ import annotations

from collections.abc import Callable

from shirabe.plugins import Registry
from shirabe.settings import TokenizerSettings
from shirabe.tokenizers.protocol import Tokenizer

TOKENIZERS: Registry[Callable[[TokenizerSettings], Tokenizer]] = Registry("tokenizers")


def make_tokenizer(options: TokenizerSettings) -> Tokenizer:
    """The tokenizer ``options.name`` names, given ``options`` (the ``tokenizer`` section)."""
    return TOKENIZERS.load(options.name)(options)
