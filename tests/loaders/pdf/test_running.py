"""Running headers and footers, on hand-made pages."""

from __future__ import annotations

import pytest

from shirabe.loaders.pdf.running import running_key, strip_running


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("３／１１", "0/0"),
        ("- 12 -", "-0-"),
        ("総務部 規程集 2024", "総務部規程集0"),
        ("## 研究の背景", None),
        ("| 1 | 2 |", None),
        ("   ", None),
    ],
)
def test_running_key(line: str, key: str | None) -> None:
    assert running_key(line) == key


def _pages(bodies: list[str], top: str | None = None, bottom: str | None = None) -> list[str]:
    out = []
    for n, body in enumerate(bodies, 1):
        lines = [top.format(n=n)] if top else []
        lines.append(body)
        if bottom:
            lines.append(bottom.format(n=n))
        out.append("\n".join(lines))
    return out


def test_page_numbers_and_a_running_title_go() -> None:
    bodies = ["本文一。", "本文二。", "本文三。", "本文四。"]
    pages = _pages(bodies, top="就業規則（令和6年版）", bottom="{n}／4")
    assert strip_running(pages) == bodies


def test_two_pages_lose_only_their_page_numbers() -> None:
    pages = _pages(["本文一。", "本文二。"], top="社外秘", bottom="- {n} -")
    assert strip_running(pages) == ["社外秘\n本文一。", "社外秘\n本文二。"]


def test_a_line_on_fewer_than_half_of_the_pages_stays() -> None:
    pages = ["注意事項\n本文一。", "本文二。", "本文三。", "注意事項\n本文四。", "本文五。"]
    assert strip_running(pages) == pages


def test_the_same_line_in_the_middle_of_a_page_stays() -> None:
    pages = [
        "見出し\nA\nB\n社外秘\nC\nD\n1",
        "見出し\nE\nF\n社外秘\nG\nH\n2",
        "見出し\nI\nJ\n社外秘\nK\nL\n3",
    ]
    assert strip_running(pages) == [
        "A\nB\n社外秘\nC\nD",
        "E\nF\n社外秘\nG\nH",
        "I\nJ\n社外秘\nK\nL",
    ]


def test_headings_and_table_rows_stay() -> None:
    pages = ["## 研究の背景\n一。", "## 研究の背景\n二。", "## 研究の背景\n三。"]
    assert strip_running(pages) == pages
    tables = ["| 1 | 2 |\n一。", "| 1 | 2 |\n二。", "| 1 | 2 |\n三。"]
    assert strip_running(tables) == tables


def test_a_page_left_empty_is_empty() -> None:
    assert strip_running(["1", "2", "3"]) == ["", "", ""]
