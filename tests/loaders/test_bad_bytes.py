"""A text file with a few bytes that are not UTF-8 is read, with a warning, not refused.

Every text format goes through :func:`shirabe.loaders.worker.load_file`, which turns the bytes
replaced while decoding into document warnings, whichever loader decoded them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.worker import TimedLoader, load_file
from shirabe.text.encoding import replaced_warning

RULE = "第3条（申請）社員は、出張の前に所定の様式で申請しなければならない。"
STRAY = b"\xff"

FILES: dict[str, bytes] = {
    "rules.txt": ("出張旅費規程\n\n" + RULE + "\n").encode() + STRAY + "以上。\n".encode(),
    "rules.md": ("# 出張旅費規程\n\n" + RULE + "\n\n").encode() + STRAY + "以上。\n".encode(),
    "staff.csv": "氏名,部署,備考\n山田太郎,総務部,出張申請済み\n".encode()
    + STRAY
    + "佐藤花子,経理部,精算待ち\n".encode(),
    "page.html": '<html><head><meta charset="utf-8"><title>出張旅費規程</title></head>'
    f"<body><h1>出張旅費規程</h1><p>{RULE}</p><p>".encode()
    + STRAY
    + "以上。</p></body></html>".encode(),
}


@pytest.mark.parametrize("name", FILES)
def test_a_stray_byte_is_replaced_and_reported(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(FILES[name])
    document = load_file(path, LoadOptions())
    text = "\n".join(part.text for part in document.parts)
    assert "\ufffd" in text
    assert "申請" in text
    assert "以上" in text or "精算待ち" in text
    assert document.warnings.count(replaced_warning(1)) == 1


def test_a_bad_byte_far_into_a_large_csv_is_reported(tmp_path: Path) -> None:
    rows = "".join(f"{i},社員{i},総務部\n" for i in range(20_000))  # well past the 64 KiB sample
    path = tmp_path / "large.csv"
    path.write_bytes(
        ("番号,氏名,部署\n" + rows).encode() + b"\x80\x80" + "20000,最後,経理部\n".encode()
    )
    document = load_file(path, LoadOptions())
    assert document.warnings == [replaced_warning(2)]
    assert "最後" in document.parts[-1].text
    assert sum("社員19999" in part.text for part in document.parts) == 1


def test_a_clean_file_has_no_warning(tmp_path: Path) -> None:
    path = tmp_path / "clean.txt"
    path.write_text(RULE + "\n", encoding="utf-8")
    assert load_file(path, LoadOptions()).warnings == []


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64),
        ("latin1.txt", b"caf\xe9 cr\xe8me br\xfbl\xe9e"),
        ("noise.csv", bytes(range(1, 256)) * 8),
    ],
)
def test_what_is_not_text_is_still_refused(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(LoadError) as info:
        load_file(path, LoadOptions())
    assert info.value.reason in {"binary file, not text", "unknown text encoding"}


@pytest.mark.slow
def test_the_warning_crosses_the_process_boundary(tmp_path: Path) -> None:
    path = tmp_path / "rules.txt"
    path.write_bytes(FILES["rules.txt"])
    with TimedLoader(LoadOptions(), timeout=60.0) as loader:
        document = loader.load(path)
    assert document.warnings == [replaced_warning(1)]
