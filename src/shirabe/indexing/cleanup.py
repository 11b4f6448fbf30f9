"""PDF pages whose text came out broken, rewritten by a chat model into clean Markdown for search.

A page is broken when its text was read by OCR, when it carries a share of noise characters
that stayed under the loader's garbage threshold, or when its figures sit glued between words
(table columns or numbered items read across: 「0.30パラクロルフェノール」). The model's rewrite is
indexed beside the page's passages, for BM25 and as one more vector, so a question finds the
page by the words it meant; every text shown, quoted or cited stays the document's own. A
rewrite that brings words the page does not have (a 1.5B model adds and translates) or drops
most of it is not used. Off by default (``SHIRABE_INGEST__CLEAN_PDF_PAGES``); each rewrite is cached
by the page's text, the prompt and the model, so a stopped ingest resumes.
"""

from __future__ import annotations

import logging
import re
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from shirabe.errors import GeneratorError
from shirabe.indexing.enrich import EnrichmentCache, writer_signature, written_key
from shirabe.llm.protocol import ChatModel, Message
from shirabe.loaders.pdf.ocr import ocr_pages
from shirabe.loaders.pdf.quality import looks_garbled, text_quality
from shirabe.records import BrokenPage, Chunk, Document

log = logging.getLogger(__name__)

VERSION = "1"
"""Changes with the prompt or the checks: pages are rewritten again."""
INDEXING = "2"
"""Changes with what counts as broken or how a rewrite is indexed: files are indexed again
(their rewrites come from the cache)."""
SYSTEM = "あなたはPDFから取り出した文字列を読みやすく整える担当者です。"
PROMPT = "\n".join(
    [
        "次はPDFの1ページから機械的に取り出した文字列です。表の列や箇条書きの順序が崩れ、"
        "語と数字がくっついていることがあります。",
        "書かれている語と数字だけを使い、正しい順序のMarkdownに直してください。"
        "表はMarkdownの表にし、1行に1項目とその値を書いてください。",
        "要約・翻訳・説明・追加はしないでください。直した本文だけを出力してください。",
        "",
        "例:",
        "文字列: 1 りんご 100 1202 みかん 80 90",
        "直した本文:",
        "| 1 | りんご | 100 | 120 |",
        "| 2 | みかん | 80 | 90 |",
        "",
        "文字列: {text}",
        "直した本文:",
    ]
)
MAX_PAGE_CHARS = 2000
"""Longer pages are not rewritten: a small model's rewrite of them is slow and loses parts."""
NOISY_RATIO = 0.02
"""A share of noise characters from which a readable page counts as broken."""
MIN_PRECISION = 0.85
"""The least share of the rewrite's character pairs that must occur in the page."""
MIN_RECALL = 0.6
"""The least share of the page's character pairs the rewrite must keep."""
_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.MULTILINE)
_MARKUP = re.compile(r"[\s|#*`>_~:：\-－—・]+")


def broken_pages(document: Document, max_chars: int = MAX_PAGE_CHARS) -> list[BrokenPage]:
    """The pages of a PDF ``document`` whose text reads as broken, up to ``max_chars`` long."""
    if not document.path.lower().endswith(".pdf"):
        return []
    by_ocr = ocr_pages(document.warnings)
    found: list[BrokenPage] = []
    for part in document.parts:
        number = part.locator.get("page")
        if not isinstance(number, int) or not part.text.strip() or len(part.text) > max_chars:
            continue
        if number in by_ocr:
            reason = "read by OCR"
        elif text_quality(part.text).ratio >= NOISY_RATIO:
            reason = "noise characters"
        elif looks_garbled(part.text):
            reason = "figures glued to words"
        else:
            continue
        found.append(BrokenPage(document.path, number, part.text, reason))
    return found


def _pairs(text: str) -> set[str]:
    """The text's character pairs, without spaces and Markdown marks, width folded."""
    flat = _MARKUP.sub("", unicodedata.normalize("NFKC", text)).lower()
    return {flat[i : i + 2] for i in range(len(flat) - 1)}


def faithful(page: str, rewrite: str) -> bool:
    """Whether ``rewrite`` is made of the page's own words (:data:`MIN_PRECISION`) and keeps
    most of them (:data:`MIN_RECALL`), measured on character pairs."""
    made, given = _pairs(rewrite), _pairs(page)
    if not made or not given:
        return False
    shared = len(made & given)
    return shared >= MIN_PRECISION * len(made) and shared >= MIN_RECALL * len(given)


def shares(chunks: Sequence[Chunk], rewrites: Mapping[int, str]) -> list[str]:
    """Each chunk's share of its page's rewrite (``rewrites``: page number → text), "" for a
    chunk on a page without one. A page of one passage gets all of it; on a page of several,
    each line of the rewrite goes to the passage it shares the most character pairs with, so a
    passage is not found by the words of another part of its page."""
    out = [""] * len(chunks)
    by_page: dict[int, list[int]] = {}
    for i, chunk in enumerate(chunks):
        page = chunk.locator.get("page")
        if isinstance(page, int) and page in rewrites and not chunk.is_summary:
            by_page.setdefault(page, []).append(i)
    for page, members in by_page.items():
        if len(members) == 1:
            out[members[0]] = rewrites[page]
            continue
        own = [_pairs(chunks[i].text) for i in members]
        lines: dict[int, list[str]] = {}
        for line in rewrites[page].splitlines():
            pairs = _pairs(line)
            best = max(range(len(members)), key=lambda j: len(pairs & own[j]))
            if pairs & own[best]:
                lines.setdefault(members[best], []).append(line)
        for i, kept in lines.items():
            out[i] = "\n".join(kept)
    return out


def tidy(reply: str) -> str:
    """The reply without code fences and surrounding blank lines."""
    return _FENCE.sub("", reply).strip()


class PageCleaner:
    """Rewrites broken PDF pages (or finds them in the cache); "" marks a rewrite not used."""

    def __init__(
        self,
        model: ChatModel,
        cache: EnrichmentCache,
        origin: str = "",
        max_chars: int = MAX_PAGE_CHARS,
    ) -> None:
        """``origin`` says where the model is (a server's URL, a file's path)."""
        self._model, self._cache, self._origin = model, cache, origin
        self.max_chars = max_chars
        self.failed = 0
        """Pages left as they are because the model failed (not cached: asked again)."""

    @property
    def index_signature(self) -> str:
        """What an index built with these rewrites depends on: the rewrites, which pages are
        rewritten and how a rewrite is indexed."""
        return f"{self.signature}:{INDEXING}"

    @property
    def signature(self) -> str:
        """What a rewrite depends on: prompt, checks, model (part of its cache key)."""
        recipe = f"{VERSION}\n{SYSTEM}\n{PROMPT}\n{MIN_PRECISION}\n{MIN_RECALL}\n{self.max_chars}"
        return writer_signature("pages", recipe, self._model.name, self._origin)

    @property
    def model(self) -> str:
        return self._model.name

    def key(self, page: BrokenPage) -> str:
        return written_key(self.signature, page.text)

    def pages(self, document: Document) -> list[BrokenPage]:
        return broken_pages(document, self.max_chars)

    def missing(self, pages: Iterable[BrokenPage]) -> list[BrokenPage]:
        """The pages not rewritten yet."""
        pages = list(pages)
        found = self._cache.get(self.key(p) for p in pages)
        return [p for p in pages if self.key(p) not in found]

    def rewrites(self, document: Document) -> dict[int, str]:
        """The used rewrites of the document's broken pages, by page number."""
        pages = self.pages(document)
        found = self._cache.get(self.key(p) for p in pages)
        out: dict[int, str] = {}
        for page in pages:
            text = found.get(self.key(page))
            if text is None:
                try:
                    text = self.write(page)
                except GeneratorError as exc:  # indexed as it is; the next ingest asks again
                    log.warning("page %s of %s not rewritten: %s", page.number, document.path, exc)
                    self.failed += 1
                    continue
            if text:
                out[page.number] = text
        return out

    def write(self, page: BrokenPage) -> str:
        """Ask the model for one page; keep the rewrite ("" when it fails the check, or when
        the page is too long for the model's context: not asked)."""
        started = time.perf_counter()
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": PROMPT.format(text=page.text)},
        ]
        budget = max(256, self._model.count_tokens(page.text) * 3 // 2)
        window = self._model.context_window
        prompt = self._model.count_tokens(SYSTEM + PROMPT.format(text=page.text)) + 32
        if window is not None and prompt + budget > window:
            log.info("page %s not rewritten: too long for the model's context", page.number)
            return ""
        rewrite = tidy(self._model.complete(messages, max_tokens=budget))
        if not faithful(page.text, rewrite):
            log.info("rewrite of page %s not used: not the page's own words", page.number)
            rewrite = ""
        seconds = time.perf_counter() - started
        self._cache.put(self.key(page), f"pages:{self._model.name}", rewrite, seconds)
        return rewrite

    def mean_seconds(self) -> float | None:
        """How long rewriting one page took with this model, on average, so far."""
        return self._cache.mean_seconds(f"pages:{self._model.name}")

    def close(self) -> None:
        self._cache.close()


__all__ = ["BrokenPage", "PageCleaner", "broken_pages", "faithful", "shares", "tidy"]
