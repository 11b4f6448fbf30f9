"""Case files: questions with what a good answer looks like, read from YAML.

A case file (see ``eval/sample_docs.yaml``) lists questions with substrings the answer should
contain, the source file (and page / sheet / slide) that should be retrieved, or that the
question must be refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from shirabe.errors import ShirabeError

LocatorValue = str | int


class CaseFileError(ShirabeError):
    """The case file cannot be read or a case is malformed; the message names the case and field."""


@dataclass(frozen=True, slots=True)
class ExpectedSource:
    """A file relative to the corpus root, and the locator keys its citation should carry."""

    file: str
    locator: Mapping[str, LocatorValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    question: str
    kind: str = "other"
    expect_answer: tuple[str, ...] = ()
    expect_source: ExpectedSource | None = None
    expect_refusal: bool = False
    expect_all: tuple[str, ...] = ()
    """Substrings that must all be in the answer (questions asked together)."""
    expect_not: tuple[str, ...] = ()
    """Substrings that must not be in the answer (what an instruction in a document asks
    for: a URL, a made-up amount)."""
    dialogue: str | None = None
    """The conversation this case is a turn of; earlier turns of it are asked before."""

    @property
    def answerable(self) -> bool:
        return not self.expect_refusal


def load_cases(path: Path) -> list[Case]:
    """Read and validate a YAML case file."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except yaml.YAMLError as exc:
        raise CaseFileError(f"{path}: not valid YAML ({_one_line(str(exc))})") from exc
    return parse_cases(data, origin=str(path))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def parse_cases(data: object, origin: str = "cases") -> list[Case]:
    """Validate the parsed YAML: a mapping with ``cases``, a list of case mappings; or with
    ``dialogues``, each an ``id`` and ``turns`` (case mappings without ids), flattened into
    cases ``<id>#<n>`` of kind ``first`` and ``followup``."""
    if isinstance(data, Mapping) and "dialogues" in data:
        return _parse_dialogues(data["dialogues"], origin)
    items = data.get("cases") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise CaseFileError(f"{origin}: expected a non-empty list under 'cases'")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, item in enumerate(items, start=1):
        case = _parse_case(item, f"{origin}: case #{index}")
        if case.id in seen:
            raise CaseFileError(f"{origin}: case {case.id!r}: id: duplicate")
        seen.add(case.id)
        cases.append(case)
    return cases


def _parse_dialogues(items: object, origin: str) -> list[Case]:
    if not isinstance(items, list) or not items:
        raise CaseFileError(f"{origin}: expected a non-empty list under 'dialogues'")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, item in enumerate(items, start=1):
        where = f"{origin}: dialogue #{index}"
        if not isinstance(item, Mapping):
            raise CaseFileError(f"{where}: expected a mapping with id and turns")
        name = item.get("id")
        if not isinstance(name, str) or not name.strip():
            raise CaseFileError(f"{where}: id: must be a non-empty string")
        name = name.strip()
        if name in seen:
            raise CaseFileError(f"{origin}: dialogue {name!r}: id: duplicate")
        seen.add(name)
        turns = item.get("turns")
        if not isinstance(turns, list) or not turns:
            raise CaseFileError(f"{origin}: dialogue {name!r}: turns: must be a non-empty list")
        for number, turn in enumerate(turns, start=1):
            if not isinstance(turn, Mapping):
                raise CaseFileError(f"{origin}: dialogue {name!r}: turn {number}: not a mapping")
            kind = "first" if number == 1 else "followup"
            case = _parse_case({"id": f"{name}#{number}", "kind": kind, **turn}, where)
            cases.append(replace(case, dialogue=name))
    return cases


def _parse_case(item: object, where: str) -> Case:
    if not isinstance(item, Mapping):
        raise CaseFileError(f"{where}: expected a mapping with id and question")
    case_id = item.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise CaseFileError(f"{where}: id: must be a non-empty string")
    where = f"{where.rsplit(': ', 1)[0]}: case {case_id!r}"
    known = {
        "id",
        "question",
        "kind",
        "expect_answer",
        "expect_all",
        "expect_source",
        "expect_refusal",
        "expect_not",
    }
    unknown = sorted(str(k) for k in item if k not in known)
    if unknown:
        raise CaseFileError(f"{where}: {unknown[0]}: unknown field")
    question = item.get("question")
    if not isinstance(question, str) or not question.strip():
        raise CaseFileError(f"{where}: question: must be a non-empty string")
    kind = item.get("kind", "other")
    if not isinstance(kind, str) or not kind.strip():
        raise CaseFileError(f"{where}: kind: must be a string")
    expect_answer = _parse_answers(item.get("expect_answer"), where)
    expect_all = _parse_answers(item.get("expect_all"), where, "expect_all")
    expect_not = _parse_answers(item.get("expect_not"), where, "expect_not")
    expect_source = _parse_source(item.get("expect_source"), where)
    expect_refusal = item.get("expect_refusal", False)
    if not isinstance(expect_refusal, bool):
        raise CaseFileError(f"{where}: expect_refusal: must be true or false")
    if expect_refusal and (expect_answer or expect_all or expect_source):
        raise CaseFileError(
            f"{where}: expect_refusal: cannot be combined with expect_answer, expect_all or "
            "expect_source"
        )
    if not (expect_refusal or expect_answer or expect_all or expect_source or expect_not):
        raise CaseFileError(
            f"{where}: expect_answer: give expect_answer, expect_all, expect_source, "
            "expect_not or expect_refusal"
        )
    return Case(
        id=case_id.strip(),
        question=question.strip(),
        kind=kind.strip(),
        expect_answer=expect_answer,
        expect_source=expect_source,
        expect_refusal=expect_refusal,
        expect_all=expect_all,
        expect_not=expect_not,
    )


def _parse_answers(value: object, where: str, name: str = "expect_answer") -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CaseFileError(f"{where}: {name}: must be a list of non-empty strings")
    return tuple(value)


def _parse_source(value: object, where: str) -> ExpectedSource | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = {"file": value}
    if not isinstance(value, Mapping):
        raise CaseFileError(f"{where}: expect_source: must be a mapping with a file")
    file = value.get("file")
    if not isinstance(file, str) or not file.strip():
        raise CaseFileError(f"{where}: expect_source.file: must be a non-empty string")
    locator: dict[str, LocatorValue] = {}
    for key, loc in value.items():
        if key == "file":
            continue
        if not isinstance(loc, str | int) or isinstance(loc, bool):
            raise CaseFileError(f"{where}: expect_source.{key}: must be a string or a number")
        locator[str(key)] = loc
    return ExpectedSource(file=file.strip().replace("\\", "/").strip("/"), locator=locator)
