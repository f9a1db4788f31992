"""The decision book's TERMINAL route with real PTYs: the scripted fake agent (``fake_agent.py``)
draws an approval dialog or a question on its screen; the task manager opens it in the book once,
types an answer given there as the agent's keys, withdraws it when it is answered in the terminal,
and a task taken back after ``quit`` (keep) shows the dialog that was up at once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from launch_rig import launch_rig, zombies_of_this_process
from polling import wait_for

from agentbar.core.decisions import (
    BookChange,
    Decision,
    DecisionBook,
    PendingRequest,
    RequestKind,
    Route,
    StaleRequest,
    Verdict,
)
from agentbar.core.model import Agent, State, WaitingFor

pytestmark = pytest.mark.slow
CLAUDE, CODEX = Agent("claude"), Agent("codex")


@pytest.fixture(autouse=True)
def no_zombies():
    yield
    wait_for(lambda: not zombies_of_this_process(), 5.0, "every child reaped")


class Heard:
    """Every change of a book, in order."""

    def __init__(self, book: DecisionBook) -> None:
        self.changes: list[BookChange] = []
        book.subscribe(self.changes.append)

    def opened(self) -> list[PendingRequest]:
        return [c.request for c in self.changes if c.opened]


def one_request(book: DecisionBook, task_id: str, what: str = "the request") -> PendingRequest:
    def look() -> PendingRequest | None:
        found = book.for_session(task_id)
        return found[0] if len(found) == 1 else None

    return wait_for(look, 10, what)


@pytest.mark.parametrize("agent", [CLAUDE, CODEX])
def test_an_approval_on_screen_is_one_request_and_its_answer_runs_the_command(
    tmp_path: Path, agent: Agent
):
    book = DecisionBook()
    heard = Heard(book)
    with launch_rig(tmp_path) as rig:
        manager = rig.manager(decisions=book)
        info = rig.bound(manager, rig.launch(manager, agent).task_id)
        manager.send_text(info.task_id, "run: touch approved.txt")
        request = one_request(book, info.task_id)
        assert (request.route, request.kind) == (Route.TERMINAL, RequestKind.APPROVAL)
        assert (request.task_id, request.session_id) == (info.task_id, info.session_id)
        assert request.agent == str(agent) and request.summary.startswith("touch approved.txt")
        assert request.tool == ("Bash" if agent == CLAUDE else "shell")
        assert request.verdicts() == (Verdict.ALLOW, Verdict.DENY)
        rig.state(info, lambda s: s.state.waiting_for is WaitingFor.APPROVAL)
        time.sleep(0.5)  # redraws and re-reads of the same dialog open nothing more
        assert len(heard.opened()) == 1
        book.decide(Decision(request.request_id, Verdict.ALLOW, origin="test"))
        wait_for((rig.project / "approved.txt").exists, 10, "the command to run")
        wait_for(lambda: manager.get(info.task_id).waiting is None, 5, "the prompt to clear")
        rig.state(info, lambda s: s.state.state is State.DONE)
        assert book.pending() == () and len(heard.opened()) == 1
        with pytest.raises(StaleRequest):  # answered once: a second answer types nothing
            book.decide(Decision(request.request_id, Verdict.DENY, origin="test"))


def test_a_denial_from_the_book_refuses_and_its_message_is_sent(tmp_path: Path):
    book = DecisionBook()
    with launch_rig(tmp_path) as rig:
        manager = rig.manager(decisions=book)
        info = rig.bound(manager, rig.launch(manager, CLAUDE).task_id)
        manager.send_text(info.task_id, "run: touch denied.txt")
        request = one_request(book, info.task_id)
        book.decide(Decision(request.request_id, Verdict.DENY, "test", message="use ls"))
        wait_for(lambda: "You said: use ls" in manager.task(info.task_id).screen_text(), 15,
                 "the message as the next prompt")  # fmt: skip
        assert not (rig.project / "denied.txt").exists()
        assert book.pending() == ()


def test_answered_in_the_terminal_the_request_is_withdrawn(tmp_path: Path):
    book = DecisionBook()
    heard = Heard(book)
    with launch_rig(tmp_path) as rig:
        manager = rig.manager(decisions=book)
        info = rig.bound(manager, rig.launch(manager, CODEX).task_id)
        manager.send_text(info.task_id, "run: touch typed.txt")
        request = one_request(book, info.task_id)
        time.sleep(0.5)  # the dialog takes keys only a moment after it appeared
        manager.send_bytes(info.task_id, b"y")  # a person at the terminal
        # The listeners hear the close just after the book is empty: wait for what they hear.
        wait_for(lambda: [c for c in heard.changes if not c.opened], 5, "the request withdrawn")
        assert book.pending() == ()
        closed = [c for c in heard.changes if not c.opened]
        assert [c.request.request_id for c in closed] == [request.request_id]
        assert closed[0].decision is None and "left the task's screen" in (closed[0].reason or "")
        wait_for((rig.project / "typed.txt").exists, 10, "the command to run")


def test_the_tasks_own_approve_answers_the_request_in_the_book(tmp_path: Path):
    book = DecisionBook()
    heard = Heard(book)
    with launch_rig(tmp_path) as rig:
        manager = rig.manager(decisions=book)
        info = rig.bound(manager, rig.launch(manager, CLAUDE).task_id)
        manager.send_text(info.task_id, "run: touch menu.txt")
        request = one_request(book, info.task_id)
        answer = manager.approve(info.task_id, origin="menu")
        assert answer.cleared
        wait_for((rig.project / "menu.txt").exists, 10, "the command to run")
        closed = [c for c in heard.changes if not c.opened]
        assert [c.request.request_id for c in closed] == [request.request_id]
        assert closed[0].decision is not None and closed[0].decision.origin == "menu"
        assert len(heard.opened()) == 1 and book.pending() == ()


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("2", "You chose: Blue"),
        ("red", "You chose: Red"),
        ("teal, please", "You wrote: teal, please"),
    ],
)
def test_a_question_on_screen_is_answered_with_an_option_or_typed_text(
    tmp_path: Path, reply: str, said: str
):
    book = DecisionBook()
    with launch_rig(tmp_path) as rig:
        manager = rig.manager(decisions=book)
        info = rig.bound(manager, rig.launch(manager, CLAUDE).task_id)
        manager.send_text(info.task_id, "ask: Which color? | Red | Blue")
        request = one_request(book, info.task_id)
        assert request.kind is RequestKind.QUESTION and request.verdicts()[0] is Verdict.REPLY
        assert [(q.text, q.options) for q in request.questions] == [
            ("Which color?", ("Red", "Blue"))
        ]
        assert manager.get(info.task_id).waiting is None  # not an approval: no Approve button
        assert manager.get(info.task_id).asking is not None
        book.decide(Decision(request.request_id, Verdict.REPLY, "test", replies=(reply,)))
        wait_for(lambda: said in manager.task(info.task_id).screen_text(), 10, said)
        wait_for(lambda: book.pending() == (), 2, "nothing left in the book")


def test_a_reply_that_fits_no_option_is_asked_again(tmp_path: Path):
    book = DecisionBook()
    with launch_rig(tmp_path) as rig:
        manager = rig.manager(decisions=book)
        info = rig.bound(manager, rig.launch(manager, CLAUDE).task_id)
        manager.send_text(info.task_id, "ask: Which color? | Red | Blue")
        first = one_request(book, info.task_id)
        book.decide(Decision(first.request_id, Verdict.REPLY, "test", replies=("7",)))
        again = wait_for(
            lambda: next((r for r in book.for_session(info.task_id) if r != first), None), 10,
            "the question offered again",
        )  # fmt: skip
        assert again.request_id != first.request_id and again.questions == first.questions
        book.decide(Decision(again.request_id, Verdict.DENY, "test"))
        wait_for(lambda: "You dismissed it." in manager.task(info.task_id).screen_text(), 10,
                 "the dialog dismissed")  # fmt: skip


def test_a_task_taken_back_after_quit_shows_its_prompt_and_is_approvable_at_once(tmp_path: Path):
    """Issue 17's take-over bug: the saved scrollback reaches the VT screen of the next
    agentbar, so the prompt already up is seen, in the book, and answered."""
    first_book, second_book = DecisionBook(), DecisionBook()
    with launch_rig(tmp_path) as rig:
        first = rig.manager(decisions=first_book)
        info = rig.bound(first, rig.launch(first, CLAUDE).task_id)
        first.send_text(info.task_id, "run: touch after-restart.txt")
        one_request(first_book, info.task_id)
        first.shutdown(keep=True)
        assert first_book.pending() == ()  # kept: this agentbar no longer holds it

        second = rig.manager(decisions=second_book)
        back = second.get(info.task_id)
        assert back.adopted and back.waiting is not None  # at once, with no new output
        assert back.waiting.question == "Do you want to proceed?"
        assert [t.task_id for t in second.waiting()] == [info.task_id]
        request = one_request(second_book, info.task_id)
        assert request.session_id == info.session_id
        rig.state(back, lambda s: s.state.waiting_for is WaitingFor.APPROVAL)
        second_book.decide(Decision(request.request_id, Verdict.ALLOW, origin="test"))
        wait_for((rig.project / "after-restart.txt").exists, 10, "the command to run")
        rig.state(back, lambda s: s.state.state is State.DONE)


def test_a_task_taken_back_is_approvable_by_its_own_approve(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        first = rig.manager()
        info = rig.bound(first, rig.launch(first, CODEX).task_id)
        first.send_text(info.task_id, "run: touch kept.txt")
        wait_for(lambda: first.get(info.task_id).waiting, 10, "the prompt")
        first.shutdown(keep=True)
        second = rig.manager()
        assert second.approve(info.task_id).cleared
        wait_for((rig.project / "kept.txt").exists, 10, "the command to run")
