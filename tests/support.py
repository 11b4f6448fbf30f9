"""Paths and guards shared by the tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shirabe.answering.prompting import MARKER, marker_numbers

ROOT = Path(__file__).resolve().parents[1]
"""The project root."""
SAMPLE_DOCS = ROOT / "sample_docs"
SHARED = ROOT.parent / "shared"
"""``../shared`` beside the project: real-world fixtures and the JSQuAD data."""
FIXTURES = SHARED / "fixtures"

STRICT_VAR = "SHIRABE_TEST_STRICT"
"""Set to 1 (CI does) and a test whose data or tool is missing fails instead of skipping."""


def unavailable(message: str) -> None:
    """Stop a test that cannot run here: a failure in CI, a skip saying why elsewhere."""
    if os.environ.get(STRICT_VAR) == "1":
        pytest.fail(f"{message} ({STRICT_VAR}=1: everything the tests need must be here)")
    pytest.skip(message)


def shared(path: Path = FIXTURES) -> Path:
    """``path`` under ``../shared``, which must be beside the project."""
    if not path.exists():
        unavailable(f"{path} not found: these tests need ../shared beside the project")
    return path


def cited(text: str) -> list[list[int]]:
    """The passage numbers of each citation marker in an answer, in order."""
    return [marker_numbers(m.group(1)) for m in MARKER.finditer(text)]
