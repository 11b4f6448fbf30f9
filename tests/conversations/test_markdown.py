"""A chat exported as Markdown: escaping by a hand-computed table, the whole file for a small
chat written out by hand, the owner's export only, a withheld answer, the size limit, and a
real Markdown renderer (with links from bare addresses on) finding no link, image or HTML in
hostile text."""

from __future__ import annotations

from typing import Any

import pytest
from markdown_it import MarkdownIt

from shirabe.conversations import Conversations
from shirabe.conversations.markdown import (
    CUT_NOTE,
    conversation_markdown,
    escape,
    file_name,
)
from shirabe.errors import NotFoundError
from shirabe.records import Conversation, StoredTurn

from tests.conversations.helpers import HANA, KEN, ask, turn


@pytest.mark.parametrize(
    ("text", "plain", "answer"),
    [
        ("9.2kg、AQ-300", "9.2kg、AQ-300", "9.2kg、AQ-300"),
        ("[資料](javascript:alert(1))", r"\[資料\](javascript\:alert(1))", None),
        ("![x](http://t.example/p.png)", r"\!\[x\](http\://t.example/p.png)", None),
        ("<img src=x onerror=alert(1)>", r"\<img src=x onerror=alert(1)\>", None),
        ("https://evil.example/a", r"https\://evil.example/a", None),
        ("www.evil.example", r"www\.evil.example", None),
        ("a@b.example", r"a\@b.example", None),
        ("&lt;b&gt;", r"\&lt;b\&gt;", None),
        ("`code`", r"\`code\`", None),
        ("C:\\temp", r"C:\\temp", None),
        ("# 見出し", r"\# 見出し", r"\# 見出し"),
        ("> 引用", r"\> 引用", None),
        ("---", r"\---", r"\---"),
        ("===", r"\===", r"\==="),
        ("1. 項目", r"1\. 項目", "1. 項目"),
        ("- 項目", r"\- 項目", "- 項目"),
        ("**太字**", r"\*\*太字\*\*", "**太字**"),
        ("A_B|C", r"A\_B\|C", "A_B|C"),
        ("一行目\r\n二行目", "一行目\n二行目", None),
    ],
)
def test_escape(text: str, plain: str, answer: str | None) -> None:
    assert escape(text) == plain
    assert escape(text, lists=True) == (plain if answer is None else answer)


def stored(
    position: int,
    question: str,
    answer: str,
    citations: list[dict[str, Any]],
    version: int = 1,
    versions: int = 1,
) -> StoredTurn:
    return StoredTurn(
        position, question, answer, False, "2025-01-01", citations=citations,
        version=version, versions=versions,
    )  # fmt: skip


def test_a_chat_as_markdown() -> None:
    chat = Conversation("c1", "AQ-300 重さ", "2025-01-01", "2025-01-01", 2)
    weight = stored(
        1,
        "AQ-300の重さは？",
        "- 本体: 約9.2kg[1]\n- 付属品: [2]",
        citations=[
            {"number": 1, "source": "製品/AQ-300仕様書.pdf", "heading_path": ["仕様", "本体"],
             "locator": {"page": 3}},
            {"number": 2, "source": "製品/価格表.xlsx", "heading_path": [],
             "locator": {"sheet": "一覧", "row": 12}},
            {"number": 3, "source": "製品/紹介.pptx", "heading_path": ["概要"],
             "locator": {"slide": 2}},
        ],
        version=2,
        versions=3,
    )  # fmt: skip
    salary = stored(2, "給与の支払日は？", "毎月25日[1]", citations=[{"number": 1}])
    text = conversation_markdown(
        chat,
        [(weight, ""), (salary, "（閲覧できないため表示しません）")],
        exported_at="2025-01-02T03:04:05Z",
        limit_bytes=100_000,
    )
    assert text == (
        "# AQ-300 重さ\n\n"
        "書き出し: 2025-01-02T03:04:05Z\n\n"
        "## 質問 1\n\nAQ-300の重さは？\n\n"
        "### 回答（回答 2/3）\n\n- 本体: 約9.2kg\\[1\\]\n- 付属品: \\[2\\]\n\n"
        "出典:\n\n"
        "- \\[1\\] 製品/AQ-300仕様書.pdf › 仕様 \\> 本体 › p.3\n"
        "- \\[2\\] 製品/価格表.xlsx › 一覧 › 行12\n"
        "- \\[3\\] 製品/紹介.pptx › 概要 › スライド2\n\n"
        "## 質問 2\n\n給与の支払日は？\n\n"
        "### 回答\n\n（閲覧できないため表示しません）\n\n"
    )


HOSTILE = (
    "[押してください](javascript:alert(1)) ![](http://tracker.example/p.png) "
    '<script>alert(2)</script> <a href="http://evil.example">x</a> '
    "https://evil.example/login www.evil.example <http://evil.example> &#x3C;b&#x3E;\n"
    "# 偽の見出し\n[ref]: http://evil.example\n[ref]\n---\n"
)


def test_hostile_text_renders_as_the_text_it_is() -> None:
    chat = Conversation("c1", "<b>題名</b> [x](y)", "2025-01-01", "2025-01-01", 1)
    hostile = stored(
        1,
        HOSTILE,
        HOSTILE,
        citations=[{"number": 1, "source": "<img src=x>.md", "heading_path": ["[h](j:x)"]}],
    )
    text = conversation_markdown(chat, [(hostile, "")], exported_at="now", limit_bytes=100_000)
    html = MarkdownIt("gfm-like").enable("linkify").render(text)
    for opened in ("<a ", "<img", "<script", "<b>", "<hr"):
        assert opened not in html, opened
    assert html.count("<h1>") == 1 and html.count("<h2>") == 1  # the export's own headings
    assert "[押してください](javascript:alert(1))" in html  # shown as written
    assert "https://evil.example/login" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_the_owner_exports_a_chat_with_withheld_answers_and_a_limit(
    kept: Conversations,
) -> None:
    made = kept.create(HANA, "有給休暇/申請?")
    ask(kept, HANA, made.id, "有給休暇の申請方法は？", "ミナモ勤怠から申請する[1]")
    ask(kept, HANA, made.id, "締め切りは？", "3営業日前まで[1]")

    def withheld(turn: StoredTurn) -> str:
        return "（表示しません）" if turn.position == 2 else ""

    name, text = kept.export(HANA, made.id, withheld=withheld, limit_bytes=100_000)
    assert name == "有給休暇 申請.md"
    assert "ミナモ勤怠から申請する\\[1\\]" in text and "- \\[1\\] 人事/就業規則.md" not in text
    assert "3営業日前まで" not in text and "（表示しません）" in text
    _, cut = kept.export(HANA, made.id, withheld=withheld, limit_bytes=len(text.encode()) - 10)
    assert "締め切りは？" not in cut and cut.endswith(CUT_NOTE + "\n")
    with pytest.raises(NotFoundError, match="not found"):
        kept.export(KEN, made.id, withheld=withheld, limit_bytes=100_000)
    kept.add_version(HANA, made.id, 1, turn("有給休暇の申請方法は？", "勤怠システムから[1]"))
    _, chosen = kept.export(HANA, made.id, withheld=withheld, limit_bytes=100_000)
    assert "勤怠システムから" in chosen and "ミナモ勤怠から" not in chosen  # the chosen one


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("AQ-300 重さ", "AQ-300 重さ.md"),
        ('a/b\\c:d*e?f"g<h>i|j', "a b c d e f g h i j.md"),
        ("...", "shirabe-c1.md"),
        ("", "shirabe-c1.md"),
    ],
)
def test_file_name(title: str, name: str) -> None:
    assert file_name(title, "shirabe-c1") == name
