"""What the terminal shows of a streamed answer, from scripted answer events."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console

from shirabe.cli import render
from shirabe.records import Answer, DoneEvent, GenerationEvent, TokenEvent


class Scripted:
    """Streams the given pieces, then finishes with ``final``."""

    def __init__(self, pieces: list[str], final: str) -> None:
        self.pieces = pieces
        self.final = final

    def ask_stream(self, question: str, **_: object) -> Iterator[GenerationEvent]:
        for piece in self.pieces:
            yield TokenEvent(piece)
        yield DoneEvent(Answer(question, self.final, [], False, []))


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    buffer = io.StringIO()
    monkeypatch.setattr(render, "out", Console(file=buffer, width=200, color_system=None))
    return buffer


def test_the_streamed_text_is_printed_once(shown: io.StringIO) -> None:
    app = Scripted(["国内出張の日当は", "3000円です[1]。"], "国内出張の日当は3000円です[1]。")
    answer = render.stream_answer(app, "日当は？", None)  # type: ignore[arg-type]
    assert answer is not None
    assert shown.getvalue() == "国内出張の日当は3000円です[1]。\n"


def test_a_replaced_reply_is_followed_by_the_answer_given(shown: io.StringIO) -> None:
    app = Scripted(["社員食堂は11時からです。"], "国内出張の日当は3000円。[1]")
    render.stream_answer(app, "日当は？", None)  # type: ignore[arg-type]
    lines = shown.getvalue().splitlines()
    assert lines[0] == "社員食堂は11時からです。"
    assert "置き換えます" in lines[1]
    assert lines[2] == "国内出張の日当は3000円。[1]"
