"""Run a command in a user namespace of its own with a low inotify watch limit, so the real
limit is hit without changing the machine's (the test's thread waits or reads its output).

Since Linux 5.11 inotify's limits are counted per user namespace (``/proc/sys/user/
max_inotify_watches``), and root of a new namespace may lower its own. ``unshare -U -r`` maps
this user to root inside, so files, the session bus and the X display stay reachable.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

LIMIT_FILE = Path("/proc/sys/user/max_inotify_watches")


def with_watch_limit(argv: list[str], watches: int) -> list[str]:
    """``argv`` run where at most ``watches`` inotify watches can be added."""
    script = f'echo {watches} > {LIMIT_FILE} && exec "$@"'
    return ["unshare", "-U", "-r", "sh", "-c", script, "sh", *argv]


def set_watch_limit(pid: int, watches: int) -> None:
    """Change the limit in the namespace process ``pid`` runs in (as if a person ran the sysctl
    there), from outside it."""
    script = f"echo {watches} > {LIMIT_FILE}"
    subprocess.run(["nsenter", "-t", str(pid), "-U", "sh", "-c", script], check=True, timeout=30)


def need_user_namespaces() -> None:
    """Skip (saying why) where a user namespace cannot lower its own watch limit."""
    if not (shutil.which("unshare") and shutil.which("nsenter") and LIMIT_FILE.exists()):
        pytest.skip("needs unshare, nsenter and per-namespace inotify limits (Linux 5.11+)")
    probe = subprocess.run(
        with_watch_limit(["true"], 1), capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"user namespaces are not allowed here: {probe.stderr.strip()}")
