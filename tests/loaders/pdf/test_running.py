"""Running headers and footers, on hand-made pages."""

from __future__ import annotations

import pytest

from shirabe.loaders.pdf.running import running_key, strip_running


@pytest.mark.parametrize(
    ("line", "page", "key"),
    [
        ("３／１１", 3, "#/11"),
        ("- 12 -", 12, "-#-"),
        ("- 12 -", 5, "-12-"),  # not this page's number
        ("総務部 規程集 p.4", 4, "総務部規程集p.#"),
        ("## 研究の背景", 1, None),
        ("| 1 | 2 |", 1, None),
        ("   ", 1, None),
        (
            "本規程は、社員の就業に関する基本的な事項を定めるものであり、正社員、契約社員及びパートタイマーの全員に適用する。",
            1,
            None,
        ),
    ],
)
def test_running_key(line: str, page: int, key: str | None) -> None:
    assert running_key(line, page) == key


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


def test_printed_numbers_are_the_pages_own() -> None:
    bodies = ["本文一。", "本文二。", "本文三。"]
    pages = _pages(bodies, bottom="- {n} -")
    assert strip_running(pages, [5, 6, 7]) == pages  # printed 1-3 on pages 5-7: not theirs
    assert strip_running(_pages(bodies, bottom="- {n} -"), [1, 2, 3]) == bodies


def test_two_pages_lose_only_their_page_numbers() -> None:
    pages = _pages(["本文一。", "本文二。"], top="社外秘", bottom="- {n} -")
    assert strip_running(pages) == ["社外秘\n本文一。", "社外秘\n本文二。"]


def test_identifiers_and_figures_at_the_edges_stay() -> None:
    pages = [f"INC-2024-000{n} 障害\n本文{n}。" for n in range(1, 5)]
    assert strip_running(pages) == pages
    years = ["本文一。\n2023", "本文二。\n2024"]
    assert strip_running(years) == years
    growth = ["売上は前年比10%増", "売上は前年比20%増", "売上は前年比30%増"]
    assert strip_running(growth) == growth


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


def test_a_page_of_repeated_lines_keeps_them_but_not_its_number() -> None:
    pages = ["お問い合わせ先\n総務部\n1", "お問い合わせ先\n総務部\n2", "お問い合わせ先\n総務部\n3"]
    assert strip_running(pages) == ["お問い合わせ先\n総務部"] * 3
    assert strip_running(["1", "2", "3"]) == ["", "", ""]
