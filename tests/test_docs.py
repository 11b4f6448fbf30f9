"""The documentation keeps up with the code: every setting is listed in docs/configuration.md,
and every page under docs/ is in the site's navigation (mkdocs.yml)."""

from __future__ import annotations

import re

import pytest
import yaml

from shirabe.settings.renamed import RENAMED

from tests.support import ROOT

DOCS = ROOT / "docs"


NAMES = sorted(["home", "log_level", *RENAMED])


@pytest.mark.parametrize("name", NAMES)
def test_every_setting_is_in_the_configuration_page(name: str) -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert f"`SHIRABE_{name.upper()}`" in page, f"SHIRABE_{name.upper()} is not documented"


def test_the_configuration_page_names_no_setting_that_is_gone() -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`SHIRABE_([A-Z0-9_]+)`", page)) - {"LLM_API_KEY"}  # the key itself
    assert named - {n.upper() for n in NAMES} == set()


def _pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return {p for v in nav.values() for p in _pages(v)}
    if isinstance(nav, list):
        return {p for item in nav for p in _pages(item)}
    return set()


def test_every_page_is_in_the_site_navigation() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == _pages(config["nav"])
