"""The pseudo-terminal seam: start a program in a PTY agentbar owns, read and write it, resize it,
signal it, know when it exited (called from a task's reader thread and the threads that drive it).

POSIX (``terminal_posix``): ``ptyprocess`` forks the child as the leader of a new session whose
controlling terminal is the PTY, so Ctrl-C, SIGWINCH and, when the master closes, SIGHUP reach
it as they would in a terminal window. Exit is seen at once through a pidfd (Linux 5.3+) or by
polling ``waitpid``; the child is always reaped here, so it never lingers as a zombie. A child
can also be *adopted* (``AdoptedTerminal``): its master handed back by the keeper after an
agentbar restart; it is not our child then (its parent exited, init reaps it), so its exit is
watched by pid and start time.

Windows (``terminal_windows``): pywinpty's ConPTY behind the same Protocol
(``WindowsTerminal``); it cannot be detached (closing a ConPTY ends its program), so tasks there
stop with agentbar.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any, Protocol

import psutil

# The signal that ends a program at once: Windows has no SIGKILL (os.kill with SIGTERM calls
# TerminateProcess there).
if sys.platform == "win32":
    KILL_SIGNAL = signal.SIGTERM
else:
    KILL_SIGNAL = signal.SIGKILL


@dataclass(frozen=True, slots=True)
class Exit:
    """How a task's program ended: ``code`` when it exited, ``signal`` when a signal ended it;
    both None when it is not our child and nobody can tell."""

    code: int | None = None
    signal: int | None = None

    def describe(self) -> str:
        if self.code is not None:
            return f"exit status {self.code}"
        if self.signal is not None:
            with contextlib.suppress(ValueError):
                return f"ended by {signal.Signals(self.signal).name}"
            return f"ended by signal {self.signal}"
        return "exited"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "signal": self.signal}


class Terminal(Protocol):
    """One program in one pseudo-terminal."""

    @property
    def pid(self) -> int: ...

    @property
    def create_time(self) -> float:
        """The process's start time as psutil reports it (tells a reused pid apart)."""
        ...

    def fileno(self) -> int:
        """The master's descriptor, for ``select`` (-1 where there is none)."""
        ...

    def exit_fd(self) -> int:
        """A descriptor that turns readable when the program exits (-1: poll ``poll_exit``)."""
        ...

    def read(self, size: int) -> bytes:
        """What the program wrote; blocks until there is some. Raises ``EOFError`` at the end."""
        ...

    def write(self, data: bytes) -> None: ...

    def resize(self, rows: int, cols: int) -> None: ...

    def poll_exit(self) -> Exit | None:
        """How it ended, or None while it runs (reaps our child; never blocks)."""
        ...

    def send_signal(self, signum: int) -> None:
        """Signal the program (nothing when it is gone)."""
        ...

    def detach(self) -> int:
        """Give up the program without ending it: a duplicate of the master descriptor for
        whoever keeps it from now on (``close`` then only closes our own descriptors)."""
        ...

    def close(self) -> None:
        """Close the master (the program gets SIGHUP if it still runs) and free what is ours."""
        ...


def create_time_of(pid: int) -> float:
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, OSError):
        return time.time()


class Program:
    """What every terminal knows of the program it runs: its pid and start time (a reused pid
    is another program), and its exit once seen."""

    def __init__(self, pid: int, create_time: float) -> None:
        self._pid = pid
        self._create_time = create_time
        self._exit: Exit | None = None

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def create_time(self) -> float:
        return self._create_time
