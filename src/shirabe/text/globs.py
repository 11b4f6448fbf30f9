"""Path globs as regular expressions: one dialect for the access map, the ``--path`` filter and
PDF passwords, matched in Python and inside PostgreSQL alike.

``*`` matches within one folder level, ``**`` across levels (``**/`` also matches no folder),
``?`` one character other than ``/``; every other character stands for itself (``.``, ``[``,
``(``, ``\\`` included). A glob starting with ``/`` is anchored at the start of the path; any
other glob is relative and matches at any folder depth, so ``人事/*`` matches
``/any/where/人事/規程.md`` and ``*.pdf`` every PDF.
"""

from __future__ import annotations

import re
import unicodedata

_SPECIAL = frozenset("\\.^$*+?()[]{}|")
"""Characters with a meaning in Python's ``re`` or PostgreSQL's advanced regular expressions;
both read a backslash before any of them as the character itself."""

_PREFIX = "(?s)\\A"
"""``(?s)``: ``.`` also matches a newline (the default in PostgreSQL, a flag in Python), so both
match the same paths; ``\\A`` and ``\\Z`` are the ends of the whole string in both."""

_ANY_FOLDERS = "(?:.*/)?"


def glob_regex(glob: str) -> str:
    """``glob`` as a regular expression over the whole of a ``/``-separated path, usable with
    ``re.match``/``re.search`` and with PostgreSQL's ``~`` operator. Written in NFC, as the
    paths it is matched against are (a glob typed on macOS is NFD)."""
    glob = unicodedata.normalize("NFC", glob)
    out = [_PREFIX]
    if not glob.startswith("/"):
        out.append(_ANY_FOLDERS)
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append(_ANY_FOLDERS)
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            ch = glob[i]
            if ch == "*":
                out.append("[^/]*")
            elif ch == "?":
                out.append("[^/]")
            else:
                out.append("\\" + ch if ch in _SPECIAL else ch)
            i += 1
    out.append("\\Z")
    return "".join(out)


def glob_matches(glob: str, path: str) -> bool:
    """Whether ``path`` (``/``-separated) matches ``glob``."""
    return re.match(glob_regex(glob), path) is not None
