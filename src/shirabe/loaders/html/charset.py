"""The character encoding a page declares: ``<meta charset>``, ``http-equiv`` or ``<?xml?>``.

Intranet pages are often Shift_JIS or EUC-JP. The page's own declaration is found here; the
choice between a BOM, the declaration and detection is
:func:`shirabe.text.encoding.decode_declared`.
"""

from __future__ import annotations

import codecs
import re

from shirabe.text.encoding import decode_declared

_SNIFF_BYTES = 4096
_META_CHARSET = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""",
    re.IGNORECASE,
)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)""")
_CHARSET_ALIASES = {
    # Pages labelled Shift_JIS are nearly always written by Windows tools in CP932 (which adds
    # NEC and IBM extensions such as ① and 髙), and WHATWG decodes them the same way.
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "csshiftjis": "cp932",
    "x-euc-jp": "euc_jp",
    # A page cannot really be UTF-16 if its ASCII meta tag was found by a byte search.
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}


def declared_charset(data: bytes) -> str | None:
    """The Python codec named by the page itself (meta tag or XML declaration), if known.

    Only the first few kilobytes are searched, as browsers do. Unknown names give ``None``.
    """
    head = data[:_SNIFF_BYTES]
    match = _XML_ENCODING.match(head) or _META_CHARSET.search(head)
    if match is None:
        return None
    label = match[1].decode("ascii", "replace").strip().lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode_html(data: bytes, name: str = "<bytes>") -> tuple[str, str | None]:
    """The page's text and an optional warning: BOM, then declared charset, then detection.

    A declared charset the bytes do not decode in (pages re-saved in another encoding keep
    their old meta tag) falls back to detection with a warning.
    """
    return decode_declared(data, declared_charset(data), name)
