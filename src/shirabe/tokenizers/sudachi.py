"""Japanese index terms from SudachiPy words, whole ASCII IDs and optional CJK bigrams."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata
from itertools import pairwise
from typing import Any, Final, Literal

from shirabe.settings import TokenizerSettings
from shirabe.text.normalize import normalize
from shirabe.text.terms import NGRAM_PREFIX

SplitModeName = Literal["A", "B", "C"]

# Bump whenever a rule below (or in shirabe.textnorm) changes the emitted tokens.
RULES_VERSION: Final = 2
BIGRAM_PREFIX: Final = NGRAM_PREFIX

# One ASCII word or ID: letters/digits, "1,200"-style digit groups, joined by . _ - / : +
_ATOM = r"(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])[0-9A-Za-z]*|[0-9A-Za-z]+)"
_RUN_RE = re.compile(rf"(?<![0-9A-Za-z]){_ATOM}(?:[._\-/:+]{_ATOM})*")
_SEPARATOR_RE = re.compile(r"[._\-/:+]")
_PIECE_RE = re.compile(r"[0-9]+|[a-z]+")
_CJK_RUN_RE = re.compile(
    "["
    "\u3005-\u3007"  # 々 〆 〇
    "\u3041-\u3096\u309d-\u309f"  # hiragana
    "\u30a1-\u30fa\u30fc-\u30ff"  # katakana and ー (not ・)
    "\u31f0-\u31ff"  # small katakana extensions
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kanji
    "\U00020000-\U0003ffff"
    "]{2,}"
)
# Sudachi rejects inputs over 49,149 UTF-8 bytes; pieces of this many characters always fit.
_MAX_PIECE_CHARS: Final = 8192
_KEPT_LINES: Final = 8192
"""Short texts whose terms are kept (most recent first): the lines of the passages a question
retrieves are read again for the next question about the same documents."""
_KEPT_CHARS: Final = 400
_BREAK_CHARS: Final = "\n。!?"

_DROPPED_POS: Final = frozenset({"助詞", "助動詞", "空白"})
_SYMBOL_POS: Final = frozenset({"補助記号", "記号"})
_TE_FORMS: Final = frozenset({"て", "で"})

# Flags cached per part-of-speech id.
_DROP: Final = 1
_CONJUNCTIVE: Final = 2
_NON_INDEPENDENT: Final = 4
_SYMBOL: Final = 8

_dictionary: Any = None
_dictionary_lock = threading.Lock()
_synonym_words: dict[int, tuple[str, ...]] | None = None
_synonym_lock = threading.Lock()
_pos_flags: dict[int, int] = {}


def _get_dictionary() -> Any:
    """Load the SudachiDict core dictionary once per process."""
    global _dictionary  # noqa: PLW0603
    with _dictionary_lock:
        if _dictionary is None:
            from sudachipy import Dictionary

            _dictionary = Dictionary(dict="core")
        return _dictionary


def _synonym_table() -> dict[int, tuple[str, ...]]:
    """Each synonym group of the dictionary with the words in it, read from the lexicon once
    per process on first use (about a second: 1.6M entries, 26k groups in SudachiDict core)."""
    global _synonym_words  # noqa: PLW0603
    with _synonym_lock:
        if _synonym_words is None:
            table: dict[int, set[str]] = {}
            for entry in _get_dictionary().entries():
                for group in entry.synonym_group_ids():
                    table.setdefault(group, set()).add(entry.surface())
            _synonym_words = {g: tuple(sorted(words)) for g, words in table.items()}
        return _synonym_words


def _flags_for(pos_id: int, morpheme: Any) -> int:
    """Classify a part of speech once: dropped, symbol, conjunctive or non-independent."""
    flags = _pos_flags.get(pos_id)
    if flags is None:
        pos: tuple[str, ...] = tuple(morpheme.part_of_speech())
        flags = 0
        if pos[0] in _DROPPED_POS:
            flags |= _DROP
        if pos[0] in _SYMBOL_POS:
            flags |= _SYMBOL
        if pos[:2] == ("助詞", "接続助詞"):
            flags |= _CONJUNCTIVE
        if pos[0] in {"動詞", "形容詞"} and pos[1] == "非自立可能":
            flags |= _NON_INDEPENDENT
        _pos_flags[pos_id] = flags
    return flags


@lru_cache(maxsize=1 << 12)
def _is_written_symbol(form: str) -> bool:
    """Whether a symbol-tagged form holds a letter, e.g. 𠮷 (kanji Sudachi does not know)."""
    return any(unicodedata.category(ch) in {"Lu", "Ll", "Lo"} for ch in form)


@lru_cache(maxsize=1 << 16)
def _form_tokens(form: str) -> tuple[str, ...]:
    """Terms for one normalised form: lower-cased, split at spaces, letters or digits only."""
    tokens = (token.lstrip(BIGRAM_PREFIX) for token in form.lower().split())
    return tuple(
        token for token in tokens if any(unicodedata.category(ch)[0] in "LN" for ch in token)
    )


def _pieces(text: str) -> list[tuple[int, str]]:
    """Split text into Sudachi-sized pieces, preferring sentence or line breaks."""
    if len(text) <= _MAX_PIECE_CHARS:
        return [(0, text)]
    pieces: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        end = min(start + _MAX_PIECE_CHARS, len(text))
        if end < len(text):
            cut = max(text.rfind(ch, start, end) for ch in _BREAK_CHARS)
            if cut <= start:
                cut = max(text.rfind(" ", start, end), text.rfind("\u3000", start, end))
            if cut > start:
                end = cut + 1
        pieces.append((start, text[start:end]))
        start = end
    return pieces


def _id_tokens(run: str) -> list[str]:
    """Terms for one ASCII run: the whole run, plus letter/digit parts of unseparated runs."""
    token = run.replace(",", "").lower()
    if _SEPARATOR_RE.search(token):
        return [token]
    parts = _PIECE_RE.findall(token)
    return [token, *parts] if len(parts) > 1 else [token]


def _version(package: str) -> str:
    """Installed version of a distribution, or ``unknown``."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def cjk_bigrams(text: str) -> list[str]:
    """Prefixed overlapping character bigrams of every CJK run of two or more characters."""
    grams: list[str] = []
    for run in _CJK_RUN_RE.findall(text):
        grams.extend([f"{BIGRAM_PREFIX}{a}{b}" for a, b in pairwise(run)])
    return grams


class SudachiTokenizer:
    """Tokenizer for the lexical index; one instance may be shared by several threads."""

    def __init__(self, *, mode: SplitModeName = "C", bigrams: bool = True) -> None:
        self._mode: SplitModeName = mode
        self._bigrams = bigrams
        self._local = threading.local()
        self._signature: str | None = None
        self._kept = lru_cache(maxsize=_KEPT_LINES)(self._terms)

    @property
    def mode(self) -> SplitModeName:
        return self._mode

    @property
    def bigrams(self) -> bool:
        return self._bigrams

    @property
    def signature(self) -> str:
        if self._signature is None:
            self._signature = (
                f"sudachi/sudachipy-{_version('sudachipy')}"
                f"/core-{_version('sudachidict-core')}"
                f"/mode-{self._mode}/bigrams-{int(self._bigrams)}/rules-{RULES_VERSION}"
            )
        return self._signature

    def tokenize(self, text: str) -> list[str]:
        """Index terms for one text; the same text always gives the same terms (a short
        text's are kept, so reading it again costs nothing)."""
        if len(text) <= _KEPT_CHARS:
            return list(self._kept(text))
        return self._tokenize(text, self._sudachi())

    def _terms(self, text: str) -> tuple[str, ...]:
        return tuple(self._tokenize(text, self._sudachi()))

    def words(self, text: str) -> list[tuple[str, str, tuple[str, ...]]]:
        """Sudachi's words of a short text: surface, normalised form and part of speech."""
        tokenizer, out = self._sudachi()
        return [
            (m.surface(), m.normalized_form(), tuple(m.part_of_speech()))
            for m in tokenizer.tokenize(normalize(text)[:_MAX_PIECE_CHARS], out=out)
        ]

    def synonym_groups(self, text: str) -> list[tuple[str, tuple[int, ...]]]:
        """Sudachi's words of a short text with the synonym groups the dictionary puts each
        in (国保 and 国民健康保険 share one; 年休 and 年末年始 do not)."""
        tokenizer, out = self._sudachi()
        return [
            (m.surface(), tuple(m.synonym_group_ids()))
            for m in tokenizer.tokenize(normalize(text)[:_MAX_PIECE_CHARS], out=out)
        ]

    def synonyms(self, groups: Sequence[int]) -> list[str]:
        """The words of the dictionary's synonym groups ``groups`` (印鑑 of はんこ's group;
        国民健康保険 of 国保's), each once, sorted."""
        table = _synonym_table()
        return sorted({word for group in groups for word in table.get(group, ())})

    def _sudachi(self) -> tuple[Any, Any]:
        """This thread's Sudachi tokenizer and reusable morpheme list."""
        state: tuple[Any, Any] | None = getattr(self._local, "state", None)
        if state is None:
            tokenizer = _get_dictionary().tokenizer(mode=self._mode)
            state = (tokenizer, tokenizer.tokenize(""))
            self._local.state = state
        return state

    def _tokenize(self, text: str, sudachi: tuple[Any, Any]) -> list[str]:
        text = normalize(text)
        # A middle dot always separates words, but Sudachi glues it to short words that
        # follow it ("・課長" gave 課 + 長); a space keeps the offsets and splits cleanly.
        tokens = self._words(text.replace("・", " "), sudachi)
        if self._bigrams:
            tokens.extend(cjk_bigrams(text))
        return tokens

    def _words(self, text: str, sudachi: tuple[Any, Any]) -> list[str]:
        runs = [(m.start(), m.end(), m.group()) for m in _RUN_RE.finditer(text)]
        mask = bytearray(len(text))
        for start, stop, _ in runs:
            mask[start:stop] = b"\x01" * (stop - start)
        tokens: list[str] = []
        next_run = 0
        tokenizer, out = sudachi
        for offset, piece in _pieces(text):
            after_te = False
            for morpheme in tokenizer.tokenize(piece, out=out):
                begin: int = morpheme.begin() + offset
                while next_run < len(runs) and runs[next_run][0] <= begin:
                    tokens.extend(_id_tokens(runs[next_run][2]))
                    next_run += 1
                flags = _flags_for(morpheme.part_of_speech_id(), morpheme)
                previous_te, after_te = after_te, False
                if flags & _DROP:
                    after_te = bool(flags & _CONJUNCTIVE) and morpheme.surface() in _TE_FORMS
                    continue
                if previous_te and flags & _NON_INDEPENDENT:
                    continue  # auxiliary use: 〜ている, 〜てある, 〜てください ...
                end: int = morpheme.end() + offset
                if runs and mask.find(1, begin, end) != -1 and morpheme.surface().isascii():
                    continue  # covered by an ASCII run
                form: str = morpheme.normalized_form()
                if flags & _SYMBOL and not _is_written_symbol(form):
                    continue
                tokens.extend(_form_tokens(form))
        for run in runs[next_run:]:
            tokens.extend(_id_tokens(run[2]))
        return tokens


def from_settings(options: TokenizerSettings) -> SudachiTokenizer:
    """The ``sudachi`` entry point of ``shirabe.tokenizers``."""
    return SudachiTokenizer(mode=options.sudachi_mode, bigrams=options.bigrams)
