"""The "Needs you" entries that answer the decision book's requests, through the real dbusmenu:
the tray's StatusNotifier icon (in this process, on the private desktop's session bus, registered
with a real StatusNotifierWatcher) shows the worker's view over a real engine and a real book;
the test reads the menu and clicks its entries the way a host does (``Event`` "clicked"). Each
request's entries answer that request; they vanish when it closes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sni_client
from desktop import Desktop, wait_until
from engine_harness import Rig, make_rig
from test_tray_answers import RULE, Answering, approval, question
from test_tray_worker import A, start_waiting

from agentbar.core.clock import SystemClock
from agentbar.core.decisions import BookChange, Decision, DecisionBook, Verdict
from agentbar.tray.preferences import Preferences
from agentbar.tray.presenter import TrayState, present
from agentbar.tray.sni.service import SniIcon


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path)
    yield r
    r.close()


@pytest.fixture
def watcher(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> Iterator[Desktop]:
    """This process on the desktop's bus, with a StatusNotifierWatcher for its icon."""
    for key in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(key, desktop.env[key])
    proc = desktop.start_sni_watcher()
    try:
        yield desktop
    finally:
        desktop.stop(proc)


def test_needs_you_answers_requests_over_dbusmenu(
    watcher: Desktop, rig: Rig, tmp_path: Path
) -> None:
    bus = watcher.env["DBUS_SESSION_BUS_ADDRESS"]
    book = DecisionBook()
    changes: list[BookChange] = []
    book.subscribe(changes.append)
    rig.open()
    first = present([], now=0.0, prefs=Preferences(), tray=TrayState())
    icon = SniIcon(first, lambda _line: None)
    assert icon.start()
    tray = Answering(rig, tmp_path, book, SystemClock())
    tray.worker.show = icon.show
    icon.on_action = tray.worker.post
    tray.worker.start()
    try:
        service = wait_until("the item", lambda: next(iter(sni_client.registered_items(bus)), None))
        menu_path = sni_client.item_properties(bus, service)["Menu"]

        def menu() -> sni_client.MenuNode:
            return sni_client.layout(bus, service, menu_path)[1]

        def labels_under(start: str) -> list[str] | None:
            node = next((n for n in menu().children if n.label.startswith(start)), None)
            return None if node is None else [c.label for c in node.children]

        start_waiting(rig, A, 4242)
        book.open(approval("r1"))
        book.open(question("q1", session="cccccccc-3333-4333-8333-333333333333"))
        wait_until("both in the menu", lambda: labels_under("Claude Code — asks"))
        assert labels_under("Claude Code · demo") == [
            "Open replay", "", "Approve", "Deny", f"Always allow {RULE}",
        ]  # fmt: skip
        assert labels_under("Claude Code — asks") == [
            "Open replay", "", "Reply: SQLite", "Reply: Postgres", "Deny",
        ]  # fmt: skip
        assert menu().children[0].label == "Needs you (2)"

        def click(parent: str, label: str) -> None:
            node = next(n for n in menu().children if n.label.startswith(parent))
            sni_client.click(bus, service, menu_path, node.find(label).id)

        click("Claude Code · demo", "Deny")
        wait_until("r1 answered", lambda: book.get("r1") is None)
        click("Claude Code — asks", "Reply: Postgres")
        # The book's listeners hear a close just after it is made (on the worker's thread).
        wait_until("q1 answered", lambda: len([c for c in changes if not c.opened]) == 2)
        assert book.pending() == ()
        assert [c.decision for c in changes if not c.opened] == [
            Decision("r1", Verdict.DENY, "menu"),
            Decision("q1", Verdict.REPLY, "menu", replies=("Postgres",)),
        ]
        # Closed: the answers are gone from the menu; the waiting session opens its replay.
        wait_until("the entries gone", lambda: labels_under("Claude Code — asks") is None)
        assert labels_under("Claude Code · demo") == []
        book.open(approval("r2"))
        wait_until("r2's entries", lambda: labels_under("Claude Code · demo"))
        book.withdraw("r2", "answered in the terminal")
        wait_until("r2's entries gone", lambda: labels_under("Claude Code · demo") == [])
    finally:
        tray.worker.stop()
        icon.stop()
