"""What to ask, decided before and once after the first answer.

The planner turns a question asked in a conversation into what is searched and answered: its
standalone form (a follow-up 「再発防止策は？」 after INC-2024-0004 becomes 「INC-2024-0004の
再発防止策は？」, by rules, or by the chat model when one writes the answers), the questions
asked together in it (``decompose``), and the conversation a chat model reads with it. When
the first answer is a refusal, it decides once whether one other question is worth asking:
the question with the conversation's subject in front (「発売日はいつですか？」 alone found
nothing: of what?), or the question as written when what the conversation carried into it
is missing but its own words are not (a new topic).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shirabe.answering.followup import carried, carried_in_vain, rewritten, standalone
from shirabe.llm.protocol import ChatModel
from shirabe.records import Answer, Filters, Hit, Turn
from shirabe.retrieval.understanding import Understanding
from shirabe.text.normalize import folded

EARLIER_SAID = 2
"""Earlier questions a chat model reads before a follow-up."""

Search = Callable[[str, Filters | None], list[Hit]]
"""The best few passages for a term among those a reader may read."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What is asked for a question: ``asked`` (its standalone form), the ``parts`` asked
    together in it (empty for one question), and the ``conversation`` it was asked in (its
    last earlier questions, then the question as asked; empty without a conversation)."""

    question: str
    asked: str
    parts: list[str] = field(default_factory=list)
    conversation: tuple[str, ...] = ()
    history: tuple[Turn, ...] = ()

    def shown(self, answer: Answer, asked: str | None = None) -> Answer:
        """The answer to ``asked`` (by default the plan's) shown as the answer to the
        question, with the standalone form when the conversation changed it."""
        asked = self.asked if asked is None else asked
        answer.question = self.question
        if asked != self.question:
            answer.standalone = asked
        return answer


@dataclass(frozen=True, slots=True)
class Fallback:
    """One other question to ask after a refusal, and the conversation it is asked in."""

    question: str
    conversation: tuple[str, ...] = ()


class Planner:
    """Plans each question of a conversation."""

    def __init__(
        self,
        *,
        chat_model: Callable[[], ChatModel | None],
        understanding: Callable[[], Understanding],
        decompose: bool,
        search: Search,
    ) -> None:
        """``chat_model`` and ``understanding`` are called when first needed (they may start a
        model); ``search`` looks for the terms a refusal names."""
        self._chat_model = chat_model
        self._understanding = understanding
        self._decompose = decompose
        self._search = search

    def plan(self, question: str, history: Sequence[Turn] = ()) -> Plan:
        """What to ask for ``question`` after the turns of ``history`` (oldest first)."""
        asked = self.standalone(question, history)
        parts = self._understanding().parts(asked) if self._decompose else []
        said = (*(t.question for t in history[-EARLIER_SAID:]), question) if history else ()
        return Plan(question, asked, parts, said, tuple(history))

    def standalone(self, question: str, history: Sequence[Turn]) -> str:
        """``question`` as it would be asked with no conversation before it: made so by rules
        (:mod:`shirabe.answering.followup`) and, when they find it needs the conversation and
        a chat model writes the answers, written by the model."""
        if not history:
            return question
        ruled = standalone(question, history)
        if ruled == question:
            return ruled
        model = self._chat_model()
        return ruled if model is None else rewritten(model, question, history, ruled)

    def fallback(self, plan: Plan, answer: Answer, filters: Filters | None) -> Fallback | None:
        """The one question worth asking after ``answer`` refused ``plan``'s, if any."""
        if not answer.refused or plan.parts:
            return None
        question, history = plan.question, plan.history
        again = carried(question, history) if plan.asked == question else None
        if again is not None:
            return Fallback(again, plan.conversation)
        terms = carried_in_vain(answer.refusal_reason, question, plan.asked, history)
        if terms and all(self._named(term, filters) for term in terms):
            return Fallback(question)
        return None

    def _named(self, term: str, filters: Filters | None) -> bool:
        """Whether the documents the asker may read name ``term`` somewhere (AQ-300 is a
        product of theirs; INC-2024-0099 is no incident of theirs)."""
        return any(term.lower() in folded(h.chunk.text) for h in self._search(term, filters))
