"""The PDF loader on the real fixtures and on small generated files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shirabe.loaders.pdf.loader import PdfLoader
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for
from shirabe.records import Document

from tests.support import ROOT, shared, unavailable

PASSWORDS = {"aes-256.pdf": "foo", "rc4-40.pdf": "foo", "aes-256-r6.pdf": "usersecret"}
NO_OCR = LoadOptions(passwords=PASSWORDS, ocr=False)

# file, page, phrase expected in that page's text (None: the load fails with that reason).
EXPECTED: list[tuple[str, int, str]] = [
    ("20210830_2.pdf", 1, "マネロン・テロ資金供与・拡散金融対策に関する行動計画"),
    ("20210830_2.pdf", 2, "取引モニタリング"),
    ("aes-256.pdf", 1, "Secret!"),
    ("rc4-40.pdf", 1, "Secret!"),
    ("aes-256-r6.pdf", 1, "Hello World"),
    ("copy-protected.pdf", 1, "LayoutParser"),
    ("embedded-cmap-cidfont.pdf", 1, "should be extractable"),
    ("issue-625-identity-cmap.pdf", 1, "Faktura nr FV 1/2021"),
    ("issue-791-non-unicode-cmap.pdf", 1, "Peněžní prostředky na účtech"),
    ("jo.pdf", 1, "わたくしといふ現象は"),
    ("kampo.pdf", 1, "道路交通法施行令の一部を改正する政令"),
    ("keshouhin-standard.pdf", 1, "化粧品の原料は、それに含有される不純物等も含め"),
    ("keshouhin-standard.pdf", 2, "防腐剤、紫外線吸収剤及びタール色素の配合の制限"),
    ("keshouhin-standard.pdf", 11, "ヒドロキシメトキシベンゾフェノンスルホン酸としての合計量"),
    ("korean-text-with-tables.pdf", 1, "적립 혜택은 매출전표 접수 시점 기준으로 적용"),
    ("multi-column.pdf", 1, "Dense Passage Retrieval"),
    ("multi-column.pdf", 2, "In this paper, we address the question"),
    ("nlp2004slides.pdf", 1, "固有表現の発見"),
    ("nlp2004slides.pdf", 2, "研究の背景"),
    ("zen_of_python_corrupted.pdf", 1, "Beautiful is better than ugly."),
]
FAILING: list[tuple[str, str]] = [
    ("password.pdf", "encrypted, password required"),
    ("test-ocr-notext.pdf", "no text layer: needs OCR"),
    ("scanned-medical-report.pdf", "no text layer: needs OCR"),
]


@pytest.fixture(scope="module")
def loaded(request: pytest.FixtureRequest) -> dict[str, Document]:
    return {}


def _load(fixtures: Path, name: str, cache: dict[str, Document]) -> Document:
    if name not in cache:
        cache[name] = PdfLoader().load(fixtures / "pdf" / name, NO_OCR)
    return cache[name]


SLOW_FILES = {"nlp2004slides.pdf", "multi-column.pdf"}
"""Files that take more than a couple of seconds to load (31 slides; 13 two-column pages)."""


def _params(rows: list[tuple[str, int, str]]) -> list[object]:
    return [
        pytest.param(*row, marks=[pytest.mark.slow] if row[0] in SLOW_FILES else []) for row in rows
    ]


@pytest.mark.parametrize(("name", "page", "phrase"), _params(EXPECTED))
def test_fixture_text_on_the_right_page(
    fixtures: Path, loaded: dict[str, Document], name: str, page: int, phrase: str
) -> None:
    document = _load(fixtures, name, loaded)
    pages = {part.locator["page"]: part.text for part in document.parts}
    assert phrase in pages[page], pages.get(page, "")[:500]
    others = [n for n, text in pages.items() if n != page and phrase in text]
    assert page not in others


@pytest.mark.parametrize(("name", "reason"), FAILING)
def test_fixture_load_errors(fixtures: Path, name: str, reason: str) -> None:
    with pytest.raises(LoadError) as info:
        PdfLoader().load(fixtures / "pdf" / name, NO_OCR)
    assert info.value.reason.startswith(reason)


def test_every_pdf_fixture_is_in_a_table(fixtures: Path) -> None:
    names = {p.name for p in (fixtures / "pdf").glob("*.pdf")}
    assert names == {n for n, _, _ in EXPECTED} | {n for n, _ in FAILING}


def test_page_numbers_are_physical(fixtures: Path, loaded: dict[str, Document]) -> None:
    document = _load(fixtures, "keshouhin-standard.pdf", loaded)
    assert [p.locator for p in document.parts] == [{"page": n} for n in range(1, 12)]


def test_printed_page_numbers_are_not_text(fixtures: Path, loaded: dict[str, Document]) -> None:
    """Each page of the standard ends in its printed number (「3／11」): a running footer."""
    for name in ("keshouhin-standard.pdf", "nlp2004slides.pdf"):
        document = _load(fixtures, name, loaded)
        for part in document.parts:
            last = part.text.strip().splitlines()[-1].strip()
            assert not last.replace("／", "").isdigit(), (name, part.locator, last)
    slides = _load(fixtures, "nlp2004slides.pdf", loaded)
    assert sum("## 研究の背景" in p.text for p in slides.parts) >= 2  # repeated titles stay


def test_titles_and_headings(fixtures: Path, loaded: dict[str, Document]) -> None:
    document = _load(fixtures, "keshouhin-standard.pdf", loaded)
    assert document.title == "化粧品基準（H280601改正反映版）"
    assert document.parts[0].text.startswith("# 化粧品基準（H280601改正反映版）\n")
    assert "## １ 総則" in document.parts[0].text


@pytest.mark.slow
def test_title_from_the_largest_first_line(fixtures: Path, loaded: dict[str, Document]) -> None:
    columns = _load(fixtures, "multi-column.pdf", loaded)
    assert columns.title == "Dense Passage Retrieval for Open-Domain Question Answering"


def test_no_garbage_indexed(fixtures: Path, loaded: dict[str, Document]) -> None:
    for name in ("kampo.pdf", "jo.pdf", "issue-791-non-unicode-cmap.pdf"):
        text = "".join(p.text for p in _load(fixtures, name, loaded).parts)
        assert "(cid:" not in text
        assert "\ufffd" not in text
        assert "ͷ" not in text  # pypdf's glyph-id noise for these CID fonts


@pytest.mark.slow
def test_two_columns_read_in_order(fixtures: Path, loaded: dict[str, Document]) -> None:
    text = _load(fixtures, "multi-column.pdf", loaded).parts[1].text
    # The left column's last words come before the right column's first paragraph.
    first = text.index("QA datasets, it also suffers from two weaknesses.")
    second = text.index("First, ICT pretraining is computationally intensive")
    right = text.index("the extractive QA setting, in which the answer is")
    assert first < second < right


def test_vertical_japanese_in_reading_order(fixtures: Path, loaded: dict[str, Document]) -> None:
    text = _load(fixtures, "jo.pdf", loaded).parts[0].text
    assert text.index("わたくしといふ現象は") < text.index("假定された有機交流電燈の")
    kampo = _load(fixtures, "kampo.pdf", loaded).parts[0].text
    assert "内閣は、道路交通法の一部を改正する法律" in kampo


def test_tables_become_markdown_once(fixtures: Path, loaded: dict[str, Document]) -> None:
    text = _load(fixtures, "20210830_2.pdf", loaded).parts[0].text
    assert "| 項目 | 行動内容 | 期限 | 担当府省庁等 |" in text
    assert text.count("国のリスク評価書の刷新") == 1


def test_loader_is_discovered() -> None:
    assert isinstance(loader_for(Path("a.PDF")), PdfLoader)


def test_wrong_and_missing_passwords(fixtures: Path) -> None:
    path = fixtures / "pdf" / "aes-256.pdf"
    with pytest.raises(LoadError, match="encrypted, password required"):
        PdfLoader().load(path, LoadOptions(ocr=False))
    with pytest.raises(LoadError, match="the configured password is wrong"):
        PdfLoader().load(path, LoadOptions(passwords={"*.pdf": "nope"}, ocr=False))
    document = PdfLoader().load(path, LoadOptions(passwords={str(path): "foo"}, ocr=False))
    assert "Secret!" in document.parts[0].text


def test_passwords_are_found_by_path_glob() -> None:
    options = LoadOptions(
        passwords={"/共有/経理/*.pdf": "keiri", "見積*.pdf": "mitsumori", "**/秘/*": "hi"}
    )
    assert options.password_for(Path("/共有/経理/請求.pdf")) == "keiri"
    assert options.password_for(Path("/共有/経理/2024/請求.pdf")) is None  # * stays in a folder
    assert options.password_for(Path("/x/営業/見積書.pdf")) == "mitsumori"  # any depth
    assert options.password_for(Path("/x/秘/a.docx")) == "hi"
    assert options.password_for(Path("/x/a.pdf")) is None


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (os.urandom(4096), "corrupt or damaged PDF"),
        (b"%PDF-1.4\n" + os.urandom(4096), "corrupt or damaged PDF"),
    ],
)
def test_corrupt_files(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    with pytest.raises(LoadError, match=reason):
        PdfLoader().load(path, NO_OCR)


def _make_pdf(path: Path, pages: list[str], *, image_page: bool = False) -> None:
    from PIL import Image, ImageDraw
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    for text in pages:
        y = 800
        for line in text.split("\n"):
            c.drawString(72, y, line)
            y -= 14
        c.showPage()
    if image_page:
        image = Image.new("L", (600, 200), 255)
        ImageDraw.Draw(image).text((20, 80), "Scanned words", fill=0)
        c.drawImage(ImageReader(image), 72, 500, width=450, height=150)
        c.showPage()
    c.save()


def test_truncated_pdf_keeps_readable_pages_or_fails_cleanly(tmp_path: Path) -> None:
    full = tmp_path / "full.pdf"
    _make_pdf(full, [f"Page {n} body text about retrieval." for n in range(1, 6)])
    data = full.read_bytes()
    for cut in (len(data) // 3, len(data) // 2, len(data) - 200):
        path = tmp_path / f"cut{cut}.pdf"
        path.write_bytes(data[:cut])
        try:
            document = PdfLoader().load(path, NO_OCR)
        except LoadError as exc:
            assert "PDF" in exc.reason or "no text" in exc.reason
        else:
            assert all("Page" in p.text for p in document.parts)


def test_blank_and_text_pages(tmp_path: Path) -> None:
    path = tmp_path / "mixed.pdf"
    _make_pdf(path, ["First page about BM25.", "", "Third page about dense vectors."])
    document = PdfLoader().load(path, NO_OCR)
    assert [p.locator["page"] for p in document.parts] == [1, 3]
    assert document.warnings == []


def test_no_tesseract_leaves_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    from shirabe.loaders.pdf import ocr

    monkeypatch.setattr(ocr, "tesseract_command", lambda: None)
    with pytest.raises(LoadError, match=r"needs OCR \(install tesseract-ocr-jpn\)"):
        PdfLoader().load(fixtures / "pdf" / "test-ocr-notext.pdf", LoadOptions())
    path = tmp_path / "mixed.pdf"
    _make_pdf(path, ["A page with a text layer."], image_page=True)
    document = PdfLoader().load(path, LoadOptions())
    assert [p.locator for p in document.parts] == [{"page": 1}]
    assert document.warnings == ["page 2: needs OCR (no text layer; tesseract is not installed)"]


@pytest.mark.slow
def test_ocr_of_image_only_pages(fixtures: Path) -> None:
    from shirabe.loaders.pdf import ocr

    if ocr.tesseract_command() is None or ocr.missing_languages("jpn+eng"):
        unavailable("tesseract with jpn+eng is not installed")
    document = PdfLoader().load(fixtures / "pdf" / "test-ocr-notext.pdf", LoadOptions())
    assert "page 1: text from OCR" in document.warnings
    assert document.parts and document.parts[0].locator == {"page": 1}
    report = PdfLoader().load(fixtures / "pdf" / "scanned-medical-report.pdf", LoadOptions())
    assert [p.locator["page"] for p in report.parts] == [1, 2, 3], report.warnings
    assert "SEATTLE GENERAL HOSPITAL" in report.parts[0].text
    assert all(w.endswith("text from OCR") for w in report.warnings)


def _scan(source: Path, page: int, target: Path) -> Path:
    """An image-only PDF of one page of ``source``, as a scanner would make it (200 dpi)."""
    import pypdfium2

    document = pypdfium2.PdfDocument(str(source))
    try:
        image = document[page].render(scale=200 / 72).to_pil().convert("L")
    finally:
        document.close()
    image.save(target, resolution=200.0)
    return target


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "page", "phrase"),
    [
        ("sample_docs/製品/AQ-300_かんたんガイド.pdf", 1, "オレンジ色の固定テープ"),  # 横書き
        ("../shared/fixtures/pdf/jo.pdf", 0, "わたくしといふ現象は"),  # 縦書き: jpn_vert
    ],
)
def test_ocr_of_scanned_japanese(tmp_path: Path, source: str, page: int, phrase: str) -> None:
    from shirabe.loaders.pdf import ocr

    if ocr.tesseract_command() is None or ocr.missing_languages("jpn+jpn_vert"):
        unavailable("tesseract with jpn and jpn_vert is not installed")
    scanned = _scan(shared(ROOT / source), page, tmp_path / "scan.pdf")
    document = PdfLoader().load(scanned, LoadOptions())
    assert document.warnings == ["page 1: text from OCR"]
    text = "".join(document.parts[0].text.split())
    assert phrase in text
