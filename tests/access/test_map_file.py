"""The access map file as the engine reads it: read again whenever it changes (saved from the
admin page, by another server or by hand), saved whole or not at all, and never saved
without a file to save it in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shirabe.access.map import AccessMapFile
from shirabe.errors import ConfigurationError


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "acl.yaml"
    path.write_text("人事/**: [hr]\n", encoding="utf-8")
    mapped = AccessMapFile(path, ["public"])
    assert mapped.current().groups_for("人事/a.md") == ("hr",)
    assert mapped.current() is mapped.current()  # unchanged: not read again
    path.write_text("人事/**: [hr, executives]\n", encoding="utf-8")  # by hand, or elsewhere
    assert mapped.current().groups_for("人事/a.md") == ("hr", "executives")
    path.write_text("人事/**: [h r]\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="group 'h r'"):
        mapped.current()


def test_saving_replaces_the_file_once_it_parses(tmp_path: Path) -> None:
    path = tmp_path / "acl.yaml"
    path.write_text("人事/**: [hr]\n", encoding="utf-8")
    mapped = AccessMapFile(path, ["public"])
    text = "# 経理は財務と役員\n経理/**: [finance, executives]"
    saved = mapped.write(text)
    assert path.read_text(encoding="utf-8") == text + "\n"  # comments kept, as written
    assert saved.groups_for("経理/x.md") == mapped.current().groups_for("経理/x.md")
    assert mapped.text() == text + "\n"
    for broken in ("経理/**: [\n", "経理/**: []\n", "[a, b]\n"):
        with pytest.raises(ConfigurationError, match=f"access map {path}"):
            mapped.write(broken)
        assert path.read_text(encoding="utf-8") == text + "\n"
    assert [p.name for p in tmp_path.iterdir()] == ["acl.yaml"]  # no partial file left
    assert mapped.parse("").rules == ()  # an empty map: the default groups decide


def test_without_a_file_there_is_nothing_to_save(tmp_path: Path) -> None:
    mapped = AccessMapFile(None, ["staff"])
    assert mapped.current().groups_for("人事/a.md") == ("staff",)
    assert mapped.text() == ""
    with pytest.raises(ConfigurationError, match="no access map file is configured"):
        mapped.write("人事/**: [hr]\n")
    assert os.listdir(tmp_path) == []
