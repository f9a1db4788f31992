"""Wait for something a real process or thread will do: poll a check until it holds (the test's
thread; never a fixed sleep that passes on a fast machine and fails on a loaded one)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class TimedOut(AssertionError, TimeoutError):
    """A wait that ran out: a failed check for pytest, a timeout for code that retries."""


def wait_for(
    check: Callable[[], T | None], timeout: float = 10.0, what: str = "it", step: float = 0.02
) -> T:
    """``check()``'s first truthy value, polling every ``step`` seconds for ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimedOut(f"{what} did not happen within {timeout} s")
        time.sleep(step)


def end_process(proc: subprocess.Popen[Any], grace: float = 5.0) -> int:
    """Ask a child to end (SIGTERM), wait ``grace`` seconds, then kill it; its exit status."""
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(grace)
