"""Build the configured tokenizer."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from shirabe.tokenizers.sudachi import SudachiTokenizer

if TYPE_CHECKING:
    from shirabe.settings import Settings
    from shirabe.tokenizers.protocol import Tokenizer


def make_tokenizer(settings: Settings) -> Tokenizer:
    """The tokenizer named by ``settings.tokenizer``."""
    match settings.tokenizer:
        case "sudachi":
            return SudachiTokenizer(mode=settings.sudachi_mode, bigrams=settings.bigrams)
        case _:
            assert_never(settings.tokenizer)
