"""The README's table of questions to try: each is asked over the sample corpus and its answer
holds what the table says, from the file it names (or is refused where it says —)."""

from __future__ import annotations

import unicodedata

import pytest

from shirabe.answering.refusal import REFUSAL_TEXT
from shirabe.engine import Shirabe

from tests.support import ROOT

pytestmark = pytest.mark.slow


def _rows() -> list[tuple[str, str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    header = "| question | what it exercises | the answer holds | answer comes from |"
    assert header in text, "the README's table of questions has moved or changed"
    table = text.split(header, 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in table.strip().splitlines()[1:]:  # after the |---| line
        question, _, holds, source = (cell.strip() for cell in line.strip("| ").split(" | "))
        rows.append((question, holds, source))
    return rows


ROWS = _rows()


def test_the_table_has_its_questions() -> None:
    assert len(ROWS) >= 10


@pytest.mark.parametrize(("question", "holds", "source"), ROWS, ids=[r[0][:20] for r in ROWS])
def test_a_readme_question_is_answered_as_printed(
    sample_app: Shirabe, question: str, holds: str, source: str
) -> None:
    answer = sample_app.ask(question)
    if source == "—":
        assert answer.refused and answer.text == REFUSAL_TEXT == holds
        return
    assert not answer.refused, answer.refusal_reason
    shown = unicodedata.normalize("NFKC", answer.text)
    assert unicodedata.normalize("NFKC", holds) in shown, answer.text
    file, *place = source.split(" › ")
    cited = [c for c in answer.citations if c.source.endswith(file)]
    assert cited, [c.source for c in answer.citations]
    if place:
        labels = " ".join(c.label() for c in cited)
        assert place[-1] in labels, labels
