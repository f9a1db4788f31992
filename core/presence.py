"""Who uses the running agentbar from another process: an ``agentbar watch`` marks itself in
``<data dir>/users/`` while it runs, so that a background ``serve`` does not end under it
(any thread; a few file operations).

A mark is an empty file named ``<what>-<pid>`` (0600, in a 0700 folder). A process that dies
without removing its mark is recognised by its pid being gone, and its mark is cleared then.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from .privacy import private_dir, write_private

USERS_DIR = "users"


@contextlib.contextmanager
def present(data_dir: Path, what: str) -> Iterator[None]:
    """This process counts as using agentbar while the block runs (a mark that cannot be
    written is skipped: the block runs all the same)."""
    path: Path | None = data_dir / USERS_DIR / f"{what}-{os.getpid()}"
    try:
        assert path is not None
        private_dir(path.parent)
        write_private(path, b"")
    except OSError:
        path = None
    try:
        yield
    finally:
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()


def count(data_dir: Path) -> int | None:
    """How many live processes mark themselves present; None when the folder cannot be read
    (then nobody can tell)."""
    folder = data_dir / USERS_DIR
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return 0
    except OSError:
        return None
    live = 0
    for name in names:
        _, _, pid = name.rpartition("-")
        if pid.isdigit() and _alive(int(pid)):
            live += 1
        elif pid.isdigit():
            with contextlib.suppress(OSError):
                (folder / name).unlink()  # its process is gone
    return live


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (another user's, or not ours to signal): count it
    return True
