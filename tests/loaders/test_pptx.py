"""The PowerPoint loader on real fixture files and on small presentations built here."""

from __future__ import annotations

import copy
import io
import zipfile
from pathlib import Path
from typing import Any

import pptx
import pytest
from PIL import Image
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.oxml import parse_xml
from pptx.util import Inches

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.loaders.pptx import (
    Line,
    PptxLoader,
    clean_text,
    reading_order,
    render_lines,
    slide_markdown,
)
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for
from shirabe.records import Document

A_NS = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
TITLE_ONLY, TITLE_AND_BODY, TITLE_SLIDE, BLANK = 5, 1, 0, 6


def load(path: Path) -> Document:
    return PptxLoader().load(path, LoadOptions())


def save(presentation: Any, tmp_path: Path, name: str = "deck.pptx") -> Path:
    path = tmp_path / name
    presentation.save(str(path))
    return path


def text_box(slide: Any, text: str, left: float, top: float) -> Any:
    box = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(2), Inches(0.5))
    box.text_frame.text = text
    return box


# --- the module name does not shadow python-pptx ------------------------------------------------


def test_import_pptx_is_the_library() -> None:
    assert hasattr(pptx, "Presentation")
    assert "site-packages" in str(pptx.__file__)
    assert type(loader_for(Path("a.PPTX"))).__name__ == "PptxLoader"


# --- pure helpers ---------------------------------------------------------------------------------


def test_reading_order_rows_then_columns() -> None:
    emu = 914400
    boxes = [
        (2 * emu, 0, 0),  # lower row
        (emu, 3 * emu, 1),  # upper row, right
        (emu + 1000, emu, 2),  # upper row, left, a hair lower
        (None, None, 3),  # no position: first
    ]
    assert reading_order(boxes) == [3, 2, 1, 0]


def test_render_lines_lists_and_paragraphs() -> None:
    lines = [
        Line("見出しでない段落"),
        Line("項目A", "-"),
        Line("細目", "-", 1),
        Line("", "-"),
        Line("手順", "1."),
        Line("最後の段落"),
    ]
    assert render_lines(lines) == "見出しでない段落\n\n- 項目A\n  - 細目\n1. 手順\n\n最後の段落"


def test_clean_text() -> None:
    assert clean_text("  一行目\v二行目 \n\n#3  つ  ") == "一行目\n二行目\n#3 つ"
    assert clean_text("# 見出し風\n| 縦棒\n~~~~") == "\\# 見出し風\n\\| 縦棒\n\\~~~~"


def test_slide_markdown_heading_rules() -> None:
    deck = "営業方針"
    assert slide_markdown(1, deck, "本文", "", deck) == "# 営業方針\n\n本文"
    assert (
        slide_markdown(2, "売上", "本文", "メモ", deck) == "## 売上\n\n本文\n\n### ノート\n\nメモ"
    )
    assert (
        slide_markdown(3, None, "本文", "メモ", deck) == "# 営業方針\n\n本文\n\n## ノート\n\nメモ"
    )
    assert slide_markdown(5, deck, "まとめ", "", deck) == "# 営業方針\n\nまとめ"
    assert slide_markdown(6, "質疑応答", "", "", deck) == "## 質疑応答\n\n質疑応答"
    assert slide_markdown(1, "売上", "本文", "", None) == "# 売上\n\n本文"
    assert slide_markdown(4, None, "本文", "", None) == "# スライド 4\n\n本文"


# --- generated presentations ----------------------------------------------------------------------


def png() -> io.BytesIO:
    data = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(data, format="PNG")
    data.seek(0)
    return data


def build_deck(tmp_path: Path, deck_title: str | None) -> Path:
    presentation = pptx.Presentation()
    if deck_title is not None:
        presentation.core_properties.title = deck_title
    else:
        presentation.core_properties.title = "PowerPoint Presentation"

    first = presentation.slides.add_slide(presentation.slide_layouts[TITLE_SLIDE])
    first.shapes.title.text = "営業方針"
    first.placeholders[1].text = "2024年度 第1版"

    bullets = presentation.slides.add_slide(presentation.slide_layouts[TITLE_AND_BODY])
    bullets.shapes.title.text = "重点施策"
    frame = bullets.placeholders[1].text_frame
    frame.text = "新規顧客の開拓"
    sub = frame.add_paragraph()
    sub.text = "関西地区"
    sub.level = 1
    numbered = frame.add_paragraph()
    numbered.text = "解約率の低減"
    numbered._p.get_or_add_pPr().append(parse_xml(f'<a:buAutoNum {A_NS} type="arabicPeriod"/>'))
    bullets.notes_slide.notes_text_frame.text = "ここは口頭で補足する"

    shapes = presentation.slides.add_slide(presentation.slide_layouts[BLANK])
    text_box(shapes, "下の段", 0.5, 4)
    text_box(shapes, "右上", 5, 1)
    group = shapes.shapes.add_group_shape()
    text_box(group, "グループ内の左", 0.5, 1)
    text_box(group, "グループ内の右", 2.6, 1)
    table = shapes.shapes.add_table(2, 2, Inches(0.5), Inches(5), Inches(4), Inches(1)).table
    for r, row in enumerate([["項目", "金額"], ["交通費", "1,200円"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    picture = shapes.shapes.add_picture(png(), Inches(0.5), Inches(6), Inches(1), Inches(1))
    picture._element.nvPicPr.cNvPr.set("descr", "組織図の画像")

    chart_slide = presentation.slides.add_slide(presentation.slide_layouts[TITLE_ONLY])
    chart_slide.shapes.title.text = "売上推移"
    data = CategoryChartData()  # type: ignore[no-untyped-call]
    data.categories = ["4月", "5月"]
    data.add_series("売上", (10, 12))  # type: ignore[no-untyped-call]
    frame_shape = chart_slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(6), Inches(4), data
    )
    chart = frame_shape.chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "月別売上グラフ"

    hidden = presentation.slides.add_slide(presentation.slide_layouts[TITLE_ONLY])
    hidden.shapes.title.text = "非表示の補足"
    text_box(hidden, "隠しスライドの本文", 1, 2)
    hidden._element.set("show", "0")
    return save(presentation, tmp_path)


def test_generated_deck_with_a_presentation_title(tmp_path: Path) -> None:
    loaded = load(build_deck(tmp_path, "営業方針"))
    assert loaded.title == "営業方針"
    assert [p.locator for p in loaded.parts] == [{"slide": n} for n in range(1, 6)]
    texts = [p.text for p in loaded.parts]
    assert texts[0] == "# 営業方針\n\n2024年度 第1版"
    assert texts[1] == (
        "## 重点施策\n\n- 新規顧客の開拓\n  - 関西地区\n1. 解約率の低減\n\n"
        "### ノート\n\nここは口頭で補足する"
    )
    assert texts[2].startswith("# 営業方針\n\n")
    order = [
        "グループ内の左",
        "グループ内の右",
        "右上",
        "下の段",
        "| 項目 | 金額 |",
        "画像: 組織図の画像",
    ]
    positions = [texts[2].index(phrase) for phrase in order]
    assert positions == sorted(positions)
    assert "| 交通費 | 1,200円 |" in texts[2]
    assert texts[3] == "## 売上推移\n\nグラフ: 月別売上グラフ"
    assert texts[4] == "## 非表示の補足\n\n隠しスライドの本文"


def test_generated_deck_without_a_presentation_title(tmp_path: Path) -> None:
    loaded = load(build_deck(tmp_path, None))
    assert loaded.title == "営業方針"
    texts = [p.text for p in loaded.parts]
    assert texts[0].startswith("# 営業方針\n\n")
    assert texts[1].startswith("# 重点施策\n\n")
    assert "## ノート\n\nここは口頭で補足する" in texts[1]
    assert texts[2].startswith("# スライド 3\n\n")


def test_notes_are_chunked_with_their_slide(tmp_path: Path) -> None:
    loaded = load(build_deck(tmp_path, "営業方針"))
    chunks = MarkdownChunker().chunk(loaded)
    notes = [c for c in chunks if "口頭で補足" in c.text and not c.is_summary]
    assert len(notes) == 1
    assert notes[0].locator == {"slide": 2}
    assert notes[0].heading_path == ("営業方針", "重点施策", "ノート")
    untitled = [c for c in chunks if "右上" in c.text and not c.is_summary]
    assert untitled[0].heading_path == ("営業方針",)
    assert untitled[0].locator == {"slide": 3}


def test_empty_presentation_warns(tmp_path: Path) -> None:
    loaded = load(save(pptx.Presentation(), tmp_path))
    assert loaded.parts == []
    assert loaded.warnings == ["no slides"]


def test_broken_xml_inside_a_valid_zip_is_a_load_error(tmp_path: Path) -> None:
    presentation = pptx.Presentation()
    presentation.slides.add_slide(presentation.slide_layouts[BLANK])
    good = save(presentation, tmp_path, "good.pptx")
    broken = tmp_path / "broken.pptx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(broken, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "ppt/slides/slide1.xml":
                data = data[: len(data) // 2]
            target.writestr(copy.copy(info), data)
    with pytest.raises(LoadError, match="corrupt or unreadable PowerPoint file"):
        load(broken)


# --- real fixtures --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "slides", "phrases"),
    [
        (
            "test.pptx",
            6,
            {
                1: ["# AutoGen: Enabling Next-Gen LLM Applications", "Qingyun Wu"],
                2: ["## 2cdda5c8-e50e-4db4-b5f0-9722a649f455", "04191ea8-5c73-4215-a1d3"],
                3: ["| 7 | 8 | 9 | 1b92870d-e3b5-4e65-8153-919f4ff45592 | 11 | 12 |"],
                4: ["グラフ: a3f6004b-6f4f-4ea8-bee3-3741f4dc385f"],
                5: ["Nested Shape", "This is a nested shape", "- Comment 1", "  - Sub comment 2"],
                6: ["画像: This phrase of the caption is Human-written."],
            },
        ),
        (
            "with_japanese.pptx",
            1,
            {
                1: [
                    "# スライド 1",
                    "ゾルゲと尾崎、淡々と最期",
                    "（ＧＨＱ）",
                    "- Bullet 1\n- Bullet 2",
                    "| Row 1 Col 1 | Row 1 Col 2 | Row 1 Col 3 |",
                    "Here is a text box",
                ]
            },
        ),
        ("fake-power-point-malformed.pptx", 1, {1: ["# Test Slide", "Problem Date Placeholder"]}),
    ],
)
def test_fixture_slides(
    fixtures: Path, name: str, slides: int, phrases: dict[int, list[str]]
) -> None:
    source = pptx.Presentation(str(fixtures / "office" / name))
    assert len(source.slides) == slides
    loaded = load(fixtures / "office" / name)
    assert [p.locator for p in loaded.parts] == [{"slide": n} for n in range(1, slides + 1)]
    assert loaded.warnings == []
    for number, expected in phrases.items():
        for phrase in expected:
            assert phrase in loaded.parts[number - 1].text


def test_fixture_titles(fixtures: Path) -> None:
    office = fixtures / "office"
    assert load(office / "test.pptx").title == (
        "AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation"
    )
    assert load(office / "with_japanese.pptx").title is None  # core title is "Slide 1"
    assert load(office / "fake-power-point-malformed.pptx").title == "Test Slide"
