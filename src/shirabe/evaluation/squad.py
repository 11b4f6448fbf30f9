"""SQuAD-format question sets as a folder of documents and their questions.

Every paragraph becomes one Markdown file (the article's title as its heading), so that a set
such as JSQuAD or JaQuAD goes through the same loading, cutting and indexing as a company's
folder. Each question keeps the file of its own paragraph, to score retrieval against and to
make unanswerable examples by leaving that paragraph out of what is retrieved.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shirabe.errors import ShirabeError


class SquadError(ShirabeError):
    """A SQuAD-format file that cannot be read; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class SquadQuestion:
    qid: str
    text: str
    paragraph: str
    """The paragraph's file, relative to the corpus folder (``A/003/0012.md``)."""
    answers: tuple[str, ...]
    half: str
    """``A`` for even-numbered articles, ``B`` for odd ones: two halves that share no article."""
    article: int


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def read_squad(path: Path) -> dict[str, Any]:
    """The parsed file; an error naming the file when it is not SQuAD-format JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SquadError(f"{path}: not a readable SQuAD-format JSON file ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise SquadError(f"{path}: no 'data' list of articles (SQuAD format)")
    return data


def paragraphs(
    data: Mapping[str, Any], keep: Callable[[int], bool] = lambda _a: True
) -> Iterator[tuple[str, str, list[SquadQuestion]]]:
    """Each paragraph of the articles ``keep`` accepts (by article number): its file (relative
    to the corpus folder), its Markdown text, and its questions that have answers."""
    for a, article in enumerate(data["data"]):
        if not keep(a):
            continue
        half = "A" if a % 2 == 0 else "B"
        title = str(article.get("title", "")).strip() or f"article {a}"
        for p, para in enumerate(article["paragraphs"]):
            context = para["context"]
            body = context.split(" [SEP] ", 1)[1] if " [SEP] " in context else context
            rel = f"{half}/{a:03d}/{p:04d}.md"
            questions = [
                SquadQuestion(qa["id"], qa["question"], rel, answers, half, a)
                for qa in para["qas"]
                if (answers := tuple(dict.fromkeys(x["text"] for x in qa.get("answers", []))))
            ]
            yield rel, f"# {title}\n\n{body}\n", questions


def squad_questions(
    data: Mapping[str, Any], keep: Callable[[int], bool] = lambda _a: True
) -> list[SquadQuestion]:
    """The questions of the articles ``keep`` accepts, as :func:`write_corpus` gives them."""
    return [q for _rel, _text, questions in paragraphs(data, keep) for q in questions]


def answers_by_question(
    data: Mapping[str, Any], keep: Callable[[int], bool] = lambda _a: True
) -> dict[str, tuple[str, ...]]:
    """The gold answers of the questions of :func:`squad_questions`, by question id."""
    return {q.qid: q.answers for q in squad_questions(data, keep)}


def write_corpus(
    data: Mapping[str, Any],
    folder: Path,
    *,
    keep: Callable[[int], bool] = lambda _a: True,
) -> list[SquadQuestion]:
    """One Markdown file per paragraph of the articles ``keep`` accepts (by article number),
    written only when missing or different; the questions of those paragraphs."""
    out: list[SquadQuestion] = []
    for rel, text, questions in paragraphs(data, keep):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        out += questions
    return out
