"""Metadata titles: one rule set for PDF, Word and PowerPoint."""

from __future__ import annotations

import pytest

from shirabe.loaders.titles import meaningful_title


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        # kept, whitespace runs made one space
        ("経費精算規程", "経費精算規程"),
        ("  規程  集 ", "規程 集"),
        ("規程\u3000集\n第2版", "規程 集 第2版"),
        ("Dense Passage Retrieval", "Dense Passage Retrieval"),
        ("Test Slide", "Test Slide"),
        # empty
        ("", None),
        ("   ", None),
        (None, None),
        # template defaults, in English and Japanese, any case
        ("PowerPoint Presentation", None),
        ("PowerPoint プレゼンテーション", None),
        ("プレゼンテーション1", None),
        ("Presentation2", None),
        ("Slide 1", None),
        ("スライド 1", None),
        ("スライド12", None),
        ("Untitled", None),
        ("untitled", None),
        ("無題", None),
        ("Document1", None),
        ("文書2", None),
        ("Title", None),
        ("タイトル", None),
        ("表題", None),
        # a generator's prefix and a document suffix come off; what is left must still count
        ("Microsoft Word - 化粧品基準（H280601改正反映版）", "化粧品基準（H280601改正反映版）"),
        ("Microsoft PowerPoint - 営業方針", "営業方針"),
        ("Microsoft Word - 規程.docx", "規程"),
        ("出張旅費規程.docx", "出張旅費規程"),
        ("Microsoft Word - Document1", None),
        ("Microsoft Word - test-ocr.docx", None),
        ("Untitled document", None),
        # file names and identifiers
        ("zen_of_python.txt", None),
        ("report final.pdf", None),
        ("MEDRPT-2024-PAT-3847_medical_report_scan", None),
        ("scan0001", None),
        ("IMG_2024", None),
        ("20240401", None),
        # one word a person chose
        ("Handbook", "Handbook"),
        ("FAQ", "FAQ"),
        ("AQ-300", "AQ-300"),
    ],
)
def test_meaningful_title(raw: str | None, title: str | None) -> None:
    assert meaningful_title(raw) == title
