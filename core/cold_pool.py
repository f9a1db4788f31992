"""The worker processes of a cold read: a spawn pool whose workers skip the program's main
script and the ``__init__`` of the packages named bare, and multiprocessing's resource tracker
stopped after it (engine thread; imported only when a cold read starts workers, so that no
other process pays for multiprocessing).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import pickle
import sys
import types
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
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
    workers: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    *,
    bare: Iterable[str] = (),
) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes (started as tasks arrive). ``bare``: packages
    each worker enters without running their ``__init__`` before it unpickles ``initargs``."""
    start = _BareStart(pickle.dumps((initializer, initargs)), _package_paths(bare))
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_WorkerContext(),
        initializer=_start_bare,
        initargs=(start,),
    )


# An agent's package builds its whole kit when imported (replay, launch, hooks, decisions:
# about half of a worker's imports, 70 ms of its start), while a worker reads with the agent's
# files module and parser alone. Unpickling a source imports its module, and Python runs the
# package's ``__init__`` first: unless the package is already in ``sys.modules``. So the
# initializer and its arguments are pickled apart and unpickled in the worker after its bare
# packages were entered as empty packages (their path set, nothing run). Only the worker
# process sees them; a worker that imported a name from one would fail loudly (ImportError),
# and the cold read would send its files back to the engine thread, never read them wrong.


@dataclass(frozen=True, slots=True)
class _BareStart:
    """What a worker starts with: the pickled ``(initializer, initargs)`` and the bare
    packages (name, search path)."""

    pickled: bytes
    packages: tuple[tuple[str, tuple[str, ...]], ...]


def _package_paths(names: Iterable[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The packages among ``names`` already imported here, with their search paths."""
    found = []
    for name in sorted(set(names)):
        path = getattr(sys.modules.get(name), "__path__", None)
        if name and path is not None:
            found.append((name, tuple(path)))
    return tuple(found)


def _start_bare(start: _BareStart) -> None:
    """A worker's initializer: enter the bare packages, then unpickle and run the real one."""
    for name, path in start.packages:
        if name not in sys.modules:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = list(path)
            sys.modules[name] = importlib.util.module_from_spec(spec)
    initializer, initargs = pickle.loads(start.pickled)
    initializer(*initargs)


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
