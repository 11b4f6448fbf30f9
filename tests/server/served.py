"""A real ``shirabe serve`` over the sample corpus, for the tests of the faces other programs
use (the OpenAI-compatible endpoint, MCP): 人事 is readable by the hr group only; ``hr_user``
and ``sales_user`` have a token each; anonymous access is off."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from shirabe.server.process import free_port, running

from tests.support import SAMPLE_DOCS

USERS = {"hr_user": "hr", "sales_user": "sales"}


@dataclass(frozen=True)
class Served:
    url: str
    home: Path
    env: dict[str, str]
    """The environment the server runs with (access map, anonymous access off)."""
    tokens: dict[str, str]


def cli(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "shirabe", *args], capture_output=True, text=True, check=True,
        env=env,
    )  # fmt: skip
    return done.stdout.strip()


@contextmanager
def sample_server(base: Path) -> Iterator[Served]:
    docs, home = base / "docs", base / "index"
    shutil.copytree(SAMPLE_DOCS, docs)
    access = base / "access.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    env = dict(os.environ, SHIRABE_INGEST__ACCESS_MAP=str(access), SHIRABE_SERVER__ANONYMOUS="off")
    cli("ingest", str(docs), "--index", str(home), env=env)
    tokens = {}
    for user, group in USERS.items():
        cli("users", "add", user, "--group", group, "--index", str(home), env=env)
        tokens[user] = cli("tokens", "create", user, "--index", str(home), env=env)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "shirabe", "serve", "--index", str(home), "--port", str(port)]
    with running(command, f"{url}/healthz", log=base / "serve.log", env=env):
        yield Served(url, home, env, tokens)
