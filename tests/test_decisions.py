"""The decision book: an answer lands only on the request it names, once; withdrawn and
answered requests refuse later answers; waiters and listeners hear every close."""

from __future__ import annotations

import threading

import pytest

from agentbar.core.decisions import (
    BookChange,
    Decision,
    DecisionBook,
    PendingRequest,
    Question,
    RequestKind,
    Route,
    StaleRequest,
    Verdict,
    WrongAnswer,
    new_request_id,
)


def approval(session: str = "s1", *, always: str | None = None, at: float = 1.0) -> PendingRequest:
    return PendingRequest(
        request_id=new_request_id(), agent="claude", session_id=session,
        kind=RequestKind.APPROVAL, route=Route.HOOK, tool="Bash", summary="rm -rf build",
        opened_at=at, always_rule=always,
    )  # fmt: skip


def test_an_answer_lands_on_its_request_once_and_a_later_one_is_refused() -> None:
    book = DecisionBook()
    first = approval()
    book.open(first)
    assert book.decide(Decision(first.request_id, Verdict.ALLOW, "cli")) == first
    assert book.wait(first.request_id, 0) == Decision(first.request_id, Verdict.ALLOW, "cli")
    second = approval()  # the same session's next request
    book.open(second)
    with pytest.raises(StaleRequest):
        book.decide(Decision(first.request_id, Verdict.DENY, "notification"))
    assert book.pending() == (second,)


def test_withdrawn_requests_refuse_answers_and_wake_waiters_without_one() -> None:
    book = DecisionBook()
    request = approval()
    book.open(request)
    answers: list[Decision | None] = []
    waiter = threading.Thread(target=lambda: answers.append(book.wait(request.request_id, 10)))
    waiter.start()
    assert book.withdraw(request.request_id, "answered in the terminal")
    waiter.join(5)
    assert answers == [None]
    assert not book.withdraw(request.request_id, "again")
    with pytest.raises(StaleRequest):
        book.decide(Decision(request.request_id, Verdict.ALLOW, "menu"))


def test_answers_must_fit_the_request() -> None:
    book = DecisionBook()
    plain, offered = approval(), approval(always="Bash(npm test:*)")
    question = PendingRequest(
        request_id=new_request_id(), agent="claude", session_id="s2", kind=RequestKind.QUESTION,
        route=Route.TERMINAL, tool="AskUserQuestion", summary="Which colour?", opened_at=2.0,
        questions=(Question("Which colour?", "Colour", ("red", "blue")),), task_id="t1",
    )  # fmt: skip
    for request in (plain, offered, question):
        book.open(request)
    with pytest.raises(WrongAnswer):
        book.decide(Decision(plain.request_id, Verdict.ALLOW_ALWAYS, "window"))
    with pytest.raises(WrongAnswer):
        book.decide(Decision(plain.request_id, Verdict.REPLY, "window", replies=("x",)))
    with pytest.raises(WrongAnswer):
        book.decide(Decision(question.request_id, Verdict.REPLY, "window", replies=()))
    assert book.get(plain.request_id) == plain  # a refused answer leaves it open
    book.decide(Decision(offered.request_id, Verdict.ALLOW_ALWAYS, "window"))
    book.decide(Decision(question.request_id, Verdict.REPLY, "cli", replies=("blue",)))
    assert book.for_session("t1") == ()
    assert book.for_session("s1") == (plain,)


def test_listeners_hear_opens_and_closes_and_a_failing_listener_harms_nobody() -> None:
    book = DecisionBook()
    heard: list[BookChange] = []

    def broken(change: BookChange) -> None:
        raise RuntimeError("listener bug")

    book.subscribe(broken)
    unsubscribe = book.subscribe(heard.append)
    request = approval()
    book.open(request)
    book.decide(Decision(request.request_id, Verdict.DENY, "cli", message="not now"))
    unsubscribe()
    book.open(approval())
    assert [(c.opened, c.decision and c.decision.verdict) for c in heard] == [
        (True, None), (False, Verdict.DENY),
    ]  # fmt: skip
    with pytest.raises(ValueError):
        book.open(request)  # an id is never reused


def test_pending_is_oldest_first() -> None:
    book = DecisionBook()
    late, early = approval(at=5.0), approval(at=1.0)
    book.open(late)
    book.open(early)
    assert book.pending() == (early, late)


def test_two_threads_answering_one_request_give_one_answer() -> None:
    book = DecisionBook()
    request = approval()
    book.open(request)
    results: list[str] = []
    start = threading.Barrier(8)

    def answer(verdict: Verdict) -> None:
        start.wait()
        try:
            book.decide(Decision(request.request_id, verdict, "cli"))
            results.append("ok")
        except StaleRequest:
            results.append("stale")

    verdicts = [Verdict.ALLOW, Verdict.DENY] * 4
    threads = [threading.Thread(target=answer, args=(v,)) for v in verdicts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert sorted(results) == ["ok"] + ["stale"] * 7
