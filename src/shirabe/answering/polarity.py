"""Yes-or-no questions: a reply that says yes where the passage says no.

A small model answers 「はい、使わなかった分は翌年度に繰り越せます。」 to 「使わなかった分は翌年度に
繰り越せますか？」 when the sentence it read says 「未使用分は翌年度に繰り越さない。」. The asked
verb's stem (繰り越 of 繰り越せますか, 付 of 付いていますか) is what the two share.
"""

from __future__ import annotations

import re

from shirabe.text.normalize import folded

_ASKS = re.compile(r"何|どう|どの|どれ|どこ|どちら|誰|だれ|いつ|いくら|なぜ|どうして")
_OKURIGANA = r"(?![はにをがでとのもへやか])[\u3041-\u3093]"  # り of 繰り越, not a particle
_ASKED_VERB = re.compile(
    rf"([\u4e00-\u9fff々]+(?:{_OKURIGANA}[\u4e00-\u9fff々]+)*)[\u3041-\u3093]*ますか[?？]?\s*$"
)
_YES = re.compile(r"^\s*はい")


def asked_verb(question: str) -> str | None:
    """The stem of the verb a yes-or-no question asks about (繰り越 of 翌年度に繰り越せますか),
    or None for a question that asks for something (何, いつ, どこ …) or ends otherwise."""
    text = folded(question).strip()
    if _ASKS.search(text):
        return None
    found = _ASKED_VERB.search(text)
    return found.group(1) if found else None


def says_no(stem: str, text: str) -> bool:
    """Whether ``text`` writes the verb negated (繰り越さない, 使えません, 認めず)."""
    plain = folded(text)
    pattern = re.escape(stem) + r"[\u3041-\u3093]{0,6}?(?:ない|ません|ず(?!つ))"
    return re.search(pattern, plain) is not None


def contradicts(question: str, reply: str, quoted: str) -> bool:
    """Whether the reply says yes (はい…) to a yes-or-no question while the quoted sentences
    that answer it write the asked verb negated."""
    stem = asked_verb(question)
    plain = folded(reply)
    return stem is not None and _YES.match(plain) is not None and says_no(stem, quoted)
