"""Run the installed ``agentbar`` command in a child process, as a person or a script would
(the test's thread waits for it)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import orjson
import psutil


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


def kill_left_behind(data: Path, home: Path) -> None:
    """What a failed test left: the background server of ``data``, and anything run from
    ``home``."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        info = orjson.loads((data / "server.json").read_bytes())
        os.kill(int(info["pid"]), signal.SIGKILL)
    for proc in psutil.process_iter(["environ"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if (proc.info["environ"] or {}).get("HOME") == str(home) and proc.pid != os.getpid():
                proc.kill()
