"""Decode the bytes of a Japanese text file without being told its encoding.

Office PCs still save CSV and TXT files as Shift_JIS (CP932), older Unix systems as EUC-JP and
Excel adds BOMs, so the encoding is detected: BOMs first, then strict UTF-8, then CP932 and
EUC-JP, ranked by how plausible the decoded Japanese looks when both decode. A file that names
its own encoding (a web page's ``<meta charset>``) is read in it when its bytes fit.

A file that is clearly UTF-8 apart from a few bad bytes (a truncated copy, one corrupted
sector) is read with each bad byte replaced by U+FFFD rather than refused; the replacement is
logged and, inside :func:`replacement_warnings`, reported as a warning for the document.
"""

from __future__ import annotations

import codecs
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

logger = logging.getLogger(__name__)

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_LEGACY_CODECS = ("cp932", "euc_jp")
_SAMPLE_BYTES = 8192
_SAMPLE_CHARS = 4096
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")
_MAX_CONTROL_RATIO = 0.05
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_HIGH_BYTES = bytes(range(0x80, 0x100))
_UTF8_EVIDENCE = 4
"""Valid non-ASCII UTF-8 characters needed per bad byte before a file counts as UTF-8: CP932
and EUC-JP text read as UTF-8 gives far more bad bytes than valid characters."""
_notes: ContextVar[list[str] | None] = ContextVar("encoding_notes", default=None)

BINARY = "binary file, not text"
UNKNOWN = "unknown text encoding"


class EncodingError(ValueError):
    """Bytes that are not text in any supported encoding; ``reason`` is shown to the user."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


def detect_encoding(data: bytes) -> str:
    """The Python codec name that decodes ``data``; raises :class:`EncodingError` if none does.

    Nearly-UTF-8 data gives ``"utf-8"`` although a strict decode of it fails."""
    return _detect(data, "<bytes>")[0]


def decode_bytes(data: bytes, name: str = "<bytes>") -> str:
    """``data`` as text with BOMs removed and newlines normalised to ``"\\n"``.

    ``name`` only labels errors and log messages (usually the file path). Bad bytes in
    otherwise clear UTF-8 become U+FFFD, with a warning (:func:`replacement_warnings`).
    """
    return _decode(data, name)[1]


def replaced_warning(count: int) -> str:
    """The warning for a text that had ``count`` bad bytes replaced."""
    noun = "byte that is" if count == 1 else "bytes that are"
    return f"{count:,} {noun} not valid UTF-8 replaced with U+FFFD"


@contextmanager
def replacement_warnings() -> Iterator[list[str]]:
    """The warnings of every decode in this block (in this thread or task), for callers whose
    decoding happens deep inside a parser: each names bytes replaced with U+FFFD."""
    notes: list[str] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def decode_declared(
    data: bytes, declared: str | None, name: str = "<bytes>"
) -> tuple[str, str | None]:
    """``data`` as text, trusting the codec the file itself names, and an optional warning.

    A BOM comes first; then ``declared`` (a Python codec name, from a web page's meta tag or
    an XML declaration) when the bytes decode in it; else detection as in
    :func:`decode_bytes`, with a warning when the declaration was wrong (files re-saved in
    another encoding keep their old declaration). Newlines are normalised to ``"\\n"``.
    """
    if declared is None or data.startswith(tuple(bom for bom, _ in _BOMS)):
        return decode_bytes(data, name), None
    try:
        text = data.decode(declared)
    except UnicodeDecodeError:
        logger.debug("%s: declared charset %s does not fit", name, declared)
        codec, text, replacement = _decode(data, name)
        if codec == declared:  # UTF-8 with a few bad bytes: the declaration was right
            return text, replacement
        warning = f"declared charset {declared} does not match the bytes; detected instead"
        return text, warning
    return _normalise_newlines(text), None


def _decode(data: bytes, name: str) -> tuple[str, str, str | None]:
    """The codec, the clean text and the warning about replaced bytes, if any (noted too)."""
    codec, text, replaced = _detect(data, name)
    logger.debug("decoded %s as %s", name, codec)
    warning = None
    if replaced:
        warning = replaced_warning(replaced)
        logger.info("%s: %s", name, warning)
        notes = _notes.get()
        if notes is not None:
            notes.append(warning)
    return codec, _normalise_newlines(text.lstrip("\ufeff")), warning


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _detect(data: bytes, name: str) -> tuple[str, str, int]:
    """The codec, the decoded text and how many bad bytes became U+FFFD, trying the
    candidates from safest to most ambiguous."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            if codec == "utf-32" and len(data) % 4:
                continue  # FF FE 00 00 can also start UTF-16-LE text whose first char is NUL
            return codec, _decode_or_raise(data, codec, name), 0
    utf16 = _utf16_without_bom(data)
    if utf16 is not None:
        return utf16, _decode_or_raise(data, utf16, name), 0
    if b"\x00" in data[:_SAMPLE_BYTES]:
        raise EncodingError(name, BINARY)
    try:
        return "utf-8", _reject_binary(data.decode("utf-8"), name), 0
    except UnicodeDecodeError:
        pass
    # Checked before the legacy codecs: UTF-8 Japanese often decodes as CP932 mojibake.
    nearly = _nearly_utf8(data)
    if nearly is not None:
        return "utf-8", _reject_binary(nearly[0], name), nearly[1]
    candidates: list[tuple[str, str]] = []
    for codec in _LEGACY_CODECS:
        try:
            candidates.append((codec, data.decode(codec)))
        except UnicodeDecodeError:
            continue
    if not candidates:
        raise EncodingError(name, UNKNOWN)
    # max() keeps the first of equal scores, so CP932, the commoner encoding, wins ties.
    codec, text = max(candidates, key=lambda c: _plausibility(c[1][:_SAMPLE_CHARS]))
    if _mostly_unmapped(text[:_SAMPLE_CHARS]):
        raise EncodingError(name, UNKNOWN)
    return codec, _reject_binary(text, name), 0


def _nearly_utf8(data: bytes) -> tuple[str, int] | None:
    """``data`` decoded as UTF-8 with each bad byte as U+FFFD, and the number of bad bytes,
    when valid multi-byte characters outnumber the bad bytes by far; else ``None``."""
    escaped = data.decode("utf-8", "surrogateescape")
    text, bad = _ESCAPED_BYTE.subn("\ufffd", escaped)
    ascii_chars = len(data.translate(None, _HIGH_BYTES))
    valid_non_ascii = len(text) - bad - ascii_chars
    if valid_non_ascii < _UTF8_EVIDENCE * bad:
        return None
    return text, bad


def _decode_or_raise(data: bytes, codec: str, name: str) -> str:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        raise EncodingError(name, f"{UNKNOWN} (invalid {codec})") from exc
    return _reject_binary(text, name)


def _utf16_without_bom(data: bytes) -> str | None:
    """``utf-16-le``/``-be`` when NULs sit in every other byte, as in BOM-less UTF-16 of ASCII."""
    sample = data[:_SAMPLE_BYTES]
    if len(sample) < 4 or len(data) % 2:
        return None
    pairs = len(sample) // 2
    even_nuls = sample[0::2].count(0) / pairs
    odd_nuls = sample[1::2].count(0) / pairs
    if odd_nuls >= 0.3 and even_nuls < 0.05:
        codec = "utf-16-le"
    elif even_nuls >= 0.3 and odd_nuls < 0.05:
        codec = "utf-16-be"
    else:
        return None
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else codec


def _reject_binary(text: str, name: str) -> str:
    """``text`` unless it is mostly control characters, which no real document is."""
    sample = text[:_SAMPLE_CHARS]
    controls = sum(1 for ch in sample if _is_control(ch))
    if sample and controls / len(sample) > _MAX_CONTROL_RATIO:
        raise EncodingError(name, BINARY)
    return text


def _mostly_unmapped(text: str) -> bool:
    """Whether most non-ASCII characters are private-use or C1, as when CP932 decodes junk."""
    non_ascii = [ord(ch) for ch in text if ord(ch) >= 0x80]
    unmapped = sum(1 for code in non_ascii if code < 0xA0 or 0xE000 <= code <= 0xF8FF)
    return unmapped * 2 > len(non_ascii)


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return (code < 0x20 or 0x7F <= code < 0xA0) and ch not in _TEXT_CONTROLS


def _plausibility(text: str) -> float:
    """How much ``text`` looks like ordinary Japanese: higher is more plausible.

    Kana, common kanji and Japanese punctuation score up; half-width katakana, rare kanji,
    private-use and control characters, which wrong-codec decodings are full of, score down.
    """
    return sum(_char_score(ch) for ch in text)


def _char_score(ch: str) -> float:
    code = ord(ch)
    if code < 0x80:
        return -5.0 if _is_control(ch) else 0.0
    if 0x3041 <= code <= 0x309F:  # hiragana
        return 3.0
    if 0x30A1 <= code <= 0x30FC:  # katakana, ・ and ー
        return 2.0
    if 0x3000 <= code <= 0x303F or 0xFF01 <= code <= 0xFF5E:  # 、。「」 and full-width ASCII
        return 1.0
    if 0x4E00 <= code <= 0x9FFF:
        return _kanji_score(ch)
    if 0xFF61 <= code <= 0xFF9F:  # half-width katakana
        return -1.0
    if 0xE000 <= code <= 0xF8FF or code < 0xA0:  # private use, C1 controls
        return -5.0
    # Greek, Cyrillic, box drawing, compatibility and extension kanji: legal but rare.
    return -1.0


def _kanji_score(ch: str) -> float:
    """JIS level-1 kanji (the common ones) score well, level 2 a little, the rest negative."""
    try:
        lead = ch.encode("euc_jp")[0]
    except UnicodeEncodeError:
        return -1.0
    if 0xB0 <= lead <= 0xCF:
        return 2.0
    if 0xD0 <= lead <= 0xF4:
        return 0.5
    return -1.0
