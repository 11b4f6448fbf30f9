"""Feedback written as evaluation cases: one case per rating and answer, as the table says."""

from __future__ import annotations

import pytest

from shirabe.evaluation.cases import parse_cases
from shirabe.evaluation.feedback import case_of, export_cases, first_line
from shirabe.records import Feedback, Rating, StoredTurn


def given(
    n: int, rating: Rating, answer: str, *, refused: bool = False, comment: str = ""
) -> Feedback:
    turn = StoredTurn(
        position=1,
        question="重さは？",
        standalone="AQ-300の重さは?",
        answer=answer,
        refused=refused,
        at="2026-12-01T09:00:00",
        citations=[{"number": 1, "source": "製品/AQ-300仕様書.md"}],
        sources=("製品/AQ-300仕様書.md",),
    )
    return Feedback(n, "user:hana", "c1", 1, rating, comment, "2026-12-01T09:01:00", turn)


@pytest.mark.parametrize(
    ("answer", "line"),
    [
        ("約9.2kgです。\n質量: 約9.2kg[1]", "約9.2kgです"),
        ("\n\n質量: 約9.2kg[1][2]。", "質量: 約9.2kg"),
        ("", ""),
    ],
)
def test_the_first_line_without_markers(answer: str, line: str) -> None:
    assert first_line(answer) == line


def test_each_rating_makes_its_case() -> None:
    assert case_of(given(1, "up", "約9.2kgです。\n質量: 約9.2kg[1]")) == {
        "id": "feedback-1",
        "kind": "feedback-up",
        "question": "AQ-300の重さは?",
        "expect_answer": ["約9.2kgです"],
        "expect_source": {"file": "製品/AQ-300仕様書.md"},
    }
    refused = given(2, "up", "ドキュメントに記載がありません", refused=True)
    assert case_of(refused)["expect_refusal"] is True
    assert case_of(given(3, "down", "約1kgです。[1]"))["expect_not"] == ["約1kgです"]


def test_the_export_reads_back_as_cases_with_comments() -> None:
    text = export_cases(
        [
            given(1, "up", "約9.2kgです。[1]"),
            given(2, "down", "約1kgです。[1]", comment="違います\n9.2kgのはず"),
            given(3, "down", "ドキュメントに記載がありません", refused=True),
        ]
    )
    assert "# comment: 違います 9.2kgのはず" in text
    assert "# asked in a conversation as: 重さは？" in text
    assert "  # - id: feedback-3" in text  # only a person knows what it should have said
    import yaml

    cases = parse_cases(yaml.safe_load(text))
    assert [(c.id, c.expect_answer, c.expect_not) for c in cases] == [
        ("feedback-1", ("約9.2kgです",), ()),
        ("feedback-2", (), ("約1kgです",)),
    ]
