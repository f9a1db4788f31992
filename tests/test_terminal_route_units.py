"""The TERMINAL route's bookkeeping without a PTY (pure logic over a real ``DecisionBook``): one
request per dialog (kept as it is when the task is bound meanwhile), withdrawn when the dialog
leaves, an answer handed to the delivery once, and offered again when it did not clear."""

from __future__ import annotations

import threading

from polling import wait_for

from agentbar.core.decisions import Decision, DecisionBook, RequestKind, Route, Verdict
from agentbar.core.launch.prompts import Prompt, PromptKind
from agentbar.core.launch.terminal_route import (
    LEFT_SCREEN,
    TASK_ENDED,
    Shown,
    TerminalRoute,
)
from agentbar.core.model import Agent

APPROVAL = Prompt("Do you want to proceed?", ("Do you want to proceed?", "❯ 1. Yes"),
                  context=("Bash command", "touch x"))  # fmt: skip
MOVED = Prompt("Do you want to proceed?", ("Do you want to proceed?", "  1. Yes"),
               context=("Bash command", "touch x"))  # fmt: skip
QUESTION = Prompt("Which color?", ("❯ 1. Red",), PromptKind.QUESTION, ("Red", "Blue"), 3)
UNBOUND = Shown("t1", Agent("claude"), None)
BOUND = Shown("t1", Agent("claude"), "s1")


class Delivery:
    def __init__(self, still_up: Prompt | None = None) -> None:
        self.calls: list[tuple[str, Prompt, Decision]] = []
        self.still_up = still_up
        self.release = threading.Event()
        self.release.set()

    def __call__(self, task_id: str, prompt: Prompt, decision: Decision) -> Prompt | None:
        self.calls.append((task_id, prompt, decision))
        self.release.wait(5)
        return self.still_up


def reasons(book: DecisionBook) -> list[str | None]:
    found: list[str | None] = []
    book.subscribe(lambda c: None if c.opened else found.append(c.reason))
    return found


def test_one_request_per_dialog_with_the_session_id_when_bound():
    book = DecisionBook()
    closed = reasons(book)
    route = TerminalRoute(book, Delivery())
    route.shown(UNBOUND, APPROVAL)
    route.shown(UNBOUND, MOVED)  # its highlight moved: the same dialog
    (first,) = book.pending()
    assert (first.route, first.kind, first.task_id, first.session_id) == (
        Route.TERMINAL, RequestKind.APPROVAL, "t1", "")  # fmt: skip
    assert (first.tool, first.summary) == ("Bash", "touch x")
    route.shown(BOUND, APPROVAL)  # bound meanwhile: a person may be answering it already
    assert book.pending() == (first,) and closed == []
    route.shown(BOUND, None)
    assert book.pending() == () and closed == [LEFT_SCREEN]
    route.shown(BOUND, APPROVAL)
    (second,) = book.pending()
    assert second.session_id == "s1" and second.request_id != first.request_id
    route.shown(BOUND, QUESTION)
    (asked,) = book.pending()
    assert asked.kind is RequestKind.QUESTION and asked.questions[0].options == ("Red", "Blue")
    route.shown(BOUND, None, ended=True)
    assert closed[-1] == TASK_ENDED


def test_an_answer_is_delivered_once_and_its_own_keys_open_nothing_new():
    book = DecisionBook()
    delivery = Delivery()
    delivery.release.clear()
    route = TerminalRoute(book, delivery)
    route.shown(BOUND, APPROVAL)
    (request,) = book.pending()
    book.decide(Decision(request.request_id, Verdict.ALLOW, "test"))
    wait_for(lambda: delivery.calls, 5, "the delivery")
    route.shown(BOUND, MOVED)  # the answer's keys move the highlight: not a new request
    assert book.pending() == ()
    delivery.release.set()
    route.shown(BOUND, None)
    assert [(t, p) for t, p, _ in delivery.calls] == [("t1", APPROVAL)]
    assert book.pending() == ()


def test_an_answer_that_did_not_clear_its_dialog_is_offered_again():
    book = DecisionBook()
    route = TerminalRoute(book, Delivery(still_up=APPROVAL))
    route.shown(BOUND, APPROVAL)
    (first,) = book.pending()
    book.decide(Decision(first.request_id, Verdict.ALLOW, "test"))
    again = wait_for(book.pending, 5, "offered again")[0]
    assert again.request_id != first.request_id and again.summary == first.summary


def test_a_hook_request_and_a_taken_request_are_not_delivered():
    book = DecisionBook()
    delivery = Delivery()
    route = TerminalRoute(book, delivery)
    route.shown(BOUND, APPROVAL)
    (request,) = book.pending()
    assert route.take("t1") == request  # the task's own approve() types it
    book.decide(Decision(request.request_id, Verdict.ALLOW, "menu"))
    route.answered("t1", None)
    assert delivery.calls == [] and book.pending() == ()
    route.shown(BOUND, QUESTION)
    route.close()  # quit: what is up is withdrawn
    assert book.pending() == ()
