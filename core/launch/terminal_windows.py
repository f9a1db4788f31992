"""The Windows terminal: pywinpty's ConPTY behind ``terminal.Terminal`` (called from a task's
reader thread and the threads that drive it); it cannot be detached (closing a ConPTY ends its
program), so tasks there stop with agentbar.
"""

from __future__ import annotations

import contextlib
import errno
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .terminal import Exit, Program, create_time_of

# Type checkers skip the rest of this module on the other platform.
assert sys.platform == "win32", "Windows only: POSIX uses terminal_posix"


class WindowsTerminal(Program):  # pragma: no cover - exercised on Windows only
    """pywinpty's ConPTY process (``winpty.PtyProcess``)."""

    def __init__(self, proc: Any) -> None:
        super().__init__(int(proc.pid), create_time_of(int(proc.pid)))
        self._proc = proc

    @classmethod
    def spawn(
        cls, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], rows: int, cols: int
    ) -> WindowsTerminal:
        import winpty  # noqa: PLC0415 - Windows only

        proc = winpty.PtyProcess.spawn(list(argv), cwd=cwd, env=dict(env), dimensions=(rows, cols))
        return cls(proc)

    def fileno(self) -> int:
        return -1

    def exit_fd(self) -> int:
        return -1

    def read(self, size: int) -> bytes:
        text = self._proc.read(size)  # blocks; EOFError at the end
        return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)

    def write(self, data: bytes) -> None:
        self._proc.write(data.decode("utf-8", "replace"))

    def resize(self, rows: int, cols: int) -> None:
        with contextlib.suppress(Exception):
            self._proc.setwinsize(rows, cols)

    def poll_exit(self) -> Exit | None:
        if self._exit is None and not self._proc.isalive():
            self._exit = Exit(code=self._proc.exitstatus)
        return self._exit

    def send_signal(self, signum: int) -> None:
        if self.poll_exit() is None:
            with contextlib.suppress(Exception):
                self._proc.terminate(force=signum == getattr(signal, "SIGKILL", 9))

    def detach(self) -> int:
        raise OSError(errno.ENOTSUP, "a ConPTY cannot outlive the process that owns it")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._proc.close(force=True)
