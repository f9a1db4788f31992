"""POSIX terminals (``pty_spawn.spawn`` and the keeper's hand-back pick them): our own child in a
PTY forked by ptyprocess, or one adopted from an earlier agentbar (called from a task's reader
thread and the threads that drive it). See ``terminal`` for how exits and signals are seen.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import psutil

from ..privacy import user_umask
from .terminal import Exit, Program, create_time_of

# Type checkers skip the rest of this module on the other platform.
assert sys.platform != "win32", "POSIX only: Windows uses terminal_windows"


def _pidfd(pid: int) -> int:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return -1
    try:
        return int(opener(pid))
    except OSError:
        return -1


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, 0)


def _set_winsize(fd: int, rows: int, cols: int) -> None:
    import fcntl  # noqa: PLC0415 - POSIX only
    import struct  # noqa: PLC0415
    import termios  # noqa: PLC0415

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _read_master(fd: int, size: int) -> bytes:
    try:
        data = os.read(fd, size)
    except OSError as exc:
        if exc.errno == errno.EIO:  # Linux: every holder of the slave side closed it
            raise EOFError from None
        raise
    if not data:  # the BSDs say the same with an empty read
        raise EOFError
    return data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            time.sleep(0.005)  # the program reads slower than we type: wait for room
            continue
        view = view[written:]


class _Master(Program):
    """What both POSIX terminals share: a master descriptor and the program's pid."""

    def __init__(self, fd: int, pid: int, create_time: float) -> None:
        super().__init__(pid, create_time)
        self._fd = fd
        self._exit_fd = _pidfd(pid)
        self._owned = True  # the master is open

    def fileno(self) -> int:
        return self._fd

    def exit_fd(self) -> int:
        return self._exit_fd

    def read(self, size: int) -> bytes:
        return _read_master(self._fd, size)

    def write(self, data: bytes) -> None:
        _write_all(self._fd, data)

    def resize(self, rows: int, cols: int) -> None:
        with contextlib.suppress(OSError):
            _set_winsize(self._fd, rows, cols)


class PosixTerminal(_Master):
    """Our own child, forked by ptyprocess."""

    def __init__(self, proc: Any) -> None:
        super().__init__(proc.fd, proc.pid, create_time_of(proc.pid))
        self._proc = proc  # a ptyprocess.PtyProcess
        self._detached = False  # someone else keeps the child now: never wait for it here

    @classmethod
    def spawn(
        cls, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], rows: int, cols: int
    ) -> PosixTerminal:
        from ptyprocess import PtyProcess  # noqa: PLC0415 - POSIX only

        # The agent's files are the user's: it gets the umask the user gave agentbar, not
        # agentbar's private one.
        mask = user_umask()
        proc = PtyProcess.spawn(
            list(argv),
            cwd=cwd,
            env=dict(env),
            dimensions=(rows, cols),
            preexec_fn=lambda: os.umask(mask),
        )
        return cls(proc)

    def poll_exit(self) -> Exit | None:
        if self._exit is not None or self._detached:
            return self._exit
        try:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
        except ChildProcessError:
            self._exit = Exit()  # reaped elsewhere: gone, status unknown
            return self._exit
        if pid == 0:
            return None
        if os.WIFEXITED(status):
            self._exit = Exit(code=os.WEXITSTATUS(status))
        elif os.WIFSIGNALED(status):
            self._exit = Exit(signal=os.WTERMSIG(status))
        else:
            return None  # stopped or continued: still there
        # ptyprocess must not wait for (or signal) a pid that may be reused from now on.
        self._proc.terminated = True
        return self._exit

    def send_signal(self, signum: int) -> None:
        if self.poll_exit() is None and not self._detached:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signum)

    def detach(self) -> int:
        kept = os.dup(self._fd)
        self._detached = True  # from now on close() only closes our descriptors
        # It is still our child while this process runs: should it exit before we do, reap it
        # (a thread that only waits; nobody else waits for this pid any more).
        threading.Thread(
            target=_reap, args=(self._pid,), name=f"agentbar-reap-{self._pid}", daemon=True
        ).start()
        return kept

    def close(self) -> None:
        self._release()

    def _release(self) -> None:
        """Close our descriptors without ptyprocess's own close(), which would SIGHUP, SIGINT
        and SIGKILL the child (and ptyprocess's ``__del__`` would do the same at exit)."""
        if not self._owned:
            return
        self._owned = False
        with contextlib.suppress(OSError):
            self._proc.fileobj.close()  # closes the master
        self._proc.closed = True
        self._proc.terminated = True
        if self._exit_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._exit_fd)
            self._exit_fd = -1


class AdoptedTerminal(_Master):
    """A program started by an earlier agentbar, its master handed back by the keeper: not our
    child (init reaps it), so it is watched by pid and start time."""

    def __init__(self, fd: int, pid: int, create_time: float) -> None:
        super().__init__(fd, pid, create_time)
        os.set_blocking(fd, True)

    def _alive(self) -> bool:
        try:
            proc = psutil.Process(self._pid)
            if abs(proc.create_time() - self._create_time) >= 1.0:
                return False  # the pid was given to another process
            if proc.status() == psutil.STATUS_ZOMBIE:
                # Exited. Reap it if it happens to be ours (adopted within the process that
                # started it, as tests do); anyone else's parent reaps its own.
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(self._pid, os.WNOHANG)
                return False
            return True
        except (psutil.Error, OSError):
            return False

    def poll_exit(self) -> Exit | None:
        if self._exit is None and not self._alive():
            self._exit = Exit()
        return self._exit

    def send_signal(self, signum: int) -> None:
        if self._alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signum)

    def detach(self) -> int:
        return os.dup(self._fd)

    def close(self) -> None:
        if not self._owned:
            return
        self._owned = False
        for fd in (self._fd, self._exit_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._exit_fd = -1
