"""Where a document lives below the document root: hand-computed places."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from shirabe.indexing.places import common_root, place_of
from shirabe.text.paths import readable_name

NFD = unicodedata.normalize("NFD", "ダイアログ.md")


@pytest.mark.parametrize(
    ("path", "root", "key", "relative", "category"),
    [
        ("/d/人事/規程.md", "/d", "/d/人事/規程.md", "人事/規程.md", "人事"),
        ("/d/人事/評価/a.md", "/d", "/d/人事/評価/a.md", "人事/評価/a.md", "人事"),
        ("/d/a.md", "/d", "/d/a.md", "a.md", None),
        ("/d/x/../人事/a.md", "/d", "/d/人事/a.md", "人事/a.md", "人事"),
        (f"/d/{NFD}", "/d", "/d/ダイアログ.md", "ダイアログ.md", None),
        ("/d", "/d", "/d", "", None),
    ],
)
def test_a_place_depends_on_the_root_only(
    path: str, root: str, key: str, relative: str, category: str | None
) -> None:
    place = place_of(path, root)
    assert place is not None
    assert (place.key, place.relative, place.category) == (key, relative, category)


@pytest.mark.parametrize("folder", ["\u2f08事", "人事.", "人事 ", "人事\u3000", "人\u200b事"])
def test_a_category_that_only_looks_like_another_is_that_one(folder: str) -> None:
    place = place_of(f"/d/{folder}/規程.md", "/d")
    assert place is not None
    assert (place.key, place.relative) == (f"/d/{folder}/規程.md", f"{folder}/規程.md")
    assert place.category == "人事"


def test_a_path_outside_the_root_has_no_place() -> None:
    assert place_of("/e/人事/a.md", "/d") is None
    assert place_of("/dd/a.md", "/d") is None  # a prefix of the name is not a folder


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("人事規程.md".encode("cp932"), "人事規程.md"),  # Shift_JIS from a zip or SMB share
        ("人事規程.md".encode(), "人事規程.md"),
        (b"\xff\xfe.md", "\\xff\\xfe.md"),  # neither: escaped
        (b"\x81 x.md", "\\x81 x.md"),
        (NFD.encode(), "ダイアログ.md"),
    ],
)
def test_names_are_read_as_utf8_cp932_or_escaped_and_nfc(raw: bytes, shown: str) -> None:
    assert readable_name(os.fsdecode(raw)) == shown


def test_a_symlink_into_the_root_gives_the_same_place(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "人事").mkdir(parents=True)
    (root / "人事" / "a.md").write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to(root / "人事", target_is_directory=True)
    via_link = place_of(tmp_path / "link" / "a.md", root)
    assert via_link is not None
    assert via_link.key == str(root / "人事" / "a.md")
    assert via_link.category == "人事"


def test_the_first_root_holds_everything_given(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "c").mkdir()
    (tmp_path / "a" / "b" / "x.md").write_text("x", encoding="utf-8")
    assert common_root([tmp_path / "a" / "b"]) == tmp_path / "a" / "b"
    assert common_root([tmp_path / "a" / "b" / "x.md"]) == tmp_path / "a" / "b"
    assert common_root([tmp_path / "a" / "b", tmp_path / "a" / "c"]) == tmp_path / "a"
