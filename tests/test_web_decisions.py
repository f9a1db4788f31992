"""Answering from the window, in Debian's Chromium (Playwright) at 1280 and 420 px, against the
real server over the fixture world and its real decision book, into which the tests open
requests the way a holder does: board cards of sessions with a pending request get Approve /
Deny / Always allow (with the rule), the replay shows them at the pending call, a question gets
a reply box with its options as buttons (AskUserQuestion's; Codex's request_user_input with
several questions); they answer through the API with origin "window", come and go live with
the events stream, and a late answer is a short inline message."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_harness import (
    APPROVE,
    APPROVE_COMMAND,
    ENDED_CODEX,
    QUESTION,
    QUESTION_TEXT,
    World,
    answered,
    open_replay,
)

from agentbar.core.decisions import (
    BookChange,
    Decision,
    PendingRequest,
    Question,
    RequestKind,
    Route,
    Verdict,
)

RULE = "Bash(rm -rf build/:*)"
WIDTHS = (1280, 420)


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def narrow_or_wide(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A page at each width, failing on any error inside it."""
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.width = request.param
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"errors in the page: {errors}"


def approval(request_id: str, *, rule: str | None = RULE) -> PendingRequest:
    return PendingRequest(
        request_id=request_id, agent="claude", session_id=APPROVE, kind=RequestKind.APPROVAL,
        route=Route.HOOK, tool="Bash", summary=APPROVE_COMMAND, opened_at=time.time(),
        always_rule=rule,
    )  # fmt: skip


def ask(request_id: str) -> PendingRequest:
    return PendingRequest(
        request_id=request_id, agent="claude", session_id=QUESTION, kind=RequestKind.QUESTION,
        route=Route.HOOK, tool="AskUserQuestion", summary=QUESTION_TEXT, opened_at=time.time(),
        questions=(Question(QUESTION_TEXT, "Framework", ("pytest", "unittest")),),
    )  # fmt: skip


def codex_questions(request_id: str) -> PendingRequest:
    return PendingRequest(
        request_id=request_id, agent="codex", session_id=ENDED_CODEX, kind=RequestKind.QUESTION,
        route=Route.TERMINAL, tool="request_user_input", summary="Two questions",
        opened_at=time.time(), task_id=None,
        questions=(Question("Which branch?", "Branch", ("main", "dev")),
                   Question("Anything to add?", "Notes")),
    )  # fmt: skip


def board_box(session_id: str, agent: str = "claude") -> str:
    return f'.card-decisions[data-key="{agent}:{session_id}"] .decision'


def fits(page: Any, selector: str) -> bool:
    """Nothing of it sticks out past the viewport's right edge."""
    return bool(
        page.locator(selector).evaluate(
            "el => el.getBoundingClientRect().right <= window.innerWidth + 1"
        )
    )


def test_board_cards_answer_and_buttons_come_and_go_live(
    narrow_or_wide: Any, world: World, book: list[BookChange], artifacts: Path
) -> None:
    page = narrow_or_wide
    page.goto(world.url("/"))
    page.wait_for_selector("#app[data-ready='true']")
    assert page.locator(".decision").count() == 0
    world.decisions.open(approval(f"w1x{page.width}"))
    box = page.locator(board_box(APPROVE))
    box.wait_for()
    labels = [b.inner_text() for b in box.locator("button").all()]
    assert labels == ["Approve", "Deny", f"Always allow {RULE}"]
    assert APPROVE_COMMAND in box.locator(".decision-what").inner_text()
    assert fits(page, board_box(APPROVE))
    page.screenshot(path=str(artifacts / f"board-{page.width}.png"), full_page=True)
    # Answered in the terminal first: withdrawn, the buttons vanish at once.
    world.decisions.withdraw(f"w1x{page.width}", "answered in the terminal")
    box.wait_for(state="detached")
    world.decisions.open(approval(f"w2x{page.width}", rule=None))
    box.wait_for()
    assert [b.inner_text() for b in box.locator("button").all()] == ["Approve", "Deny"]
    box.locator("button[data-verdict='allow']").click()
    assert answered(book, f"w2x{page.width}", world) == Decision(
        f"w2x{page.width}", Verdict.ALLOW, "window"
    )
    box.wait_for(state="detached")


def test_a_late_answer_is_a_short_inline_message(
    narrow_or_wide: Any, world: World, book: list[BookChange]
) -> None:
    page = narrow_or_wide
    page.goto(world.url("/"))
    page.wait_for_selector("#app[data-ready='true']")
    world.decisions.open(approval(f"w3x{page.width}"))
    box = page.locator(board_box(APPROVE))
    box.wait_for()
    # The page has not heard yet that the terminal answered first (its news held back here).
    page.evaluate("() => { window.agentbarApp.events.receive = () => {}; }")
    world.decisions.withdraw(f"w3x{page.width}", "answered in the terminal")
    box.locator("button[data-verdict='deny']").click()
    note = box.locator(".decision-note")
    note.filter(has_text="Already answered").wait_for()
    assert note.inner_text() == "Already answered elsewhere: nothing was sent."
    assert box.locator("button:visible").count() == 0
    assert [c.decision for c in book] == [None, None]  # opened, withdrawn: nothing decided


def test_replay_shows_the_buttons_at_the_pending_call(
    narrow_or_wide: Any, world: World, book: list[BookChange], artifacts: Path
) -> None:
    page = narrow_or_wide
    world.decisions.open(approval(f"w4x{page.width}"))
    open_replay(page, world, APPROVE)
    box = page.locator(".item.focus .replay-decisions .decision")
    box.wait_for()
    assert page.locator(".replay-decisions").get_attribute("data-at") == "call"
    assert APPROVE_COMMAND in page.locator(".item.focus .tool-summary").inner_text()
    assert fits(page, ".item.focus .decision")
    page.screenshot(path=str(artifacts / f"replay-{page.width}.png"))
    box.locator("button[data-verdict='allow_always']").click()
    assert answered(book, f"w4x{page.width}", world) == Decision(
        f"w4x{page.width}", Verdict.ALLOW_ALWAYS, "window"
    )
    box.wait_for(state="detached")
    # A request opened while the replay is open: its buttons appear there, live.
    world.decisions.open(approval(f"w5x{page.width}"))
    box.wait_for()
    box.locator("button[data-verdict='deny']").click()
    assert answered(book, f"w5x{page.width}", world) == Decision(
        f"w5x{page.width}", Verdict.DENY, "window"
    )


def test_a_question_gets_a_reply_box_with_its_options(
    narrow_or_wide: Any, world: World, book: list[BookChange]
) -> None:
    page = narrow_or_wide
    world.decisions.open(ask(f"w6x{page.width}"))
    open_replay(page, world, QUESTION)
    box = page.locator(".replay-decisions .decision-question")
    box.wait_for()
    assert QUESTION_TEXT in box.locator(".decision-what").inner_text()
    options = [b.inner_text() for b in box.locator("button.option").all()]
    assert options == ["pytest", "unittest"]
    box.locator("button.option", has_text="unittest").click()
    assert answered(book, f"w6x{page.width}", world) == Decision(
        f"w6x{page.width}", Verdict.REPLY, "window", replies=("unittest",)
    )
    # Words of one's own: typed, sent.
    world.decisions.open(ask(f"w7x{page.width}"))
    box.wait_for()
    box.locator("input.reply-field").fill("pytest, with xdist")
    box.locator("button.send").click()
    assert answered(book, f"w7x{page.width}", world) == Decision(
        f"w7x{page.width}", Verdict.REPLY, "window", replies=("pytest, with xdist",)
    )


def test_codex_request_user_input_with_two_questions_on_the_board(
    narrow_or_wide: Any, world: World, book: list[BookChange]
) -> None:
    page = narrow_or_wide
    page.goto(world.url("/"))
    page.wait_for_selector("#app[data-ready='true']")
    before = page.title()
    world.decisions.open(codex_questions(f"w8x{page.width}"))
    box = page.locator(board_box(ENDED_CODEX, "codex"))
    box.wait_for()
    # The window's title counts it among those that need you.
    count = int(before[1 : before.index(")")])
    page.wait_for_function(f"() => document.title.startsWith('({count + 1}) ')")
    # Its session is among those that need you now.
    needs = page.locator(f'.group-needs .card[data-key="codex:{ENDED_CODEX}"]')
    assert needs.count() == 1
    fields = box.locator("input.reply-field")
    assert fields.count() == 2
    assert fits(page, board_box(ENDED_CODEX, "codex"))
    box.locator("button.send").click()  # nothing typed: nothing sent, the first field asks
    assert fields.nth(0).evaluate("el => el === document.activeElement")
    box.locator("button.option", has_text="dev").click()  # fills the first question's field
    fields.nth(1).fill("rebase first")
    box.locator("button.send").click()
    assert answered(book, f"w8x{page.width}", world) == Decision(
        f"w8x{page.width}", Verdict.REPLY, "window", replies=("dev", "rebase first")
    )
