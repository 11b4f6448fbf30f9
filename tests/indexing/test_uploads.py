"""Uploaded names: what is kept of a name, and where it is written (hand-computed tables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shirabe.indexing.uploads import Uploads, safe_name, shortened


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("規程.md", "規程.md"),
        ("C:\\Users\\hana\\規程.md", "規程.md"),  # a Windows path: its last component
        ("../../etc/passwd", "passwd"),
        ("ok\u202egpj.md", "okgpj.md"),  # a right-to-left override dropped
        ("ｶﾞｲﾄﾞ.txt", "ｶﾞｲﾄﾞ.txt"),  # NFC keeps half-width kana as they are
        ("か\u3099ん.md", "がん.md"),  # a combining mark composed (NFC)
        ("  メモ.txt ", "メモ.txt"),
        (".env", None),  # hidden
        ("..", None),
        ("", None),
        ("a<b>.md", None),
        ("tab\there.md", None),
    ],
)
def test_safe_name(given: str, kept: str | None) -> None:
    assert safe_name(given) == kept


@pytest.mark.parametrize(
    ("name", "limit", "expected"),
    [
        ("abc.md", 200, "abc.md"),
        ("abcdef.md", 6, "abc.md"),
        ("あいう.md", 9, "あい.md"),  # 3 bytes a kana: 9 - 3 (".md") leaves two
        ("あいう.md", 8, "あ.md"),  # a character is never cut in half
        (
            "x" * 10 + "." + "y" * 20,
            12,
            "x" * 10 + ".y",
        ),  # a suffix over 16 characters: cut as text
    ],
)
def test_shortened(name: str, limit: int, expected: str) -> None:
    assert shortened(name, limit) == expected


def test_the_target_and_whether_a_loader_reads_it(tmp_path: Path) -> None:
    folder = tmp_path / "総務"
    assert Uploads.target(folder, "sub/規程.md") == folder / "規程.md"
    assert Uploads.target(folder, ".hidden") is None
    assert Uploads.unsupported(folder / "規程.md") is None
    assert Uploads.unsupported(folder / "tool.exe") == "unsupported file type .exe"
    assert Uploads.unsupported(folder / "README") == "unsupported file type (none)"
