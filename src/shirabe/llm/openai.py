"""A chat model behind the OpenAI Chat Completions API, over HTTP.

LM Studio, Ollama, llama.cpp's server, vLLM and OpenAI itself all speak it; presets give their
usual base URLs. Azure OpenAI speaks it too, with the deployment in the path, an
``api-version`` query parameter and an ``api-key`` header. The API key is read from an
environment variable at call time and only ever goes into that header: it is kept out of
reprs, log lines and error messages.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shirabe.errors import GeneratorError
from shirabe.llm.protocol import Message, estimate_tokens

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

PRESETS: dict[str, str] = {
    "lmstudio": "http://localhost:1234/v1",
    "ollama": "http://localhost:11434/v1",
    "llamacpp": "http://localhost:8080/v1",
    "vllm": "http://localhost:8000/v1",
    "openai": "https://api.openai.com/v1",
}

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 30.0


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Where and how to call the model. ``api_key_env`` names the variable, never the key."""

    base_url: str
    model: str | None = None
    api_key_env: str = "SHIRABE_LLM_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 512
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 0.5
    api_version: str | None = None
    """Set for Azure OpenAI: sent as ``?api-version=``, with the key in an ``api-key`` header."""
    context_window: int | None = None


def azure_base_url(endpoint: str, deployment: str) -> str:
    """``https://NAME.openai.azure.com`` and a deployment → the deployment's API base URL."""
    return f"{endpoint.rstrip('/')}/openai/deployments/{deployment}"


def _import_httpx() -> Any:
    try:
        import httpx
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise GeneratorError("the LLM answerer needs httpx: pip install 'shirabe[llm]'") from exc
    return httpx


def sse_data(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON payloads of a server-sent event stream's ``data:`` lines, up to ``[DONE]``."""
    for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, comments (": keep-alive"), event names
        data = line[5:].strip()
        if data == "[DONE]":
            return
        if not data:
            continue
        try:
            payload = json.loads(data)
        except json.JSONDecodeError as exc:
            raise GeneratorError(f"unreadable streaming data from the model server: {exc}") from exc
        if isinstance(payload, dict):
            yield payload


def delta_text(payload: dict[str, Any]) -> str:
    """The text a streamed Chat Completions chunk adds (empty for role-only or final chunks)."""
    if "error" in payload:
        raise GeneratorError(f"the model server reported an error: {_error_text(payload)}")
    choices = payload.get("choices") or []
    if not choices:
        return ""
    delta = choices[0].get("delta") or {}
    content = delta.get("content")
    return content if isinstance(content, str) else ""


def message_text(payload: dict[str, Any]) -> str:
    """The answer text of a non-streaming Chat Completions response."""
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise GeneratorError("the model server's response has no answer text") from exc
    return content if isinstance(content, str) else ""


def _error_text(payload: object) -> str:
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            return str(error.get("message", error))[:300]
        return str(error)[:300]
    return str(payload)[:300]


class OpenAIChat:
    """Chat Completions over HTTP, with retries on connection errors, 429 and 5xx."""

    def __init__(self, config: LLMConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        self._config = config
        self._transport = transport
        self._model: str | None = config.model
        self._client: httpx.Client | None = None

    def __repr__(self) -> str:
        return f"OpenAIChat(base_url={self._config.base_url!r}, model={self._model!r})"

    @property
    def base_url(self) -> str:
        return self._config.base_url.rstrip("/")

    @property
    def name(self) -> str:
        return f"llm:{self._model or 'default'}"

    @property
    def context_window(self) -> int | None:
        return self._config.context_window

    @property
    def max_tokens(self) -> int:
        return self._config.max_tokens

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    # ---------------------------------------------------------------- HTTP plumbing

    def _http(self) -> httpx.Client:
        if self._client is None:
            httpx = _import_httpx()
            self._client = httpx.Client(
                timeout=httpx.Timeout(self._config.timeout), transport=self._transport
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self._config.api_key_env, "").strip()
        if key:
            if self._config.api_version:
                headers["api-key"] = key
            else:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def _scrub(self, text: str) -> str:
        """``text`` without the API key, in case a server echoes it back."""
        key = os.environ.get(self._config.api_key_env, "").strip()
        return text.replace(key, "***") if key else text

    def _fail(self, reason: str) -> GeneratorError:
        return GeneratorError(self._scrub(f"model server at {self.base_url}: {reason}"))

    def _wait(self, attempt: int, response: httpx.Response | None) -> None:
        delay = self._config.backoff * (2**attempt)
        if response is not None:
            with contextlib.suppress(ValueError):
                delay = max(delay, float(response.headers.get("retry-after", "")))
        time.sleep(min(delay, MAX_RETRY_AFTER))

    def _send(self, method: str, path: str, body: dict[str, Any] | None, *, stream: bool) -> Any:
        """One request with retries on connection errors, 429 and 5xx; returns the response
        (open, when streaming: the caller closes it)."""
        httpx = _import_httpx()
        client = self._http()
        url = f"{self.base_url}{path}"
        params = {"api-version": self._config.api_version} if self._config.api_version else None
        attempts = self._config.retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                request = client.build_request(
                    method, url, json=body, headers=self._headers(), params=params
                )
                response = client.send(request, stream=stream)
            except httpx.TimeoutException as exc:
                raise self._fail(
                    f"no response within {self._config.timeout:g} s ({type(exc).__name__})"
                ) from None
            except (httpx.ConnectError, httpx.RemoteProtocolError) as exc:
                if last:
                    raise self._fail(
                        f"cannot connect ({type(exc).__name__}); is the server running?"
                    ) from None
                logger.info("model server at %s unreachable, retrying", self.base_url)
                self._wait(attempt, None)
                continue
            except httpx.HTTPError as exc:
                raise self._fail(f"request failed ({type(exc).__name__})") from None
            if response.status_code < 400:
                return response
            if stream:
                response.read()
                response.close()
            if response.status_code in RETRY_STATUS and not last:
                logger.info(
                    "model server at %s answered HTTP %s, retrying",
                    self.base_url,
                    response.status_code,
                )
                self._wait(attempt, response)
                continue
            try:
                detail = _error_text(response.json())
            except ValueError:
                detail = response.text[:300]
            raise self._fail(f"HTTP {response.status_code}: {detail}")
        raise self._fail("no attempts made")  # pragma: no cover - attempts >= 1

    def model(self) -> str:
        """The configured model, or the first one the server lists (local servers serve one)."""
        if self._model is None:
            response = self._send("GET", "/models", None, stream=False)
            try:
                self._model = str(response.json()["data"][0]["id"])
            except (ValueError, KeyError, IndexError, TypeError):
                raise self._fail("no model configured and the server lists none") from None
        return self._model

    def _body(
        self, messages: Sequence[Message], *, stream: bool, max_tokens: int | None = None
    ) -> dict[str, Any]:
        return {
            "model": self.model(),
            "messages": list(messages),
            "temperature": self._config.temperature,
            "max_tokens": max_tokens or self._config.max_tokens,
            "stream": stream,
        }

    # ---------------------------------------------------------------- chat

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        body = self._body(messages, stream=False, max_tokens=max_tokens)
        response = self._send("POST", "/chat/completions", body, stream=False)
        try:
            payload = response.json()
        except ValueError:
            raise self._fail("the response is not JSON") from None
        return message_text(payload)

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        body = self._body(messages, stream=True)
        response = self._send("POST", "/chat/completions", body, stream=True)
        try:
            for payload in sse_data(response.iter_lines()):
                piece = delta_text(payload)
                if piece:
                    yield piece
        except GeneratorError:
            raise
        except Exception as exc:  # httpx errors while reading the stream
            if "Timeout" in type(exc).__name__:
                reason = f"no response within {self._config.timeout:g} s ({type(exc).__name__})"
            else:
                reason = f"the stream broke off ({type(exc).__name__})"
            raise self._fail(reason) from None
        finally:
            response.close()
