"""The page's files as the server hands them out: one module script starts the page (after
one classic script that sets the colours before it is drawn), every module it imports is served
as JavaScript, and nothing else under the assets' address is."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from shirabe import web
from shirabe.server.routes import pages

IMPORT = re.compile(r'^(?:import|export)\b[^;"(]*?"([^"]+)";', re.MULTILINE)
"""A module an ``import`` or ``export ... from`` names (an exported function's body is none)."""


def imports(name: str) -> list[str]:
    return IMPORT.findall(web.asset(name).decode("utf-8"))


def client() -> TestClient:
    app = FastAPI()
    app.include_router(pages.router)
    return TestClient(app)


CLASSIC = {"theme.js"}
"""Scripts the page loads as they are, not as modules: read before the page is drawn."""


def test_the_page_starts_one_module_and_has_no_inline_script() -> None:
    scripts = re.findall(r"(<script\b[^>]*>)(.*?)</script>", web.page(), re.DOTALL)
    assert scripts == [
        ('<script src="/assets/theme.js">', ""),  # in the head, before the style sheets
        ('<script type="module" src="/assets/app.js">', ""),
    ]
    head = web.page().split("</head>")[0]
    assert head.index("/assets/theme.js") < head.index('rel="stylesheet"')
    for name in CLASSIC:
        assert not imports(name), f"{name} is a classic script: it imports nothing"


def test_every_module_is_imported_by_a_relative_path_the_server_serves() -> None:
    scripts = {name for name, kind in web.ASSETS.items() if kind.startswith("text/javascript")}
    scripts -= CLASSIC
    reached, waiting = set(), ["app.js"]
    while waiting:
        name = waiting.pop()
        reached.add(name)
        for target in imports(name):
            assert target.startswith("./") and "/" not in target[2:], (name, target)
            assert target[2:] in scripts, f"{name} imports {target}, which is not served"
            if target[2:] not in reached:
                waiting.append(target[2:])
    assert reached == scripts, f"never imported: {sorted(scripts - reached)}"
    assert "admin.js" in reached


def test_every_file_is_served_with_its_type_and_nothing_else_is() -> None:
    with client() as http:
        for name, kind in web.ASSETS.items():
            response = http.get(f"/assets/{name}")
            assert response.status_code == 200, name
            assert response.headers["content-type"] == kind, name
            assert response.headers["cache-control"] == "no-cache", name
            assert response.content == (web.STATIC / name).read_bytes(), name
        for name in ("index.html", "missing.js", "..%2F__init__.py", "app.js.map"):
            assert http.get(f"/assets/{name}").status_code == 404, name
    assert {"app.js", "admin.js", "theme.js", "app.css", "sources.css", "favicon.svg"} <= set(
        web.ASSETS
    )
    styles = set(re.findall(r'<link rel="stylesheet" href="/assets/([^"]+)">', web.page()))
    assert styles == {n for n, kind in web.ASSETS.items() if kind.startswith("text/css")}
