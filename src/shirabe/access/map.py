"""Which groups (departments) may read a document.

An access map is YAML, path globs (relative to the index's document root, see
:mod:`shirabe.indexing.places`; for uploads, to the uploads folder) mapped to groups; the
first matching glob decides, and files no glob matches get the default groups::

    人事/**: [hr]
    経理/**: [finance, executives]
    総務/社内FAQ.md: [public]

Globs (:mod:`shirabe.text.globs`): ``*`` matches within one folder level, ``**`` across
levels, ``?`` one character; a rule's glob is anchored at the document root.
The group ``public`` is every user's: a document in it is readable by all users.

Names are matched in their canonical form (:func:`shirabe.text.paths.canonical_name`), each
folder level of the glob and of the path: a folder ``⼈事`` (a Kangxi radical), ``人事.`` or
``人事 `` is ``人事`` to the rule ``人事/**``. A character of a glob that only reads as ``*`` or
``?`` in that form (``＊``, ``？``) stays a character. Group names are canonical too.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from shirabe.errors import ConfigurationError
from shirabe.records import PUBLIC, Filters, Reader
from shirabe.settings import parse_yaml, read_yaml
from shirabe.text.globs import glob_regex
from shirabe.text.paths import canonical_name

_GROUP = re.compile(r"^[\w.\-]{1,64}$")
_MARKS = 0xF0000
"""Private-use characters (NFKC keeps them) that stand for a glob's literal ``＊`` or ``？``
while it is made canonical."""
MATCHING = "canonical-names, invisible characters dropped"
"""How names are matched; part of every map's signature, so that documents tagged when names
were matched otherwise are tagged again."""


def _canonical_path(path: str) -> str:
    """A ``/``-separated path with each folder level in its canonical form."""
    return "/".join(canonical_name(part) for part in path.split("/"))


def rule_regex(glob: str) -> str:
    """The regular expression of an access-map glob, matched against ``/`` + the canonical path
    relative to the document root: ``人事/**`` covers ``人事/…`` there, not ``x/人事/…``."""
    literal: dict[str, str] = {}
    marked = []
    for ch in glob.strip("/"):
        if ch not in "*?" and {"*", "?"} & set(unicodedata.normalize("NFKC", ch)):
            mark = chr(_MARKS + len(literal))
            literal[mark] = re.escape(unicodedata.normalize("NFKC", ch))
            marked.append(mark)
        else:
            marked.append(ch)
    regex = glob_regex("/" + _canonical_path("".join(marked)))
    for mark, text in literal.items():
        regex = regex.replace(mark, text)
    return regex


def check_group(name: str, where: str) -> str:
    """``name`` in its canonical form (:func:`canonical_name`), if that is a valid group name
    (letters, digits, ``_.-``, up to 64)."""
    canonical = canonical_name(name)
    if not _GROUP.match(canonical):
        raise ConfigurationError(
            f"{where}: group {name!r} must be 1-64 letters, digits, '_', '.' or '-'"
        )
    return canonical


@dataclass(frozen=True, eq=False)
class AccessMap:
    """Ordered (glob, groups) rules and the groups of files no rule matches."""

    rules: Sequence[tuple[str, tuple[str, ...]]] = ()
    default: tuple[str, ...] = (PUBLIC,)

    @cached_property
    def _compiled(self) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
        # rules are relative to the document root: anchored there, as absolute globs
        return [(re.compile(rule_regex(glob)), groups) for glob, groups in self.rules]

    def groups_for(self, relative: str) -> tuple[str, ...]:
        """The groups that may read the file at ``relative`` (``/``-separated)."""
        path = "/" + _canonical_path(relative.replace("\\", "/").strip("/"))
        for pattern, groups in self._compiled:
            if pattern.match(path):
                return groups
        return self.default

    @cached_property
    def signature(self) -> str:
        text = repr((list(self.rules), self.default, MATCHING))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def parse_access_map(data: object, origin: str, default: Sequence[str]) -> AccessMap:
    """Rules read from an access map file; errors name ``origin`` and the glob."""
    defaults = tuple(check_group(g, f"{origin}: default groups") for g in default)
    if data is None:
        return AccessMap((), defaults)
    if not isinstance(data, dict):
        raise ConfigurationError(f"{origin}: expected a mapping of path globs to lists of groups")
    rules: list[tuple[str, tuple[str, ...]]] = []
    for raw_glob, value in data.items():
        glob = str(raw_glob).strip()
        if not glob:
            raise ConfigurationError(f"{origin}: a rule has an empty glob")
        listed = [value] if isinstance(value, str) else value
        if not isinstance(listed, list) or not listed:
            raise ConfigurationError(f"{origin}: {glob}: groups must be a non-empty list")
        groups = tuple(check_group(str(g).strip(), f"{origin}: {glob}") for g in listed)
        rules.append((glob, groups))
    return AccessMap(tuple(rules), defaults)


def load_access_map(path: Path | None, default: Sequence[str]) -> AccessMap:
    if path is None:
        return parse_access_map(None, "default groups", default)
    return parse_access_map(read_yaml(path, "access map"), f"access map {path}", default)


class AccessMapFile:
    """The access map the settings name, read again whenever its file changes: saved from the
    admin page, by another server sharing it, or by hand. Without a file, the default groups
    decide every document and there is nothing to save."""

    def __init__(self, path: Path | None, default: Sequence[str]) -> None:
        self.path = path
        self._default = tuple(default)
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self._read: tuple[tuple[int, int, int] | None, AccessMap] | None = None

    def current(self) -> AccessMap:
        """The map as the file holds it now (:class:`ConfigurationError` for a broken one)."""
        stamp = self._stamp()
        with self._lock:
            if self._read is None or self._read[0] != stamp:
                self._read = (stamp, load_access_map(self.path, self._default))
            return self._read[1]

    def _stamp(self) -> tuple[int, int, int] | None:
        if self.path is None:
            return None
        try:
            found = self.path.stat()
        except OSError:
            return None  # reading it says why
        return (found.st_mtime_ns, found.st_size, found.st_ino)

    def text(self) -> str:
        """The file's rules as written (empty without a file)."""
        if self.path is None:
            return ""
        try:
            return self.path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise ConfigurationError(f"access map {self.path}: {exc.strerror or exc}") from None

    def parse(self, text: str) -> AccessMap:
        """The map ``text`` (YAML) would be; :class:`ConfigurationError` naming the rule that
        is wrong."""
        origin = f"access map {self.path or ''}".strip()
        return parse_access_map(parse_yaml(text, origin), origin, self._default)

    def write(self, text: str) -> AccessMap:
        """Replace the file with ``text`` once it parses (at once: a reader sees the old file
        or the new one); the new map."""
        if self.path is None:
            raise ConfigurationError(
                "no access map file is configured (SHIRABE_INGEST__ACCESS_MAP): the default "
                "groups decide every document; name a file to keep rules in"
            )
        access = self.parse(text)
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.part")
        with self._writing:  # one save at a time in this process; the file is swapped whole
            try:
                partial.write_text(
                    text if text.endswith("\n") or not text else text + "\n", "utf-8"
                )
                os.replace(partial, self.path)
            except OSError as exc:
                partial.unlink(missing_ok=True)
                raise ConfigurationError(f"access map {self.path}: {exc.strerror or exc}") from None
        with self._lock:
            self._read = None
        return access


def restrict(filters: Filters | None, reader: Reader | None) -> Filters | None:
    """``filters`` narrowed to what ``reader`` may read (unchanged for admins or no reader)."""
    if reader is None or reader.visible is None:
        return filters
    return replace(filters or Filters(), groups=reader.visible)
