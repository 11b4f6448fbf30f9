"""A GGUF chat model run in-process by llama.cpp (``pip install 'shirabe[llama]'``).

No server to start: the model file is loaded on first use and kept. Token budgets are counted
with the model's own tokenizer, and the prompt's length is checked against its context
window. Calls are serialised with a lock, since one llama.cpp context serves one request at a
time. ``usage`` adds up the tokens read and written and the time spent on each, as llama.cpp
counts them, so the model's speed can be reported.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shirabe.errors import GeneratorError
from shirabe.llm.protocol import Message


@dataclass(frozen=True, slots=True)
class LlamaConfig:
    model_path: Path
    n_ctx: int = 4096
    threads: int | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    chat_format: str | None = None
    """A llama-cpp-python chat format name; default: the GGUF's own template."""


def gemma_prompt(messages: Sequence[Message]) -> str:
    """Gemma's turn format. Gemma has no system role: the system prompt opens the first user
    turn, as Gemma's own template does."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns: list[str] = []
    for m in messages:
        if m["role"] == "system":
            continue
        role = "model" if m["role"] == "assistant" else "user"
        content = m["content"] or ""
        if system and role == "user":
            content, system = f"{system}\n\n{content}", ""
        turns.append(f"<start_of_turn>{role}\n{content}<end_of_turn>\n")
    return "".join(turns) + "<start_of_turn>model\n"


PromptFormat = Callable[[Sequence[Message]], str]

# Formats for GGUF files that ship without a chat template llama-cpp-python can use.
BUILTIN_FORMATS: dict[str, tuple[PromptFormat, list[str]]] = {
    "gemma": (gemma_prompt, ["<end_of_turn>"]),
    "gemma2": (gemma_prompt, ["<end_of_turn>"]),
    "gemma3": (gemma_prompt, ["<end_of_turn>"]),
}


@dataclass(slots=True)
class Usage:
    """Tokens read (the prompt) and written (the reply), and the milliseconds spent on each."""

    prompt_tokens: int = 0
    prompt_ms: float = 0.0
    reply_tokens: int = 0
    reply_ms: float = 0.0
    calls: int = 0

    def add(self, perf: Any) -> None:
        self.prompt_tokens += int(perf.n_p_eval)
        self.prompt_ms += float(perf.t_p_eval_ms)
        self.reply_tokens += int(perf.n_eval)
        self.reply_ms += float(perf.t_eval_ms)
        self.calls += 1

    @property
    def prompt_per_second(self) -> float:
        return 1000 * self.prompt_tokens / self.prompt_ms if self.prompt_ms else 0.0

    @property
    def reply_per_second(self) -> float:
        return 1000 * self.reply_tokens / self.reply_ms if self.reply_ms else 0.0


class LlamaCppChat:
    """A chat model in this process; loads the GGUF on first use."""

    def __init__(self, config: LlamaConfig) -> None:
        self._config = config
        self._llama: Any = None
        self._format: tuple[PromptFormat, list[str]] | None = None
        self._lock = threading.Lock()
        self.usage = Usage()

    def __repr__(self) -> str:
        return f"LlamaCppChat(model_path={str(self._config.model_path)!r})"

    @property
    def name(self) -> str:
        stem = self._config.model_path.name.removesuffix(".gguf")
        return f"llm:{stem}"

    @property
    def context_window(self) -> int:
        return self._config.n_ctx

    @property
    def max_tokens(self) -> int:
        return self._config.max_tokens

    def _load(self) -> Any:
        if self._llama is not None:
            return self._llama
        path = self._config.model_path
        if not path.is_file():
            raise GeneratorError(f"GGUF model not found: {path}")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise GeneratorError(
                "the in-process model needs llama-cpp-python: pip install 'shirabe[llama]'"
            ) from None
        threads = self._config.threads or os.cpu_count() or 1
        try:
            llama = Llama(
                model_path=str(path),
                n_ctx=self._config.n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                chat_format=self._config.chat_format,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise GeneratorError(f"cannot load GGUF model {path}: {exc}") from None
        metadata: dict[str, str] = getattr(llama, "metadata", {}) or {}
        if self._config.chat_format is None and "tokenizer.chat_template" not in metadata:
            self._format = BUILTIN_FORMATS.get(metadata.get("general.architecture", ""))
        self._llama = llama
        return llama

    def count_tokens(self, text: str) -> int:
        with self._lock:
            llama = self._load()
            return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _check_fits(self, prompt_tokens: int, max_tokens: int) -> None:
        if prompt_tokens + max_tokens > self._config.n_ctx:
            raise GeneratorError(
                f"prompt of {prompt_tokens} tokens plus {max_tokens} for the answer exceeds the "
                f"model's context of {self._config.n_ctx} tokens"
            )

    def _measured(self, llama: Any, chunks: Any) -> Iterator[Any]:
        """The chunks of a streamed reply; once they are all read, the call is counted."""
        yield from chunks
        self._count(llama)

    def _count(self, llama: Any) -> None:
        try:
            import llama_cpp

            self.usage.add(llama_cpp.llama_perf_context(llama.ctx))
        except (AttributeError, ImportError):  # an older llama-cpp-python: speed not reported
            pass

    def _run(self, messages: Sequence[Message], max_tokens: int, stream: bool) -> Any:
        llama = self._load()
        try:
            import llama_cpp

            llama_cpp.llama_perf_context_reset(llama.ctx)
        except (AttributeError, ImportError):
            pass
        if self._format is not None:
            render, stop = self._format
            prompt = render(messages)
            self._check_fits(len(llama.tokenize(prompt.encode("utf-8"))), max_tokens)
            return llama.create_completion(
                prompt,
                max_tokens=max_tokens,
                temperature=self._config.temperature,
                stop=stop,
                stream=stream,
            )
        return llama.create_chat_completion(
            messages=list(messages),
            max_tokens=max_tokens,
            temperature=self._config.temperature,
            stream=stream,
        )

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        with self._lock:
            try:
                out = self._run(messages, max_tokens or self._config.max_tokens, stream=False)
                self._count(self._llama)
            except (ValueError, RuntimeError) as exc:  # a prompt too long, llama_decode failing
                raise GeneratorError(f"{self.name}: {exc}") from None
        choice = out["choices"][0]
        text = choice["text"] if "text" in choice else choice["message"].get("content")
        return str(text or "")

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        with self._lock:
            try:
                chunks = self._run(messages, self._config.max_tokens, stream=True)
                for chunk in self._measured(self._llama, chunks):
                    choice = chunk["choices"][0]
                    piece = choice["text"] if "text" in choice else choice["delta"].get("content")
                    if piece:
                        yield str(piece)
            except (ValueError, RuntimeError) as exc:
                raise GeneratorError(f"{self.name}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            if self._llama is not None:
                close = getattr(self._llama, "close", None)
                if callable(close):
                    close()
                self._llama = None
