"""The real watchdog observer and ticker feeding a real engine thread on tmp_path."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import pytest
from claude_lines import write_lines
from engine_harness import make_rig, new_transcript

from agentbar.core import watch as watch_mod
from agentbar.core.clock import SystemClock
from agentbar.core.engine import Engine, PathTouched, Rescan
from agentbar.core.index import Index
from agentbar.core.model import StateChange
from agentbar.core.watch import FileWatcher, Ticker

A = "aaaaaaaa-0000-4000-8000-000000000001"
WAIT = 10.0  # generous: this checks that events arrive at all, benchmarks measure how fast


class LiveRig:
    def __init__(self, tmp_path: Path, *, native: bool = True) -> None:
        self.rig = make_rig(tmp_path)
        self.rig.claude_process(4242)
        self.changes: queue.Queue[StateChange] = queue.Queue()
        self.engine = Engine(
            self.rig.settings.sources(),
            Index.open(self.rig.settings.index_path),
            processes=self.rig.processes,
            traits=self.rig.settings.traits(),
            clock=SystemClock(),
            tick_seconds=0.2,
            full_rescan_seconds=0.5,
        )
        self.engine.subscribe(self.changes.put)
        roots = [r for s in self.engine.sources for r in s.watch_roots()]
        self.watcher = FileWatcher(roots, self.engine.post)
        self.native = self.watcher.start() if native else False
        self.ticker = Ticker(self.engine.post, 0.2, on_tick=self.watcher.ensure)
        self.engine.start()
        assert self.engine.ready.wait(WAIT)
        self.ticker.start()

    def next_state(self) -> str:
        return str(self.changes.get(timeout=WAIT).snapshot.state.state)

    def close(self) -> None:
        self.ticker.stop()
        self.watcher.stop()
        self.engine.stop()
        self.engine.index.close()


@pytest.fixture
def live(tmp_path: Path) -> Any:
    rig = LiveRig(tmp_path)
    yield rig
    rig.close()


def test_a_written_line_reaches_subscribers(live: LiveRig) -> None:
    assert live.native
    t = new_transcript(A, start=_now())
    path = live.rig.transcript_path(A)
    write_lines(path, [t.prompt("go")])
    assert live.next_state() == "running"
    write_lines(path, [t.text("All done."), t.turn_duration()])
    assert live.next_state() == "done"


def test_a_folder_created_later_is_watched(live: LiveRig) -> None:
    t = new_transcript(A, "/work/demo", start=_now())
    path = live.rig.claude / "projects" / "-brand-new-project" / f"{A}.jsonl"
    write_lines(path, [t.prompt("first in a new folder")])
    assert live.next_state() == "running"


def test_polling_fallback_when_no_native_observer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken:
        def start(self) -> None:
            raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watch_mod, "Observer", Broken)
    live = LiveRig(tmp_path, native=True)
    try:
        assert not live.native
        t = new_transcript(A, start=_now())
        write_lines(live.rig.transcript_path(A), [t.prompt("found by polling")])
        assert live.next_state() == "running"
    finally:
        live.close()


def test_handler_posts_only_content_events(tmp_path: Path) -> None:
    from watchdog.events import (
        DirCreatedEvent,
        FileClosedNoWriteEvent,
        FileModifiedEvent,
        FileMovedEvent,
        FileOpenedEvent,
    )

    posted: list[object] = []
    handler = watch_mod._Handler(posted.append)
    handler.on_any_event(FileOpenedEvent(str(tmp_path / "a.jsonl")))
    handler.on_any_event(FileClosedNoWriteEvent(str(tmp_path / "a.jsonl")))
    handler.on_any_event(FileModifiedEvent(str(tmp_path / "notes.txt")))
    assert posted == []
    handler.on_any_event(FileModifiedEvent(str(tmp_path / "a.jsonl")))
    handler.on_any_event(FileMovedEvent(str(tmp_path / "t.tmp"), str(tmp_path / "1.json")))
    handler.on_any_event(DirCreatedEvent(str(tmp_path / "new")))
    assert posted == [
        PathTouched(tmp_path / "a.jsonl"),
        PathTouched(tmp_path / "1.json"),
        Rescan(tmp_path / "new"),
    ]


def test_ticker_stops_promptly() -> None:
    ticks: list[object] = []
    ticker = Ticker(ticks.append, 0.05)
    ticker.start()
    threading.Event().wait(0.3)
    ticker.stop()
    count = len(ticks)
    threading.Event().wait(0.2)
    assert len(ticks) == count > 0


def _now() -> float:
    import time

    return time.time()
