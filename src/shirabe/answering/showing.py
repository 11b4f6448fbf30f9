"""Which sentences an extractive answer shows, and in what order: a table row with its column
headers, the cases a sentence introduces, the sentence that says what an echo of the question
leaves out, for 誰 / どこ a sentence that names someone or somewhere first, and for いつ the
field that dates the asked event. Pure functions over candidate sentences."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from shirabe.answering import asking, fit, mentions, tables
from shirabe.answering.context import REFERS, Candidate
from shirabe.chunking.markdown import CODES_HEAD, ITEMS_LINE
from shirabe.records import Chunk, Citation, Hit
from shirabe.retrieval.query import Query
from shirabe.text.terms import is_code

_INTRODUCES = re.compile(r"(?:次|以下|下記)の(?:とおり|通り)|次のいずれか|(?:次|下)の表|[:：]\s*$")


def cases(intro: Candidate, ranked: Sequence[Candidate]) -> list[Candidate]:
    """The items an introducing sentence (「上限は次のとおりとする」) is followed by in its
    passage: the list items, table rows or short lines right after it."""
    if not _INTRODUCES.search(intro.text):
        return []
    following = sorted(
        (c for c in ranked if c.hit_index == intro.hit_index and c.order > intro.order),
        key=lambda c: c.order,
    )
    cases: list[Candidate] = []
    for c in following:
        if c.order != intro.order + 1 + len(cases) or not tables.is_item(c.text):
            break
        cases.append(c)
    return cases


def names_key(item: Candidate, question: str) -> bool:
    """Whether the question names a list item or row by its key (課長 of 課長が出張で…, 質量
    of …いくらですか？ 質量は？)."""
    key = tables.label(item.text)
    return bool(key) and unicodedata.normalize("NFKC", key or "") in unicodedata.normalize(
        "NFKC", question
    )


def named_case(cases: Sequence[Candidate], question: str) -> Candidate | None:
    """The one case the question names by its key (課長 of 課長が出張で泊まるホテル代は…,
    among 役員 / 部長 / 課長 / 一般社員), or None when it names none or several."""
    named = [c for c in cases if names_key(c, question)]
    return named[0] if len(named) == 1 else None


_WHOLE = re.compile(r"(?:を|について)(?:教えて|知りたい|見せて)|一覧|(?<!と)(?:は|って)[?？]?$")
"""Questions that ask for a whole thing (仕様を教えてください, 消耗品の一覧, 機能は？), not
for a fact of it (いくら, 何kg) nor what it is (とは)."""


def listing(
    query: Query, hits: Sequence[Hit], ranked: Sequence[Candidate], within: int
) -> list[Candidate]:
    """The rows or items of the table or list that a question asking for a whole thing names
    by its heading (AQ-300の仕様を教えてください: the table under 基本仕様, not the slide line
    製品の仕様・在庫：営業部… that mentions the word), in document order; empty when the
    question asks for a fact of some kind, or no table or list among the first ``within``
    passages has such a heading and names what the question names besides (its codes, the X
    of XのY), in its file name, headings or text. A passage of prose under that heading (仕様:
    別紙をご覧ください) is not the table asked.

    The learned stage was taught on questions asking for one fact: that a table's heading is
    the very thing asked for is a signal it has not seen, so this rule answers from such a
    table even where the stage's probability is low."""
    if not _WHOLE.search(unicodedata.normalize("NFKC", query.text)):
        return []
    nouns = asking.key_nouns(query.words())
    if not nouns or fit.answer_kind(query.text) is not None:
        return []
    asked, named = nouns[-1], [*fit.codes(query.text), *nouns[:-1]]  # XのYを教えて: Y of X
    for i, hit in enumerate(hits[:within]):
        chunk = hit.chunk
        heading = chunk.heading_path[-1] if chunk.heading_path else ""
        if asked not in unicodedata.normalize("NFKC", heading).lower():
            continue
        where = "\n".join([chunk.source, *chunk.heading_path, chunk.text])
        if mentions.missing_terms(named, where):  # 性能 of AQ-250, under AQ-300's heading
            continue
        items = sorted((c for c in ranked if c.hit_index == i), key=lambda c: c.order)
        rows = [c for c in items if tables.is_item(c.text)]
        if len(rows) >= 2 and 2 * len(rows) > len(items):
            return rows
    return []


def span_source(c: Candidate, hits: Sequence[Hit], question: str) -> str | None:
    """The text a short answer may be taken from in a candidate line: the line itself, or,
    for a row of a table with a column per thing (| 価格 | 54,780円 | 43,780円 | under
    AQ-300 and AQ-250), the cell of the one column the question names, with its header;
    None when it names none or several of them (which figure is asked, the row alone does
    not say)."""
    header = tables.table_header(hits[c.hit_index].chunk.text, c.text)
    cells = tables.row_cells(c.text)
    if not header or len(header) != len(cells) or len(cells) < 3:
        return c.text
    plain = unicodedata.normalize("NFKC", question).lower()
    named = [
        i
        for i in range(1, len(header))
        if (core := _PAREN.sub("", unicodedata.normalize("NFKC", header[i])).strip().lower())
        and core in plain
    ]
    if len(named) != 1:
        return None
    return f"{header[named[0]]}: {cells[named[0]]}"


_PAREN: Final = re.compile(r"[（(][^）)]*[）)]")


def introducing(item: Candidate, ranked: Sequence[Candidate]) -> Candidate | None:
    """The sentence that introduces the list ``item`` is a case of (上限は次のとおりとする for
    一般社員: １泊あたり１０，０００円), or None."""
    for c in ranked:
        before = c.hit_index == item.hit_index and c.order < item.order
        if before and any(o.order == item.order for o in cases(c, ranked)):
            return c
    return None


def shown(c: Candidate, hits: Sequence[Hit]) -> str:
    """A chosen sentence as quoted: a table row with its column headers (項目: 値)."""
    header = tables.table_header(hits[c.hit_index].chunk.text, c.text)
    return tables.with_header(c.text, header) if header else tables.clean(c.text)


_TOPIC: Final = re.compile(r"(?<=[\u3400-\u9fff々ァ-ヺー）)」』a-zA-Z0-9])は(?![じずさ])")
"""The particle that names a topic (ハノーファーは, 豊岡市（とよおかし）は): after a word, not in
または or はじめ, nor the は of には / では / とは / ては."""
_TOPIC_BACK: Final = re.compile(r"^(?:同|この|その|これ|それ)[^、。はがを]{0,5}は")
"""A topic that refers back itself (同法は, このグループは), not one named after a word that
refers back (その中でもオランダは)."""
TOPIC_REACH: Final = 3
"""Sentences looked back over for the topic of a sentence that leaves it unsaid."""


def companion(best: Candidate, ranked: Sequence[Candidate]) -> list[Candidate]:
    """The sentence that says what a sentence echoing the question leaves out: the next one
    when it goes on about it (これをテンポという), else the nearest one before that names a
    topic with は, which the sentences after it leave unsaid (ハノーファーは… before
    人口53万人。 and ニーダーザクセン州の州都である。), and not one that refers back itself
    (同法は…), but one named after a word that refers back (その中でもオランダは) does."""
    around = {c.order: c for c in ranked if c.hit_index == best.hit_index}
    after = around.get(best.order + 1)
    if after is not None and REFERS.match(after.text):
        return [after]
    for order in range(best.order - 1, max(best.order - 1 - TOPIC_REACH, -1), -1):
        before = around.get(order)
        if before is not None and _TOPIC.search(before.text) and not _TOPIC_BACK.match(before.text):
            return [before]
    return []


NAMES: Final = {"person": "人名", "place": "地名"}
"""The proper nouns that answer 誰 and どこ."""


def naming_first(query: Query, name: str, holds: list[Candidate]) -> list[Candidate]:
    """When the best sentence names nothing the question does not (生物の自然発生は実験に
    よって証明された」とした。 for …証明したのは誰ですか): no katakana word, proper noun,
    department or role of its own, and is no field the question asks for (承認者: 所属部長),
    the sentences of its passage that name a person (誰) or a place (どこ) the question does
    not name, first (18世紀、イングランドのジョン・ニーダムは…)."""
    best = holds[0]
    key = _FIELD.match(best.text)
    if (key and key.group(1).strip() in query.text) or _ROLE.search(_unasked(query, best.text)):
        return holds  # 承認者: 所属部長, 総務部の窓口で受け付けます: the answer is there

    def new_names(c: Candidate, kinds: tuple[str, ...]) -> bool:
        return any(
            pos[:2] == ("名詞", "固有名詞") and pos[2] in kinds and surface not in query.text
            for surface, _, pos in query.words_of(c.text)
        )

    katakana = [w for w in re.findall(r"[ァ-ヺー・＝]{2,}", best.text) if w not in query.text]
    if katakana or new_names(best, ("人名", "地名", "一般")):
        return holds
    naming = [c for c in holds[1:] if c.hit_index == best.hit_index and new_names(c, (name,))]
    return [*naming, *(c for c in holds if not any(c is n for n in naming))]


def names_someone(query: Query, text: str) -> bool:
    """Whether ``text`` names someone the question does not: a person's or body's proper
    noun, a name in katakana or written apart (ジョン・ニーダム, 例田 次郎), the field the
    question asks for (担当: …), or a department or role of its own (総務部, 所属長), not the
    role the question itself names (異動前の担当者 for 担当していた人は誰)."""
    key = _FIELD.match(text)
    if key and key.group(1).strip() in query.text:
        return True  # 担当: 例田 次郎, asked who is 担当
    if any(name not in query.text for name in _FULL_NAME.findall(text)):
        return True  # a name in katakana, or a family and given name apart
    if _OWN_ROLE.search(_unasked(query, text)):
        return True
    return any(
        pos[:2] == ("名詞", "固有名詞") and surface not in query.text
        for surface, _, pos in query.words_of(text)
    )


_FULL_NAME: Final = re.compile(
    r"[ァ-ヺー][ァ-ヺー・＝]+|"
    r"(?<![\u3400-\u9fff])[\u3400-\u9fff]{1,3}[ 　][\u3400-\u9fff]{1,3}(?![\u3400-\u9fff])"
)
"""A name in katakana (アルマ, ジョン・ニーダム), or a family and given name apart (例田 次郎)."""
_FIELD: Final = re.compile(r"\s*([^:：|]+?)\s*[:：|]")
"""A field (承認者: 所属部長): when the question asks for its key, it names the answer."""
_ROLES: Final = r"部|課|室|係|窓口|センター|長|者|員|担当|事務所|営業所|支店"
_ROLE: Final = re.compile(r"[\u3400-\u9fff々ァ-ヺー]*(?:" + _ROLES + r"|工場)")
"""A department, desk or role (総務部, 受付窓口, 所属長): who or where, without a proper name."""
_OWN_ROLE: Final = re.compile(
    r"[\u3400-\u9fff々ァ-ヺー]+(?:"
    + _ROLES
    + r"|主|人|士|客|家|師|官|王|軍|手|民|族|衆|兵|僧|商|達)"
)
"""A role with a word of its own before its suffix (所属長, not the 者 left of 担当者 when the
question says 担当)."""


def _unasked(query: Query, text: str) -> str:
    """``text`` without the words of the question (what the sentence says of its own)."""
    for word in sorted(set(query.tokens), key=len, reverse=True):
        if not word.startswith("~") and len(word) > 1:
            text = text.replace(word, " ")
    return text


EVENTS: Final = {
    "起きる": "発生",
    "起こる": "発生",
    "発生": "発生",
    "直る": "復旧",
    "復旧": "復旧",
    "始まる": "開始",
    "始める": "開始",
    "開始": "開始",
    "終わる": "終了",
    "終える": "終了",
    "終了": "終了",
    "行う": "実施",
    "実施": "実施",
    "開く": "開催",
    "開催": "開催",
    "決まる": "決定",
    "届く": "到着",
    "着く": "到着",
    "払う": "支払",
    "支払う": "支払",
}
"""An event as a question's verb says it (起きる) and as a record's field names it (発生日時)."""


def dated_first(query: Query, holds: list[Candidate]) -> list[Candidate]:
    """For いつ: the sentences that are a field named for the asked event (発生日時：2024年10月10日
    for …障害はいつ起きましたか), else a field that only dates (日時：2025年9月1日 for 防災訓練は
    いつ行われますか), first; a time written in passing elsewhere (精算期限日（毎月10日）) does
    not date the event asked about."""
    events = {EVENTS[t] for t in query.tokens if t in EVENTS}
    if not events:
        return holds
    keys = [(c, name) for c in holds if (name := field_name(c.text))]
    named = [c for c, key in keys if any(e in key for e in events)]
    dated = named or [c for c, key in keys if _WHEN_FIELD.fullmatch(key)]
    return [*dated, *(c for c in holds if not any(c is d for d in dated))]


_FIELD_NAME: Final = re.compile(r"[\u3400-\u9fff々ァ-ヺー]{1,8}")
"""A field's name (発生日時, 日時), not a sentence or a list's title before a colon."""


def field_name(text: str) -> str | None:
    """The name of the field ``text`` is (発生日時 of 「- 発生日時：2024年…」), if it is one."""
    key = _FIELD.match(text)
    name = key.group(1).strip(" -・") if key else ""
    return name if _FIELD_NAME.fullmatch(name) else None


_WHEN_FIELD: Final = re.compile(r"日時|日程|日付|期日|開催日|実施日|開催日時|実施日時")
"""A field that dates what its section announces (日時：2025年9月1日 of a drill's notice)."""


def is_record(chunk: Chunk) -> bool:
    """A spreadsheet or CSV row (``header: value`` lines), which answers as a whole."""
    return "row" in chunk.locator


def of_records(
    codes: Sequence[str],
    hits: Sequence[Hit],
    candidates: Sequence[Candidate],
    query: Query | None = None,
) -> list[Candidate]:
    """The candidates without the lines of a section's summary (「障害記録（2024年）」の項目
    （8件）: INC-2024-0001 …、INC-2024-0004 …) when the question names codes that a passage
    of their own holds (the INC-2024-0004 section, its row): a summary tells what a section
    holds and how many, not what one of its records says; with ``query``, the fields it asks
    first (:func:`asked_fields_first`)."""
    owned = codes and any(not h.chunk.is_summary and _names(h.chunk, codes) for h in hits)
    kept = [c for c in candidates if not (owned and hits[c.hit_index].chunk.is_summary)]
    return asked_fields_first(query, codes, hits, kept) if query is not None else kept


def asked_fields_first(
    query: Query, codes: Sequence[str], hits: Sequence[Hit], candidates: Sequence[Candidate]
) -> list[Candidate]:
    """When the question names a record by its code and a spreadsheet or CSV row would answer
    with a field the question does not ask (概要: … of the incident list's row, for
    INC-2024-0004の原因は何ですか), the lines of a passage about that record (its section,
    not another row) that are a field named with a word of the question (原因：…) come first:
    a row answers as a whole, and one without the field asked tells something else about its
    record.

    Kept beside the learned stage because its training questions (Wikipedia) hardly ever meet
    a record's fields, so its line model cannot have learned what a field's name says."""
    if not codes or not candidates or not is_record(hits[candidates[0].hit_index].chunk):
        return list(candidates)
    words = {t for t in query.tokens if len(t) >= 2 and not is_code(t)}

    def about_the_record(c: Candidate) -> bool:
        chunk = hits[c.hit_index].chunk
        return not is_record(chunk) and _names(chunk, codes)

    def asked(c: Candidate) -> bool:
        name = field_name(c.text)
        return name is not None and any(w in name for w in words)

    row = candidates[0].hit_index
    if any(asked(c) for c in candidates if c.hit_index == row):
        return list(candidates)  # the row has the field asked
    named = [c for c in candidates if asked(c) and about_the_record(c)]
    if not named:
        return list(candidates)
    return [*named, *(c for c in candidates if not any(c is n for n in named))]


def _names(chunk: Chunk, codes: Sequence[str]) -> bool:
    """Whether the passage (its headings or text) names every one of ``codes``."""
    return not mentions.missing_terms(codes, "\n".join([*chunk.heading_path, chunk.text]))


def same_section(chunk: Chunk, other: Chunk) -> bool:
    """Two passages of one section of one file (not rows: each row is a record of its own)."""
    return (
        chunk.source == other.source
        and chunk.heading_path == other.heading_path
        and not is_record(chunk)
        and not is_record(other)
        and not chunk.is_summary
        and not other.is_summary
    )


def record(hits: Sequence[Hit], ranked: Sequence[Candidate], limit: int) -> tuple[str, Citation]:
    """A spreadsheet or CSV row as its answer: its first field (usually the key, such as
    管理番号), the field that answers, then the other best-matching fields that fit in
    ``limit`` characters in row order, as ``field / field``, with the citation of its row."""
    top = ranked[0].hit_index
    lines = [c for c in ranked if c.hit_index == top]  # best first
    by_order = {c.order: tables.clean(c.text) for c in lines}
    first = min(by_order)
    chosen = {first}
    used = len(by_order[first]) + 3
    for c in lines:
        cost = len(by_order[c.order]) + 3
        if c.order not in chosen and used + cost <= limit:
            chosen.add(c.order)
            used += cost
    best = ranked[0].order
    shown = [first, *([best] if best != first else []), *sorted(chosen - {first, best})]
    return " / ".join(by_order[o] for o in shown), Citation.of(1, hits[top])


def may_count(text: str, focus: Sequence[str]) -> bool:
    """Whether a count in ``text`` may count what the question asks about (``focus``): a
    section summary counts its sub-sections, what its title names (「障害記録（2024年）」の
    項目（8件） for 障害は何件, not for タイムアウトした申請は何件), and its line of codes mixes
    every kind of code."""
    text = text.lstrip()
    if text.startswith(CODES_HEAD):
        return False
    items = ITEMS_LINE.match(text)
    return not items or not focus or len(mentions.missing_terms(focus, items["title"])) < len(focus)


def summaries_last(
    hits: Sequence[Hit], ranked: Sequence[Candidate], asked: fit.AnswerKind | None
) -> list[Candidate]:
    """``ranked`` with the lines of a file's summary (「給与規程」の項目（1件）: 支払日, its list
    of codes) last when a passage of that file was found too, unless the question asks how many
    (障害は何件: the summary's count is the answer). A summary names a section without saying
    what it says: 支払日 is no pay day.

    Why a rule: the passages of the training questions have no summaries (none of the 715,342
    candidate lines of JaQuAD and JSQuAD), so the learned stage has not seen one, and a
    summary holds every word of a question that names its section."""
    if asked is not None and asked.kind == "number":
        return list(ranked)
    told = {
        hits[c.hit_index].chunk.source for c in ranked if not hits[c.hit_index].chunk.is_summary
    }

    def pointer(c: Candidate) -> bool:
        chunk = hits[c.hit_index].chunk
        return chunk.is_summary and chunk.source in told

    return sorted(ranked, key=pointer)  # stable: the model's order otherwise
