"""Text that is clearly UTF-8 apart from a few bad bytes: read with U+FFFD, with a warning.

A bad byte is one a UTF-8 decoder rejects: a stray byte, or a character cut in two (each of
its remaining bytes counts). Text in other encodings, binary data and bytes that give no
evidence of UTF-8 (ASCII with a stray Latin-1 byte) are still refused or detected as before.
"""

from __future__ import annotations

import threading

import pytest

from shirabe.text.encoding import (
    BINARY,
    UNKNOWN,
    EncodingError,
    decode_bytes,
    decode_declared,
    detect_encoding,
    replaced_warning,
    replacement_warnings,
)

RULE = "第3条（申請）社員は、出張の前に所定の様式で申請しなければならない。\n"
BODY = RULE.encode() * 20
CUT = len("第3条（申請）".encode())
"""A character boundary inside ``BODY``."""


@pytest.mark.parametrize(
    ("data", "text", "bad"),
    [
        pytest.param(BODY[:CUT] + b"\xff" + BODY[CUT:], None, 1, id="one-stray-byte"),
        pytest.param(
            "氏名,部署\n山田太郎,総務部\n佐藤花子,経理部\n".encode() + b"\x80\x81\xfe",
            "氏名,部署\n山田太郎,総務部\n佐藤花子,経理部\n\ufffd\ufffd\ufffd",
            3,
            id="three-at-the-end",
        ),
        pytest.param(
            "経費精算".encode() + "規程"[0].encode()[:2] + "の本文です".encode(),
            "経費精算\ufffd\ufffdの本文です",
            2,
            id="a-character-cut-in-two",
        ),
        pytest.param(BODY[:-2], None, 2, id="truncated-in-the-last-character"),
        pytest.param(
            "ID,値\r\n".encode() + b"\xc0" + "東京都千代田区\r\n".encode(),
            "ID,値\n\ufffd東京都千代田区\n",
            1,
            id="crlf-normalised-too",
        ),
    ],
)
def test_a_few_bad_bytes_become_replacement_characters(
    data: bytes, text: str | None, bad: int
) -> None:
    with replacement_warnings() as warnings:
        decoded = decode_bytes(data, "notes.txt")
    assert decoded.count("\ufffd") == bad
    if text is not None:
        assert decoded == text
    assert warnings == [replaced_warning(bad)]
    assert detect_encoding(data) == "utf-8"


def test_the_rest_of_the_text_is_intact() -> None:
    data = BODY[:CUT] + b"\xff" + BODY[CUT:]
    decoded = decode_bytes(data)
    assert decoded.replace("\ufffd", "") == BODY.decode()


def test_the_warning_counts_bytes() -> None:
    assert replaced_warning(1) == "1 byte that is not valid UTF-8 replaced with U+FFFD"
    assert replaced_warning(3) == "3 bytes that are not valid UTF-8 replaced with U+FFFD"
    assert replaced_warning(1200) == "1,200 bytes that are not valid UTF-8 replaced with U+FFFD"


def test_clean_text_gives_no_warning() -> None:
    with replacement_warnings() as warnings:
        assert decode_bytes(BODY) == BODY.decode()
        assert decode_bytes(RULE.encode("cp932")) == RULE
    assert warnings == []


def test_warnings_outside_a_collecting_block_go_nowhere() -> None:
    assert "\ufffd" in decode_bytes(BODY + b"\xff")
    with replacement_warnings() as warnings:
        pass
    assert warnings == []


def test_each_thread_collects_its_own_warnings() -> None:
    seen: list[list[str]] = []

    def decode_clean() -> None:
        with replacement_warnings() as mine:
            decode_bytes(BODY)
        seen.append(mine)

    with replacement_warnings() as warnings:
        worker = threading.Thread(target=decode_clean)
        worker.start()
        decode_bytes(BODY + b"\xff")
        worker.join()
    assert warnings == [replaced_warning(1)]
    assert seen == [[]]


@pytest.mark.parametrize("codec", ["cp932", "euc_jp"])
def test_legacy_japanese_with_a_bad_byte_is_not_taken_for_utf8(codec: str) -> None:
    data = RULE.encode(codec) * 5
    damaged = data[:40] + b"\xff" + data[40:]
    with pytest.raises(EncodingError) as info:
        decode_bytes(damaged)
    assert info.value.reason == UNKNOWN


@pytest.mark.parametrize("codec", ["cp932", "euc_jp"])
def test_clean_legacy_japanese_is_still_detected(codec: str) -> None:
    data = RULE.encode(codec) * 5
    assert detect_encoding(data) == codec
    assert decode_bytes(data) == RULE * 5


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        pytest.param(b"caf\xe9 cr\xe8me", UNKNOWN, id="latin-1: no evidence of UTF-8"),
        pytest.param(b"ERR-107 \xff\xfe retry", UNKNOWN, id="ascii-with-stray-bytes"),
        pytest.param(bytes(range(1, 256)) * 40, UNKNOWN, id="every-byte-but-nul"),
        pytest.param(b"\x01\x02\x03\x04" * 50 + "規程".encode() * 10 + b"\xff", BINARY, id="ctl"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + BODY, BINARY, id="png"),
        pytest.param("規程".encode() + b"\xff" * 20, UNKNOWN, id="more-bad-than-good"),
    ],
)
def test_what_is_not_nearly_utf8_is_still_refused(data: bytes, reason: str) -> None:
    with pytest.raises(EncodingError) as info:
        decode_bytes(data)
    assert info.value.reason == reason


def test_a_page_declaring_utf8_with_a_bad_byte_keeps_its_declaration() -> None:
    page = b'<meta charset="utf-8"><p>' + BODY + b"\xff</p>"
    text, warning = decode_declared(page, "utf-8", "page.html")
    assert text.endswith("\ufffd</p>")
    assert warning == replaced_warning(1)


def test_a_page_declaring_another_charset_says_so_and_counts_the_bytes() -> None:
    page = BODY + b"\xff"
    with replacement_warnings() as warnings:
        text, warning = decode_declared(page, "euc_jp", "page.html")
    assert text.endswith("\ufffd")
    assert warning == "declared charset euc_jp does not match the bytes; detected instead"
    assert warnings == [replaced_warning(1)]
