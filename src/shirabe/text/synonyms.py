"""Names of companies, products and the like, with their aliases, from a synonyms file.

A synonyms file is YAML, each official name mapped to its other spellings::

    ミナモ電機: [株式会社ミナモ電機, Minamo]
    AQ-300: [AQ300, ミナモ AQ-300]

At ingest every document is tagged with the official names it mentions (in its path, title or
text). A question naming one of them, by any spelling, is then searched only in documents
tagged with it, and its lexical query gains the official name, so 「AQ300の容量は？」 finds
text that only ever says ``AQ-300``.

Matching is on normalised text (NFKC, hyphen-like dashes, case folded). Aliases made of ASCII
letters and digits only match as whole words: ``AQ-300`` is not found in ``AQ-3000``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from shirabe.text.normalize import normalize

_WORD = "0-9A-Za-z"


class SynonymsError(ValueError):
    """A synonyms file that cannot be read as official names and their aliases."""


def _key(text: str) -> str:
    return normalize(text).casefold().strip()


@dataclass(frozen=True, eq=False)
class Synonyms:
    """Official names and their aliases; ``signature`` changes whenever the content does."""

    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @cached_property
    def signature(self) -> str:
        lines = sorted("\t".join([name, *sorted(a)]) for name, a in self.names.items())
        return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:16]

    @cached_property
    def _pattern(self) -> tuple[re.Pattern[str] | None, dict[str, str]]:
        owner: dict[str, str] = {}
        for name, aliases in self.names.items():
            for spelling in (name, *aliases):
                key = _key(spelling)
                if key:
                    owner.setdefault(key, name)
        if not owner:
            return None, owner
        alternatives = []
        for key in sorted(owner, key=len, reverse=True):  # longest spelling wins
            body = re.escape(key)
            if key[0].isascii() and key[0].isalnum():
                body = rf"(?<![{_WORD}]){body}"
            if key[-1].isascii() and key[-1].isalnum():
                body = rf"{body}(?![{_WORD}])"
            alternatives.append(body)
        return re.compile("|".join(alternatives)), owner

    def matches(self, text: str) -> dict[str, str]:
        """Each spelling ``text`` uses (normalised, case folded) → its official name."""
        pattern, owner = self._pattern
        if pattern is None or not text:
            return {}
        return {m.group(0): owner[m.group(0)] for m in pattern.finditer(_key(text))}

    def find(self, text: str) -> frozenset[str]:
        """The official names ``text`` mentions under any spelling."""
        return frozenset(self.matches(text).values())

    @staticmethod
    def covers(spelling: str, term: str) -> bool:
        """Whether ``term`` (a word of the question) is part of a matched ``spelling``."""
        key = _key(term)
        return bool(key) and key in spelling

    def find_all(self, texts: Iterable[str]) -> frozenset[str]:
        found: set[str] = set()
        for text in texts:
            found |= self.find(text)
        return frozenset(found)

    def __bool__(self) -> bool:
        return bool(self.names)


def parse_synonyms(data: object, origin: str) -> Synonyms:
    """The mapping read from a synonyms file; errors name ``origin`` and the entry."""
    if data is None:
        return Synonyms()
    if not isinstance(data, dict):
        raise SynonymsError(f"{origin}: expected a mapping of official names to lists of aliases")
    names: dict[str, tuple[str, ...]] = {}
    for raw_name, raw_aliases in data.items():
        name = str(raw_name).strip()
        if not name:
            raise SynonymsError(f"{origin}: an entry has an empty name")
        if raw_aliases is None:
            aliases: list[object] = []
        elif isinstance(raw_aliases, str):
            aliases = [raw_aliases]
        elif isinstance(raw_aliases, list):
            aliases = raw_aliases
        else:
            raise SynonymsError(
                f"{origin}: {name}: aliases must be a list of strings, "
                f"not {type(raw_aliases).__name__}"
            )
        for alias in aliases:
            if not isinstance(alias, str | int | float) or not str(alias).strip():
                raise SynonymsError(f"{origin}: {name}: alias {alias!r} is not a name")
        names[name] = tuple(str(a).strip() for a in aliases)
    return Synonyms(names)
