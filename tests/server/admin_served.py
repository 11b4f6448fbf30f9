"""An index and its API in-process for the admin tests: ``人事`` is readable by hr alone (the
access map), ``製品`` by everyone, and ``総務/壊れた議事録.docx`` failed; ``root`` is the
admin, ``hana`` is in hr and ``taro`` in no group. The embedder is the tests' hashed one,
counted: nothing here depends on meaning, and a test can tell whether anything was embedded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fastapi.testclient import TestClient

from shirabe.embedders.metered import MeteredEmbedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import IngestSettings, ServerSettings, Settings

from tests.support import HashedEmbedder

DOCS = {
    "人事/給与規程.md": "# 給与規程\n\n## 支払日\n\n給与は毎月25日に支払う。\n",
    "人事/評価/評価制度.md": "# 評価制度\n\n評価は年2回行う。\n",
    "製品/仕様書.md": "# 仕様書\n\nAQ-300の重さは12kgである。\n",
    "製品/取扱説明書.md": "# 取扱説明書\n\n電源を入れてから3分待つ。\n",
}
ACCESS = "人事/**: [hr]\n"


@dataclass
class Served:
    shirabe: Shirabe
    client: TestClient
    docs: Path
    access: Path
    tokens: dict[str, str]
    embedder: MeteredEmbedder

    def bearer(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def get(self, url: str, as_user: str = "root", **params: Any) -> Any:
        response = self.client.get(url, headers=self.bearer(as_user), params=params)
        assert response.status_code == 200, response.text
        return response.json()

    def paths(self, user: str, status: str | None = None) -> set[str]:
        """The documents ``user`` sees listed (with ``status``)."""
        params = {"limit": 500} | ({"status": status} if status else {})
        return {d["path"] for d in self.get("/api/documents", user, **params)["items"]}

    def audit(self, **params: Any) -> list[dict[str, Any]]:
        return list(self.get("/api/audit", **params)["items"])


@contextmanager
def served(
    base: Path, *, access_map: bool = True, anonymous: Literal["off", "localhost", "on"] = "off"
) -> Iterator[Served]:
    docs = base / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    (docs / "総務").mkdir()
    (docs / "総務" / "壊れた議事録.docx").write_bytes(b"PK\x03\x04 not really a document")
    access = base / "acl.yaml"
    access.write_text(ACCESS, encoding="utf-8")
    settings = Settings(
        home=base / "index",
        ingest=IngestSettings(access_map=access if access_map else None),
        server=ServerSettings(anonymous=anonymous),
    )
    embedder = MeteredEmbedder(HashedEmbedder())
    with Shirabe(settings, embedder=embedder) as shirabe:
        shirabe.ingest([docs])
        tokens = {}
        for name, groups, admin in (
            ("root", [], True),
            ("hana", ["hr"], False),
            ("taro", [], False),
        ):
            shirabe.accounts.add_user(name, groups, admin=admin)
            tokens[name] = shirabe.accounts.create_token(name)[1]
        app = create_app(shirabe, roots=[docs])
        with TestClient(app, base_url="http://127.0.0.1") as client:
            yield Served(shirabe, client, docs, access, tokens, embedder)


def events(response: Any) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events of ``response``: (event, data) in order."""
    out: list[tuple[str, dict[str, Any]]] = []
    kind = ""
    for line in response.iter_lines():
        if line.startswith("event:"):
            kind = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            out.append((kind, json.loads(line.split(":", 1)[1])))
    return out


def error(response: Any, status: int, code: str) -> str:
    """The message of ``response``, an error of ``status`` and ``code``."""
    assert response.status_code == status, response.text
    found = response.json()["error"]
    assert (found["status"], found["code"]) == (status, code), found
    return str(found["message"])
