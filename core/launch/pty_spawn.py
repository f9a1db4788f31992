"""Start a program in a new pseudo-terminal with this platform's implementation of the
``Terminal`` seam (called from the thread that launches a task).

Apart from ``terminal`` so that the implementations, which build on ``terminal``'s values,
are not imported back by it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

from .terminal import Terminal


def spawn(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    rows: int,
    cols: int,
) -> Terminal:
    """Start ``argv`` in a new PTY. Raises ``OSError`` (``FileNotFoundError`` for a missing
    program) when it cannot be started."""
    if sys.platform == "win32":
        from .terminal_windows import WindowsTerminal  # noqa: PLC0415

        return WindowsTerminal.spawn(argv, cwd=cwd, env=env, rows=rows, cols=cols)
    else:
        from .terminal_posix import PosixTerminal  # noqa: PLC0415

        return PosixTerminal.spawn(argv, cwd=cwd, env=env, rows=rows, cols=cols)
