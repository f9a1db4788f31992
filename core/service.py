"""Assemble and run the engine for this user: lock, index, sources, watcher and ticker
(called from the process's main thread; it starts the engine, watcher and ticker threads).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from .config import Settings
from .engine import Engine
from .index import Index
from .limits_claude import ClaudeStatusLineRecord, record_path
from .lock import InstanceLock
from .privacy import private_dir
from .procs import PsutilProcessTable
from .watch import FileWatcher, Ticker

log = logging.getLogger(__name__)


@dataclass
class Service:
    engine: Engine
    lock: InstanceLock
    owner: bool  # this process writes the shared index
    watcher: FileWatcher | None = None
    ticker: Ticker | None = None

    @classmethod
    def open(cls, settings: Settings, *, tick_seconds: float = 2.0) -> Service:
        """An engine over the user's sessions. Only one process owns the index; the others
        work on a private copy of it (they still see everything, they just do not write)."""
        lock = InstanceLock(settings.lock_path)
        owner = lock.acquire()
        if owner:
            index = Index.open(settings.index_path)
            for agent in settings.agents:
                # The hook program writes here; made now, it is watched from the first event.
                with contextlib.suppress(OSError):
                    private_dir(settings.events_dir(agent))
        else:
            log.info(
                "another agentbar (pid %s) owns the index; using a private copy",
                lock.holder_pid(),
            )
            index = Index.snapshot_of(settings.index_path)
        engine = Engine(
            settings.sources(),
            index,
            processes=PsutilProcessTable(settings.process_names()),
            traits=settings.traits(),
            tick_seconds=tick_seconds,
            claude_limits=ClaudeStatusLineRecord(record_path(settings.data_dir)),
        )
        return cls(engine=engine, lock=lock, owner=owner)

    def start(self) -> None:
        """Follow changes live: the engine thread catches up first, watchers feed it."""
        roots = [root for source in self.engine.sources for root in source.watch_roots()]
        self.watcher = FileWatcher(roots, self.engine.post)
        native = self.watcher.start()
        seconds = self.engine.tick_seconds if native else min(self.engine.tick_seconds, 1.0)
        self.ticker = Ticker(self.engine.post, seconds, on_tick=self.watcher.ensure)
        self.engine.start()
        self.ticker.start()

    def close(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()
        if self.watcher is not None:
            self.watcher.stop()
        self.engine.stop()
        self.engine.index.close()
        self.lock.release()
