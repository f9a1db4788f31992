"""The tray over a live engine, as the app runs them: real files, the real watchdog observer and
ticker (``core/service.py``), the engine on its own thread and the tray's worker on its own. The
tray's view is never older than the change it was just told of: the engine publishes a batch's
state before it tells anyone of the batch's changes."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from claude_lines import write_lines
from engine_harness import Rig, make_rig, new_transcript
from polling import wait_for
from tray_values import NAMES

from agentbar.core.clock import SystemClock
from agentbar.core.engine import Engine, IndexProgress
from agentbar.core.index import Index
from agentbar.core.limits import LimitWindow
from agentbar.core.lock import InstanceLock
from agentbar.core.model import SessionKey, SessionSnapshot, StateChange
from agentbar.core.service import Service
from agentbar.tray.notify import FakeNotifier
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import PreferencesFile
from agentbar.tray.view import TrayView
from agentbar.tray.worker import TrayWorker

A = "aaaaaaaa-0000-4000-8000-00000000000a"
# Each round is two changes (running, then done). With the old order (tell, then publish) the
# worker's first re-read after a change was stale in most rounds: 20 make that a certainty.
ROUNDS = 20
WAIT = 10.0  # generous: this checks what the tray shows, benchmarks measure how fast


class Witness:
    """The real engine as the tray's worker sees it (any thread). It notes each change the
    engine tells the worker, just before the worker hears of it, and holds every re-read the
    worker makes against what it had been told by then: a re-read older than a told change
    (an earlier ``state_since``, or no row at all) is stale."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.ready = engine.ready
        self.told: dict[SessionKey, SessionSnapshot] = {}
        self.changes: queue.SimpleQueue[StateChange] = queue.SimpleQueue()
        self.checked = 0  # told changes a later re-read was held against
        self.stale: list[str] = []
        self._last_checked: dict[SessionKey, float] = {}

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]:
        def tell(change: StateChange) -> None:  # on the engine thread
            self.told[change.snapshot.key] = change.snapshot
            callback(change)
            self.changes.put(change)

        return self.engine.subscribe(tell)

    def progress(self) -> IndexProgress:
        return self.engine.progress()

    def subscribe_progress(self, callback: Callable[[IndexProgress], None]) -> Callable[[], None]:
        return self.engine.subscribe_progress(callback)

    def limits(self) -> tuple[LimitWindow, ...]:
        return self.engine.limits()

    def limits_heard(self) -> frozenset[str]:
        return self.engine.limits_heard()

    def sessions(self) -> list[SessionSnapshot]:  # on the worker thread
        told = dict(self.told)
        rows = self.engine.sessions()
        seen = {s.key: s for s in rows}
        for key, change in told.items():
            now = seen.get(key)
            if now is None or now.state_since < change.state_since:
                self.stale.append(
                    f"told {change.state.state}, re-read {now.state.state if now else 'nothing'}"
                )
            if self._last_checked.get(key) != change.state_since:
                self._last_checked[key] = change.state_since
                self.checked += 1
        return rows

    def next_state(self) -> str:
        return str(self.changes.get(timeout=WAIT).snapshot.state.state)


class LiveTray:
    """A Service (engine thread, watchdog, ticker) over the rig's HOME and a tray worker on its
    thread, both started the way ``tray/app.py`` starts them."""

    def __init__(self, rig: Rig, tmp_path: Path) -> None:
        self.rig = rig
        rig.claude_process(4242)
        lock = InstanceLock(rig.settings.lock_path)
        assert lock.acquire()
        engine = Engine(
            rig.settings.sources(),
            Index.open(rig.settings.index_path),
            processes=rig.processes,
            traits=rig.settings.traits(),
            clock=SystemClock(),
        )
        self.service = Service(engine=engine, lock=lock, owner=True)
        self.witness = Witness(engine)
        self.shown: list[TrayView] = []
        self.worker = TrayWorker(
            self.witness,
            FakeNotifier(),
            clock=SystemClock(),
            prefs=PreferencesFile(tmp_path / "config" / "settings.toml"),
            pauses=PauseStore(tmp_path / "data" / "notifications-paused.json"),
            show=self.shown.append,
            names=NAMES,
        )
        self.service.start()
        assert engine.ready.wait(WAIT)
        self.worker.start()

    def shows(self, heading: str, checked: int) -> Callable[[], bool]:
        """Whether the worker has re-read the sessions after each of the first ``checked``
        changes it was told of and its view has a menu section ``heading`` (or a re-read was
        stale: the test fails at once)."""

        def check() -> bool:
            view = self.worker.view
            found = view is not None and any(e.label.startswith(heading) for e in view.menu)
            return (found and self.witness.checked >= checked) or bool(self.witness.stale)

        return check

    def close(self) -> None:
        self.worker.stop()
        self.service.close()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveTray]:
    tray = LiveTray(make_rig(tmp_path), tmp_path)
    yield tray
    tray.close()


def test_the_view_shows_each_change_as_soon_as_the_tray_is_told(live: LiveTray) -> None:
    t = new_transcript(A, start=time.time(), step=0.001)
    path = live.rig.transcript_path(A)
    for n in range(ROUNDS):
        write_lines(path, [t.prompt(f"round {n}")])
        assert live.witness.next_state() == "running"
        wait_for(live.shows("Running (1)", 2 * n + 1), WAIT, "the running session in the menu")
        assert live.witness.stale == []
        write_lines(path, [t.text(f"Round {n} done."), t.turn_duration()])
        assert live.witness.next_state() == "done"
        wait_for(live.shows("Recently finished (1)", 2 * n + 2), WAIT, "the finished session")
        assert live.witness.stale == []
    # Every change was held against a re-read made after it was told, none of them stale.
    assert live.witness.checked == 2 * ROUNDS
