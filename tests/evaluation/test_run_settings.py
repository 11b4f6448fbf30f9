"""The settings stored with an eval run say how a chat model was asked, and nothing secret."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from shirabe.evaluation.run import run_settings
from shirabe.settings import AnswerSettings, ChatModelSettings, Settings


def shown(settings: Settings, model: str) -> dict[str, Any]:
    app = SimpleNamespace(settings=settings, generator=SimpleNamespace(name=model))
    return run_settings(cast(Any, app))


def test_extractive_answers_name_no_model_settings() -> None:
    assert shown(Settings(), "extractive")["llm"] is None


def test_a_models_settings_are_kept_without_its_key_or_address() -> None:
    settings = Settings(
        answering=AnswerSettings(generator="llama", context_tokens=1000),
        chat_model=ChatModelSettings(
            model_path=Path("/models/qwen-1.5b-q4km.gguf"),
            max_tokens=160,
            threads=2,
            base_url="http://user:secret@127.0.0.1:1234/v1",
        ),
    )
    kept = shown(settings, "llama:qwen-1.5b-q4km")
    assert kept["model"] == "llama:qwen-1.5b-q4km"
    assert kept["llm"] == {
        "model_file": "qwen-1.5b-q4km.gguf",
        "context_tokens": 1000,
        "max_tokens": 160,
        "temperature": 0.0,
        "threads": 2,
        "n_ctx": 4096,
    }
    assert "secret" not in str(kept) and "/models" not in str(kept)
