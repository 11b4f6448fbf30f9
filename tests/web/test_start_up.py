"""The page while it starts, in a real browser against a real server: a question sent before
the conversation list has arrived stays in the chat with its answer, and the list, whenever it
arrives, shows the conversation the question started as the open one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.helpers import settled, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser]

QUESTION = "有給休暇の申請方法は？"
OPEN = "() => new URLSearchParams(location.hash.slice(1)).get('c')"


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(locale="ja-JP")
    yield context
    context.close()


def starting(context: Any, server: dict[str, str], *held_ones: str) -> tuple[Any, dict[str, Any]]:
    """A page signed in while the first of each of ``held_ones`` is held: ``GET`` the
    conversation list read at start-up, ``ASK`` the first question's answer (which makes its
    conversation); the page, and the held routes, for the test to continue or answer."""
    page = context.new_page()
    page.set_default_timeout(60_000)
    held: dict[str, Any] = {}

    def hold(kind: str) -> Any:
        def route_it(route: Any) -> None:
            if kind in held_ones and kind not in held and route.request.method in ("GET", "POST"):
                held[kind] = route
            else:
                route.continue_()

        return route_it

    page.route("**/api/conversations", hold("GET"))
    page.route("**/api/ask/stream", hold("ASK"))
    sign_in(page, server["url"], server["token"])  # the app shows before the list arrives
    return page, held


def wait_until_held(page: Any, held: dict[str, Any], *kinds: str) -> None:
    for _ in range(600):
        if all(kind in held for kind in kinds):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"the page never asked for {kinds}; held: {list(held)}")


def send(page: Any) -> None:
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")


def test_a_question_sent_before_the_list_arrives_keeps_its_place(
    context: Any, server: dict[str, str]
) -> None:
    page, held = starting(context, server, "GET", "ASK")
    wait_until_held(page, held, "GET")
    send(page)
    wait_until_held(page, held, "ASK")
    # the list arrives while the question's answer (and conversation) is still being made
    held["GET"].continue_()
    page.wait_for_selector("#conversations > *")
    assert page.locator(".empty").count() == 0, "start-up showed the empty chat over the question"
    assert page.locator(".msg.q").all_inner_texts() == [QUESTION]
    held["ASK"].continue_()
    settled(page, 1)
    answer = page.locator(".msg.a").first
    assert "error" not in (answer.get_attribute("class") or "")
    assert answer.get_attribute("data-turn") == "1"
    conversation = page.evaluate(OPEN)
    assert conversation, "the question's conversation is in the address"
    page.wait_for_selector(f'#conversations li.current[data-id="{conversation}"]')
    assert page.locator("#conversations li.current").count() == 1
    page.unroute("**/api/conversations")
    page.unroute("**/api/ask/stream")


def test_a_list_read_before_the_question_never_hides_its_conversation(
    context: Any, server: dict[str, str]
) -> None:
    page, held = starting(context, server, "GET")
    wait_until_held(page, held, "GET")
    stale = held["GET"].fetch()  # the server reads the list now, before the question is sent
    send(page)
    settled(page, 1)
    conversation = page.evaluate(OPEN)
    current = f'#conversations li.current[data-id="{conversation}"]'
    page.wait_for_selector(current)  # the list read after the answer
    with page.expect_response("**/api/conversations") as arrived:
        held["GET"].fulfill(response=stale)  # the start-up list comes last
    arrived.value.finished()
    page.wait_for_timeout(500)  # time enough for the page to show it, were it to
    assert page.locator(current).count() == 1, "the list read before the question replaced it"
    assert page.locator(".msg.q").all_inner_texts() == [QUESTION]
    assert page.evaluate(OPEN) == conversation
    page.unroute("**/api/conversations")
    page.unroute("**/api/ask/stream")
