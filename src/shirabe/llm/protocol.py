"""The chat-model interface: messages in, text out (whole or streamed).

Answer writing (``LLMGenerator``) and query understanding (``shirabe.retrieval.understanding``) only
need this much of a model, so a model server over HTTP and a GGUF file loaded in-process are
interchangeable.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

Message = dict[str, str]
"""``{"role": "system" | "user" | "assistant", "content": ...}``"""


class ChatModel(Protocol):
    @property
    def name(self) -> str:
        """The model as named in answers (``llm:<model>``) and logs."""
        ...

    @property
    def context_window(self) -> int | None:
        """Tokens the model can attend to (prompt plus answer), if known."""
        ...

    @property
    def max_tokens(self) -> int:
        """The answer length cap."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs: the model's own tokenizer, or a safe upper estimate."""
        ...

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        """The whole reply. Raises ``GeneratorError`` with a message fit for users."""
        ...

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        """The reply in pieces as the model writes them. Raises ``GeneratorError``."""
        ...

    def close(self) -> None: ...


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens ``text`` costs when the tokenizer is not at hand.

    Subword vocabularies spend at most one token on a kana, a kanji of the main CJK block, an
    ASCII letter or a digit, and usually much less (Gemma: about 0.5 per Japanese character).
    Characters a vocabulary lacks fall back to UTF-8 bytes (up to 3 tokens each), so anything
    outside ASCII, kana, full-width forms and the main CJK block counts 3. Only a text full of
    kanji missing from the vocabulary can cost more.
    """
    total = 0
    for ch in text:
        code = ord(ch)
        if code < 0x80 or 0x3040 <= code <= 0x30FF or 0x4E00 <= code <= 0x9FFF:
            total += 1
        elif 0xFF00 <= code <= 0xFFEF or 0x3000 <= code <= 0x303F:
            total += 1  # full-width forms and CJK punctuation
        else:
            total += 3
    return total
