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
