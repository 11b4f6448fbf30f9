"""Case files: validation errors name the case and the field; the shipped files are valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from shirabe.evaluation.cases import CaseFileError, load_cases, parse_cases

from tests.support import ROOT

CASE = {"id": "c1", "question": "質問？", "expect_answer": ["答え"]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question": ""}, "case 'c1': question: must be a non-empty string"),
        ({"expect_answer": "答え"}, None),  # a single string is accepted
        ({"expect_answer": [1]}, "case 'c1': expect_answer: must be a list"),
        ({"expect_source": {"page": 2}}, "case 'c1': expect_source.file: must be"),
        (
            {"expect_source": {"file": "a.pdf", "page": [2]}},
            "case 'c1': expect_source.page: must be a string or a number",
        ),
        ({"expect_refusal": "yes"}, "case 'c1': expect_refusal: must be true or false"),
        ({"expect_refusal": True}, "case 'c1': expect_refusal: cannot be combined"),
        ({"expect_answer": None}, "case 'c1': expect_answer: give expect_answer"),
        ({"answer": "x"}, "case 'c1': answer: unknown field"),
        ({"id": 3}, "case #1: id: must be a non-empty string"),
    ],
)
def test_parse_case_errors_name_case_and_field(
    change: dict[str, object], message: str | None
) -> None:
    data = {"cases": [CASE | change]}
    if message is None:
        parse_cases(data)
        return
    with pytest.raises(CaseFileError) as caught:
        parse_cases(data, origin="x.yaml")
    assert str(caught.value).startswith("x.yaml: ")
    assert message in str(caught.value)


def test_parse_cases_file_level_errors() -> None:
    with pytest.raises(CaseFileError, match="non-empty list under 'cases'"):
        parse_cases({"cases": []})
    with pytest.raises(CaseFileError, match="case 'c1': id: duplicate"):
        parse_cases({"cases": [CASE, CASE]})


def test_load_cases_reports_yaml_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("cases:\n  - id: a\n    question: [unclosed\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"broken\.yaml: not valid YAML"):
        load_cases(broken)
    with pytest.raises(CaseFileError, match="cannot read"):
        load_cases(tmp_path / "missing.yaml")


def test_shipped_sample_cases_are_valid() -> None:
    cases = load_cases(ROOT / "eval" / "sample_docs.yaml")
    assert len(cases) >= 30
    assert any(c.expect_refusal for c in cases)
    assert any(c.kind == "id" for c in cases)
    for case in cases:
        if case.expect_source is not None:
            assert (ROOT / "sample_docs" / case.expect_source.file).is_file(), case.id


def test_shipped_multipart_cases_are_valid() -> None:
    cases = load_cases(ROOT / "eval" / "multipart.yaml")
    assert len(cases) >= 8 and all(c.expect_all for c in cases)
    for case in cases:
        if case.expect_source is not None:
            assert (ROOT / "sample_docs" / case.expect_source.file).is_file(), case.id
