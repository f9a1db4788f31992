"""The tray's worker over a real engine (real transcript and registry files in a tmp HOME, real
SQLite; fake process table and clock) and the fake notifier: a session that starts waiting
changes the badge and raises one notice, a click opens its replay, the menu's actions work,
and a restart of the whole thing tells nothing twice."""

from __future__ import annotations

import dataclasses
import errno
from pathlib import Path
from typing import Any

import pytest
from claude_lines import T0, registry
from engine_harness import Rig, make_rig, new_transcript
from polling import wait_for
from tray_values import NAMES

from agentbar.core.clock import Clock, SystemClock
from agentbar.core.errors import Fault, FaultKind, watch_fault
from agentbar.core.model import State
from agentbar.tray import actions, pause
from agentbar.tray.actions import Action
from agentbar.tray.notify import FakeNotifier
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import PreferencesFile
from agentbar.tray.view import Badge, TrayView
from agentbar.tray.worker import TrayWorker

A = "aaaaaaaa-1111-4111-8111-111111111111"
B = "bbbbbbbb-2222-4222-8222-222222222222"
C = "cccccccc-3333-4333-8333-333333333333"
D = "dddddddd-4444-4444-8444-444444444444"


class FakeAutostart:
    where = "nowhere"

    def __init__(self) -> None:
        self.on = False

    def status(self) -> bool:
        return self.on

    def enable(self) -> None:
        self.on = True

    def disable(self) -> None:
        self.on = False


class Tray:
    """A worker wired to the rig's engine, recording what it shows and opens."""

    def __init__(self, rig: Rig, tmp_path: Path, in_front: frozenset[str] = frozenset()) -> None:
        self.rig = rig
        self.shown: list[TrayView] = []
        self.opened: list[str] = []
        self.quit = 0
        self.front = in_front
        self.notifier = FakeNotifier()
        self.autostart = FakeAutostart()
        assert rig.engine is not None
        self.worker = TrayWorker(
            rig.engine,
            self.notifier,
            clock=rig.clock,
            prefs=PreferencesFile(tmp_path / "config" / "settings.toml"),
            pauses=PauseStore(tmp_path / "data" / "notifications-paused.json"),
            show=self.shown.append,
            in_front=lambda: self.front,
            open_page=self.opened.append,
            autostart=self.autostart,
            quit=self._quit,
            names=NAMES,
        )
        self.notifier.on_action = self.worker.post

    def _quit(self, choice: str) -> None:
        self.quit += 1
        self.quit_choice = choice

    def step(self, seconds: float = 0.0) -> None:
        self.rig.clock.advance(seconds)
        self.worker.step(timeout=0.0)

    @property
    def view(self) -> TrayView:
        assert self.worker.view is not None
        return self.worker.view


@pytest.fixture
def rig(tmp_path: Path):
    r = make_rig(tmp_path)
    yield r
    r.close()


def start_waiting(rig: Rig, session_id: str, pid: int, cwd: str = "/work/demo") -> None:
    rig.claude_process(pid, cwd)
    t = new_transcript(session_id, cwd)
    path = rig.transcript_path(session_id, cwd.replace("/", "-"))
    rig.write(path, t.prompt("Clean the build"), t.bash("rm -rf build"))
    rig.write_json(
        rig.claude / "sessions" / f"{pid}.json",
        registry(
            pid,
            session_id,
            status="waiting",
            waiting_for="permission prompt",
            cwd=cwd,
            started_at=T0 - 59,
        ),
    )
    rig.settle()


def test_a_session_that_starts_waiting_changes_the_badge_and_notifies_once(
    rig: Rig, tmp_path: Path
) -> None:
    rig.open()
    tray = Tray(rig, tmp_path)
    tray.step()
    assert tray.view.badge == Badge() and len(tray.shown) == 1
    start_waiting(rig, A, 4242)
    tray.step()
    assert tray.view.badge == Badge(needs=1)
    assert tray.view.tooltip == "agentbar: 1 needs you"
    (notice,) = tray.notifier.sent  # a lone change: at once, no coalescing window to wait for
    assert (notice.title, notice.body) == (
        "Claude Code in demo needs your approval",
        "Bash: rm -rf build",
    )
    # Polls and ticks repeat nothing; the view is not shown again while it is the same.
    shown = len(tray.shown)
    for _ in range(3):
        rig.tick()
        tray.step(2.0)
    assert len(tray.notifier.sent) == 1 and len(tray.shown) == shown
    # Clicking it (or its Open button) opens the session's replay.
    assert tray.notifier.click() == Action(actions.OPEN, f"/session/claude/{A}")
    tray.notifier.click(button="Open")
    tray.step()
    assert tray.opened == [f"/session/claude/{A}"] * 2
    entry = next(e for e in tray.view.entries() if e.label.startswith("Claude Code · demo"))
    assert entry.label == "Claude Code · demo — approve Bash: rm -rf build"
    assert entry.action == Action(actions.OPEN, f"/session/claude/{A}")


def test_a_restart_tells_nothing_again(rig: Rig, tmp_path: Path) -> None:
    rig.open()
    tray = Tray(rig, tmp_path)
    start_waiting(rig, A, 4242)
    tray.step()
    assert len(tray.notifier.sent) == 1
    tray.worker.stop()
    # The tray quits and starts again: the engine catches up from its index silently, the new
    # worker primes its policy with what is settled.
    rig.open()
    again = Tray(rig, tmp_path)
    again.step()
    rig.tick()
    again.step(2.0)
    assert again.view.badge == Badge(needs=1)
    assert again.notifier.sent == []


def test_no_notice_for_the_session_in_front_and_a_burst_is_one_summary(
    rig: Rig, tmp_path: Path
) -> None:
    rig.open()
    tray = Tray(rig, tmp_path, in_front=frozenset({f"/session/claude/{A}"}))
    start_waiting(rig, A, 4242)
    tray.step()
    tray.step(1.0)
    assert tray.notifier.sent == []  # its window is in front
    tray.front = frozenset()
    start_waiting(rig, B, 4343, "/work/other")
    tray.step()
    # The first of a burst is told at once, the ones that follow it inside the window together.
    assert [n.title for n in tray.notifier.sent] == ["Claude Code in other needs your approval"]
    start_waiting(rig, C, 4444, "/work/third")
    start_waiting(rig, D, 4545, "/work/fourth")
    tray.step(0.5)
    assert len(tray.notifier.sent) == 1
    tray.step(0.5)
    notice = tray.notifier.sent[-1]
    assert notice.title == "2 agent sessions: 2 need you"
    assert notice.body.splitlines() == [
        "Claude Code · third: needs approval",
        "Claude Code · fourth: needs approval",
    ]
    assert notice.click == actions.BOARD
    assert tray.view.badge == Badge(needs=4)


def test_the_menu_actions(rig: Rig, tmp_path: Path) -> None:
    rig.open()
    tray = Tray(rig, tmp_path)
    tray.step()
    labels = [e.label for e in tray.view.entries()]
    assert "Start at login" in labels
    tray.worker.post(Action(actions.AUTOSTART, "enable"))
    tray.worker.post(Action(actions.PAUSE, pause.HOUR))
    tray.step()
    assert tray.autostart.on
    start_at_login = next(e for e in tray.view.entries() if e.label == "Start at login")
    assert start_at_login.checked is True
    assert start_at_login.action == Action(actions.AUTOSTART, "disable")
    paused = PauseStore(tmp_path / "data" / "notifications-paused.json").load()
    assert paused.active(rig.clock.time())
    assert tray.view.tooltip.endswith(f"({paused.describe(rig.clock.time()).lower()})")
    start_waiting(rig, A, 4242)
    tray.step()
    tray.step(1.0)
    assert tray.notifier.sent == [] and tray.view.badge.needs == 1  # paused: the badge only
    tray.worker.post(Action(actions.PAUSE, pause.RESUME))
    tray.worker.post(actions.BOARD)
    tray.worker.post(Action(actions.QUIT))
    tray.step()
    assert tray.opened == ["/"] and tray.quit == 1
    assert not (tmp_path / "data" / "notifications-paused.json").exists()


def test_the_settings_file_is_followed(rig: Rig, tmp_path: Path) -> None:
    rig.open()
    tray = Tray(rig, tmp_path)
    tray.step()
    settings = tmp_path / "config" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('[notifications]\nmuted_projects = ["/work/demo"]\n')
    tray.step(2.0)  # re-read on the next refresh
    start_waiting(rig, A, 4242)
    tray.step()
    tray.step(1.0)
    assert tray.notifier.sent == []
    settings.write_text("[notifications]\non = 3\n")
    tray.step(2.0)
    assert tray.view.menu[0].label == "settings.toml: 1 problem, see the log"


def plain_worker(rig: Rig, tmp_path: Path, clock: Clock, **extra: Any) -> TrayWorker:
    """A worker over the rig's engine with its own notifier (``worker.notifier``)."""
    assert rig.engine is not None
    return TrayWorker(
        rig.engine,
        FakeNotifier(),
        clock=clock,
        prefs=PreferencesFile(tmp_path / "settings.toml"),
        pauses=PauseStore(tmp_path / "paused.json"),
        **{"show": lambda _view: None, "names": NAMES, **extra},
    )


def test_the_worker_thread_runs_it_all(rig: Rig, tmp_path: Path) -> None:
    engine = rig.open()
    # Each view shown, with the number of notices sent by then: the badge must come first.
    shown: list[tuple[TrayView, int]] = []
    worker = plain_worker(
        rig, tmp_path, SystemClock(), show=lambda view: shown.append((view, len(notifier.sent)))
    )
    notifier = worker.notifier
    assert isinstance(notifier, FakeNotifier)
    worker.start()
    try:
        start_waiting(rig, A, 4242)
        wait_for(lambda: notifier.sent, what="the notice")
        assert [n.title for n in notifier.sent] == ["Claude Code in demo needs your approval"]
        # The engine published the state before it told the worker, and the worker shows its
        # view before it notifies: the badge said 1 before the notice was sent.
        assert (Badge(needs=1), 0) in [(view.badge, sent) for view, sent in shown]
        assert any(s.state.state is State.INPUT_REQUIRED for s in engine.sessions())
    finally:
        worker.stop()
    assert shown[-1][0].badge == Badge(needs=1)


def test_other_features_add_entries_buttons_and_handlers(rig: Rig, tmp_path: Path) -> None:
    from agentbar.tray.notices import Button
    from agentbar.tray.view import Entry

    rig.open()
    launched: list[str] = []
    worker = plain_worker(
        rig,
        tmp_path,
        rig.clock,
        extra_entries=lambda: (
            Entry("Launch Claude Code in demo", Action("launch", "/work/demo")),
        ),
        buttons=lambda t: (Button("Deny", Action("task", f"deny:{t.key.session_id}")),),
    )
    worker.router.register("launch", lambda action: launched.append(action.arg))
    notifier = worker.notifier
    assert isinstance(notifier, FakeNotifier)
    notifier.on_action = worker.post
    worker.step()
    assert worker.view is not None
    launch = next(e for e in worker.view.entries() if e.label.startswith("Launch"))
    worker.post(launch.action)  # as the menu does
    start_waiting(rig, A, 4242)
    worker.step()
    rig.clock.advance(1.0)
    worker.step()
    assert launched == ["/work/demo"]
    assert [b.label for b in notifier.sent[0].buttons] == ["Open", "Deny"]


def test_a_lasting_problem_is_told_once_and_listed_a_one_off_each_time(
    rig: Rig, tmp_path: Path
) -> None:
    rig.open()
    tray = Tray(rig, tmp_path)
    tray.step()
    full = [
        watch_fault(Path(folder), OSError(errno.ENOSPC, "inotify watch limit reached"))
        for folder in ("/h/.claude/projects", "/h/.codex/sessions")
    ]
    for fault in (*full, full[0]):  # two folders, and the first seen again
        tray.worker.report(fault)
    tray.step()
    assert [n.title for n in tray.notifier.sent] == ["File watch limit reached"]
    assert "sudo sysctl fs.inotify.max_user_watches=" in tray.notifier.sent[0].body
    lines = [e.label for e in tray.view.menu if e.label.startswith("Problem:")]
    assert lines == ["Problem: File watch limit reached (2×)"]
    failed = Fault(FaultKind.ACTION, "Cannot launch the agent", "Launching Codex failed: no.")
    tray.worker.report(failed, lasting=False)
    tray.worker.report(failed, lasting=False)
    tray.step()
    assert [n.title for n in tray.notifier.sent[1:]] == ["Cannot launch the agent"] * 2
    assert [e.label for e in tray.view.menu if e.label.startswith("Problem:")] == lines
    # The limit was raised: both folders are watched, the line goes without a word.
    for fault in full:
        tray.worker.report(dataclasses.replace(fault, over=True))
    tray.step()
    assert not any(e.label.startswith("Problem:") for e in tray.view.menu)
    assert len(tray.notifier.sent) == 3
