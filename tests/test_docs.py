"""The documentation keeps up with the code: every setting is listed in docs/configuration.md
under its section with its variable, and every old name with its new one; every page under
docs/ is in the site's navigation (mkdocs.yml)."""

from __future__ import annotations

import re

import pytest
import yaml

from shirabe.settings import SECTIONS, Settings, env_name
from shirabe.settings.renamed import RENAMED

from tests.support import ROOT

DOCS = ROOT / "docs"


SETTINGS = [
    *((name,) for name in Settings.model_fields if name not in SECTIONS),
    *((section, name) for section, model in SECTIONS.items() for name in model.model_fields),
]


def _rows() -> dict[str, str]:
    """The first two cells of each table row of the page: a setting and its variable, or an
    old name and its new one."""
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    cells = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", page, re.MULTILINE)
    return dict(cells)


@pytest.mark.parametrize("path", SETTINGS, ids=".".join)
def test_every_setting_is_in_the_configuration_page(path: tuple[str, ...]) -> None:
    name = ".".join(path)
    assert _rows().get(f"{name}") == env_name(*path), f"{name} is not documented"


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_every_old_name_is_given_with_its_new_one(old: str) -> None:
    assert _rows().get(env_name(old)) == env_name(*RENAMED[old])


def test_the_configuration_page_names_no_setting_that_is_gone() -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    secrets = {"SHIRABE_LLM_API_KEY", "SHIRABE_OIDC_CLIENT_SECRET"}  # variables, not settings
    named = set(re.findall(r"`(SHIRABE_[A-Z0-9_]+)`", page)) - secrets
    known = {env_name(*path) for path in SETTINGS} | {env_name(old) for old in RENAMED}
    assert named - known == set()


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
