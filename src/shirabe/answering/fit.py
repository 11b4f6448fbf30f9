"""Whether a passage answers the question asked, decided by rules and no model.

Two checks, both pure functions over text:

- **The kind of answer.** A question asks for a kind of fact: an amount of money (いくら,
  何円), a number with a unit or counter (何kg, 何cm, 何人, 何件, 何日, 何時), a time or date
  (いつ), a place (どこ), a person (誰), a reason (なぜ) or a way of doing something (どうすれば,
  方法). A sentence answers it only if it holds an expression of that kind: 何kg wants a weight
  such as ``約9.2kg``, なぜ wants ``ため``, ``原因``, ``ので`` … (:func:`answer_kind`,
  :func:`has_kind`).
- **The question's terms.** The words the question is about (修理代, 社員割引価格, 外箱) must
  be found in the passage or its headings, as a word or, for compounds, as all their
  character pairs; the question words, units and generic words (方法, 場合, 何) do not count
  (which words: :mod:`shirabe.answering.asking`; whether they are found:
  :func:`shirabe.answering.mentions.missing_terms`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from shirabe.answering.mentions import kanji_of, missing_terms
from shirabe.answering.units import LENGTH, UNITS, VOLUME, WEIGHT
from shirabe.text.normalize import folded

Kind = Literal["money", "number", "time", "place", "person", "reason", "procedure"]

KIND_NAMES: Final[dict[str, str]] = {
    "money": "金額",
    "number": "数量",
    "time": "日時",
    "place": "場所",
    "person": "人",
    "reason": "理由",
    "procedure": "方法",
}

_NUM = r"(?:\d[\d,]*(?:\.\d+)?|[〇一二三四五六七八九十百千万]+)"

_UNIT_QUESTION = re.compile(
    r"何\s*(?:("
    + "|".join(sorted((re.escape(u) for u in UNITS if u.isascii()), key=len, reverse=True))
    + r")(?![a-z])|("
    + "|".join(sorted((re.escape(u) for u in UNITS if not u.isascii()), key=len, reverse=True))
    + r")(?!(?![前後間以目頃程半内毎当])[\u3400-\u9fff]"
    + r"(?![ぁ-ゖ](?<![のはがをにでともへや])|[\u3400-\u9fff][さしすせ])))(?!も(?!ら))"
)
"""何 and a unit or counter: 何kg, 何人, 何台売れ, 何台用意され, 何日もらえる; not 何社会, where
the kanji goes on as a word, nor 何日も (for days on end)."""
_NUMBERED: Final = re.compile(r"何\s*号")
"""何号 before the thing numbered (何号様式, 何号室), which the counters above leave out."""
_CODE_QUESTION: Final = re.compile(
    r"[\u3400-\u9fffァ-ヺーa-z]*(?:コード|番号|ナンバー|id)(?:は|って)[、\s]*(?:何|なん)"
    r"(?=です|でしょう|か|\?|$)"
)
"""A code or number asked by 何 (施設コードは何ですか): the answer holds digits, and its
passage names what is asked (施設コード)."""
CODE: Final = r"(?<![\d,.])\d"
"""The unit of a code asked by 何: any digit."""
_SIZE_QUESTION: Final = re.compile(
    r"どの(?:ぐらいの|くらいの)?(?:サイズ|大きさ)|どれ(?:ぐらい|くらい)の(?:サイズ|大きさ)"
)
SIZE: Final = (
    r"(?<![a-z])[ab][0-9]{1,2}(?![0-9])|" + _NUM + r"\s*(?:" + LENGTH + r"|インチ|号|判|型)"
)
"""The unit of a size asked by どのサイズ: a paper size (A4) or a length."""
PATTERNED: Final = frozenset({CODE, SIZE})
"""Units that are whole patterns of the answer, not the tail of a number."""
_AMOUNT_QUESTION = re.compile(
    r"いくら(?!か(?!か)|でも|も(?!ら))(?![^、。？?]*(?:ても|でも))|おいくら|何円|何万円|金額は|料金は|費用は|値段は"
)
_WHEN_FIRST = re.compile(r"何時(?!間)|何年(?:頃|ごろ)")
_CLOCK = (
    _NUM
    + r"\s*時(?!間)|\d:\d\d|(?:"
    + _NUM
    + r"|元)\s*年(?![生目間])|世紀|時代|午前|午後|正午|朝|昼|夕方|夜|深夜|未明"
)
"""What 何時 asks for: a time of day (9:00, 14時), or, read いつ, a year or an era; not a
duration (2時間, 3年間), a school year (3年生) nor a month or a yearly event (毎年4月)."""
LIMIT: Final = (
    r"まで|迄|以内|期限|締め?切|期間|有効|以前|過ぎ|(?:前|当|即)日|"
    r"\d\s*(?:年|[かヶカケ]?[月週日])間"
)
"""A time asked as a limit (いつまでに) is written so: 3月31日まで, 14日以内, 申請期限は…2年,
承認後1か月間, 立秋を過ぎると (and a time); not a point alone (3か月後にお送りします)."""
_ROUGHLY = r"どのくらい|どれくらい|どれほど|どの程度"
_HOW_MUCH = re.compile(_ROUGHLY + r"|いくつ(?!か(?!ら|[？?]|$))|何個")
_MEASURED: Final = {
    "重さ": WEIGHT,
    "重量": WEIGHT,
    "容量": VOLUME,
    "長さ": LENGTH,
    "高さ": LENGTH,
}
_MEASURES = "|".join(_MEASURED)
_HOW_HEAVY: Final = re.compile(
    rf"(?P<a>{_MEASURES})(?:は|が|って)[^、。?]{{0,6}}?(?P<q>{_ROUGHLY})|"
    rf"(?P<r>{_ROUGHLY})の(?P<b>{_MEASURES})"
)
"""A measure asked with どのくらい (重さはどのくらい, どれくらいの重さ): a weight, a volume or a
length, not any figure (受付時間は9:00〜18:00 for AQ-300の重さはどのくらい)."""
_WHEN = re.compile(r"いつ|何時ごろ|何時頃|何年頃|何年ごろ|期限は|日程は|日時は|時期は")
_WHERE = re.compile(r"どこ|どちらで(?!す)|どちらに|どの(?:場所|階|部屋|窓口|店)|場所は")
_WHO = re.compile(r"誰|だれ|どなた|どの人|どの部署|どの部門|どこの部署")
_WHY = re.compile(r"なぜ|何故|どうして|なんで(?!す)|理由は|理由を|原因は|原因を|の原因|の理由")
_HOW = re.compile(
    r"どうすれば|どうやって|どうしたら|どのように|どのようにして|どうす(?:る|れ)|"
    r"方法|手順|やり方|仕方|どう(?:操作|連絡|申請|設定|対応|手続)"
)

_MONEY = re.compile(
    _NUM
    + r"\s*(?:万|千|億|兆)*\s*(?:円|ドル|ユーロ|元|ポンド|ウォン|フラン|マルク|ルーブル|ルピー|"
    r"バーツ|キップ|セント)|[$€£¥]\s*\d|\d\s*分の\s*\d|\d\s*(?:%|割)|無料|無償"
)
_NUMBER = re.compile(_NUM)
_TIME = re.compile(
    _NUM + r"\s*(?:年|月|日|時|分|週|か月|ヶ月|カ月|営業日)|\d{1,2}:\d{2}|\d+/\d+|"
    r"曜|毎(?:日|週|月|年|朝|晩)|翌|前日|当日|即日|午前|午後|正午|以内|まで|から|以降|以前|"
    r"時代|年代|世紀|頃|ころ|上旬|中旬|下旬|末|初め|春|夏|秋|冬|直後|直前|同時|とき|際|"
    r"(?<!王)朝(?![鮮廷刊])|昼|(?<!深)夜(?!景)|晩(?!年)|夕(?!張|刊)|日中(?![韓関両国米])|"
    r"当時|近年|最近|戦前|戦後"
)
_FAULT = re.compile(
    r"(ずれ|誤り|不足|故障|集中|切れ|漏れ|ミス|不具合|停電|遅延|超過|破損|劣化|詰まり)で(?!は|も|き)"
)
_REASON_WORD = re.compile(
    r"原因|理由|ため|ので|(?:だ|です|ます|た|い)から|により|によって|よって|せい|おかげ|目的|"
    r"背景|ことで|(?:た|の)結果|結果(?:として|、)|(?:する|れる|なる)と(?!き)|"
    r"影響で|きっかけ|由来"
)
_REASON = re.compile(_REASON_WORD.pattern + "|" + _FAULT.pattern)
"""Words that give a reason; a fault followed by で (時刻ずれでワンタイムコードが認証されない)
gives its cause."""


def fault_asked(question: str, sentence: str) -> bool:
    """Whether ``sentence`` gives a reason only as a fault followed by で whose fault the
    question names itself (時刻ずれで… for 時刻がずれたのはなぜ): it tells what the fault
    caused, not why it happened."""
    text = folded(sentence)
    if _REASON_WORD.search(text):
        return False
    asked = folded(question)
    faults = [m.group(1) for m in _FAULT.finditer(text)]
    return bool(faults) and all(_fault_stem(f) in asked for f in faults)


def _fault_stem(fault: str) -> str:
    """The part of a fault word a question writes too (誤 of 誤り for 誤った, ずれ)."""
    return kanji_of(fault) or fault


_PLACE = re.compile(
    r"階|室|所|場|館|庫|棚|窓口|公園|会場|センター|ビル|工場|店|駅|[市区町村県都府国州島]|"
    r"フロア|面|側|部|課|サイト|ページ|画面|メニュー|ポータル|アプリ|システム|地|内|外|上|下|"
    r"横|近く|前|後ろ|奥|入口|出口|から|へ|で|に"
)
_PERSON = re.compile(
    r"者|長|員|係|担当|部|課|室|グループ|チーム|会社|社|さん|氏|様|人|家|王|師|手|官|"
    r"委員会|協会|団体|大学|[A-Z][a-z]+|[一-龥]{1,3}\s[一-龥]{1,3}"
)
_PROCEDURE = re.compile(
    r"てください|して|する|します|できる|できます|行う|行い|押|選|入力|申請|提出|連絡|"
    r"設定|操作|登録|手続|→|「"
)

_KIND_EVIDENCE: Final[dict[str, re.Pattern[str]]] = {
    "money": _MONEY,
    "time": _TIME,
    "place": _PLACE,
    "person": _PERSON,
    "reason": _REASON,
    "procedure": _PROCEDURE,
}


@dataclass(frozen=True, slots=True)
class AnswerKind:
    """What the question asks for; ``unit`` is the answer's unit pattern for ``number``."""

    kind: Kind
    asked: str
    """The words of the question that ask it (何kg, いくら, なぜ), for the refusal reason."""
    unit: str | None = None
    named: str | None = None
    """What the fact is called when not its kind's name (番号 for a code asked by 何)."""

    @property
    def name(self) -> str:
        return self.named or KIND_NAMES[self.kind]


_ASKING: Final[tuple[tuple[Kind, re.Pattern[str]], ...]] = (
    ("reason", _WHY),
    ("person", _WHO),
    ("time", _WHEN),
    ("place", _WHERE),
    ("procedure", _HOW),
    ("number", _HOW_MUCH),
)
"""Question words with no unit, in the order they are tried."""


_QUOTED: Final = re.compile(r"「[^「」]*」|『[^『』]*』")
_EMBEDDED: Final = re.compile(r"^.*?(?:の|である)か(?:という|との|と(?=[思考聞尋問言]))")
"""A question quoted or reported inside the one asked: 「…なぜ顔を見せないのだろう？」と尋ねた
のは誰, インドはなぜ貧しいのかという疑問から…は誰か, 発明者が誰であるかということをめぐって."""


def answer_kind(question: str) -> AnswerKind | None:
    """The kind of fact a question asks for, or None when its form does not say. Question
    words inside quotes (「いつでも割」とは) or in a question the sentence reports (…のかという
    疑問) are not what it asks."""
    text = folded(question)
    whole = re.fullmatch(r"[「『](.*)[」』]", text.strip())
    if whole:  # the question itself typed in quotes
        text = whole.group(1)
    return _answer_kind(_EMBEDDED.sub("", _QUOTED.sub("「」", text)))


def _answer_kind(text: str) -> AnswerKind | None:
    if found := _WHEN_FIRST.search(text):
        return AnswerKind("time", found.group(), _CLOCK)
    if found := _AMOUNT_QUESTION.search(text):
        return AnswerKind("money", found.group())
    if found := _UNIT_QUESTION.search(text):
        unit = found.group(1) or found.group(2)
        kind: Kind = "money" if unit in {"円", "万円"} else "number"
        return AnswerKind(kind, found.group(), None if kind == "money" else UNITS[unit])
    if found := _NUMBERED.search(text):  # 何号様式, 何号車: a numbered thing
        return AnswerKind("number", found.group(), UNITS["号"])
    if found := _CODE_QUESTION.search(text):  # 施設コードは何: a code, written with digits
        return AnswerKind("number", found.group(), CODE, named="番号")
    if found := _HOW_HEAVY.search(text):
        asked, measure = found["q"] or found["r"], found["a"] or found["b"]
        return AnswerKind("number", asked, _MEASURED[measure])
    if found := _SIZE_QUESTION.search(text):  # 用紙はどのサイズ: A4, or a length
        return AnswerKind("number", found.group(), SIZE, named="大きさ")
    if "いつまで" in text and "いつから" not in text:  # not a span (1867年から1918年)
        return AnswerKind("time", "いつまで", LIMIT)
    for kind, words in _ASKING:
        if found := words.search(text):
            return AnswerKind(kind, found.group())
    return None


_NAMED: Final = frozenset({r"人|名", r"社"})
"""Counters that also ask for a name: 何人 (ポルトガル人), 何社 (フィリップス社)."""


def _with_unit(unit: str) -> str:
    """A unit after a number, with its multipliers (1万2千台): the asked figure's tail."""
    return r"(?:[万億兆千百]\s*)*(?:" + unit + r")(?![a-z])"


def has_kind(kind: AnswerKind, sentence: str) -> bool:
    """Whether ``sentence`` holds an expression of the asked kind."""
    text = folded(sentence)
    if kind.kind in {"person", "place"}:
        return True  # names and places are written too many ways for rules to tell
    if kind.unit == LIMIT:
        return re.search(LIMIT, text) is not None and _TIME.search(text) is not None
    if kind.kind == "time" and kind.unit is not None:
        return re.search(kind.unit, text) is not None
    if kind.kind == "number":
        if kind.unit is None:
            return bool(_NUMBER.search(text))
        if kind.unit in PATTERNED:
            return re.search(kind.unit, text) is not None
        found = re.search(_NUM + r"\s*" + _with_unit(kind.unit), text)
        return found is not None or _names(kind, text)
    return _KIND_EVIDENCE[kind.kind].search(text) is not None


def _names(kind: AnswerKind, text: str) -> bool:
    """Whether ``text`` answers 何人 or 何社 read as a name (ポルトガル人, フィリップス社)."""
    return (
        kind.unit in _NAMED
        and re.search(r"[ァ-ヶー・]{2,}(?:" + str(kind.unit) + ")", text) is not None
    )


def reason_of(nouns: Sequence[str], codes: Sequence[str], sentence: str, line: str) -> bool:
    """Whether a sentence that gives a reason gives it for what the question names: it names
    one of the question's nouns itself, or one of its codes with the headings (``line``) of
    its passage (原因：電源ユニットの故障。 under INC-2024-0002). A reason for something
    else in the same passage (偽造を防ぐため for 戸籍謄本がとれないのは) is no answer."""
    if not nouns and not codes:
        return True
    return len(missing_terms(nouns, sentence)) < len(nouns) or (
        len(missing_terms(codes, line)) < len(codes)
    )


_WHICH = re.compile(r"どこの([\u3400-\u9fff\u30a1-\u30faー]+)")
_REGIONS: Final = frozenset(
    ["国", "地域", "地方", "都市", "県", "州", "市", "町", "村", "島", "大陸", "出身", "人", "誰"]
)


def which_place(question: str) -> str | None:
    """What どこの asks to be named (業者 in どこの業者さん, 警察署 in どこの警察署): an answer
    names one. None for a country or region (どこの国), which is answered by its name alone."""
    found = _WHICH.search(folded(question))
    if found is None or any(found.group(1).startswith(r) for r in _REGIONS):
        return None  # どこの国, どこの国風の建物
    return re.sub(r"(?:製|系|産|風|特有|出身)$", "", found.group(1)) or None  # メーカー製


_UPPER_ASKED = re.compile(r"最大|上限|最高|最長|最多|まで")
_NO_LIMIT = re.compile(r"\s*(?:以上|超|を超え|ごと|毎|あたり|当たり|につき)")
"""After a figure: a lower bound (5万円以上), or the step of a rate (10kgごとに200円); neither
is the most that is allowed."""
_OFFSET = re.compile(r"\s*(?:前(?!後)|後|先)(?![払納])")
"""After a figure: a point before or after another (有効期限の3か月前), not a length."""
_OFFSET_ASKED = re.compile(r"何[^、。？?]{0,4}?(?:前|後|先)")
"""A point asked before or after another (何日前までに, 何年後)."""
_SPAN_ASKED = re.compile(r"から|間|有効|期間")
"""A length asked from a start (発行されてから何か月, 何日間)."""
_TOTAL_ASKED = re.compile(r"全部で|合計|全体で|総数|総額|トータル")
_PER_UNIT = re.compile(r"(?:につき|あたり|当たり|ごとに|毎に)\s*$")
_ACTUAL_ASKED = re.compile(r"実際|実績")
_PLANNED = re.compile(r"目標|予定|計画|見込|想定|予測")
_COUNT_ASKED = re.compile(r"いくつ|何個")
_MEASURE = re.compile(
    r"\s*(?:[万億兆千百]\s*)*(?:円|時間|週間|営業日|日|か月|ヶ月|カ月|年|月|時|分|秒|kg|g|cm|mm|km|m|%|割|倍|"
    r"ml|l|階|番|号|回|度|人|名)(?![a-z])"
)
"""Units that make a number a measure or an ordinal (3時間, 7階), or count events and people
(1回の利用, 3人), not the things いくつ asks about."""


def _counter(after: str, asked: str) -> bool:
    """Whether a kanji numeral is a count: followed by a counter (三つ, 五か所) or by a word
    the question counts (三都市 for いくつの都市), not by the rest of a word (一般, 一郎, 一部
    for 部屋)."""
    if after[:1] and after[0] in "つ個ヵヶかカ箇所":
        return True
    word = _word_after(after)
    whole = re.escape(word or "") + r"(?![\u3400-\u9fff々])"  # 部 is no word of 部屋
    return word is not None and re.search(whole, asked) is not None


def _word_after(after: str) -> str | None:
    """The kanji or katakana word that follows a number (都市 in 308都市), if any."""
    found = re.match(r"[\u30a0-\u30ff\u3400-\u9fff々]+", after)
    return found.group() if found else None


def _labels(text: str, start: int, end: int, asked: str) -> bool:
    """Whether the number at ``text[start:end]`` names a thing (ERR-102, 会議室701), is part of
    a date, code or time (2025/1/14) or counts something else (予約12件), rather than what the
    question counts (現在308都市 for いくつの都市): after a word, a number counts only what the
    question names right after it."""
    before = text[start - 1 : start]
    if re.fullmatch(r"[a-z\-/:]", before) or re.match(r"[/\-:]\d", text[end:]):
        return True
    if not re.fullmatch(r"[\u3400-\u9fff々]", before):
        return False
    counted = _word_after(text[end:])
    return counted is None or counted not in asked


def fits_figure(question: str, kind: AnswerKind, sentence: str) -> bool:
    """Whether a sentence holds the figure asked, not one of its kind that answers another
    question: a lower bound (5万円以上) for a maximum (最大いくら), an amount per person or
    shop (1店舗につき2台) for a total (全部で何台), a target (販売目標12,000台) for what
    happened (実際に何台), a duration (3時間) for a count (いくつ), the step of a rate (10kgごと)
    for a limit (何kgまで), a point before another (3か月前) for a length (発行されてから何か月).
    Other kinds: True."""
    if kind.kind not in {"money", "number"} or kind.unit in PATTERNED:
        return True
    text, asked = folded(sentence), folded(question)
    if _ACTUAL_ASKED.search(asked) and _PLANNED.search(text) and not _ACTUAL_ASKED.search(text):
        return False
    if _names(kind, text):
        return True
    if kind.kind == "money":
        pattern = _MONEY
    elif kind.unit is not None:
        pattern = re.compile(_NUM + r"\s*" + _with_unit(kind.unit))
    else:
        pattern = _NUMBER
    found = [(m.start(), m.end()) for m in pattern.finditer(text)]
    if kind.kind == "number" and kind.unit is None and _COUNT_ASKED.search(asked):
        found = [  # not 3時間, nor 会議室701, ERR-102 or 予約12件
            (a, b)
            for a, b in found
            if not _MEASURE.match(text, b)
            and not _labels(text, a, b, asked)
            and (text[a].isdigit() or _counter(text[b:], asked))
        ]
    if _UPPER_ASKED.search(asked):
        found = [(a, b) for a, b in found if not _NO_LIMIT.match(text, b)]
    if kind.kind == "number" and _SPAN_ASKED.search(asked) and not _OFFSET_ASKED.search(asked):
        found = [(a, b) for a, b in found if not _OFFSET.match(text, b)]
    if _TOTAL_ASKED.search(asked):
        found = [(a, b) for a, b in found if not _PER_UNIT.search(text[max(0, a - 8) : a])]
    return bool(found)


_ASCII_UNITS: Final = tuple(u for u in UNITS if u.isascii() and u.isalpha())


_CODE = re.compile(r"(?<![0-9a-z])[0-9a-z]+(?:[._\-/:+][0-9a-z]+)*")


def codes(question: str) -> list[str]:
    """The codes and ASCII words of a question, whole and lower-cased (aq-300, wi-fi); not
    numbers or quantities (30ml)."""
    return [
        code
        for code in dict.fromkeys(_CODE.findall(folded(question)))
        if len(code) >= 2
        and code not in UNITS
        and any(ch.isalpha() for ch in code)
        and not re.fullmatch(r"[\d.,]+(?:" + "|".join(_ASCII_UNITS) + ")?", code)
    ]


FIGURES: Final = frozenset({"money", "number", "time"})
"""Kinds of fact a condition changes; documents state a way or a person under a condition in
other words than the question's (急に熱が出たとき → 当日の体調不良)."""


_ABOUT = (
    r"(?:約|およそ|最大|最長|最短|最低|最高|年間|月額|1泊あたり|1回)?(?:\d{4}年)?(?:\d{1,2}月)?"
)
_BOUND = r"(?:前|後)?(?:以上|以下|未満|以内|まで|程度|ほど)?"


def short_answer(kind: AnswerKind, text: str) -> str | None:
    """The asked amount or quantity alone as a first line (``約9.2kgです。``), when ``text``
    holds exactly one of the asked kind; else None (two figures need their rows)."""
    if kind.kind == "money":
        unit = r"(?:[万億兆千]\s*)*(?:円|ドル|ユーロ)"
    elif kind.kind == "number" and kind.unit is not None and kind.unit not in PATTERNED:
        unit = _with_unit(kind.unit)
    else:
        return None
    plain = unicodedata.normalize("NFKC", text)
    found = {
        m.group().strip()
        for m in re.finditer(
            _ABOUT + r"\d[\d,]*(?:\.\d+)?\s*" + unit + _BOUND, plain, re.IGNORECASE
        )
    }
    if len(found) != 1:
        return None
    return f"{found.pop()}です。"
