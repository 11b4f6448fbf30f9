"""List numbering: number formats and counters that reset deeper levels."""

from __future__ import annotations

import pytest
from docx.oxml import parse_xml

from shirabe.loaders.docx.numbering import format_number, parse_numbering

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


@pytest.mark.parametrize(
    ("n", "fmt", "text"),
    [
        (3, "decimal", "3"),
        (3, "decimalFullWidth", "３"),
        (2, "aiueoFullWidth", "イ"),
        (3, "iroha", "ハ"),
        (4, "lowerRoman", "iv"),
        (28, "upperLetter", "BB"),
        (12, "japaneseCounting", "十二"),
        (3, "decimalEnclosedCircle", "③"),
        (7, "someFutureFormat", "7"),
    ],
)
def test_format_number(n: int, fmt: str, text: str) -> None:
    assert format_number(n, fmt) == text


def lvl(ilvl: int, fmt: str, text: str) -> str:
    return (
        f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/>'
        f'<w:lvlText w:val="{text}"/></w:lvl>'
    )


NUMBERING = f"""<w:numbering {W_NS}>
  <w:abstractNum w:abstractNumId="0">{lvl(0, "decimal", "%1.")}{lvl(1, "decimal", "(%2)")}
  </w:abstractNum>
  <w:abstractNum w:abstractNumId="1">{lvl(0, "bullet", "•")}</w:abstractNum>
  <w:abstractNum w:abstractNumId="2">{lvl(0, "decimalFullWidth", "第%1条")}</w:abstractNum>
  <w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
  <w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>
  <w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num>
  <w:num w:numId="4"><w:abstractNumId w:val="0"/>
    <w:lvlOverride w:ilvl="0"><w:startOverride w:val="5"/></w:lvlOverride></w:num>
</w:numbering>"""


def test_numbering_counts_and_resets_deeper_levels() -> None:
    numbering = parse_numbering(parse_xml(NUMBERING))
    shown = [
        numbering.marker("1", 0),
        numbering.marker("1", 1),
        numbering.marker("1", 1),
        numbering.marker("1", 0),
        numbering.marker("1", 1),
    ]
    assert shown == ["1.", "(1)", "(2)", "2.", "(1)"]
    assert numbering.marker("2", 0) == "-"
    assert [numbering.marker("3", 0), numbering.marker("3", 0)] == ["第１条", "第２条"]
    assert numbering.marker("4", 0) == "5."
    assert numbering.marker("99", 0) is None
