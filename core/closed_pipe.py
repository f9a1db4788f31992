"""Ending quietly when whoever reads standard output goes away (``agentbar status | head``):
no traceback, no "Broken pipe" message, no complaint from the interpreter's last flush (main
thread).

The usual way for a command-line tool; Python's own advice (the ``signal`` module's notes on
SIGPIPE) rather than SIGPIPE's default action, which would kill the process before it closes
its engine and index.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable


def quiet_on_closed_pipe(command: Callable[[], int]) -> int:
    """``command()``'s exit status; 0 when it ended because standard output's reader went
    away (what was asked for was read: ``head`` took its lines)."""
    try:
        status = command()
        sys.stdout.flush()  # here, not at exit, where a closed pipe would be reported
    except BrokenPipeError:
        stdout_to_devnull()
        return 0
    return status


def stdout_to_devnull() -> None:
    """Point standard output at the null device: what is still buffered, and the
    interpreter's flush at exit, go nowhere instead of failing again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
