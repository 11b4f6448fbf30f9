"""Loading under a time limit in a worker process."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.worker import TimedLoader

pytestmark = pytest.mark.slow


def test_a_file_that_hangs_the_reader_is_stopped_and_the_next_one_loads(tmp_path: Path) -> None:
    stuck = tmp_path / "stuck.txt"
    os.mkfifo(stuck)  # reading blocks forever: nobody writes
    fine = tmp_path / "fine.md"
    fine.write_text("# 規程\n\n本文。\n", encoding="utf-8")
    with TimedLoader(LoadOptions(), timeout=2.0) as loader:
        with pytest.raises(LoadError, match="time limit"):
            loader.load(stuck)
        document = loader.load(fine)
    assert document.title == "規程"


def test_errors_cross_the_process_boundary(tmp_path: Path) -> None:
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"\x00\x01\x02\xff" * 50)
    with TimedLoader(LoadOptions(), timeout=30.0) as loader, pytest.raises(LoadError) as info:
        loader.load(broken)
    assert info.value.path == str(broken)
    assert info.value.reason


def test_load_error_pickles() -> None:
    error = pickle.loads(pickle.dumps(LoadError("a.pdf", "encrypted, password required")))
    assert (error.path, error.reason) == ("a.pdf", "encrypted, password required")


def test_without_a_limit_files_load_in_process(tmp_path: Path) -> None:
    fine = tmp_path / "fine.txt"
    fine.write_text("本文。\n", encoding="utf-8")
    loader = TimedLoader(LoadOptions(), timeout=None)
    assert loader.load(fine).parts[0].text.strip() == "本文。"
    loader.close()


def test_the_time_limit_counts_from_the_last_progress(tmp_path: Path) -> None:
    # about 6 s to read, with progress reported as rows go by: a 2 s limit does not stop it
    huge = tmp_path / "huge.csv"
    with huge.open("w", encoding="utf-8") as fh:
        fh.write("番号,氏名,部署\n")
        fh.writelines(f"{i},社員{i},総務部\n" for i in range(100_000))
    with TimedLoader(LoadOptions(), timeout=2.0) as loader:
        document = loader.load(huge)
    assert len(document.parts) > 100_000
