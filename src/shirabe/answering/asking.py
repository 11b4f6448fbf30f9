"""What a question asks about, read from its words and their parts of speech (Sudachi).

- :func:`focus_terms`: the nouns just before the words that ask (修理代 in 修理代はいくら).
- :func:`conditions`: a clause that sets a condition on a figure (箱に入れた状態の重さ).
- :func:`action_terms`: the action a way of doing is asked for (削除 in 削除するには).
- :func:`action_verb`: the same when it is a verb (取り消す in 取り消したいときは).
- :func:`key_nouns`: every noun that says what the question is about.
- :func:`names`: its proper nouns, which a figure must be written next to.

A passage that answers must name them (:func:`shirabe.answering.mentions.missing_terms`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from shirabe.answering.fit import CODE, FIGURES, AnswerKind
from shirabe.answering.mentions import kanji_of
from shirabe.answering.units import UNITS
from shirabe.text.normalize import folded

Word = tuple[str, str, Sequence[str]]
"""A word as the tokenizer gives it: surface, dictionary form, parts of speech."""


# Words that say how a question asks, not what it is about.
_GENERIC_WORDS = """
何 いくら いつ どこ 誰 だれ どなた なぜ 何故 どう どの どんな どれ どちら
どのよう 方法 手順 やり方 仕方 理由 原因 場合 とき 時 こと もの 事 物 ため
為 際 中 後 前 方 ほう くらい ぐらい 程度 以上 以下 未満 以内 まで 教える
知る 分かる わかる 良い いい よい する ある いる なる できる 出来る 言う
思う 必要 要る 受ける 使う 行う 得る もらう 貰う 場所 日 人 件 回 円 番
号 つ 全部 全体 実際 大体 およそ 約 各 毎 今 今回 普通 一般 ください
下さい 欲しい 頂く いただく 可能 ござる 会社 当社 弊社 自分
さん 様 さま 氏 君 くん ちゃん 殿
"""
_GENERIC: Final = frozenset(_GENERIC_WORDS.split())


_PER: Final = frozenset(
    {
        "あたり",
        "当たり",
        "ごと",
        "毎",
        "各",
        "全部",
        "合計",
        "最大",
        "最長",
        "最短",
        "最低",
        "最小",
        "最高",
    }
)
_ATTRIBUTE_WORDS = """
    重さ 高さ 大きさ 長さ 幅 広さ 深さ 厚さ 容量 サイズ 寸法 値段 価格 料金 金額 費用 代金 額
    時間 期間 期限 日数 人数 件数 回数 台数 個数 日時 日程 時刻 時期 場所 数 量 温度 西暦 和暦
    人物 者 方 国 都市 地域 組織 団体 名前 名称 作品
"""
ATTRIBUTES: Final = frozenset(_ATTRIBUTE_WORDS.split())
"""Nouns that name the kind of fact asked (重さ for 何kg, 人物 for 誰); the kind check
covers them, and documents write them in other words (質量, 本体質量) or not at all."""
_LIGHT_VERBS: Final = frozenset(
    {"する", "為る", "いる", "居る", "ある", "有る", "できる", "出来る", "なる"}
)
_DOING: Final = frozenset({"する", "為る", "できる", "出来る"})
_CLAUSE_END: Final = frozenset({"動詞", "助動詞", "形容詞"})
_TAIL_POS: Final = frozenset({"助詞", "助動詞", "補助記号", "空白", "記号"})


def _asked_at(plains: Sequence[str], asked: str) -> int | None:
    """The index of the word where the asked words (``asked``) begin, if they are found."""
    return next((i for i in range(len(plains)) if "".join(plains[i:]).startswith(asked[:2])), None)


def focus_terms(words: Sequence[Word], asked: str) -> list[str]:
    """What the question asks about: the nouns just before the words that ask, with the
    nouns they are joined to by の (``修理代`` in 修理代はいくら, ``後継`` and ``機`` in
    後継機はいつ, ``削除`` in アカウントを削除するにはどうすれば); empty when the question
    opens with them or they follow a verb."""
    return [term for group in focus_groups(words, asked) for term in group]


def focus_groups(words: Sequence[Word], asked: str) -> list[list[str]]:
    """The focus (:func:`focus_terms`) as the runs of nouns joined by の, in the question's
    order: ``[["出張"], ["宿泊費"]]`` for 出張の宿泊費はいくら."""
    plains = [folded(surface) for surface, _, _ in words]
    start = _asked_at(plains, asked)
    if not start:
        return []
    i = start - 1
    while i >= 0 and _tail(words[i], plains[i]):
        i -= 1
    if any(words[k][1] in _DOING for k in range(i + 1, start)):
        return []  # 発送したのは誰: a verb, which the passage may say in other words
    groups: list[list[str]] = []
    while i >= 0:
        run = i
        while i >= 0 and in_compound(words, i):
            i -= 1
        if run == i:
            break
        if i >= 0 and words[i][2][0] in _CLAUSE_END:
            break  # 暗殺された|政治家は誰: a category named by its clause, not a topic
        group = [  # not 子ども of 子どもが何歳: documents name people by their case
            plains[j]
            for j in range(i + 1, run + 1)
            if tells(words[j], plains[j]) and plains[j] not in _PEOPLE
        ]
        if group:
            groups.insert(0, group)
        if i >= 1 and plains[i] == "の" and is_noun(words[i - 1]):
            i -= 1  # 富山工場の|食堂
            continue
        break
    return groups


_TOPIC_ENDS: Final = (("は",), ("に", "は"), ("で", "は"))


def topic_terms(words: Sequence[Word], asked: str) -> list[str]:
    """The place or thing a question opens with as its topic (``東`` and ``出張所`` in
    東出張所には、車を何台とめられる駐車場がありますか): the nouns, joined by の, before the
    first は, には or では, when it comes before the asked words. A figure of another place
    (総合運動公園の駐車場（320台）) does not answer for it."""
    plains = [folded(surface) for surface, _, _ in words]
    start = _asked_at(plains, asked)
    i = 0
    while i < len(words) and (is_noun(words[i]) or (plains[i] == "の" and i > 0)):
        i += 1
    ends = [e for e in _TOPIC_ENDS if tuple(plains[i : i + len(e)]) == e]
    if not i or not ends or start is None or i >= start or plains[i - 1] == "の":
        return []
    return [
        plains[j]
        for j in range(i)
        if is_noun(words[j]) and tells(words[j], plains[j]) and plains[j] not in _PEOPLE
    ]


_CONDITIONS: Final = frozenset({"状態", "場合", "とき", "時", "際", "条件"})
"""Nouns that make a clause before them a condition on what is asked (箱に入れた|状態の重さ)."""
_CLAUSE_STOP: Final = frozenset({"は", "も", "、", ",", "。"})
_PEOPLE_WORDS = """
父 母 父親 母親 親 両親 子 子ども 子供 息子 娘 妻 夫 夫婦 家族 祖父 祖母 兄 姉 弟 妹
本人 私 僕 自分 知り合い 友人 友達 相手
"""
_PEOPLE: Final = frozenset(_PEOPLE_WORDS.split())
"""Who does what a clause says (70歳の父がプールを使うと): documents name people by the case
they fall in (65歳以上の方), so these words are not looked for."""


@dataclass(frozen=True, slots=True)
class Condition:
    """A clause setting a condition on what is asked, and its nouns a passage must name."""

    clause: str
    terms: tuple[str, ...]


def conditions(words: Sequence[Word]) -> list[Condition]:
    """The clauses that set a condition on what is asked: 「箱に入れた状態」 (``箱``) in
    「AQ-300を箱に入れた状態の重さは何kg」. A figure written without it (質量: 約9.2kg) answers
    another question. A clause runs back from the verb before 状態, 場合, とき or 際, or before
    a conditional と, ば, たら or なら (溶解処理してもらうと), to the topic (は), a comma or the
    start; codes (AQ-300) are checked on their own."""
    found: list[Condition] = []
    for k in range(1, len(words)):
        asking = k + 1 < len(words) and words[k + 1][1] in {"良い", "いい", "よい"}
        marks = folded(words[k][0]) in _CONDITIONS or (_conditional(words[k]) and not asking)
        if not marks or words[k - 1][2][0] not in _CLAUSE_END:
            continue
        i = k - 1
        terms: list[str] = []
        while i >= 0 and folded(words[i][0]) not in _CLAUSE_STOP:
            plain = folded(words[i][0])
            counted = i > 0 and len(words[i - 1][2]) > 1 and words[i - 1][2][1] == "数詞"
            box = plain in UNITS and not counted and not plain.isascii()  # 箱に入れた, not 2箱
            telling = (tells(words[i], plain) and plain not in _PEOPLE) or box
            plain = _party_of(plain)
            if is_noun(words[i]) and telling and plain not in terms:
                terms.insert(0, plain)
            i -= 1
        asked = any(folded(w[0]).startswith("何") for w in words[i + 1 : k])  # 何日以内に…すれば
        if terms and not asked:
            clause = "".join(word[0] for word in words[i + 1 : k + 1])
            found.append(Condition(clause, tuple(terms)))
    return found


def _party_of(term: str) -> str:
    """What a 先 of a condition is the party of (振込 for 振込先 in 振込先の口座を変えたいとき):
    documents name it by the act (振込口座を変えたい)."""
    return term[:-1] if len(term) > 2 and term.endswith("先") and kanji_of(term) == term else term


def _conditional(word: Word) -> bool:
    """A conjunctive particle or form that makes the clause before it a condition: と and ば
    (溶解処理してもらうと), たら and なら (雨が降ったら)."""
    surface, _, pos = word
    return (pos[:2] == ("助詞", "接続助詞") and surface in {"と", "ば"}) or (
        pos[0] == "助動詞" and surface in {"たら", "なら"}
    )


def action_terms(words: Sequence[Word], asked: str) -> list[str]:
    """The action a way of doing is asked for, when it is a noun with する (``削除`` in
    アカウントを削除するにはどうすれば, 申請する方法), with the nouns of its object (入タイマー
    in 入タイマーを設定する方法): documents name such actions as the question does. Not a
    condition (表示されたらどうすれば)."""
    plains = [folded(surface) for surface, _, _ in words]
    start = _asked_at(plains, asked)
    for i in range((start or 0) - 1, 0, -1):
        purpose = i + 1 == start or plains[i + 1] in {"に", "ため"}  # 削除するには
        if (
            purpose
            and words[i][1] in _DOING
            and words[i - 1][2][:3] == ("名詞", "普通名詞", "サ変可能")
        ):
            action = [plains[i - 1]] if tells(words[i - 1], plains[i - 1]) else []
            return [*action, *_object(words, plains, i - 1)] if action else []
        if words[i][2][0] not in _TAIL_POS and plains[i] != "ため":
            return []
    return []


_HELPER_VERBS: Final = frozenset(
    {
        "為る",
        "居る",
        "有る",
        "成る",
        "出来る",
        "貰う",
        "頂く",
        "呉れる",
        "下さる",
        "遣る",
        "良い",
        "仕舞う",
        "置く",
        "見る",
        "行く",
        "来る",
    }
)
_SETTING: Final = frozenset({"時", "とき", "場合", "際", "ため", "為", "の", "こと", "事"})


@dataclass(frozen=True, slots=True)
class Action:
    """The action a way of doing is asked for: its verb and the nouns of its object (取り消す
    and 有給休暇 in 有給休暇を取り消したいときは)."""

    verb: str
    objects: tuple[str, ...]


def action_verb(words: Sequence[Word], asked: str) -> Action | None:
    """The action a way of doing is asked for, when it is a verb written with kanji before the
    asked words (取り消す in 取り消したいときはどうすれば, 戻す in 状態に戻す方法) or a noun with
    する after them (交換 in どういう手順で交換すれば). None for a verb of kana only (やめる),
    a generic verb (使う) or a noun before the asked words (申請方法): documents name such
    actions in other words."""
    plains = [folded(surface) for surface, _, _ in words]
    start = _asked_at(plains, asked)
    if start is None:
        return None
    for i in range(start - 1, -1, -1):
        lemma, pos = words[i][1], words[i][2]
        if pos[0] == "動詞" and lemma not in _HELPER_VERBS:
            if lemma in _GENERIC or not kanji_of(lemma):
                return None
            return Action(lemma, _object(words, plains, i))
        if pos[0] in _TAIL_POS or lemma in _HELPER_VERBS or lemma in _SETTING:
            continue
        break
    end, length = start, 0
    while end < len(words) and length < len(asked):
        length += len(plains[end])
        end += 1
    for i in range(end, len(words) - 1):
        if tuple(words[i][2][:3]) == ("名詞", "普通名詞", "サ変可能"):
            return Action(words[i][1], ()) if words[i + 1][1] in _DOING else None  # 交換すれば
        if words[i][2][0] not in _TAIL_POS:
            break
    return None


def _object(words: Sequence[Word], plains: Sequence[str], verb: int) -> tuple[str, ...]:
    """The nouns before the を that governs the verb at ``verb`` (有給休暇 in 有給休暇を取り消す),
    within its clause."""
    for i in range(verb - 1, 0, -1):
        if plains[i] == "を":
            k = i - 1
            while k >= 0 and is_noun(words[k]):
                k -= 1
            return tuple(plains[j] for j in range(k + 1, i) if tells(words[j], plains[j]))
        if words[i][2][0] in _CLAUSE_END or plains[i] in {"、", ",", "は"}:
            break
    return ()


def does(verb: str, terms: Sequence[str]) -> bool:
    """Whether a passage's index ``terms`` name the action ``verb``: a word whose kanji begin
    with the verb's (取り消し and 取消 for 取り消す, 移動 for 移る, 変更 for 変える)."""
    stem = kanji_of(verb)
    return any(kanji_of(term).startswith(stem) for term in terms if not term.startswith("~"))


def tells(word: Word, plain: str) -> bool:
    """A noun that says what a question is about: not a question word, unit, counter,
    generic word or the name of the kind asked (重さ), not ASCII (codes are taken whole), and
    not a single kana."""
    return (
        plain not in _GENERIC
        and word[1] not in _GENERIC
        and plain not in UNITS
        and plain not in _PER
        and plain not in ATTRIBUTES
        and not plain.isascii()
        and not plain.startswith("何")
        and (len(plain) > 1 or ("\u3400" <= plain <= "\u9fff" and word[2][0] == "名詞"))
    )


def key_nouns(words: Sequence[Word], *, attributes: bool = False) -> list[str]:
    """Every noun of the question that says what it is about (see :func:`focus_terms`); with
    ``attributes``, also the names of the kind asked (高さ, 重さ)."""
    found: list[str] = []
    for word in words:
        plain = folded(word[0])
        telling = tells(word, plain) or (attributes and plain in ATTRIBUTES and len(plain) > 1)
        if is_noun(word) and telling and plain not in found:
            found.append(plain)
    return found


def names(words: Sequence[Word]) -> list[str]:
    """The proper nouns of the question (富山 in 富山工場の防災訓練は何時から): a figure
    given for a place, person or body it names is written next to the name, in the same
    sentence, the one before it or the passage's headings."""
    found: list[str] = []
    for word in words:
        plain = folded(word[0])
        proper = len(word[2]) > 1 and word[2][:2] == ("名詞", "固有名詞")
        if proper and tells(word, plain) and plain not in found:
            found.append(plain)
    return found


def in_compound(words: Sequence[Word], k: int) -> bool:
    """Whether the word at ``k`` is part of a compound noun: a noun, or a verb's stem before a
    suffix (試し of お試し用ボトル)."""
    pos = words[k][2]
    stem = pos[0] == "動詞" and str(pos[-1]).startswith("連用形")
    return (
        is_noun(words[k])
        or (stem and k + 1 < len(words) and words[k + 1][2][0] == "接尾辞")
        or _named_by_no(words, k)
    )


def _named_by_no(words: Sequence[Word], k: int) -> bool:
    """A noun that may be an adverb used as a noun: after の and before は, が or を
    (結果 in 健康診断の結果はいつ, which a passage about the checkup's booking does not name)."""
    pos = words[k][2]
    return (
        pos[0] == "名詞"
        and len(pos) > 2
        and pos[2] == "副詞可能"
        and k > 0
        and words[k - 1][0] == "の"
        and k + 1 < len(words)
        and words[k + 1][0] in {"は", "が", "を"}
    )


def is_noun(word: Word) -> bool:
    _, _, pos = word
    return (
        pos[0] in {"名詞", "接尾辞", "接頭辞"}
        and not (len(pos) > 1 and pos[1] == "数詞")
        and not (len(pos) > 2 and pos[2] in {"副詞可能", "形状詞可能"})
    )


def _tail(word: Word, plain: str) -> bool:
    """Words between the asked words and what they ask about: particles, auxiliaries, light
    verbs, numbers with counters (1件), generic words and adnominals (どういう)."""
    _, form, pos = word
    return (
        pos[0] in _TAIL_POS
        or pos[0] in {"連体詞", "代名詞", "副詞"}
        or form in _LIGHT_VERBS
        or form in _GENERIC
        or plain in UNITS
        or plain in _PER
        or (pos[0] == "動詞" and len(pos) > 1 and pos[1] == "非自立可能")
        or (len(pos) > 1 and pos[1] == "数詞")
    )


@dataclass(frozen=True, slots=True)
class Needs:
    """What a passage must name to answer a question of its kind: ``terms`` (the focus, the
    action's nouns and object, the conditions' nouns) and, when the action is a verb, the verb
    (:func:`does`)."""

    focus: list[str]
    terms: list[str]
    conditions: list[Condition]
    action: Action | None
    owners: tuple[str, ...] = ()
    """Focus terms before the last の (出張 and 社員 of 一般社員の出張の宿泊費): the passage with
    the figure may leave them to the rest of its document (第6条（宿泊費） of 旅費)."""


def needs(words: Sequence[Word], kind: AnswerKind) -> Needs:
    """What a passage must name to answer the question of ``words``, asked for ``kind``:
    the focus always; the action for a way of doing (取り消す in 取り消したいときは; tried for
    places and times too, the verb after the asked words, 始まる in 何時から始まりますか, is
    written in other words as often as it is missing);
    the conditions for a figure (a way of doing or a person under a condition is written in
    other words than the question's: 急に熱が出たとき → 当日の体調不良)."""
    groups = [[_looked_for(t, kind) for t in group] for group in focus_groups(words, kind.asked)]
    focus = [term for group in groups for term in group]
    owners = tuple(term for group in groups[:-1] for term in group)
    terms = list(focus)
    if kind.kind in FIGURES:
        terms += [_looked_for(term, kind) for term in topic_terms(words, kind.asked)]
    action = None
    if kind.kind == "procedure":
        terms += action_terms(words, kind.asked)
        action = action_verb(words, kind.asked)
        terms += action.objects if action else ()
    if kind.unit == CODE:  # 施設コード of 施設コードは何
        terms.append(folded(kind.asked).split("は")[0].split("って")[0])
    found = conditions(words) if kind.kind in FIGURES else []
    terms += [t for c in found for t in c.terms]
    return Needs(focus, list(dict.fromkeys(terms)), found, action, owners)


def _looked_for(term: str, kind: AnswerKind) -> str:
    """A term of the question as a passage writes it: an event as its noun (:func:`_event_of`),
    and for an amount of money a fee as what it pays for (:func:`_fee_of`)."""
    term = _event_of(term)
    return _fee_of(term) if kind.kind == "money" else term


def _fee_of(term: str) -> str:
    """What a fee asked for is paid for (タクシー for タクシー代 in タクシー代はいくら): a money
    question asks for the 代 itself, and documents write the fare next to the thing alone
    (第8条（タクシーの利用） … ５，０００円を超える場合)."""
    fee = len(term) > 2 and term.endswith("代") and not term.endswith("時代")
    return term[:-1] if fee else term


def _event_of(term: str) -> str:
    """What an event written as a noun and a verb's stem happens to (期限 of 期限切れ): documents
    write the noun with the verb apart or in other words (期限の7日前から通知が届きます)."""
    found = _EVENT.fullmatch(term)
    return found.group(1) if found else term


_EVENT: Final = re.compile(r"([\u3400-\u9fff]{2,})(?:切れ|明け|漏れ|遅れ|忘れ|間違い|違い)")
