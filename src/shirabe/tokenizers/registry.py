"""Chooses the tokenizer named in the settings among the ``shirabe.tokenizers`` entry points."""

from __future__ import annotations

from collections.abc import Callable

from shirabe.plugins import Registry
from shirabe.settings import Settings
from shirabe.tokenizers.protocol import Tokenizer

TOKENIZERS: Registry[Callable[[Settings], Tokenizer]] = Registry("tokenizers")


def make_tokenizer(settings: Settings) -> Tokenizer:
    """The tokenizer named by ``settings.tokenizer``."""
    return TOKENIZERS.load(settings.tokenizer)(settings)
