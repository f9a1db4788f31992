"""File-system watching and the ticker: they only post messages to the engine's inbox
(watchdog observer threads and one ticker thread; nothing here touches engine state).

inotify (or the platform's native API) through watchdog delivers a line's write in about a
millisecond. When no native observer can start (inotify limits, odd file systems) the watcher
says so and the ticker alone drives the engine: every tick it stats the hot files, and every
full-rescan period it walks everything, so at worst a change is seen one tick late. A folder
that cannot be watched (inotify's limits, no permission) is also posted to the engine as a
fault, which reaches the person with its remedy (the sysctl to raise).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from .engine_messages import Faulted, Message, PathTouched, Rescan, Tick
from .errors import Fault, watch_fault
from .sources.base import WatchRoot

log = logging.getLogger(__name__)

# Transcripts and registries; a database agent's store and its WAL (opencode's ``opencode.db``).
WATCHED_SUFFIXES = (".jsonl", ".json", ".zst", ".db", ".db-wal")
# Only events that mean content changed. Opening and closing without writing are reported by
# inotify too, and the engine's own reads would otherwise wake it up again forever.
_CONTENT_EVENTS = (
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    FileClosedEvent,
)
# The same list given to the observer, so the kernel is not even asked for the others (every
# read the engine makes would otherwise come back as open/close events on the watch thread).
_WATCHED_EVENTS: list[type[FileSystemEvent]] = [*_CONTENT_EVENTS, DirCreatedEvent, DirMovedEvent]


class _Handler(FileSystemEventHandler):
    def __init__(self, post: Callable[[Message], None]) -> None:
        self._post = post

    def on_any_event(self, event: FileSystemEvent) -> None:
        if isinstance(event, DirCreatedEvent | DirMovedEvent):
            # Files written into a new folder before its watch was added would be missed.
            self._post(Rescan(Path(_text(event.dest_path or event.src_path))))
            return
        if not isinstance(event, _CONTENT_EVENTS):
            return
        for raw in (event.src_path, event.dest_path):
            path = _text(raw)
            if path and path.endswith(WATCHED_SUFFIXES):
                self._post(PathTouched(Path(path)))


def _text(path: str | bytes) -> str:
    return path.decode(errors="surrogateescape") if isinstance(path, bytes) else path


class _Sentinel(FileSystemEventHandler):
    """Watches the nearest existing ancestor of a root that does not exist yet, so the moment
    the agent creates it (its first run) the real watch is added."""

    def __init__(self, watcher: FileWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if isinstance(event, DirCreatedEvent | DirMovedEvent):
            created = Path(_text(event.dest_path or event.src_path))
            self._watcher.folder_appeared(created)


class FileWatcher:
    """Watches the adapters' roots. A root that does not exist yet gets a sentinel on its
    nearest existing ancestor; ``ensure()`` (also run by the ticker) adds what appeared."""

    def __init__(self, roots: Sequence[WatchRoot], post: Callable[[Message], None]) -> None:
        self._roots = list(roots)
        self._post = post
        self._handler = _Handler(post)
        self._sentinel = _Sentinel(self)
        self._observer: BaseObserver | None = None
        self._watched: set[Path] = set()
        self._sentinels: dict[Path, ObservedWatch] = {}
        self._failed: dict[Path, Fault] = {}  # the folders that could not be watched, and why
        self._lock = threading.Lock()
        self.native = False

    def start(self) -> bool:
        """Start watching; False when no native observer could start (polling instead)."""
        try:
            observer = Observer()
            observer.start()
        except OSError as exc:
            log.warning("file events unavailable (%s); falling back to polling", exc)
            for root in self._roots:
                self._post(Faulted(watch_fault(root.path, exc)))
            return False
        self._observer = observer
        self.native = True
        self.ensure()
        return True

    def folder_appeared(self, folder: Path) -> None:
        if any(root.path.is_relative_to(folder) for root in self._roots):
            # Not on the observer's thread: scheduling from inside its dispatch could block.
            threading.Thread(target=self.ensure, name="agentbar-watch-ensure", daemon=True).start()

    def ensure(self) -> None:
        observer = self._observer
        if observer is None:
            return
        with self._lock:
            wanted: set[Path] = set()
            for root in self._roots:
                if root.path in self._watched:
                    continue
                if root.path.is_dir():
                    try:
                        observer.schedule(
                            self._handler,
                            str(root.path),
                            recursive=root.recursive,
                            event_filter=_WATCHED_EVENTS,
                        )
                    except OSError as exc:
                        # inotify's watch limit: this root is left to the periodic rescan.
                        log.warning("cannot watch %s (%s); it will be polled", root.path, exc)
                        self._failed_to_watch(root.path, exc)
                        continue
                    self._watched_after_all(root.path)
                    self._watched.add(root.path)
                    self._post(Rescan(root.path))  # anything written before the watch existed
                    continue
                ancestor = _nearest_existing(root.path)
                # A folder the handler watches already reports new folders (a Rescan), and the
                # next tick's ensure() watches the root: a second, creation-only watch on it
                # took the handler's file events away (watchdog, Linux: opencode's WAL went
                # unseen once its storage folder was waited for this way).
                if ancestor is not None and ancestor not in self._watched:
                    wanted.add(ancestor)
            for folder in set(self._sentinels) - wanted:
                observer.unschedule(self._sentinels.pop(folder))
            for folder in wanted - set(self._sentinels):
                try:
                    self._sentinels[folder] = observer.schedule(
                        self._sentinel,
                        str(folder),
                        recursive=False,
                        event_filter=[DirCreatedEvent, DirMovedEvent],
                    )
                except OSError as exc:
                    log.warning("cannot watch %s for new folders (%s)", folder, exc)
                    self._failed_to_watch(folder, exc)
                    continue
                self._watched_after_all(folder)

    def _failed_to_watch(self, folder: Path, exc: OSError) -> None:
        fault = watch_fault(folder, exc)
        self._failed[folder] = fault
        self._post(Faulted(fault))  # (the engine tells each problem once)

    def _watched_after_all(self, folder: Path) -> None:
        """A folder that failed before is watched now (the limit was raised): the problem is
        over."""
        fault = self._failed.pop(folder, None)
        if fault is not None:
            log.info("watching %s after all", folder)
            self._post(Faulted(dataclasses.replace(fault, over=True)))

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None


def _nearest_existing(path: Path) -> Path | None:
    for parent in path.parents:
        if parent.is_dir():
            return parent
    return None


class Ticker:
    """Posts ``Tick`` every ``seconds`` on a daemon thread, and runs ``on_tick`` (cheap, e.g.
    ``FileWatcher.ensure``) on that thread first."""

    def __init__(
        self,
        post: Callable[[Message], None],
        seconds: float,
        on_tick: Callable[[], None] | None = None,
    ) -> None:
        self._post = post
        self._seconds = seconds
        self._on_tick = on_tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentbar-ticker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self._seconds):
            if self._on_tick is not None:
                try:
                    self._on_tick()
                except Exception:
                    log.exception("tick hook failed")
            self._post(Tick())
