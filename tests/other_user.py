"""A second local user for the security tests: created once per machine, commands run as it
with ``runuser`` (the test's thread waits for them).

The other user runs Debian's own ``/usr/bin/python3`` with the standard library only: the test
venv's interpreter may live under a home folder it cannot enter, and an attacker brings no
agentbar anyway. Tests that use it need root (CI and these machines run as root); elsewhere they
are skipped with the reason.

A test must put the files it checks where the other user could reach them if their own modes
allowed it (see ``reachable_dir``): pytest's ``tmp_path`` sits under a 0700 folder, which would
make every "cannot read" pass for the wrong reason.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

NAME = "agentbar-other"
PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class OtherUser:
    name: str
    uid: int
    gid: int

    def run(
        self, *argv: str, timeout: float = 30, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``argv`` as the other user, in a clean environment (no token, no bus, no display)."""
        env = {"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8"}
        return subprocess.run(
            [runuser(), "-u", self.name, "--", *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            check=False,
        )

    def start(self, source: str, *args: str) -> subprocess.Popen[str]:
        """Start ``source`` with Debian's Python as the other user, in the background (its
        standard streams are pipes); the caller ends it."""
        env = {"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8"}
        return subprocess.Popen(
            [runuser(), "-u", self.name, "--", PYTHON, "-I", "-c", source, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def python(
        self, source: str, *args: str, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        """Run ``source`` with Debian's Python as the other user (stdlib only)."""
        return self.run(PYTHON, "-I", "-c", source, *args, timeout=timeout)

    def can_read(self, path: Path) -> bool:
        return self.run("cat", str(path)).returncode == 0

    def can_list(self, path: Path) -> bool:
        return self.run("ls", str(path)).returncode == 0


def runuser() -> str:
    """runuser's full path: the other user's clean PATH has no sbin, and a child's PATH is
    where its program is looked up."""
    return shutil.which("runuser") or "/usr/sbin/runuser"


def ensure_user(name: str, *useradd_args: str) -> OtherUser:
    """The local user ``name``, made with ``useradd`` (a system user, no home folder, no login
    shell, unless ``useradd_args`` say otherwise) when it does not exist yet."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        useradd = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin"]
        subprocess.run(
            [*useradd, *useradd_args, name],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(name)
    return OtherUser(name, entry.pw_uid, entry.pw_gid)


def why_not(*tools: str) -> str | None:
    """Why this machine cannot make a second local user and run as it (None: it can)."""
    if os.geteuid() != 0:
        return "creating a second local user needs root"
    for tool in ("runuser", "useradd", *tools):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            return f"{tool} is not installed"
    if not Path(PYTHON).exists():
        return f"{PYTHON} is not installed"
    return None


def needs_root_and(*tools: str) -> None:
    """Skip, saying why, where this machine cannot make a second local user and run as it."""
    reason = why_not(*tools)
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def other_user() -> OtherUser:
    needs_root_and()
    return ensure_user(NAME)


@pytest.fixture
def reachable_dir() -> Iterator[Path]:
    """A fresh folder every user may enter (0711 on the way down, like a home folder), so only
    the modes agentbar sets decide what another user can read below it."""
    parent = Path(tempfile.mkdtemp(prefix="agentbar-reach-", dir="/tmp"))
    parent.chmod(0o711)
    try:
        yield parent
    finally:
        shutil.rmtree(parent, ignore_errors=True)
