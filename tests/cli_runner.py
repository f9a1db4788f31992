"""Run the installed ``agentbar`` command in a child process, as a person or a script would
(the test's thread waits for it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping


def agentbar(
    env: Mapping[str, str], *args: str, timeout: float = 60, check: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentbar.tray", *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )


def start_agentbar(env: Mapping[str, str], *args: str) -> subprocess.Popen[str]:
    """``agentbar ARGS`` running in the background: no input, stdout discarded, stderr a pipe
    the test reads line by line (what it says to a person)."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", *args],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
