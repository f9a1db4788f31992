"""A request's notification for real: the tray's worker and answer handler over a real decision
book, desktop-notifier delivering to dunst on the private desktop's session bus. The buttons
reach the server as actions (Always allow with its rule, only when offered; no reply field where
the server offers no inline reply, and one where it does: a server of the tests' own that offers
"inline-reply"); pressing one in dunst answers that very request through the
book; a request that closes elsewhere has its notification closed at once (CloseNotification)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from desktop import Desktop, wait_until
from engine_harness import Rig, make_rig
from notification_server import inline_reply_server
from test_notify_delivery import on_bus  # noqa: F401  (the fixture)
from test_tray_answers import RULE, Answering, approval, question

from agentbar.core.clock import SystemClock
from agentbar.core.decisions import BookChange, Decision, DecisionBook, Verdict
from agentbar.tray.notify import DesktopNotifier, icon_path


def answered(changes: list[BookChange], request_id: str) -> Callable[[], bool]:
    """The book's listeners have heard ``request_id`` answered (they hear a close just after it
    is made, on the thread that made it)."""
    return lambda: any(c.decision and c.decision.request_id == request_id for c in changes)


@pytest.fixture
def rig(tmp_path: Path):
    r = make_rig(tmp_path)
    yield r
    r.close()


def displayed(desktop: Desktop) -> int:
    return int(desktop.run("dunstctl", "count", "displayed").stdout.strip() or 0)


def test_a_request_notification_at_dunst_answers_and_is_withdrawn(
    on_bus: Desktop,  # noqa: F811
    rig: Rig,
    tmp_path: Path,
) -> None:
    book = DecisionBook()
    changes: list[BookChange] = []
    book.subscribe(changes.append)
    rig.open()
    tray = Answering(rig, tmp_path, book, SystemClock())  # a real coalescing window
    notifier = DesktopNotifier(tray.worker.post, icon=icon_path())
    tray.worker.notifier = notifier
    tray.worker.start()
    try:
        with on_bus.monitor("type='method_call',interface='org.freedesktop.Notifications'") as seen:
            book.open(approval("r1"))
            wait_until("it on display", lambda: displayed(on_bus) == 1)
            calls = seen()
            # The actions sent: Approve, Always allow with its exact rule, Deny; no reply field.
            for label in ("Approve", "Deny", f"Always allow {RULE}"):
                assert f'string "{label}"' in calls
            assert "inline-reply" not in calls
            on_bus.press(f"Always allow {RULE}", answered(changes, "r1"))
            assert changes[-1].decision == Decision("r1", Verdict.ALLOW_ALWAYS, "notification")

            # Two open at once: the button of the one on display answers it and no other.
            wait_until("r1's closed", lambda: displayed(on_bus) == 0)
            book.open(approval("r2", rule=None))
            wait_until("r2 on display", lambda: displayed(on_bus) == 1)
            book.open(question("q2"))  # coalesced: its own notice once the window closes
            wait_until("both on display", lambda: displayed(on_bus) == 2, timeout=10)
            # The question's options are its buttons.
            assert 'string "SQLite"' in seen() and 'string "Postgres"' in seen()
            # Answered in the terminal first: its holder withdraws it; the notification closes.
            before = seen().count("member=CloseNotification")
            book.withdraw("q2", "answered in the terminal")
            wait_until("one closed", lambda: displayed(on_bus) == 1)
            assert seen().count("member=CloseNotification") == before + 1
            on_bus.press("Deny", answered(changes, "r2"))
            assert changes[-1].decision == Decision("r2", Verdict.DENY, "notification")
            wait_until("none on display", lambda: displayed(on_bus) == 0)
    finally:
        tray.worker.stop()
        notifier.close()
        on_bus.run("dunstctl", "close-all")


def test_an_inline_reply_answers_the_question_where_the_server_offers_it(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server with "inline-reply" (Plasma's): the question's notice carries a reply field;
    the words typed there answer it; closed elsewhere, the notice is closed by its id."""
    with inline_reply_server(tmp_path) as (address, server):
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        book = DecisionBook()
        changes: list[BookChange] = []
        book.subscribe(changes.append)
        rig.open()
        tray = Answering(rig, tmp_path, book, SystemClock())
        notifier = DesktopNotifier(tray.worker.post, icon=None)
        tray.worker.notifier = notifier
        tray.worker.start()
        try:
            book.open(question("q1"))
            shown = wait_until("the notice", lambda: server.seen.shown and server.seen.shown[0])
            actions = shown.actions
            assert (
                "inline-reply" in actions and actions[actions.index("inline-reply") + 1] == "Reply"
            )
            assert shown.hints.get("x-kde-reply-submit-button-text") == "Send"
            labels = [actions[i + 1] for i in range(0, len(actions), 2)]
            assert labels == ["", "SQLite", "Postgres", "Open", "Reply"]  # "": the click
            server.reply(shown.notification_id, "MySQL 8, please")
            wait_until("the reply", answered(changes, "q1"))
            assert changes[-1].decision == Decision(
                "q1", Verdict.REPLY, "notification", replies=("MySQL 8, please",)
            )
            book.open(question("q2"))
            second = wait_until(
                "the second", lambda: server.seen.shown[1:] and server.seen.shown[1]
            )
            book.withdraw("q2", "answered in the terminal")
            wait_until("closed by its id", lambda: second.notification_id in server.seen.closed)
        finally:
            tray.worker.stop()
            notifier.close()
