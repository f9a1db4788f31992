"""ccusage 20, the baseline agentbar's cost must equal: found in the bench's npm cache or
installed there from npm (the test's thread waits); None when neither is possible."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

PACKAGES = ["ccusage@20.0.24", "@ccusage/ccusage-linux-x64@20.0.24"]
PREFIX = Path.home() / ".cache" / "agentbar-bench" / "npm20"  # shared with bench/bench_index.py


def ccusage() -> Path | str:
    """ccusage 20's executable, or why there is none (a reason to skip with)."""
    binary = PREFIX / "node_modules" / ".bin" / "ccusage"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        return "ccusage 20 is not in ~/.cache/agentbar-bench and npm is not installed"
    packages = PACKAGES
    if not (sys.platform == "linux" and os.uname().machine == "x86_64"):
        packages = packages[:1]  # npm picks the native binary of another platform itself
    PREFIX.mkdir(parents=True, exist_ok=True)
    with open(PREFIX.parent / "npm20.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            done = subprocess.run(
                [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", *packages],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0 or not binary.exists():
                return f"npm could not install ccusage 20: {done.stderr[-500:]}"
    return binary


def report(binary: Path, home: Path, *args: str) -> dict[str, Any]:
    """``ccusage ARGS --offline --json`` over the agents' folders in ``home``, dates in UTC."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "TZ": "UTC",
    }
    done = subprocess.run(
        [str(binary), *args, "--offline", "--json", "--timezone", "UTC"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc
