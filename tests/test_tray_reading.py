"""The first reading in the tray: a disabled line at the top of the menu and words in the tooltip
while the engine reads, gone when it is done, the badge unchanged; changed once a second at
most (the rule on its own over set times, and the worker on its real thread over a real engine
reading a large history), always on the tray's worker thread."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest
from tray_values import NAMES, T0, approval

from agentbar.core.clock import SystemClock
from agentbar.core.config import Settings
from agentbar.core.engine import Engine
from agentbar.core.engine_messages import STARTING, IndexProgress
from agentbar.core.index import Index
from agentbar.core.model import Agent
from agentbar.core.procs import FakeProcessTable
from agentbar.core.progress_text import tooltip_part
from agentbar.tray.notify import FakeNotifier
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import Preferences, PreferencesFile
from agentbar.tray.presenter import TrayState, present, tooltip
from agentbar.tray.reading import ReadingShown
from agentbar.tray.view import Badge, TrayView
from agentbar.tray.worker import TrayWorker

GB = 1 << 30
DONE = IndexProgress(live_ready=True, done=True)


def step(done: float, total: float = 3.1) -> IndexProgress:
    return IndexProgress(live_ready=True, done=False, files_done=1, files_total=9,
                         bytes_done=int(done * GB), bytes_total=int(total * GB))  # fmt: skip


def test_a_step_a_second_at_most_and_the_end_at_once() -> None:
    shown = ReadingShown(now=100.0)
    shown.offer(STARTING, 100.0)
    assert shown.shown is None  # not in the first half second: a warm start never flashes
    assert shown.deadline() == 100.5
    shown.settle(100.5)
    assert shown.shown == STARTING and shown.deadline() is None
    for n in range(1, 10):  # nine steps in the next 0.9 s: held back, the latest kept
        shown.offer(step(n / 10), 100.5 + n / 10)
    assert shown.shown == STARTING
    assert shown.deadline() == 101.5
    shown.settle(101.5)
    assert shown.shown == step(0.9)
    shown.offer(step(1.0), 101.7)
    shown.offer(DONE, 101.8)  # the end shows at once
    assert shown.shown is None and shown.deadline() is None


def test_a_reading_that_ends_within_the_first_half_second_shows_nothing() -> None:
    shown = ReadingShown(now=0.0)
    shown.offer(STARTING, 0.0)
    shown.offer(step(1.0), 0.2)
    shown.offer(DONE, 0.4)
    shown.settle(5.0)
    assert shown.shown is None and shown.deadline() is None


def view(reading: IndexProgress | None) -> TrayView:
    tray = TrayState(names=NAMES, reading=reading)
    return present([approval("a", since=T0)], now=T0 + 60, prefs=Preferences(), tray=tray)


def test_the_menu_has_a_disabled_line_and_the_tooltip_says_it() -> None:
    reading = view(step(1.3))
    first = reading.menu[0]
    assert first.label == "Reading history: 41 % (1.3 of 3.1 GB)"
    assert not first.enabled
    assert reading.tooltip == (
        "agentbar: 1 needs you; reading history: 41 % (1.3 of 3.1 GB), live sessions are up to date"
    )
    assert reading.badge == Badge(needs=1)  # the live sessions count meanwhile
    assert view(STARTING).menu[0].label == "Reading live sessions…"
    assert view(STARTING).tooltip == "agentbar: 1 needs you; reading live sessions…"
    done = view(None)
    assert done.tooltip == "agentbar: 1 needs you"
    assert not any("Reading" in e.label for e in done.entries())
    assert reading.menu[1:] == done.menu  # the rest is as it was
    assert view(DONE) == done
    busy = tooltip(12, 30, 4, "Notifications paused until tomorrow 08:00", tooltip_part(step(1.3)))
    assert len(busy) == 127 and busy.endswith("…")  # Windows' bound


# -- the worker on its thread over a real engine ------------------------------------------------


class Recorder:
    """The views the worker shows, when, and on which thread."""

    def __init__(self) -> None:
        self.views: list[tuple[float, TrayView, str]] = []
        self.lock = threading.Lock()

    def __call__(self, view: TrayView) -> None:
        with self.lock:
            self.views.append((time.monotonic(), view, threading.current_thread().name))

    def last(self) -> TrayView | None:
        with self.lock:
            return self.views[-1][1] if self.views else None

    def wait(self, what: str, check: object, timeout: float = 120.0) -> TrayView:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            last = self.last()
            if last is not None and check(last):  # type: ignore[operator]
                return last
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}; last view: {self.last()}")


def first_label(view: TrayView) -> str:
    return view.menu[0].label


@pytest.mark.slow
def test_the_worker_shows_a_real_engine_reading_a_large_history(
    big_history: Path, tmp_path: Path
) -> None:
    settings = Settings(
        homes={
            Agent("claude"): (big_history / ".claude",),
            Agent("codex"): (big_history / ".codex",),
        },
        data_dir=tmp_path / "data",
    )
    engine = Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=FakeProcessTable(),
        traits=settings.traits(),
    )
    shown = Recorder()
    worker = TrayWorker(
        engine,
        FakeNotifier(),
        clock=SystemClock(),
        prefs=PreferencesFile(tmp_path / "settings.toml"),
        pauses=PauseStore(tmp_path / "paused.json"),
        show=shown,
        names=NAMES,
    )
    worker.start()
    try:
        # Nothing read yet (the engine thread has not started): the live sessions come first.
        shown.wait("the reading line", lambda v: first_label(v) == "Reading live sessions…")
        # Steps as the engine publishes them, twenty a second for two seconds (driven here,
        # through the engine's own publisher, before its thread runs): about two shown.
        before = len(shown.views)
        started = time.monotonic()
        for n in range(40):
            engine._set_progress(step(0.05 * (n + 1), 2.0))
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        shown.wait("the last step", lambda v: first_label(v) == "Reading history: 99 % "
                   "(2.0 of 2.0 GB)")  # fmt: skip
        changes = len(shown.views) - before
        assert 1 <= changes <= elapsed + 2, (changes, elapsed)
        times = [t for t, _, _ in shown.views[before:]]
        assert all(b - a >= 0.95 for a, b in itertools.pairwise(times)), times

        engine.start()  # the real reading: its end clears the line at once
        done = shown.wait("the line to go", lambda v: "Reading" not in first_label(v))
        assert engine.ready.is_set()
        assert "reading" not in done.tooltip
        assert {thread for _, _, thread in shown.views} == {"agentbar-tray"}
    finally:
        worker.stop()
        engine.stop()
        engine.index.close()
