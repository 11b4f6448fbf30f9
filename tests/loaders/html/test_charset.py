"""The charset a page declares, and the order BOM, declaration, detection."""

from __future__ import annotations

import pytest

from shirabe.loaders.html.charset import declared_charset, decode_html


def test_encoding_order_bom_then_declaration_then_detection() -> None:
    text = '<meta charset="shift_jis"><p>日本語の本文です</p>'
    # a BOM wins over a stale declaration
    decoded, warning = decode_html(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert "日本語の本文です" in decoded
    assert not decoded.startswith("\ufeff")
    assert warning is None
    # a declaration the bytes do not fit falls back to detection, with a warning
    decoded, warning = decode_html('<meta charset="euc-jp"><p>日本語の本文です</p>'.encode("cp932"))
    assert "日本語の本文です" in decoded
    assert warning is not None
    assert "euc_jp" in warning
    # no declaration at all: detection
    decoded, warning = decode_html("<p>シフトJISの本文です</p>".encode("cp932"))
    assert "シフトJISの本文です" in decoded
    assert warning is None


@pytest.mark.parametrize(
    ("head", "codec"),
    [
        (b'<meta charset="UTF-8">', "utf-8"),
        (b"<meta charset=sjis>", "cp932"),
        (b"<META HTTP-EQUIV='content-type' CONTENT='text/html;charset=x-sjis'>", "cp932"),
        (b'<?xml version="1.0" encoding="EUC-JP"?><html>', "euc_jp"),
        (b'<meta charset="no-such-codec">', None),
        (b"<p>no declaration</p>", None),
    ],
)
def test_declared_charset(head: bytes, codec: str | None) -> None:
    assert declared_charset(head) == codec
