"""Pinned agent CLIs from the npm registry, installed once into a cache outside the repository.

The cache folder is ``$AGENTBAR_CONFORMANCE_CACHE`` or ``~/.cache/agentbar-conformance``; an
install is skipped when its folder already holds the binary. A lock file serialises installs
so parallel test processes do not race npm.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Cli:
    agent: str  # "claude" or "codex"
    package: str
    version: str

    @property
    def label(self) -> str:
        return f"{self.agent}-{self.version}"


def cache_dir() -> Path:
    configured = os.environ.get("AGENTBAR_CONFORMANCE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "agentbar-conformance"


def npm() -> str:
    found = shutil.which("npm")
    if found is None:
        raise RuntimeError("npm is not installed; scripts/test installs Node.js and npm")
    return found


def ensure_installed(cli: Cli) -> Path:
    """The path of the CLI's executable, installing ``package@version`` first if needed."""
    prefix = cache_dir() / "npm" / f"{cli.package.replace('/', '_').replace('@', '')}-{cli.version}"
    binary = prefix / "node_modules" / ".bin" / cli.agent
    if binary.exists():
        return binary
    prefix.mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            subprocess.run(
                [
                    npm(),
                    "install",
                    "--prefix",
                    str(prefix),
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"{cli.package}@{cli.version}",
                ],
                check=True,
                timeout=600,
            )
    if not binary.exists():
        raise RuntimeError(f"npm installed {cli.package}@{cli.version} but {binary} is missing")
    return binary
