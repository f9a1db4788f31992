"""An agent CLI in a real pseudo-terminal, driven like a person does: read the screen, type,
press keys. The screen is a VT100 emulation (pyte) of what the program drew, so waiting for
"Do you want to proceed?" means waiting until it is on screen, not somewhere in a byte stream
full of cursor movements."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import psutil
import pyte
from ptyprocess import PtyProcess

KEYS = {
    "enter": "\r",
    "escape": "\x1b",
    "ctrl-c": "\x03",
    "ctrl-d": "\x04",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "tab": "\t",
    "shift-tab": "\x1b[Z",
}


# TUIs take input that comes fast for a paste, where Enter inserts a newline instead of sending.
PASTE_PAUSE = 1.0


class ScreenTimeout(AssertionError):
    pass


class _AnsweringScreen(pyte.Screen):
    """A screen that answers the terminal's status queries (cursor position, device
    attributes) the way a real terminal does: crossterm-based TUIs (Codex up to 0.9x) ask for
    the cursor position at start-up and give up ("The cursor position could not be read")
    when nobody answers."""

    answer: Callable[[str], None] | None = None

    def write_process_input(self, data: str) -> None:
        if self.answer is not None:
            self.answer(data)

    def select_graphic_rendition(self, *attrs: int, private: bool = False) -> None:
        """``CSI > 4 ; 2 m`` (xterm's modifyOtherKeys, which Gemini CLI sets at start-up) is
        a private sequence, not a colour: pyte passes it here with ``private=True`` and the
        base class would raise, killing the reader."""
        if not private:
            super().select_graphic_rendition(*attrs)

    def report_device_status(self, mode: int, *, private: bool = False) -> None:
        """pyte's handler takes no ``private`` flag and raises on ``CSI ? 6 n`` (opentui, the
        TUI of opencode 1.1, asks that way), which would end the reader thread."""
        super().report_device_status(mode)


class AgentTerminal:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        cols: int = 140,
        rows: int = 45,
        log_path: Path | None = None,
    ) -> None:
        self._screen = _AnsweringScreen(cols, rows)
        self._stream = pyte.ByteStream(self._screen)
        self._changed = threading.Condition()
        self._log = open(log_path, "wb") if log_path else None  # noqa: SIM115 - closed in close()
        self.proc = PtyProcess.spawn(
            list(argv), env=dict(env), cwd=str(cwd), dimensions=(rows, cols)
        )
        self._screen.answer = self._answer
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    # -- the screen ------------------------------------------------------------------------

    def _read(self) -> None:
        while True:
            try:
                data = self.proc.read(65536)
            except (EOFError, OSError, ValueError):  # ValueError: close() closed it under us
                break
            if self._log is not None:
                self._log.write(data)
                self._log.flush()
            with self._changed:
                self._stream.feed(data)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _answer(self, data: str) -> None:
        with contextlib.suppress(OSError):
            self.proc.write(data.encode())

    def text(self) -> str:
        with self._changed:
            return "\n".join(line.rstrip() for line in self._screen.display)

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> float:
        """Block until ``pattern`` (a substring or a regex) is on screen; returns the
        ``time.perf_counter()`` at which it was first seen."""
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                screen = "\n".join(line.rstrip() for line in self._screen.display)
                if regex.search(screen):
                    return time.perf_counter()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ScreenTimeout(
                        f"{regex.pattern!r} not on screen after {timeout} s; screen:\n{screen}"
                    )
                if not self.proc.isalive() and not self._reader.is_alive():
                    raise ScreenTimeout(f"the program exited; last screen:\n{screen}")
                self._changed.wait(min(left, 0.25))

    # -- typing ----------------------------------------------------------------------------

    def type(self, text: str) -> None:
        self.proc.write(text.encode())

    def press(self, key: str) -> None:
        self.proc.write(KEYS[key].encode())

    def submit(self, text: str, *, pause: float = PASTE_PAUSE) -> None:
        """Type ``text``, wait, then Enter: TUIs treat fast input as a paste, where Enter
        inserts a newline instead of sending."""
        self.type(text)
        time.sleep(pause)
        self.press("enter")

    # -- ending ----------------------------------------------------------------------------

    def wait_exit(self, timeout: float = 15.0) -> int | None:
        deadline = time.monotonic() + timeout
        while self.proc.isalive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.proc.isalive():
            return None
        return self.proc.exitstatus

    def close(self) -> None:
        """Stop the program and everything it started (a child shell, a daemon)."""
        try:
            root = psutil.Process(self.proc.pid)
            family = [root, *root.children(recursive=True)]
        except psutil.Error:
            family = []
        for proc in family:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGTERM)
        _gone, alive = psutil.wait_procs(family, timeout=3)
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        with contextlib.suppress(Exception):
            self.proc.close(force=True)
        self._reader.join(timeout=2)
        if self._log is not None:
            self._log.close()


def kill_tree_of_home(home: Path) -> None:
    """End every process whose environment or command line points into ``home`` (Codex's
    app-server daemon outlives the TUI it served)."""
    marker = str(home)
    for proc in psutil.process_iter(["pid", "cmdline", "environ"]):
        if proc.pid == os.getpid():
            continue
        try:
            cmdline = " ".join(proc.info["cmdline"] or [])
            environ = proc.info["environ"] or {}
        except (psutil.Error, TypeError):
            continue
        if marker in cmdline or any(marker in v for v in environ.values()):
            with contextlib.suppress(psutil.Error):
                proc.kill()
