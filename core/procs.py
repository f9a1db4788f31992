"""The OS process table as the engine needs it: agent candidates and pid liveness (engine thread).

Reading a process's command line and cwd costs a few system calls, so each process is inspected
once (keyed by pid and start time) and only when its name could be an agent's: one that starts
with a name an agent's kit gives (``AgentKit.process_names``: the native ``claude``/``codex``
binaries, Codex's npm package ships e.g. ``codex-x86_64-unknown-linux-musl``, or a JavaScript
runtime running the npm wrapper). On Linux a new pid's name and start time come from one read
of ``/proc/<pid>/stat`` (psutil's ``Process`` object and ``name()`` read it twice, and the
command line too for a 15-character name): a machine that starts many processes made the
table's refresh the engine's largest idle cost.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import Protocol

import psutil

from .model import Process
from .sources.base import ProcessInfo


class ProcessTable(Protocol):
    def refresh(self) -> bool:
        """Re-read the table; True when the set of candidate processes changed."""
        ...

    def candidates(self) -> Iterable[ProcessInfo]:
        """Processes that might be agents (as of the last refresh)."""
        ...

    def is_alive(self, process: Process) -> bool:
        """True when ``process.pid`` runs and is the same process (same start time)."""
        ...

    def lookup(self, pid: int) -> ProcessInfo | None:
        """The process with this pid now, inspected fully, or None."""
        ...


class PsutilProcessTable:
    def __init__(self, names: Iterable[str]) -> None:
        """``names``: the starts of the process names worth inspecting (any case)."""
        self._known: dict[int, tuple[float, ProcessInfo | None]] = {}
        words = sorted({re.escape(name.lower()) for name in names}) or ["(?!)"]
        self._candidate = re.compile(f"^(?:{'|'.join(words)})", re.IGNORECASE)

    def refresh(self) -> bool:
        pids = set(psutil.pids())
        known = self._known
        changed = False
        for pid in known.keys() - pids:  # (set differences: a tick with nothing new is cheap)
            info = known.pop(pid)[1]
            changed = changed or info is not None
        new = pids - known.keys()
        boot = psutil.boot_time() if new else 0.0
        for pid in new:
            found = _started_and_named(pid, boot)
            if found is None:
                continue
            create_time, name = found
            if not self._candidate.match(name):
                self._known[pid] = (create_time, None)
                continue
            try:
                proc = psutil.Process(pid)
                info = self._inspect(proc, proc.create_time(), proc.name())
            except (psutil.Error, OSError):
                continue
            self._known[pid] = (create_time, info)
            changed = changed or info is not None
        return changed

    def candidates(self) -> Iterable[ProcessInfo]:
        return [info for _, info in self._known.values() if info is not None]

    def is_alive(self, process: Process) -> bool:
        try:
            return abs(psutil.Process(process.pid).create_time() - process.create_time) < 1.0
        except (psutil.Error, OSError):
            return False

    def lookup(self, pid: int) -> ProcessInfo | None:
        try:
            proc = psutil.Process(pid)
            return self._inspect(proc, proc.create_time(), proc.name())
        except (psutil.Error, OSError):
            return None

    @staticmethod
    def _inspect(proc: psutil.Process, create_time: float, name: str) -> ProcessInfo | None:
        try:
            with proc.oneshot():
                cmdline = tuple(proc.cmdline())
                ppid = proc.ppid()
                try:
                    cwd: str | None = proc.cwd()
                except (psutil.AccessDenied, OSError):
                    cwd = None
        except (psutil.Error, OSError):
            return None
        return ProcessInfo(
            pid=proc.pid, ppid=ppid, create_time=create_time, name=name, cmdline=cmdline, cwd=cwd
        )


if sys.platform.startswith("linux"):
    _CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

    def _started_and_named(pid: int, boot: float) -> tuple[float, str] | None:
        """The start time (as psutil gives it, from the ``boot`` time it gives) and the
        kernel's name of ``pid`` (15 characters at most: enough to match the start of a
        name), or None when it is gone."""
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                line = stat.read()
        except OSError:
            return None
        close = line.rfind(b")")  # the name is in parentheses and may hold any byte
        fields = line[close + 2 :].split()
        if close < 0 or len(fields) < 20:
            return None
        name = line[line.find(b"(") + 1 : close].decode(errors="replace")
        return boot + int(fields[19]) / _CLOCK_TICKS, name

else:

    def _started_and_named(pid: int, boot: float) -> tuple[float, str] | None:
        """psutil's start time and name of ``pid`` (``boot``: unused), or None."""
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                return proc.create_time(), proc.name()
        except (psutil.Error, OSError):
            return None


class FakeProcessTable:
    """A process table a test controls: add and remove processes by hand."""

    def __init__(self, processes: Iterable[ProcessInfo] = ()) -> None:
        self._procs = {p.pid: p for p in processes}
        self._changed = True

    def add(self, proc: ProcessInfo) -> None:
        self._procs[proc.pid] = proc
        self._changed = True

    def remove(self, pid: int) -> None:
        self._procs.pop(pid, None)
        self._changed = True

    def refresh(self) -> bool:
        changed, self._changed = self._changed, False
        return changed

    def candidates(self) -> Iterable[ProcessInfo]:
        return list(self._procs.values())

    def is_alive(self, process: Process) -> bool:
        proc = self._procs.get(process.pid)
        return proc is not None and abs(proc.create_time - process.create_time) < 1.0

    def lookup(self, pid: int) -> ProcessInfo | None:
        return self._procs.get(pid)
