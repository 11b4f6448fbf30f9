"""Typed records passed between the layers: documents, chunks, hits, answers."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from shirabe.records.admin import (
    AccessPreview as AccessPreview,
    AuditQuery as AuditQuery,
    GroupChange as GroupChange,
    PlaceReaders as PlaceReaders,
    ReaderChange as ReaderChange,
    RunningIngest as RunningIngest,
)
from shirabe.records.readers import (
    COMMENT_CHARS as COMMENT_CHARS,
    PUBLIC as PUBLIC,
    SEARCH_CHARS as SEARCH_CHARS,
    TITLE_CHARS as TITLE_CHARS,
    AuditEntry as AuditEntry,
    Conversation as Conversation,
    Feedback as Feedback,
    FoundConversation as FoundConversation,
    Identity as Identity,
    NewTurn as NewTurn,
    Rating as Rating,
    Reader as Reader,
    Session as Session,
    SignedIn as SignedIn,
    StoredTurn as StoredTurn,
    User as User,
)
from shirabe.text.marks import marks

Locator = dict[str, str | int]
"""Where inside a file a passage sits: ``{"page": 3}``, ``{"sheet": "売上", "row": 12}``, ..."""

HEADING_SEPARATOR = " > "
CITATION_SEPARATOR = " › "


@dataclass(frozen=True, slots=True)
class Part:
    """One addressable piece of a loaded file (the whole file, a page, a sheet, a slide).

    ``text`` is Markdown: ``#`` headings, paragraphs separated by blank lines, pipe tables and
    fenced code blocks. Chunks never cross parts, so every chunk carries exactly one locator.
    """

    text: str
    locator: Locator = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Document:
    """A file turned into structured text by a loader."""

    path: str
    parts: list[Part]
    title: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable passage with everything a citation needs."""

    text: str
    source: str
    heading_path: tuple[str, ...] = ()
    position: int = 0
    start: int = 0
    end: int = 0
    locator: Locator = field(default_factory=dict)
    is_summary: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    id: int | None = None

    @property
    def heading(self) -> str:
        return HEADING_SEPARATOR.join(self.heading_path)


@dataclass(frozen=True, slots=True)
class ScoredId:
    """One retriever's verdict on one chunk."""

    chunk_id: int
    score: float


@dataclass(slots=True)
class Hit:
    """A ranked chunk with the evidence behind its rank.

    ``ranks`` and ``scores`` are keyed by retriever name (``"bm25"``, ``"dense"``); ``score`` is
    the fused score that decided the final order.
    """

    chunk: Chunk
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def chunk_id(self) -> int:
        assert self.chunk.id is not None
        return self.chunk.id


@dataclass(frozen=True, slots=True)
class Citation:
    """A numbered pointer from an answer back to the passage that supports it."""

    number: int
    source: str
    heading_path: tuple[str, ...]
    locator: Locator
    chunk_id: int
    text: str

    @classmethod
    def of(cls, number: int, hit: Hit) -> Citation:
        """Citation ``number`` pointing at the passage of ``hit``."""
        chunk = hit.chunk
        return cls(
            number=number,
            source=chunk.source,
            heading_path=chunk.heading_path,
            locator=chunk.locator,
            chunk_id=hit.chunk_id,
            text=chunk.text,
        )

    def label(self, source_label: str | None = None) -> str:
        """``file › heading path › p.3`` as shown to users."""
        parts = [source_label or self.source]
        if self.heading_path:
            parts.append(HEADING_SEPARATOR.join(self.heading_path))
        shown = set(self.heading_path)
        parts.extend(label for label in format_locator(self.locator) if label not in shown)
        return CITATION_SEPARATOR.join(parts)


RefusalCode = Literal["no_passage", "weak", "unknown", "kind", "terms", "unsupported"]


@dataclass(slots=True)
class Answer:
    """What ``ask`` returns: the text, its citations, and how it was reached."""

    question: str
    text: str
    citations: list[Citation]
    refused: bool
    hits: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)
    mode: str = "extractive"
    searches: list[str] = field(default_factory=list)
    """What was searched when it was more than the question (query understanding)."""
    refusal_reason: str | None = None
    """Why the documents were found not to answer (a refusal only), in Japanese."""
    refusal_code: RefusalCode | None = None
    """The reason as a code: ``no_passage``, ``weak`` (nothing close enough), ``unknown``
    (a code or word no document has), ``kind`` (no sentence holds the kind of fact asked),
    ``terms`` (the passage does not mention what the question is about), ``unsupported``
    (a model's reply did not hold up against the passages)."""
    standalone: str | None = None
    """The question as searched when a conversation made it standalone (a follow-up)."""
    short: str | None = None
    """The asked amount or quantity alone (``約9.2kgです。``), when the answer opens with it."""
    span: str | None = None
    """The words of the answering lines most likely to be the asked fact alone (a reader's
    span), whether or not the answer opens with it. None for a refusal, a question asking
    for a reason or a way of doing, an answer that is a whole table row or list, the parts of
    questions asked together, or when no model decided."""
    span_confidence: float | None = None
    """The span model's probability that ``span`` is the asked fact. The answer opens with
    the span (``short``) when this reaches the model's span threshold, the question asks with
    a question word or for a kind of fact, and the first quoted line says it."""
    confidence: float | None = None
    """The calibrated probability that the passages answer the question (the learned answer
    stage), whether or not it refused; None when no model decided."""
    confidence_factors: list[tuple[str, float]] = field(default_factory=list)
    """The features that moved ``confidence`` most, with how much (log-odds), largest
    first."""

    @property
    def quoted(self) -> str:
        """The answer's text after the short answer it opens with, if any: its lines."""
        return self.text.removeprefix(f"{self.short}\n") if self.short else self.text


FileOutcome = Literal["added", "updated", "removed", "unchanged", "failed"]


@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    outcome: FileOutcome
    chunks: int = 0
    reason: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(slots=True)
class IngestReport:
    """Per-file outcomes of one ingest run, with counts per outcome."""

    files: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, outcome: FileOutcome) -> int:
        return sum(1 for f in self.files if f.outcome == outcome)

    @property
    def counts(self) -> dict[str, int]:
        return {o: self.count(o) for o in ("added", "updated", "removed", "unchanged", "failed")}

    @property
    def failures(self) -> list[FileResult]:
        return [f for f in self.files if f.outcome == "failed"]


CATEGORY = "category"
"""The tag of the top-level folder below the document root (``人事`` for ``docs/人事/規程.md``)."""
GROUPS = "groups"
"""The tag of the groups that may read the document (access map), as a JSON list."""
UPLOADED_BY = "uploaded_by"
"""The tag of the user who uploaded the document last (absent for files from folders)."""


@dataclass(frozen=True, slots=True)
class BrokenPage:
    """A PDF page whose text reads as broken, to be rewritten at ingest: its file, number and
    text, and why it counts as broken."""

    path: str
    number: int
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """A file known to the index, with the tags the ingest gave it (:data:`CATEGORY`,
    :data:`GROUPS`, :data:`UPLOADED_BY`) among its metadata."""

    path: str
    sha256: str
    size: int
    mtime: float
    status: Literal["ok", "failed"]
    error: str | None
    chunks: int
    ingested_at: str
    warnings: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)
    id: int | None = None

    @property
    def category(self) -> str | None:
        """The first folder below the document root, in its canonical form."""
        return self.metadata.get(CATEGORY)

    @property
    def groups(self) -> list[str]:
        """The groups that may read the document; none (admins only) when it has no valid
        tag (it was tagged before access control, or the tag is broken)."""
        raw = self.metadata.get(GROUPS)
        if raw is None:
            return []
        try:
            groups = json.loads(raw)
        except json.JSONDecodeError:
            return []
        return [str(g) for g in groups] if isinstance(groups, list) else []

    @property
    def uploaded_by(self) -> str | None:
        """The user who uploaded the document last (None for files ingested from folders)."""
        return self.metadata.get(UPLOADED_BY)


@dataclass(frozen=True, slots=True)
class IndexStatus:
    files: int
    chunks: int
    failed: list[SourceInfo]
    embedding_model: str | None
    embedding_dim: int | None
    index_bytes: int
    last_ingest: dict[str, object] | None
    home: str


def format_locator(locator: Locator) -> list[str]:
    """Human labels for a locator, in a fixed order: page, sheet, row, slide."""
    labels: list[str] = []
    if "page" in locator:
        labels.append(f"p.{locator['page']}")
    if "sheet" in locator:
        labels.append(str(locator["sheet"]))
    if "row" in locator:
        labels.append(f"行{locator['row']}")
    if "slide" in locator:
        labels.append(f"スライド{locator['slide']}")
    return labels


@dataclass(frozen=True, slots=True)
class Filters:
    """Restricts retrieval before ranking; every condition given must hold.

    ``path_glob``: a glob over source paths. ``metadata``: exact values. ``categories``: the
    document's category (the top-level folder it was ingested under) is one of these.
    ``entities``: the document mentions at least one of these official names (see
    ``shirabe.text.synonyms``). ``groups``: the document is readable by at least one of these
    groups (``shirabe.access.map``); None: no access restriction.
    """

    path_glob: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    categories: frozenset[str] = frozenset()
    entities: frozenset[str] = frozenset()
    groups: frozenset[str] | None = None

    def __bool__(self) -> bool:
        return bool(
            self.path_glob
            or self.metadata
            or self.categories
            or self.entities
            or self.groups is not None
        )


# ---------------------------------------------------------------- JSON views

ShowPath = Callable[[str], str]


def _same(path: str) -> str:
    return path


def hit_json(hit: Hit, show_path: ShowPath = _same) -> dict[str, Any]:
    chunk = hit.chunk
    return {
        "chunk_id": chunk.id,
        "source": show_path(chunk.source),
        "heading_path": list(chunk.heading_path),
        "locator": chunk.locator,
        "is_summary": chunk.is_summary,
        "score": hit.score,
        "ranks": hit.ranks,
        "scores": hit.scores,
        "text": chunk.text,
    }


def citation_json(
    citation: Citation, show_path: ShowPath = _same, answer: str | None = None
) -> dict[str, Any]:
    """A citation as the API gives it; with the ``answer`` that cites it, also ``marks``: the
    ``[start, end)`` spans of its ``text`` (in code points) that the answer quotes."""
    shown = show_path(citation.source)
    out = asdict(citation) | {"source": shown, "label": citation.label(shown)}
    if answer is not None:
        out["marks"] = _marks(answer, citation.text, citation.number)
    return out


def _marks(answer: str, text: str, number: int | None) -> list[list[int]]:
    return [list(span) for span in marks(answer, text, number)]


def with_marks(citations: Sequence[dict[str, Any]], answer: str) -> list[dict[str, Any]]:
    """Citations as kept with an answer (:func:`citation_json`), each with its ``marks``:
    those kept before marks were, are found now."""
    return [
        c if "marks" in c else c | {"marks": _marks(answer, c.get("text", ""), c.get("number"))}
        for c in citations
    ]


def answer_json(answer: Answer, show_path: ShowPath = _same) -> dict[str, Any]:
    return {
        "question": answer.question,
        "answer": answer.text,
        "refused": answer.refused,
        "refusal_reason": answer.refusal_reason,
        "refusal_code": answer.refusal_code,
        "confidence": answer.confidence,
        "confidence_factors": [
            {"feature": name, "effect": round(effect, 4)}
            for name, effect in answer.confidence_factors
        ],
        "short_answer": (
            None
            if answer.span is None
            else {
                "text": answer.span,
                "probability": answer.span_confidence,
                "shown": answer.short is not None,
            }
        ),
        "standalone": answer.standalone,
        "mode": answer.mode,
        "citations": [citation_json(c, show_path, answer.text) for c in answer.citations],
        "hits": [hit_json(h, show_path) for h in answer.hits],
        "searches": answer.searches,
        "timings": answer.timings,
    }


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier exchange of a conversation."""

    question: str
    answer: str = ""


# stream events: what an answer streamed piece by piece is made of


@dataclass(frozen=True, slots=True)
class HitsEvent:
    """The passages retrieved for the question, before any answer text."""

    hits: list[Hit]
    kind: str = "hits"


@dataclass(frozen=True, slots=True)
class TokenEvent:
    """A piece of answer text, to be appended to what came before."""

    text: str
    kind: str = "token"


@dataclass(frozen=True, slots=True)
class CitationsEvent:
    """The citations of the finished answer, numbered as in the streamed text."""

    citations: list[Citation]
    kind: str = "citations"


@dataclass(frozen=True, slots=True)
class DoneEvent:
    """The finished answer; always the last event of a successful stream."""

    answer: Answer
    kind: str = "done"


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """The stream failed; always the last event. Text already streamed should be discarded."""

    message: str
    error: Exception | None = None
    kind: str = "error"


GenerationEvent = HitsEvent | TokenEvent | CitationsEvent | DoneEvent | ErrorEvent


@dataclass(frozen=True, slots=True)
class IngestEvent:
    """Progress: ``scan`` once the file list is known, then one ``file`` event per file."""

    kind: Literal["scan", "file", "index", "done"]
    done: int = 0
    total: int = 0
    result: FileResult | None = None


Progress = Callable[[IngestEvent], None]
