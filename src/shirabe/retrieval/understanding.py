"""Query understanding: other wordings of a question, its keywords, and its parts.

Each step is switched on in the settings (``multi_query``, ``keyword_extraction``,
``decompose``). With a chat model configured the model does the work; without one, rules do
what rules can:

==================  ==========================================  ============================
step                with a chat model                           without
==================  ==========================================  ============================
multi-query         3 paraphrases                               the question without its
                                                                interrogative ending, and
                                                                its keywords alone
keywords            the model's search keywords                 content words and codes
decomposition       a first sub-question whose answer rewrites  questions asked together
                    the question (「A社の＊＊ブランドは…」)      (「…は？また、…は？」) split
                    plus the split of questions asked together  and answered one by one
==================  ==========================================  ============================

Everything that parses text is a pure function, checked with hand-written tables.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from shirabe.errors import GeneratorError
from shirabe.llm.protocol import ChatModel, Message
from shirabe.text.terms import NGRAM_PREFIX, is_code
from shirabe.tokenizers.protocol import Tokenizer

logger = logging.getLogger(__name__)


class Understanding(Protocol):
    @property
    def name(self) -> str: ...

    def paraphrases(self, question: str, n: int) -> list[str]:
        """Up to ``n`` other wordings of the question (never the question itself)."""
        ...

    def keywords(self, question: str) -> list[str]:
        """Words a document answering the question would contain."""
        ...

    def parts(self, question: str) -> list[str]:
        """The separate questions asked together, or ``[]`` for a single question."""
        ...

    def first_step(self, question: str) -> str | None:
        """A sub-question to answer first, when the question hinges on another fact."""
        ...

    def rewrite(self, question: str, step: str, answer: str) -> str:
        """The question rewritten with the answer to ``step`` filled in."""
        ...


# ------------------------------------------------------------------------------- rules

_QUESTION_END = re.compile(
    r"(?:は|って|とは)?\s*"
    r"(?:何|なに|なん|どこ|どちら|いつ|誰|だれ|どなた|どれ|どの[^\s、。？?]*|どう|どのよう|"
    r"どんな[^\s、。？?]*|いくら|いくつ|何[^\s、。？?]{0,4})?\s*"
    r"(?:です|でしょう|でした)?\s*か?\s*[？?。]*\s*$"
)
_TOPIC = re.compile(r"^(.+?)(?:の|は|について|に関して)")
_PART_SPLIT = re.compile(r"(?<=[？?])\s*|[。]\s*(?=また|それと|あと|さらに)|、\s*(?=また[、,])")
_CONNECTIVE = re.compile(r"^(?:また|それと|あと|さらに|それから)[、,\s]*")
_MIN_PART_CHARS = 3

STOPWORDS = frozenset(
    """
    何 なに なん どこ どちら いつ 誰 だれ どなた どれ どの どう どんな いくら いくつ
    する ある いる なる れる られる せる できる 思う 言う いう 教える 知る 分かる わかる
    ください 下さい こと もの ため よう それ これ あれ その この あの ところ とき
    です ます でしょう 方 的 又 其々 夫々 其の 此の
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def strip_question(question: str) -> str:
    """The question without its interrogative ending: 「AQ-300の容量は何Lですか？」→
    「AQ-300の容量」. Unchanged when nothing would be left."""
    stripped = _QUESTION_END.sub("", question.strip()).rstrip("はがをにのもで、 ")
    return stripped if len(stripped) >= 2 else question.strip()


def content_words(tokens: Sequence[str]) -> list[str]:
    """Tokens worth searching for: codes, and words that are not function words or short
    hiragana; character n-grams and repeats are dropped, order kept."""
    words: list[str] = []
    for token in tokens:
        if token.startswith(NGRAM_PREFIX) or token in STOPWORDS or token in words:
            continue
        if is_code(token):
            words.append(token)
            continue
        if len(token) < 2 and not re.match(r"[\u3400-\u9fff]", token):
            continue  # one kana or letter; a single kanji (「株」「量」) may carry the meaning
        if re.fullmatch(r"[\u3041-\u309f]{1,3}", token):
            continue  # short hiragana: inflections and fillers
        if token.isdigit() and len(token) < 2:
            continue
        words.append(token)
    return words


def split_parts(question: str) -> list[str]:
    """Questions asked together, each made to stand alone; ``[]`` for a single question.

    Parts are split at question marks, and at 「また」「それと」「さらに」 after a sentence or
    comma. A later part with no subject of its own (「価格は？」) borrows the first part's topic
    (「AQ-300の価格は？」).
    """
    pieces = [_CONNECTIVE.sub("", p).strip() for p in _PART_SPLIT.split(question.strip())]
    parts = [p for p in pieces if len(re.sub(r"[？?。、\s]", "", p)) >= _MIN_PART_CHARS]
    if len(parts) < 2:
        return []
    topic_match = _TOPIC.match(parts[0])
    topic = topic_match.group(1) if topic_match else ""
    out = [parts[0]]
    for part in parts[1:]:
        standalone = (
            f"{topic}の{part}" if topic and topic not in part and _needs_topic(part) else part
        )
        out.append(standalone)
    return out


def _needs_topic(part: str) -> bool:
    """A short part that names nothing itself (「価格はいくらですか？」): no code, no 「…の」
    of its own."""
    core = strip_question(part)
    if len(core) > 8 or "の" in core:
        return False
    return not any(is_code(w.lower()) for w in re.findall(r"[0-9A-Za-z\-]+", core))


@dataclass(frozen=True, slots=True)
class RuleUnderstanding:
    """Query understanding without a model."""

    tokenizer: Tokenizer

    @property
    def name(self) -> str:
        return "rules"

    def keywords(self, question: str) -> list[str]:
        return content_words(self.tokenizer.tokenize(strip_question(question)))

    def paraphrases(self, question: str, n: int) -> list[str]:
        candidates = [strip_question(question), " ".join(self.keywords(question))]
        return _distinct(candidates, question, n)

    def parts(self, question: str) -> list[str]:
        return split_parts(question)

    def first_step(self, question: str) -> str | None:
        return None  # finding the hidden fact a question hinges on needs a model

    def rewrite(self, question: str, step: str, answer: str) -> str:
        return question


def _distinct(candidates: Sequence[str], question: str, n: int) -> list[str]:
    seen = {re.sub(r"\s+", "", question)}
    out: list[str] = []
    for text in candidates:
        key = re.sub(r"\s+", "", text)
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(text.strip())
    return out[:n]


# ------------------------------------------------------------------------------- model

SYSTEM = (
    "あなたは社内文書検索のための質問を分析するアシスタントです。"
    "指示された形式だけを出力し、説明や前置きは書かないでください。"
)

PARAPHRASE_PROMPT = """次の質問を、意味を変えずに別の言い方で{n}通りに書き換えてください。
言葉を言い換えたり、語順を変えたりしてください。
1行に1つずつ、番号や記号を付けずに出力してください。

質問: {question}"""

KEYWORD_PROMPT = """次の質問の答えが書かれた文書を全文検索で探します。
文書に出てきそうな検索キーワードを5個以内で、読点「、」で区切って1行で出力してください。

質問: {question}"""

STEP_PROMPT = """次の質問は、先に別の事実を調べないと答えられない質問ですか。
例: 「山田部長の部署の内線番号は？」→ 先に「山田部長はどの部署にいますか」を調べる。
そうであれば、先に調べる質問を1行で出力してください。そうでなければ「なし」とだけ出力してください。

質問: {question}"""

REWRITE_PROMPT = """元の質問に答えるため、先に次の質問を調べ、答えがわかりました。
その答えを使って、元の質問を、それだけで検索できる1つの質問に書き換えてください。
書き換えた質問だけを1行で出力してください。

元の質問: {question}
先に調べた質問: {step}
その答え: {answer}"""

_LIST_MARK = re.compile(r"^\s*(?:[-*・●]|\d{1,2}[.)．、:：]|[（(]\d{1,2}[)）])\s*")
_QUOTES = "「」『』\"'"
_NONE = frozenset({"なし", "無し", "ない", "none", "no", "いいえ"})


def parse_lines(text: str) -> list[str]:
    """A model's list: one item per line, list markers and quotes removed, blanks dropped."""
    items = []
    for line in text.splitlines():
        item = _LIST_MARK.sub("", line).strip().strip(_QUOTES).strip()
        if item:
            items.append(item)
    return items


def parse_keywords(text: str) -> list[str]:
    """Keywords separated by 、 , ／ or spaces on the first non-empty lines."""
    words: list[str] = []
    for line in parse_lines(text)[:3]:
        for raw in re.split(r"[、,，/／\s]+", line):
            word = raw.strip().strip(_QUOTES).strip()
            if word and word not in words and len(word) <= 30:
                words.append(word)
    return words[:8]


def parse_step(text: str, question: str) -> str | None:
    """The sub-question from the model's reply, or None for 「なし」, an echo of the question,
    or anything that is not one short line."""
    lines = parse_lines(text)
    if not lines:
        return None
    step = lines[0]
    if step.rstrip("。.").lower() in _NONE or step.startswith("なし"):
        return None
    if re.sub(r"\s", "", step) == re.sub(r"\s", "", question) or len(step) > 2 * len(question) + 40:
        return None
    return step


_LABEL = re.compile(r"^(?:回答|答え|質問|キーワード|言い換え|出力)\s*\d*\s*[:：]\s*")
_ECHO_WINDOW = 8


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def echoes(item: str, prompt: str, *given: str) -> bool:
    """Whether ``item`` repeats our own prompt: a run of 8 characters from the prompt's own
    words, not from the texts ``given`` to it (the question, an answer). Small models often
    echo their instructions."""
    body = _squeeze(item)
    frame = _squeeze(prompt)
    allowed = [_squeeze(g) for g in given if g.strip()]
    for text in allowed:
        frame = frame.replace(text, "\0")
    size = min(_ECHO_WINDOW, len(body))  # a short item is an echo if it is all prompt
    for i in range(len(body) - size + 1):
        window = body[i : i + size]
        if window in frame and not any(window in text for text in allowed):
            return True
    return False


def related(item: str, question: str) -> bool:
    """Whether ``item`` shares a word with the question: a code, or two characters in a row
    (any script). Paraphrases and steps that share nothing are not about the question."""
    a, b = _squeeze(item).lower(), _squeeze(question).lower()
    pairs = {b[i : i + 2] for i in range(len(b) - 1)} - {"です", "ます", "すか", "のは", "には"}
    return any(item_pair in pairs for item_pair in (a[i : i + 2] for i in range(len(a) - 1)))


def clean_items(
    items: Sequence[str], prompt: str, question: str, *given: str, limit: int | None = None
) -> list[str]:
    """Model output items without labels (「回答:」), prompt echoes, lines unrelated to the
    question or longer than ``limit`` (default: twice the question plus 20)."""
    longest = limit if limit is not None else 2 * len(question) + 20
    out = []
    for item in items:
        text = _LABEL.sub("", item).strip()
        if not text or len(text) > longest:
            continue
        if echoes(text, prompt, question, *given) or not related(text, question):
            continue
        out.append(text)
    return out


@dataclass(slots=True)
class ModelUnderstanding:
    """Query understanding by a chat model; rules take over whenever the model fails."""

    chat: ChatModel
    rules: RuleUnderstanding
    max_tokens: int = 128

    @property
    def name(self) -> str:
        return self.chat.name

    def _ask(self, prompt: str) -> str | None:
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
        ]
        try:
            return self.chat.complete(messages, max_tokens=self.max_tokens)
        except GeneratorError as exc:
            logger.warning("query understanding by %s failed: %s", self.chat.name, exc)
            return None

    def paraphrases(self, question: str, n: int) -> list[str]:
        prompt = PARAPHRASE_PROMPT.format(n=n, question=question)
        reply = self._ask(prompt)
        if reply is None:
            return self.rules.paraphrases(question, n)
        items = clean_items(parse_lines(reply), SYSTEM + prompt, question)
        return _distinct(items, question, n)

    def keywords(self, question: str) -> list[str]:
        prompt = KEYWORD_PROMPT.format(question=question)
        reply = self._ask(prompt)
        if reply is None:
            return self.rules.keywords(question)
        words = [_LABEL.sub("", w).strip() for w in parse_keywords(reply)]
        # keywords need not share a word with the question: synonyms are the point
        return [
            w
            for w in words
            if w
            and len(w) <= 20
            and _squeeze(w) != _squeeze(question)
            and not echoes(w, SYSTEM + prompt, question)
        ]

    def parts(self, question: str) -> list[str]:
        return self.rules.parts(question)

    def first_step(self, question: str) -> str | None:
        prompt = STEP_PROMPT.format(question=question)
        reply = self._ask(prompt)
        step = None if reply is None else parse_step(reply, question)
        if step is None or not clean_items([step], SYSTEM + prompt, question):
            return None
        return step

    def rewrite(self, question: str, step: str, answer: str) -> str:
        prompt = REWRITE_PROMPT.format(question=question, step=step, answer=answer)
        reply = self._ask(prompt)
        lines = clean_items(
            parse_lines(reply or ""),
            SYSTEM + prompt,
            question,
            step,
            answer,
            limit=2 * len(question) + len(answer) + 20,
        )
        return lines[0] if lines else question
