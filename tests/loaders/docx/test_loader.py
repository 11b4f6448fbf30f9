"""The Word loader on real fixture files and on small documents built here."""

from __future__ import annotations

import copy
import zipfile
from pathlib import Path
from typing import Any

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.loaders.docx import DocxLoader
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for
from shirabe.records import Document

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def load(path: Path) -> Document:
    return DocxLoader().load(path, LoadOptions())


def save(document: Any, tmp_path: Path, name: str = "doc.docx") -> Path:
    path = tmp_path / name
    document.save(str(path))
    return path


def text_of(document: Any, tmp_path: Path) -> str:
    loaded = load(save(document, tmp_path))
    assert len(loaded.parts) == 1
    assert loaded.parts[0].locator == {}
    return loaded.parts[0].text


# --- the module name does not shadow python-docx ------------------------------------------------


def test_import_docx_is_the_library() -> None:
    assert hasattr(docx, "Document")
    assert "site-packages" in str(docx.__file__)
    assert type(loader_for(Path("a.DOCX"))).__name__ == "DocxLoader"


# --- generated documents --------------------------------------------------------------------------


def test_headings_with_and_without_a_title(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("規程集", 0)
    document.add_heading("総則", 1)
    document.add_paragraph("本文です。")
    document.add_heading("目的", 2)
    text = text_of(document, tmp_path)
    assert text.startswith("# 規程集\n\n## 総則\n\n本文です。\n\n### 目的")

    untitled = docx.Document()
    untitled.add_heading("総則", 1)
    untitled.add_heading("目的", 2)
    loaded = load(save(untitled, tmp_path, "untitled.docx"))
    assert loaded.parts[0].text == "# 総則\n\n## 目的"
    assert loaded.title == "総則"


def test_japanese_style_names_base_styles_and_outline_levels(tmp_path: Path) -> None:
    document = docx.Document()
    full_width = document.styles.add_style("見出し１", WD_STYLE_TYPE.PARAGRAPH)
    derived = document.styles.add_style("章見出し", WD_STYLE_TYPE.PARAGRAPH)
    derived.base_style = document.styles["Heading 2"]
    document.add_paragraph("第1章 総則", style=full_width)
    document.add_paragraph("第1条 目的", style=derived)
    outlined = document.add_paragraph("概要")
    outlined._p.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {W_NS} w:val="2"/>'))
    body = document.add_paragraph("本文")
    body._p.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {W_NS} w:val="9"/>'))
    text = text_of(document, tmp_path)
    assert text == "# 第1章 総則\n\n## 第1条 目的\n\n### 概要\n\n本文"


def test_lists_keep_markers_numbers_and_nesting(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("手順:")
    document.add_paragraph("申請する", style="List Number")
    document.add_paragraph("承認を待つ", style="List Number")
    document.add_paragraph("持ち物", style="List Bullet")
    document.add_paragraph("印鑑", style="List Bullet 2")
    nested = document.add_paragraph("身分証", style="List Bullet")
    num_pr = f'<w:numPr {W_NS}><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr>'
    nested._p.get_or_add_pPr().append(parse_xml(num_pr))
    text = text_of(document, tmp_path)
    lines = text.split("\n")
    assert lines[0] == "手順:"
    assert lines[2:4] == ["1. 申請する", "2. 承認を待つ"]
    assert lines[4] == "- 持ち物"
    assert lines[5] == "  - 印鑑"
    assert lines[6].startswith("  ") and lines[6].strip().endswith("身分証")


def test_body_order_tables_merges_and_nested_tables(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("表の前")
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"r{r}c{c}"
    table.cell(0, 0).merge(table.cell(0, 1)).text = "横結合"
    table.cell(1, 2).merge(table.cell(2, 2)).text = "縦結合"
    inner = table.cell(2, 0).add_table(rows=1, cols=2)
    inner.cell(0, 0).text = "内A"
    inner.cell(0, 1).text = "内B"
    document.add_paragraph("表の後")
    text = text_of(document, tmp_path)
    before, after = text.index("表の前"), text.index("表の後")
    table_start = text.index("| 横結合")
    assert before < table_start < after
    rows = [line for line in text.split("\n") if line.startswith("| ")]
    assert rows[0] == "| 横結合 |  | r0c2 |"
    assert rows[1] == "| r1c0 | r1c1 | 縦結合 |"
    assert rows[2].startswith("| r2c0 内A / 内B | r2c1 | 縦結合 |")


def test_tracked_changes_headers_footers_and_breaks(tmp_path: Path) -> None:
    document = docx.Document()
    section = document.sections[0]
    section.header.paragraphs[0].text = "社外秘ヘッダー"
    section.footer.paragraphs[0].text = "フッター文言"
    paragraph = document.add_paragraph("残す文")
    deleted = "<w:r><w:delText>消した文</w:delText></w:r>"
    paragraph._p.append(parse_xml(f'<w:del {W_NS} w:id="1" w:author="a">{deleted}</w:del>'))
    paragraph._p.append(
        parse_xml(f'<w:ins {W_NS} w:id="2" w:author="a"><w:r><w:t>加えた文</w:t></w:r></w:ins>')
    )
    document.add_paragraph("")
    document.add_paragraph("   ")
    broken = document.add_paragraph("一行目")
    broken.runs[0].add_break()
    broken.add_run("二行目")
    loaded = load(save(document, tmp_path))
    text = loaded.parts[0].text
    assert "残す文加えた文" in text
    assert "消した文" not in text
    assert "社外秘ヘッダー" not in text and "フッター文言" not in text
    assert "一行目\n二行目" in text
    assert "\n\n\n" not in text


MC_NS = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'


def test_text_boxes_fields_and_content_controls(tmp_path: Path) -> None:
    document = docx.Document()
    host = document.add_paragraph("本文の段落")
    box = "<w:txbxContent><w:p><w:r><w:t>枠内の注記</w:t></w:r></w:p></w:txbxContent>"
    host._p.append(
        parse_xml(
            f"<w:r {W_NS} {MC_NS}><mc:AlternateContent>"
            f'<mc:Choice Requires="wps"><w:drawing>{box}</w:drawing></mc:Choice>'
            f"<mc:Fallback><w:pict>{box}</w:pict></mc:Fallback>"
            "</mc:AlternateContent></w:r>"
        )
    )
    field = document.add_paragraph("ページ ")
    for run in (
        '<w:fldChar w:fldCharType="begin"/>',
        "<w:instrText> PAGE </w:instrText>",
        '<w:fldChar w:fldCharType="separate"/>',
        "<w:t>7</w:t>",
        '<w:fldChar w:fldCharType="end"/>',
    ):
        field._p.append(parse_xml(f"<w:r {W_NS}>{run}</w:r>"))
    control = (
        f"<w:sdt {W_NS}><w:sdtPr/><w:sdtContent>"
        "<w:p><w:r><w:t>入力欄の内容</w:t></w:r></w:p></w:sdtContent></w:sdt>"
    )
    document.element.body.insert(len(document.element.body) - 1, parse_xml(control))
    text = text_of(document, tmp_path)
    assert text == "本文の段落\n\n枠内の注記\n\nページ 7\n\n入力欄の内容"


def test_core_title_wins_over_the_first_heading(tmp_path: Path) -> None:
    document = docx.Document()
    document.core_properties.title = "就業規則"
    document.add_heading("第1章", 1)
    assert load(save(document, tmp_path)).title == "就業規則"
    document.core_properties.title = "Untitled"
    assert load(save(document, tmp_path, "b.docx")).title == "第1章"


def test_text_that_looks_like_markdown_is_escaped_and_tables_stay_tables(
    tmp_path: Path,
) -> None:
    document = docx.Document()
    for line in ("# 見出し風", "| 縦棒で始まる行", "~~~~~~~~", "#タグ", "第1章 総則"):
        document.add_paragraph(line)
    table = document.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, [("項目", "値"), ("日当", "2000")], strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    assert text_of(document, tmp_path) == (
        "\\# 見出し風\n\n\\| 縦棒で始まる行\n\n\\~~~~~~~~\n\n#タグ\n\n# 第1章 総則\n\n"
        "| 項目 | 値 |\n|---|---|\n| 日当 | 2000 |"
    )


def test_empty_document_warns(tmp_path: Path) -> None:
    loaded = load(save(docx.Document(), tmp_path))
    assert loaded.parts[0].text == ""
    assert loaded.warnings == ["no text found"]


def test_broken_xml_inside_a_valid_zip_is_a_load_error(tmp_path: Path) -> None:
    good = save(docx.Document(), tmp_path, "good.docx")
    broken = tmp_path / "broken.docx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(broken, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                data = data[: len(data) // 2]
            target.writestr(copy.copy(info), data)
    with pytest.raises(LoadError, match="corrupt or unreadable Word file"):
        load(broken)


# --- real fixtures --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "phrases"),
    [
        (
            "test.docx",
            [
                "# AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation",
                "## Abstract",
                "### d666f1f7-46cb-42bd-9a39-9a39cf2a509f",
                "| 13 | 14 | 49e168b7-d2ae-407f-a055-2167576f39a1 | 15 | 16 | 17 |",
            ],
        ),
        (
            "stress019.docx",
            [
                "リニューアルプロポーザル募集要項",
                "１．委託業務の名称",
                "jimu@natffj.org",
                "| 業務担当責任者 | 本業務に類似する業務実績等 |",
            ],
        ),
        ("tables-with-incomplete-rows.docx", ["| a |  |\n|---|---|\n| b | c |", "| Strange |"]),
    ],
)
def test_fixture_text(fixtures: Path, name: str, phrases: list[str]) -> None:
    loaded = load(fixtures / "office" / name)
    assert len(loaded.parts) == 1
    assert loaded.parts[0].locator == {}
    assert loaded.warnings == []
    for phrase in phrases:
        assert phrase in loaded.parts[0].text


def test_fixture_test_docx_order_and_title(fixtures: Path) -> None:
    loaded = load(fixtures / "office" / "test.docx")
    text = loaded.parts[0].text
    assert (
        loaded.title == "AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation"
    )
    assert text.index("Here is a random table") < text.index("| 1 | 2 |") < text.index("Test Image")


def test_fixture_stress019_tables_and_paragraphs(fixtures: Path) -> None:
    source = docx.Document(str(fixtures / "office" / "stress019.docx"))
    text = load(fixtures / "office" / "stress019.docx").parts[0].text
    separators = [line for line in text.split("\n") if line.startswith("|---")]
    assert len(separators) == len(source.tables)
    for paragraph in source.paragraphs:
        words = paragraph.text.split()
        if words:
            assert words[0].strip("【】") in text


def test_a_document_without_heading_styles_gets_headings_from_its_text(fixtures: Path) -> None:
    document = load(fixtures / "office" / "stress019.docx")
    assert "\n# 企画提案書の構成\n" in document.parts[0].text
    chunks = MarkdownChunker().chunk(document)
    assert any(c.heading_path == ("企画提案書の構成",) for c in chunks)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("test-protected.docx", "encrypted, password required"),
        ("truncated62886.docx", "corrupt or truncated Office file"),
        (
            "clusterfuzz-testcase-minimized-POIXWPFFuzzer-5313273089884160.docx",
            "corrupt or truncated Office file",
        ),
    ],
)
def test_fixture_failures(fixtures: Path, name: str, reason: str) -> None:
    with pytest.raises(LoadError) as caught:
        load(fixtures / "office" / name)
    assert caught.value.reason.startswith(reason)
