"""Text and Markdown loaders, and the suffix-based loader factory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.loaders.markdown import MarkdownLoader, split_front_matter
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for, supported_extensions
from shirabe.loaders.text import TextLoader
from shirabe.text.markdown import first_heading

from tests.support import FIXTURES, shared

EXPENSE_RULES = (
    "出張旅費規程\r\n"
    "第1章 総則\r\n"
    "第1条（目的）\r\n"
    "この規程は、社員の出張旅費について定める。\r\n"
    "第2章 旅費\r\n"
    "【交通費】\r\n"
    "最も経済的な経路の実費を支給する。\r\n"
    "■ 宿泊費\r\n"
    "・一泊一万円まで\r\n"
)


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- factory -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "loader_type"),
    [
        ("notes.txt", TextLoader),
        ("NOTES.TXT", TextLoader),
        ("readme.md", MarkdownLoader),
        ("README.MD", MarkdownLoader),
        ("guide.markdown", MarkdownLoader),
        ("Guide.Markdown", MarkdownLoader),
    ],
)
def test_factory_finds_loader_by_suffix(name: str, loader_type: type[object]) -> None:
    assert isinstance(loader_for(Path(name)), loader_type)


@pytest.mark.parametrize("name", ["data.xyz", "no_suffix", "archive.txt.gz"])
def test_factory_returns_none_for_unknown_suffix(name: str) -> None:
    assert loader_for(Path(name)) is None


def test_supported_extensions_include_text_formats() -> None:
    extensions = supported_extensions()
    assert {".txt", ".md", ".markdown"} <= extensions
    assert all(e.startswith(".") and e == e.lower() for e in extensions)


@pytest.mark.slow
def test_importing_the_package_imports_no_loader_module() -> None:
    code = (
        "import sys, shirabe.loaders.registry; "
        "print(sorted(m for m in sys.modules if m.startswith('shirabe.loaders.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "['shirabe.loaders.protocol', 'shirabe.loaders.registry']"


# --- text loader ---------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "cp932", "euc_jp", "utf-16"])
def test_text_loader_reads_each_encoding(tmp_path: Path, codec: str) -> None:
    path = _write(tmp_path, "rules.txt", EXPENSE_RULES.encode(codec))
    document = TextLoader().load(path, LoadOptions())
    assert document.path == str(path)
    assert document.title == "第1章 総則"
    assert len(document.parts) == 1
    text = document.parts[0].text
    assert text.startswith("出張旅費規程\n\n# 第1章 総則\n")
    assert "\r" not in text
    assert "\ufeff" not in text


def test_expense_rules_become_headings(tmp_path: Path) -> None:
    path = _write(tmp_path, "rules.txt", EXPENSE_RULES.encode("cp932"))
    text = TextLoader().load(path, LoadOptions()).parts[0].text
    headings = [line for line in text.split("\n") if line.startswith("#")]
    assert headings == [
        "# 第1章 総則",
        "## 第1条（目的）",
        "# 第2章 旅費",
        "## 交通費",
        "## 宿泊費",
    ]
    assert "最も経済的な経路の実費を支給する。" in text


def test_separator_line_does_not_open_a_code_fence(tmp_path: Path) -> None:
    # A row of tildes is a code fence to Markdown: unescaped, it would swallow the rest of
    # the file and cite 第2章's articles under 第1章.
    rules = (
        "第1章 総則\n"
        "第1条（目的）\n"
        "この規程は、社員の出張旅費について定める。\n"
        "~~~~~~~~\n"
        "第2章 旅費\n"
        "第5条（交通費）\n"
        "交通費は最も経済的な経路の実費を支給する。\n"
    )
    path = _write(tmp_path, "rules.txt", rules.encode("cp932"))
    document = TextLoader().load(path, LoadOptions())
    chunks = [c for c in MarkdownChunker().chunk(document) if not c.is_summary]
    paths = {c.text: c.heading_path for c in chunks}
    assert paths["交通費は最も経済的な経路の実費を支給する。"] == ("第2章 旅費", "第5条（交通費）")
    assert paths["この規程は、社員の出張旅費について定める。\n\\~~~~~~~~"] == (
        "第1章 総則",
        "第1条（目的）",
    )


def test_text_loader_without_headings_has_no_title(tmp_path: Path) -> None:
    path = _write(tmp_path, "memo.txt", "# 番号付きメモ\n本文です。\n".encode())
    document = TextLoader().load(path, LoadOptions())
    assert document.title is None
    assert document.parts[0].text == "\\# 番号付きメモ\n本文です。\n"


def test_empty_text_file_is_loaded_with_a_warning(tmp_path: Path) -> None:
    document = TextLoader().load(_write(tmp_path, "empty.txt", b""), LoadOptions())
    assert document.parts[0].text == ""
    assert document.warnings == ["empty file"]


def test_text_loader_on_shift_jis_fixture() -> None:
    path = shared(FIXTURES / "text" / "shiftjis.txt")
    document = TextLoader().load(path, LoadOptions())
    text = document.parts[0].text
    assert text.startswith("全文検索の技術調査について2\n")
    assert "\n# Apache Solr\n" in text
    assert "\n# Elasticsearch\n" in text
    assert document.title == "Apache Solr"


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("loader", [TextLoader(), MarkdownLoader()], ids=["text", "markdown"])
def test_binary_file_is_a_load_error(tmp_path: Path, loader: TextLoader | MarkdownLoader) -> None:
    path = _write(tmp_path, "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(LoadError) as excinfo:
        loader.load(path, LoadOptions())
    assert excinfo.value.reason == "binary file, not text"
    assert excinfo.value.path == str(path)


def test_unknown_encoding_is_a_load_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "latin1.txt", "café crème".encode("latin-1"))
    with pytest.raises(LoadError, match="unknown text encoding"):
        TextLoader().load(path, LoadOptions())


def test_missing_file_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as excinfo:
        MarkdownLoader().load(tmp_path / "gone.md", LoadOptions())
    assert excinfo.value.reason == "file not found"


def test_directory_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="is a directory"):
        TextLoader().load(tmp_path, LoadOptions())


def test_unreadable_file_is_a_load_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "secret.txt", b"text")

    def deny(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(LoadError) as excinfo:
        TextLoader().load(path, LoadOptions())
    assert excinfo.value.reason == "permission denied"


# --- markdown loader -----------------------------------------------------------------------


def test_markdown_front_matter_gives_title_and_metadata(tmp_path: Path) -> None:
    source = (
        "---\n"
        'title: "出張旅費規程"\n'
        "author: 総務部\n"
        "version: '2.1'\n"
        "tags: [経費, 旅費]\n"
        "owner:\n"
        "  name: 山田\n"
        "---\n"
        "# 概要\n\n本文です。\n"
    )
    path = _write(tmp_path, "rules.md", source.encode("cp932"))
    document = MarkdownLoader().load(path, LoadOptions())
    assert document.title == "出張旅費規程"
    assert document.metadata == {"title": "出張旅費規程", "author": "総務部", "version": "2.1"}
    assert document.parts[0].text == "# 概要\n\n本文です。\n"


def test_markdown_title_falls_back_to_first_h1(tmp_path: Path) -> None:
    source = "---\nauthor: 総務部\n---\n## 小見出し\n\n```\n# コード内\n```\n\n# 経費規程\n"
    document = MarkdownLoader().load(
        _write(tmp_path, "a.markdown", source.encode("utf-8-sig")), LoadOptions()
    )
    assert document.title == "経費規程"
    assert document.metadata == {"author": "総務部"}


def test_markdown_without_front_matter_is_unchanged(tmp_path: Path) -> None:
    source = "# 手順\r\n\r\n1. 申請する\r\n"
    document = MarkdownLoader().load(
        _write(tmp_path, "b.md", source.encode("euc_jp")), LoadOptions()
    )
    assert document.parts[0].text == "# 手順\n\n1. 申請する\n"
    assert document.title == "手順"
    assert document.metadata == {}


@pytest.mark.parametrize(
    "text",
    [
        "---\n\n本文\n\n---\n後半\n",  # thematic breaks around prose
        "---\ntitle: 閉じていない\n本文\n",  # never closed
        "前置き\n---\ntitle: 途中\n---\n",  # not at the very start
    ],
)
def test_text_that_is_not_front_matter_is_kept(text: str) -> None:
    assert split_front_matter(text) == ({}, text)


def test_front_matter_only_document() -> None:
    assert split_front_matter("---\ntitle: 空\n...\n") == ({"title": "空"}, "")


@pytest.mark.parametrize(
    ("markdown", "max_level", "expected"),
    [
        ("本文\n## 二\n# 一\n", 6, "二"),
        ("本文\n## 二\n# 一\n", 1, "一"),
        ("# 閉じ記号付き ##\n", 6, "閉じ記号付き"),
        ("~~~\n# 無視\n~~~\n", 6, None),
        ("#見出しではない\n", 6, None),
        ("# #\n# 空でない見出し\n", 6, "空でない見出し"),
        ("```\n# 無視\n``` 閉じない\n# 無視\n````\n# 外\n", 6, "外"),
    ],
)
def test_first_heading(markdown: str, max_level: int, expected: str | None) -> None:
    assert first_heading(markdown, max_level) == expected
