"""Follow-up questions made standalone by rules, before retrieval.

「それは何時に復旧しましたか？」 after 「INC-2024-0004はどんな障害ですか？」 is searched as
「INC-2024-0004は何時に復旧しましたか？」. The rules, in order:

1. A question that needs nothing from before is kept as it is: it names its own subject and
   has no demonstrative (それ, その, こちら, 同じ …) and is not a fragment.
2. A fragment naming another code (「INC-2024-0006のほうは？」「では、AQ-250は？」) asks the
   previous question again about that code.
3. A demonstrative (それ / これ / あれ / こちら / その / この / 同じ) is replaced by the
   previous question's subject: its codes, else the words before its first は.
4. 「その人」「この方」「彼」 stand for the person the previous question named (試作 三郎さん),
   or, when it asked who (誰), the one person its answer names (当番: 見本 太郎).
5. A fragment (「重さは？」「部長の場合は？」) or a question with no subject of its own
   (「何時に復旧しましたか？」) is asked with the previous subject in front
   (「AQ-300の重さは？」), or, when it names a condition (〜の場合, 〜なら, 〜では), as the
   previous question under that condition; a condition that names another value of the kind
   the previous question named (部長の場合は？ after 課長が出張で…) takes its place
   (部長が出張で…).

The previous question is the standalone form of the turn before, so a third turn carries the
subject of the first.

With a chat model configured, a question the rules find needs the conversation is rewritten
by the model (:func:`rewritten`), from the last turns; the rules' form is kept when the model
fails, drops an identifier or a word the rules carried (INC-2024-0004, 宿泊費), or answers with
anything but one short question. (A small model left to itself rewrote worse than the rules:
it dropped the subject or put another one in its place.)
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence

from shirabe.answering import tables
from shirabe.answering.mentions import char_pairs
from shirabe.answering.refusal import REFUSAL_TEXT
from shirabe.errors import GeneratorError
from shirabe.llm.protocol import ChatModel, Message
from shirabe.records import Turn

logger = logging.getLogger(__name__)

CODE = re.compile(r"(?<![0-9A-Za-z])[A-Za-z][A-Za-z0-9]*(?:[-_./][A-Za-z0-9]+)+")
"""A code a question or an answer names (INC-2024-0004, AQ-300, ERR-107)."""
_OPENERS = re.compile(r"^(?:では|じゃあ|それでは|それじゃ|なら|あと|また|ちなみに|で)[、,\s]*")
_DEMONSTRATIVE = re.compile(
    r"(?:それ|これ|あれ|こちら|そちら|そこ|ここ)(?=[はがをにでのもと、])|"
    r"(?:その|この|あの|同じ|上記の|前述の)"
)
_CONDITION = re.compile(r"(.+?(?:の場合|のとき|の時|なら|では|だと))(?:は|って)?[?？。]?$")
_FRAGMENT = re.compile(r"^(.{1,20}?)(?:のほう|の方)?(?:は|って|も)[?？。]?$")
_TOPIC = re.compile(r"[はがをも]|について|って")
_ENDING = re.compile(r"[?？。]+$")
_PERSON_REFERENCE = re.compile(
    r"(?:その|この|あの)(?:人|方|かた)(?![\u3400-\u9fff])|彼女?(?=[はがをにのも])"
)
_NAME = re.compile(
    r"(?<![\u3400-\u9fff々])[\u3400-\u9fff々]{1,3} [\u3400-\u9fff々]{1,3}(?![\u3400-\u9fff々])"
)
"""A family and a given name written apart (見本 太郎), as ledgers and rosters write them."""
_WHO = re.compile(r"誰|だれ|どなた|どの人")


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def carried(question: str, history: Sequence[Turn]) -> str | None:
    """The question with the conversation's subject in front (「AQ-300について、発売日は
    いつですか？」), for a question that found nothing on its own; None without a subject."""
    if not history:
        return None
    previous = _standalone(history[-1].question, history[:-1])
    about = _about(previous, history[-1].answer)
    if not about or about in question:
        return None
    return f"{about}について、{_plain(question)}"


def carried_in_vain(
    reason: str | None, question: str, asked: str, history: Sequence[Turn]
) -> list[str]:
    """What the conversation carried into ``asked`` (the standalone form of ``question``) that
    its refusal names missing (「AQ-300」についての記載が見つかりません for AQ-300の有給休暇の
    申請方法は？ after a question about AQ-300): a sign that the question is about something
    new, to be asked as written. Empty when asking it as written cannot be right: it refers
    back (それ, その, では…, 部長の場合は), names no subject of its own (重さは？), or the
    turn before was refused itself (what it carried is missing from the documents, not from
    this topic)."""
    if not reason or asked == question or not history:
        return []
    text = _plain(question)
    if history[-1].answer.startswith(REFUSAL_TEXT):
        return []
    if _OPENERS.match(text) or _DEMONSTRATIVE.search(text) or _CONDITION.match(text):
        return []
    if len(subject(text)) < OWN_SUBJECT:
        return []
    own, whole = text.lower(), _plain(asked).lower()
    quoted = re.findall(r"「([^「」]+)」", reason)
    return [q for q in quoted if q.lower() in whole and q.lower() not in own]


OWN_SUBJECT = 4
"""Characters of a subject a question names for itself (有給休暇の申請方法は？), not one that
asks after the subject before it (重さは？, 値段は？)."""


def subject(question: str) -> str:
    """What a question is about: its codes (INC-2024-0004) or the people it names written
    apart (試作 三郎 of 試作 三郎さんの部署はどこですか), else the words before its topic
    (は, について, って; 有給休暇の申請方法は → 有給休暇の申請方法), which may hold a clause
    of its own (本人が結婚するときの慶弔休暇は), else, or for a clause made a noun by の
    (添付が必須になるのは), the words before its first が."""
    text = _OPENERS.sub("", _plain(question))
    codes = CODE.findall(text) or _NAME.findall(text)  # AQ-300 of AQ-300の高さは, 試作 三郎
    if codes:
        return "・".join(dict.fromkeys(codes))
    topic = re.match(r"^(.+?)(?:について|(?<![でに])は|って)", text)
    before = re.match(r"^(.+?)が", text)
    if topic and (before is None or not topic.group(1).endswith("の")):
        return topic.group(1)
    return before.group(1) if before else ""  # 領収書の添付 of 領収書の添付が必須になるのは


def _about(previous: str, answer: str) -> str:
    """What the next turn is about: the code the previous answer was about, when the previous
    question named none and the answer one (INC-2024-0004 for メールが止まった障害は), or when
    the previous question asked for a code (品番, 管理番号) and the answer gave it; else the
    subject of the previous question."""
    text = _plain(answer)
    answered: list[str] = [c for c in dict.fromkeys(CODE.findall(text)) if c not in previous]
    if not CODE.search(previous):
        return answered[0] if len(answered) == 1 else subject(previous)
    if _ASKS_CODE.search(previous):
        beside = [c for c in answered if (lead := _lead(text, c)) and lead in previous]
        for found in (answered, beside):
            if len(found) == 1:
                return found[0]
    return subject(previous)


_ASKS_CODE = re.compile(r"(?:品番|型番|型式|番号|コード|ID)(?:は|を|って|が|[?？]|$)|何番")
"""A question asking for a code (集じんフィルターの品番は？, …の管理番号は？)."""


def _lead(text: str, code: str) -> str | None:
    """What ``code`` is written as the code of in ``text`` (集じんフィルター of 集じんフィルター
    AQF-30H、脱臭フィルター AQF-30D; 管理番号 of 管理番号: INC-2024-0006), if anything."""
    parts = [p for p in _LEADS.split(text[: text.index(code)]) if p]
    return parts[-1] if parts else None


_LEADS = re.compile(r"[、,，（()）:：/／\s]+")
"""What parts the thing a code is of (集じんフィルター) from the code before it."""


def standalone(question: str, history: Sequence[Turn]) -> str:
    """The question as it would be asked with no conversation before it (``question`` itself
    when it needs nothing from before)."""
    made = _standalone(question, history)
    return question if made == _plain(question) else made


def _standalone(question: str, history: Sequence[Turn]) -> str:
    text = _plain(question)
    if not history:
        return text
    previous = _plain(history[-1].question)
    if len(history) > 1:
        previous = _standalone(previous, history[:-1])
    about = _about(previous, history[-1].answer)
    body = _OPENERS.sub("", text)
    fragment = _FRAGMENT.match(body)
    codes = CODE.findall(body)
    old_codes = CODE.findall(previous)
    if fragment and codes and old_codes and len(body) <= 30:
        swapped = previous
        for old, new in zip(old_codes, codes, strict=False):
            swapped = swapped.replace(old, new)
        return swapped
    person = _PERSON_REFERENCE.search(body)
    named = _person(previous, history) if person else None
    if person and named:
        return f"{body[: person.start()]}{named}{body[person.end() :]}"
    if _DEMONSTRATIVE.search(body) and about:
        return _DEMONSTRATIVE.sub(
            lambda m: _replacement(m.group(), about, body[m.end() :]), body, count=1
        )
    if _needs_context(body) and previous:
        condition = _CONDITION.match(body)
        if condition:
            return (
                _in_place(condition.group(1), previous)
                or _sibling(condition.group(1), previous, history[-1].answer)
                or f"{condition.group(1)}、{previous}"
            )
        if about:
            joint = "の" if "は" in body else "は"  # AQ-300の重さは？ / INC-…は何時に…
            return f"{about}{joint}{_ENDING.sub('', body)}{_question_end(body)}"
        return f"{previous} {body}"
    return text


def _person(previous: str, history: Sequence[Turn]) -> str | None:
    """The one person a reference back (その人) stands for: named by the previous question,
    else, when that asked who, by its answer; None when there is none or more than one."""
    names = list(dict.fromkeys(_NAME.findall(previous)))
    if not names and _asked_who(history):
        names = list(dict.fromkeys(_NAME.findall(_plain(history[-1].answer))))
    return names[0] if len(names) == 1 else None


def _asked_who(history: Sequence[Turn]) -> bool:
    """Whether the last turn asked who: in its own words, or as a fragment (15日は？) asking
    again what a turn before it asked (8月14日の当番は誰ですか？)."""
    for turn in reversed(history):
        text = _OPENERS.sub("", _plain(turn.question))
        if _WHO.search(text):
            return True
        if not _FRAGMENT.match(text):
            return False
    return False


_OWN_WORD = re.compile(r"(?!何)[\u3400-\u9fff々]{2,}|[\u30a1-\u30fa\u30fc]{2,}")
"""A word of two or more kanji (not 何時, 何件) or katakana."""
_WHEN = re.compile(r"以前|当時|現在|今|今回|前回|最初|最後|昔|従来|元々|もともと")
"""Topics that say when (以前は), not what of the previous subject."""
_CASE = re.compile(r"^(.+?(?:とき|時|場合))の(.+)$")
_CONDITION_WORDS = re.compile(r"(?:の場合|のとき|の時|なら|では|だと)$")
_NOUN = re.compile(r"[\u3400-\u9fff々\u30a1-\u30fa\u30fc]{2,}")
"""A run of two or more kanji or katakana."""


def _in_place(condition: str, previous: str) -> str | None:
    """The previous question under the condition asked instead of its own, when the two
    are cases of the same thing (子の結婚の場合 for 本人が結婚するときの慶弔休暇は何日ですか:
    子の結婚の場合の慶弔休暇は何日ですか); None when the previous question names no case or
    the condition shares no word with it (部長の場合 is added to the question instead)."""
    case = _CASE.match(previous)
    core = _CONDITION_WORDS.sub("", condition)
    if case is None or not core:
        return None
    shared = char_pairs(core) & char_pairs(case.group(1))
    if not any(_NOUN.fullmatch(pair) for pair in shared):  # 結婚, not the kana of するとき
        return None
    return f"{core}の場合の{case.group(2)}"


def _sibling(condition: str, previous: str, answer: str) -> str | None:
    """The previous question with the value the condition names in place of the one of its
    kind it named (部長の場合 after 課長が出張で泊まるホテル代は…: 部長が出張で…): a value
    is of the kind of another when the previous answer lists both as cases (役員: … / 部長:
    … / 課長: …), or, when it lists neither, when both are nouns ending in the same character
    (部長 and 課長, 東京支店 and 大阪支店). None when the previous question names no such
    value, or names the condition's already."""
    core = _CONDITION_WORDS.sub("", condition).strip()
    if len(core) < 2 or core in previous or not _NOUN.fullmatch(core):
        return None
    pieces = re.split(r"\n| / ", _plain(answer))  # 役員: … / 部長: …, a case a line
    keys = {k for piece in pieces if (k := tables.label(piece))}
    if core in keys:
        named = [k for k in keys if k != core and k in previous]
    else:
        named = [n for n in _NOUN.findall(previous) if n != core and n[-1] == core[-1]]
    if len(set(named)) != 1:
        return None
    return previous.replace(named[0], core, 1)


def _replacement(word: str, about: str, after: str) -> str:
    """What a demonstrative stands for: the previous subject, and for その / この the
    subject as far as the noun that follows (その種別 of 社員番号G90012のアカウント種別は… is
    社員番号G90012のアカウント種別, その領収書 of 領収書の添付の原本 is 領収書): the noun
    names a part of the subject already."""
    if word in {"その", "この", "あの", "同じ", "上記の", "前述の"}:
        noun = _NOUN.match(after)
        if noun and noun.group() in about:
            return about[: about.index(noun.group())]
        return f"{about}の"
    return about


def _needs_context(body: str) -> bool:
    """A fragment (重さは？, 部長の場合は？), a question without a subject of its own
    (何時に復旧しましたか？: no は / が / を, no code), or one that asks after the subject
    before it with a word or two (発売日はいつですか？: a topic shorter than
    :data:`OWN_SUBJECT` and no word after it but the question's)."""
    coded = CODE.search(body) is not None
    if _FRAGMENT.match(body) or not (_TOPIC.search(body) or coded):
        return True
    topic = re.match(r"^(.+?)(?<![でに])は(.*)$", body)
    if topic is None or coded or len(topic.group(1)) >= OWN_SUBJECT:
        return False
    if _WHEN.fullmatch(topic.group(1)):
        return False  # 以前はいくつでしたか: a time, not an attribute of the subject before
    return not _OWN_WORD.search(topic.group(2))  # 販売店はデモ機を… names its own thing


def _question_end(body: str) -> str:
    return "" if _ENDING.search(body) is None else "？"


REWRITE_SYSTEM = (
    "あなたは社内文書検索のために、会話の続きの質問を書き換えるアシスタントです。"
    "指示された形式だけを出力し、説明や前置きは書かないでください。"
)
REWRITE_PROMPT = "\n".join(
    [
        "次の会話の最後の質問を、前の会話を読まなくても意味が通じる1つの質問に書き換えてください。",
        "「それ」「その」「こちら」などの指示語や省略された主語は、"
        "会話に出てきた製品名・番号・制度名などに置き換えてください。",
        "質問の内容は変えずに、書き換えた質問だけを1行で出力してください。",
        "",
        "{turns}",
        "最後の質問: {question}",
    ]
)
REWRITE_TURNS = 3
"""Earlier turns shown to the model (the latest ones)."""
REWRITE_ANSWER_CHARS = 200
"""Characters of each earlier answer shown to the model."""
REWRITE_MAX_TOKENS = 96
_LABEL = re.compile(r"^(?:書き換えた質問|最後の質問|質問|出力|回答)\s*[:：]\s*")
_QUOTES = "「」『』\"'"
_ANSWERED = re.compile(r"\[\d+\]|。(?=.)")
"""A citation, or a sentence followed by another: a reply that answers instead of asking."""


def rewrite_prompt(question: str, history: Sequence[Turn]) -> str:
    """The user message asking a model for the standalone form of ``question``."""
    lines: list[str] = []
    for turn in history[-REWRITE_TURNS:]:
        answer = _plain(turn.answer).replace("\n", " ")
        if len(answer) > REWRITE_ANSWER_CHARS:
            answer = answer[:REWRITE_ANSWER_CHARS] + "…"
        lines.append(f"質問: {_plain(turn.question)}")
        if answer:
            lines.append(f"回答: {answer}")
    return REWRITE_PROMPT.format(turns="\n".join(lines), question=_plain(question))


def parse_rewrite(reply: str, question: str, ruled: str) -> str | None:
    """The model's standalone question from its reply, or None when it is not one usable
    question: empty, long, an answer (with a citation, or several sentences), missing a code
    or word the rules carried, or sharing no word with the question."""
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    if not lines:
        return None
    text = _LABEL.sub("", lines[0]).strip().strip(_QUOTES).strip()
    if not text or len(text) > 2 * len(ruled) + 40 or "\n" in text:
        return None
    if _ANSWERED.search(text):  # an answer (…です[1]。その復旧は…), not the question
        return None
    carried_codes = set(CODE.findall(ruled)) - set(CODE.findall(_plain(question)))
    if not carried_codes <= set(CODE.findall(text)):
        return None
    if any(word not in _plain(text) for word in carried_words(ruled, question)):
        return None
    if not _shares_pair(_plain(text), _plain(question)):
        return None
    return text


_WORD = re.compile(r"[\u3005\u4e00-\u9fffァ-ヶー]{2,}|[0-9A-Za-z][0-9A-Za-z_./-]*[0-9A-Za-z]")


def carried_words(ruled: str, question: str) -> list[str]:
    """The words the rules brought into a follow-up from the turns before: runs of kanji and
    katakana, and codes, of the rules' form that the question does not have (東京の場合は？ made
    東京の場合、出張の宿泊費の上限はいくらですか → 出張, 宿泊費, 上限)."""
    asked = _plain(question)
    return [w for w in dict.fromkeys(_WORD.findall(_plain(ruled))) if w not in asked]


def rewritten(chat: ChatModel, question: str, history: Sequence[Turn], ruled: str) -> str:
    """The standalone form of a follow-up written by ``chat`` from the last turns; ``ruled``
    (the rules' form) when the model fails or its reply is not usable."""
    messages: list[Message] = [
        {"role": "system", "content": REWRITE_SYSTEM},
        {"role": "user", "content": rewrite_prompt(question, history)},
    ]
    try:
        reply = chat.complete(messages, max_tokens=REWRITE_MAX_TOKENS)
    except GeneratorError as exc:
        logger.warning("rewriting a follow-up with %s failed: %s", chat.name, exc)
        return ruled
    made = parse_rewrite(reply, question, ruled)
    if made is None:
        logger.info("%s rewrote %r as %r; kept the rules' %r", chat.name, question, reply, ruled)
        return ruled
    return made


def _shares_pair(a: str, b: str) -> bool:
    pairs = {b[i : i + 2] for i in range(len(b) - 1)} - {"です", "ます", "すか", "のは", "には"}
    return any(a[i : i + 2] in pairs for i in range(len(a) - 1))
