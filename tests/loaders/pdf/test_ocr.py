"""The Tesseract wrapper: TSV parsing, language checks, a real run on a rendered image."""

from __future__ import annotations

from pathlib import Path

import pytest

from shirabe.loaders.pdf import ocr

from tests.support import unavailable

HEADER = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
)


def _row(block: int, par: int, line: int, conf: float, text: str) -> str:
    return f"5\t1\t{block}\t{par}\t{line}\t1\t0\t0\t10\t10\t{conf}\t{text}"


def test_parse_tsv_keeps_lines_and_paragraphs() -> None:
    tsv = "\n".join(
        [
            HEADER,
            "1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t",
            _row(1, 1, 1, 90, "Patient"),
            _row(1, 1, 1, 80, "report"),
            _row(1, 1, 2, 70, "page"),
            _row(2, 1, 1, 60, "診"),
            _row(2, 1, 1, 40, "断"),
            _row(2, 1, 1, 20, "   "),
        ]
    )
    result = ocr.parse_tsv(tsv)
    assert result.text == "Patient report\npage\n\n診断"
    assert result.words == 5
    assert result.confidence == pytest.approx((90 + 80 + 70 + 60 + 40) / 5)


def test_parse_tsv_of_nothing() -> None:
    assert ocr.parse_tsv(HEADER + "\n") == ocr.OcrResult("", 0.0, 0)


def test_missing_tesseract(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ocr.tesseract_command() is None
    assert ocr.installed_languages() == frozenset()
    assert ocr.missing_languages("jpn+eng") == ["jpn", "eng"]
    assert ocr.vertical_languages("jpn+eng") is None
    with pytest.raises(ocr.OcrError, match="not installed"):
        ocr.recognize(tmp_path / "x.png", "eng")


@pytest.mark.slow
def test_recognize_a_rendered_image(tmp_path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    if ocr.tesseract_command() is None or ocr.missing_languages("eng"):
        unavailable("tesseract with eng is not installed")
    image = Image.new("L", (900, 160), 255)
    font = ImageFont.load_default(size=48)
    ImageDraw.Draw(image).text((30, 50), "Invoice number 4711", fill=0, font=font)
    path = tmp_path / "line.png"
    image.save(path)
    result = ocr.recognize(path, "eng", psm=7)
    assert "Invoice" in result.text
    assert result.confidence > 50
    with pytest.raises(ocr.OcrError, match="failed"):
        ocr.recognize(tmp_path / "missing.png", "eng")
