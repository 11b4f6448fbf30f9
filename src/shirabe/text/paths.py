"""File names as text: NFC, and names that are not valid UTF-8 made readable.

Python gives undecodable bytes of a file name as lone surrogates (``surrogateescape``); they
cannot be stored or shown. Shift_JIS names from zip archives and SMB shares are common in
Japan, so such a name is read as CP932 when it is valid CP932, else its bytes are shown as
``\\xNN``. macOS writes names in NFD; everything is compared in NFC.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path


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
