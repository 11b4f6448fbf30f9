"""File names as text: NFC, and names that are not valid UTF-8 made readable.

Python gives undecodable bytes of a file name as lone surrogates (``surrogateescape``); they
cannot be stored or shown. Shift_JIS names from zip archives and SMB shares are common in
Japan, so such a name is read as CP932 when it is valid CP932, else its bytes are shown as
``\\xNN``. macOS writes names in NFD; everything is compared in NFC.

Names that say who may read something (categories, the names an access map matches, groups)
are compared in a stricter form, :func:`canonical_name`, so that a name that only looks like
another is that other.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

_TRAILING = re.compile(r"[\s.\u2800]+\Z")
_LEADING = re.compile(r"\A[\s\u2800]+")
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8"
    "\U000e0000-\U000e0fff]"
)
"""Characters that show nothing and are not format characters (Unicode's default ignorable
code points of other categories): the combining grapheme joiner, the Hangul fillers, the
Mongolian and the other variation selectors (``人事\ufe0f`` is drawn as ``人事``)."""


def readable_name(name: str) -> str:
    """One path component as text: NFC, undecodable bytes read as CP932 or escaped."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = os.fsencode(name)
        try:
            name = raw.decode("cp932")
            if any(unicodedata.category(ch) in {"Cc", "Co"} for ch in name):
                raise UnicodeDecodeError("cp932", raw, 0, len(raw), "not a name")
        except UnicodeDecodeError:  # neither UTF-8 nor CP932 text (CP932 gives 0xff as U+F8F3)
            name = raw.decode("utf-8", "backslashreplace")
    return unicodedata.normalize("NFC", name)


def readable_path(path: str | Path) -> str:
    """An absolute path as text, each component made readable (:func:`readable_name`)."""
    parts = Path(os.path.abspath(path)).parts
    return os.path.join(parts[0], *(readable_name(p) for p in parts[1:]))


def canonical_name(name: str) -> str:
    """The form in which a category, a folder or file name an access map matches, or a group
    name is compared: NFKC (``⼈`` U+2F08 is ``人``, ``ＨＲ`` is ``HR``, half-width kana are
    full-width), format characters dropped (zero-width spaces, joiners, byte order marks),
    white space around it and dots at its end removed (``人事.`` and ``人事 `` are ``人事``, as
    Windows reads them). Characters that show nothing are dropped too: variation selectors,
    the combining grapheme joiner and the Hangul fillers (``人事\ufe0f`` and ``人事\u3164`` are
    ``人事``); the braille blank ``\u2800`` counts as white space. Case is kept."""
    text = name
    while True:  # dropping a character may leave a sequence that NFKC composes
        shown = unicodedata.normalize("NFKC", text)
        shown = _INVISIBLE.sub("", shown)
        shown = "".join(ch for ch in shown if unicodedata.category(ch) != "Cf")
        if shown == text:
            break
        text = shown
    return _LEADING.sub("", _TRAILING.sub("", text))


_LOOKALIKE_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC", "ARMENIAN", "CHEROKEE", "COPTIC")


def mixed_scripts(name: str) -> list[str]:
    """The alphabets whose letters ``name`` mixes, when it mixes letters of more than one of
    those that share shapes (Latin, Greek, Cyrillic, Armenian, Cherokee, Coptic): ``НR`` with a
    Cyrillic Н is drawn as ``HR``. Kanji and kana beside Latin letters (``IT部門``) mix
    nothing; a whole name in one of those alphabets is its own name. Empty if it mixes none."""
    scripts: set[str] = set()
    for ch in name:
        if not unicodedata.category(ch).startswith("L"):
            continue
        script = unicodedata.name(ch, "").split(" ", 1)[0]
        if script in _LOOKALIKE_SCRIPTS:
            scripts.add(script)
    return sorted(scripts) if len(scripts) > 1 else []
