"""Path globs: one dialect, the same answer from Python's ``re`` as from PostgreSQL's ``~``
(checked against both stores in ``tests/stores/test_contract.py``)."""

from __future__ import annotations

import re

import pytest

from shirabe.text.globs import glob_matches, glob_regex

TABLE = [
    # relative globs match at any folder depth
    ("人事/*", "/any/where/人事/規程.md", True),
    ("人事/*", "人事/規程.md", True),
    ("人事/*", "/docs/人事/2024/評価.xlsx", False),  # * stays within one level
    ("人事/*", "/docs/総人事/規程.md", False),  # a folder name matches whole
    ("人事/*", "/docs/経理/規程.md", False),
    ("人事/**", "/docs/人事/2024/評価.xlsx", True),  # ** crosses levels
    ("人事/**", "/docs/人事部/規程.md", False),
    ("**/給与*.xlsx", "/docs/経理/2024/給与明細.xlsx", True),
    ("**/給与*.xlsx", "給与一覧.xlsx", True),  # **/ also matches no folder
    ("経理/**/明細.csv", "/d/経理/明細.csv", True),
    ("経理/**/明細.csv", "/d/経理/2024/01/明細.csv", True),
    ("経理/**/明細.csv", "/d/経理/2024/01/月次明細.csv", False),
    ("*.pdf", "/docs/製品/ガイド.pdf", True),
    ("*.pdf", "/docs/製品/ガイド.pdf.bak", False),
    ("見積*.pdf", "/共有/営業/見積書_2024.pdf", True),
    ("見積*.pdf", "/共有/営業/旧見積.pdf", False),
    ("?.md", "/d/a.md", True),
    ("?.md", "/d/ab.md", False),
    ("/d/?.md", "/d//.md", False),  # ? is never a folder separator
    ("規?.md", "/d/規程.md", True),  # ? is one character, Japanese included
    # absolute globs are anchored at the start
    ("/d/人事/*", "/d/人事/規程.md", True),
    ("/d/人事/*", "/x/d/人事/規程.md", False),
    ("/d/*", "/d/人事/規程.md", False),
    ("/d/**", "/d/人事/規程.md", True),
    # every other character is itself
    ("/a/(x)+.md", "/a/(x)+.md", True),
    ("/a/(x)+.md", "/a/xx.md", False),
    ("a.md", "/d/axmd", False),  # . is a dot
    ("/a/[bc].md", "/a/[bc].md", True),  # [ is a bracket, not a class
    ("/a/[bc].md", "/a/b.md", False),
    ("/a/{1,2}|^$.md", "/a/{1,2}|^$.md", True),
    ("/a/c++.md", "/a/c++.md", True),
    ("/a/c++.md", "/a/ccc.md", False),
    ("/a/\\d.md", "/a/\\d.md", True),  # a backslash is a backslash
    ("/a/\\d.md", "/a/1.md", False),
    ("規程.md", "/d/規程.md\n", False),  # the whole path: no newline slips past the end
    ("/d/**", "/d/改行\nを含む.md", True),
]


@pytest.mark.parametrize(("glob", "path", "matches"), TABLE)
def test_glob_table(glob: str, path: str, matches: bool) -> None:
    assert glob_matches(glob, path) is matches
    assert (re.search(glob_regex(glob), path) is not None) is matches  # search: anchored too
