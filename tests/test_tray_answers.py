"""The tray over the decision book: the tray's worker on a real engine (real files and SQLite,
fake clock and process table) with a real ``DecisionBook`` into which the tests open requests
the way a holder does, and the fake notifier. Each request opened raises one notice with the
buttons that answer it (Always allow only when offered, with its exact rule; a question's
options and an inline reply), coalesced like the rest; its "Needs you" entry answers it too;
a click answers that very request through the book; a late click is a short notice; a request
that closes takes its notice and its entries away at once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from engine_harness import Rig, make_rig
from test_tray_worker import A, B, Tray, start_waiting

from agentbar.core.clock import Clock
from agentbar.core.decisions import (
    BookChange,
    Decision,
    DecisionBook,
    PendingRequest,
    Question,
    RequestKind,
    Route,
    Verdict,
)
from agentbar.tray import actions
from agentbar.tray.actions import Action
from agentbar.tray.answer_entries import ANSWER, ANSWER_MENU, parse_answer
from agentbar.tray.answers import TrayAnswers
from agentbar.tray.view import Badge, Entry
from agentbar.tray.worker import TrayWorker

T_OPEN = 1_800_000_100.0
RULE = "Bash(npm run test:*)"


def approval(request_id: str, session: str = A, *, rule: str | None = RULE) -> PendingRequest:
    return PendingRequest(
        request_id=request_id, agent="claude", session_id=session, kind=RequestKind.APPROVAL,
        route=Route.HOOK, tool="Bash", summary="npm run test -- --watch=false",
        opened_at=T_OPEN, always_rule=rule,
    )  # fmt: skip


def question(request_id: str, session: str = A) -> PendingRequest:
    return PendingRequest(
        request_id=request_id, agent="claude", session_id=session, kind=RequestKind.QUESTION,
        route=Route.HOOK, tool="AskUserQuestion", summary="Which database?", opened_at=T_OPEN,
        questions=(Question("Which database should the tests use?", "Database",
                            ("SQLite", "Postgres")),),
    )  # fmt: skip


class Answering(Tray):
    """The worker with the book and the tray's answer handler, as ``tray/app.py`` wires them."""

    def __init__(
        self, rig: Rig, tmp_path: Path, book: DecisionBook, clock: Clock | None = None
    ) -> None:
        self.book = book
        super().__init__(rig, tmp_path)
        self.worker.stop()  # the parent's worker has no book: made again with it
        assert rig.engine is not None
        self.worker = TrayWorker(
            rig.engine, self.notifier, clock=clock or rig.clock, prefs=self.worker.prefs,
            pauses=self.worker.pauses, show=self.shown.append, open_page=self.opened.append,
            names=self.worker.names, decisions=book,
        )  # fmt: skip
        self.answers = TrayAnswers(
            book, lambda fault: self.worker.report(fault, lasting=False), self.worker.names
        )
        self.answers.register(self.worker.router)
        self.notifier.on_action = self.worker.post


@pytest.fixture
def rig(tmp_path: Path):
    r = make_rig(tmp_path)
    yield r
    r.close()


@pytest.fixture
def answered(tmp_path: Path) -> tuple[DecisionBook, list[BookChange]]:
    book = DecisionBook()
    changes: list[BookChange] = []
    book.subscribe(changes.append)
    return book, changes


def menu_of(tray: Tray, label_start: str) -> Entry:
    return next(e for e in tray.view.entries() if e.label.startswith(label_start))


def test_a_request_raises_one_notice_with_its_buttons_and_a_button_answers_it(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    book, changes = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    start_waiting(rig, A, 4242)
    book.open(approval("r1"))
    tray.step()
    # The session's plain "needs your approval" and its request came together: one notice, the
    # request's, with the buttons that answer it and the rule "Always allow" adds.
    (notice,) = tray.notifier.sent
    assert notice.title == "Claude Code in demo needs your approval"
    assert notice.body == f"Bash: npm run test -- --watch=false\nAlways allow adds: {RULE}"
    assert [b.label for b in notice.buttons] == ["Approve", "Deny", f"Always allow {RULE}"]
    assert notice.click == Action(actions.OPEN, f"/session/claude/{A}")
    assert notice.tag == "request-r1" and notice.requests == ("r1",) and notice.reply is None
    # The engine's repeats say nothing more.
    rig.tick()
    tray.step(2.0)
    assert len(tray.notifier.sent) == 1
    tray.notifier.click(button=f"Always allow {RULE}")
    tray.step()  # the click answers; the book's news of it comes next
    tray.step()
    decision = changes[-1].decision
    assert decision == Decision("r1", Verdict.ALLOW_ALWAYS, "notification")
    assert book.pending() == () and tray.notifier.withdrawn == ["request-r1"]


def test_always_allow_only_when_offered_and_a_late_click_is_a_short_notice(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    book, changes = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    book.open(approval("r2", rule=None))
    tray.step()
    (notice,) = tray.notifier.sent
    assert [b.label for b in notice.buttons] == ["Approve", "Deny"]
    assert "Always allow" not in notice.body
    # Answered in the terminal first: the holder withdraws it; the notice goes at once.
    book.withdraw("r2", "answered in the terminal")
    tray.step()
    assert tray.notifier.withdrawn == ["request-r2"]
    tray.notifier.click(0, button="Approve")  # still on the screen a moment: a late click
    tray.step()
    tray.step()
    late = tray.notifier.sent[-1]
    assert late.title == "Already answered"
    assert late.body == (
        "Claude Code's npm run test -- --watch=false is no longer waiting (answered in the "
        "terminal, or withdrawn): nothing was sent."
    )
    assert [c.decision for c in changes] == [None, None]  # opened, withdrawn: nothing decided


def test_a_question_offers_its_options_and_an_inline_reply(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    book, changes = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    book.open(question("q1"))
    book.open(question("q2", session=B))
    tray.step()
    first = tray.notifier.sent[0]
    assert first.title == "Claude Code in unknown folder has a question"
    assert first.body == "Which database should the tests use?"
    assert [b.label for b in first.buttons] == ["SQLite", "Postgres", "Open"]
    assert first.reply is not None and first.reply.label == "Reply"
    tray.notifier.click(0, button="Postgres")
    # The second came inside the coalescing window: told when it closes, as its own notice.
    tray.step(tray.worker.prefs.current.coalesce_seconds + 1)
    assert [n.tag for n in tray.notifier.sent] == ["request-q1", "request-q2"]
    tray.notifier.reply(1, "  MySQL, please ")
    tray.step()
    tray.step()
    assert [(c.request.request_id, c.decision) for c in changes if not c.opened] == [
        ("q1", Decision("q1", Verdict.REPLY, "notification", replies=("Postgres",))),
        ("q2", Decision("q2", Verdict.REPLY, "notification", replies=("MySQL, please",))),
    ]
    assert tray.notifier.withdrawn == ["request-q1", "request-q2"]


def test_needs_you_answers_every_sessions_requests_and_entries_vanish_when_closed(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    book, changes = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    start_waiting(rig, A, 4242)
    tray.step()
    assert menu_of(tray, "Claude Code · demo").action is not None  # no request: opens the replay
    book.open(approval("r3"))
    book.open(question("q3", session=B))  # a session the engine does not list as waiting
    tray.step()
    assert tray.view.badge == Badge(needs=2)
    entry = menu_of(tray, "Claude Code · demo")
    assert [e.label for e in entry.submenu] == [
        "Open replay", "", "Approve", "Deny", f"Always allow {RULE}",
    ]  # fmt: skip
    other = menu_of(tray, "Claude Code — asks: Which database")
    assert [e.label for e in other.submenu] == [
        "Open replay", "", "Reply: SQLite", "Reply: Postgres", "Deny",
    ]  # fmt: skip
    assert other.submenu[0].action == Action(actions.OPEN, f"/session/claude/{B}")
    assert all(e.action is None or e.action.kind in (actions.OPEN, ANSWER_MENU)
               for e in entry.submenu + other.submenu)  # fmt: skip
    tray.worker.post(entry.submenu[2].action or Action(""))
    tray.worker.post(other.submenu[2].action or Action(""))
    tray.step()
    tray.step()
    assert [c.decision for c in changes if not c.opened] == [
        Decision("r3", Verdict.ALLOW, "menu"),
        Decision("q3", Verdict.REPLY, "menu", replies=("SQLite",)),
    ]
    # Both closed: their entries are gone, the session is back to opening its replay.
    assert menu_of(tray, "Claude Code · demo").submenu == ()
    assert not any(e.label.startswith("Claude Code — asks") for e in tray.view.entries())


def test_a_request_that_closes_before_it_is_told_is_never_told(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    book, _ = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    book.open(approval("r4"))
    book.open(approval("r5", session=B))  # held by the coalescing window
    tray.step()
    book.withdraw("r5", "the hook gave up")
    tray.step(tray.worker.prefs.current.coalesce_seconds + 1)
    assert [n.tag for n in tray.notifier.sent] == ["request-r4"]


def test_answers_from_other_threads_reach_the_worker(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    """Opened and answered from elsewhere (a hook's thread, the server's): the tray hears it."""
    book, _ = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    opener = threading.Thread(target=book.open, args=(approval("r6"),))
    opener.start()
    opener.join()
    tray.step()
    assert tray.notifier.sent[-1].tag == "request-r6"
    book.decide(Decision("r6", Verdict.DENY, "window"))
    tray.step()
    assert tray.notifier.withdrawn == ["request-r6"] and tray.view.badge == Badge()


def test_answer_arguments_parse_back_and_refuse_nonsense() -> None:
    assert parse_answer("abc:allow").verdict is Verdict.ALLOW
    assert parse_answer("abc:reply:1").option == 1
    for bad in ("", "abc", ":allow", "abc:yes", "abc:allow:1", "abc:reply:x", "a:b:c:d"):
        with pytest.raises(ValueError):
            parse_answer(bad)
    assert Action(ANSWER, "x").text == ""


def test_a_launched_task_whose_request_the_book_holds_leaves_the_answers_to_it(
    tmp_path: Path,
) -> None:
    """A launched task's own Approve / Deny (typed into its terminal) step aside while the book
    holds its request: the request's notice and "Needs you" entry answer it, once."""
    from test_tray_launched import KEY, FakeTasks, info
    from tray_values import LAUNCHABLE, NAMES

    from agentbar.core.model import State, WaitingFor
    from agentbar.tray.launched import LaunchedAgents
    from agentbar.tray.notices import Transition

    book = DecisionBook()
    tasks = FakeTasks([info("a1", str(tmp_path), waiting="Do you want to proceed?",
                            session=KEY.session_id)])  # fmt: skip
    agents = LaunchedAgents(
        tasks, lambda: [], lambda: (), None, in_background=lambda work: work(), names=NAMES,
        launchable=LAUNCHABLE, asking=lambda task_id: bool(book.for_session(task_id)),
    )  # fmt: skip
    waiting = Transition(KEY, "/w", None, State.INPUT_REQUIRED, WaitingFor.APPROVAL, "Bash", 1.0)

    def task_choices() -> list[str]:
        return [e.label for e in agents.entries()[1].submenu if not e.separator]

    assert task_choices() == ["Approve", "Deny", "Open terminal", "Stop"]
    assert [b.label for b in agents.buttons(waiting)] == ["Approve", "Deny"]
    terminal = PendingRequest(
        request_id="t1", agent="claude", session_id=KEY.session_id, kind=RequestKind.APPROVAL,
        route=Route.TERMINAL, tool="Bash", summary="make", opened_at=T_OPEN, task_id="a1",
    )  # fmt: skip
    book.open(terminal)
    assert task_choices() == ["Open terminal", "Stop"]
    assert agents.buttons(waiting) == ()


def test_the_sessions_own_news_after_its_request_is_not_told_again(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    """The hook hands the request over before the engine sees the session wait: the request's
    notice says it all; the engine's "needs your approval" that follows adds nothing."""
    book, _ = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    book.open(approval("r7"))
    tray.step()
    start_waiting(rig, A, 4242)
    tray.step(5.0)
    tray.step(5.0)
    assert [n.tag for n in tray.notifier.sent] == ["request-r7"]


def test_a_burst_of_requests_is_one_summary_withdrawn_once_all_have_closed(
    rig: Rig, tmp_path: Path, answered: tuple[DecisionBook, list[BookChange]]
) -> None:
    book, _ = answered
    rig.open()
    tray = Answering(rig, tmp_path, book)
    book.open(approval("r8"))
    tray.step()
    book.open(approval("r9", session=B))
    book.open(question("q9", session="cccccccc-3333-4333-8333-333333333333"))
    tray.step()  # inside the window r8's notice opened: held
    tray.step(tray.worker.prefs.current.coalesce_seconds + 1)
    first, burst = tray.notifier.sent
    assert first.tag == "request-r8"
    assert burst.title == "2 agent sessions: 2 need you" and burst.requests == ("r9", "q9")
    book.decide(Decision("r9", Verdict.DENY, "cli"))
    tray.step()
    assert tray.notifier.withdrawn == []  # q9 still waits: the summary stays
    book.withdraw("q9", "answered in the terminal")
    tray.step()
    assert tray.notifier.withdrawn == [burst.tag]
