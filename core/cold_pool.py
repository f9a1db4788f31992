"""The worker processes of a cold read: a spawn pool whose workers skip the program's main
script, and multiprocessing's resource tracker stopped after it (engine thread; imported only
when a cold read starts workers, so that no other process pays for multiprocessing).
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import active_children, resource_tracker
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any

__all__ = ["BrokenProcessPool", "start_pool", "stop_tracker", "tracker_running"]


class _WorkerProcess(SpawnProcess):
    """A spawned worker that does not import the program's main script first. (Spawn runs
    the parent's ``__main__`` again in each child, so that its functions can be unpickled
    there: for the ``agentbar`` command that imports the tray and the CLI, about three times
    what a worker needs, and nothing of it is sent here.) The main module is hidden only while
    the child's start is prepared, on this thread."""

    def start(self) -> None:
        main = sys.modules["__main__"]
        sys.modules["__main__"] = _BARE_MAIN
        try:
            super().start()
        finally:
            sys.modules["__main__"] = main


_BARE_MAIN = types.ModuleType("__main__")


class _WorkerContext(SpawnContext):
    Process = _WorkerProcess


def start_pool(
    workers: int, initializer: Callable[..., None], initargs: tuple[Any, ...]
) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes (started as tasks arrive)."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_WorkerContext(),
        initializer=initializer,
        initargs=initargs,
    )


# A 'spawn' pool starts multiprocessing's resource tracker, a process that would otherwise idle
# until agentbar exits. When the cold read started it and no other multiprocessing child lives
# (the tray's window process uses it too), it is stopped with the pool.


def _tracker() -> Any:
    return getattr(resource_tracker, "_resource_tracker", None)


def tracker_running() -> bool:
    tracker = _tracker()
    return tracker is None or getattr(tracker, "_fd", None) is not None


def stop_tracker() -> None:
    tracker = _tracker()
    stop = getattr(tracker, "_stop", None)
    if stop is None or active_children():
        return
    with contextlib.suppress(Exception):
        stop()
