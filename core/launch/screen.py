"""What a task's terminal shows now: a VT emulation (pyte) of everything the program drew, and
its lines, off which each agent's launch profile reads its dialogs (``prompts.py``) (the task's
reader thread feeds it; other threads read it under the task's lock). The emulator itself is
``emulator.py``, imported with the first screen.

The screen is how agentbar knows, without guessing from a byte stream full of cursor movements,
that "Do you want to proceed?" is up right now and not merely was once. It also answers the
terminal queries a TUI makes at start-up (cursor position, device attributes): crossterm-based
TUIs give up when nobody answers, and a browser attached to the task may not be there.
"""

from __future__ import annotations

from collections.abc import Callable

BRACKETED_PASTE = 2004
_PRIVATE_SHIFT = 5  # pyte stores DEC private modes shifted left by 5


class Screen:
    def __init__(self, rows: int, cols: int, answer: Callable[[bytes], None] | None = None) -> None:
        from .emulator import Emulator, byte_stream  # noqa: PLC0415  (pyte: only once a task runs)

        self._screen = Emulator(cols, rows)
        self._stream = byte_stream(self._screen)
        if answer is not None:
            self._screen.answer = lambda text: answer(text.encode())

    def feed(self, data: bytes) -> None:
        self._stream.feed(data)

    def resize(self, rows: int, cols: int) -> None:
        self._screen.resize(rows, cols)

    @property
    def size(self) -> tuple[int, int]:
        return self._screen.lines, self._screen.columns

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self._screen.display]

    def text(self) -> str:
        return "\n".join(self.lines()).rstrip("\n")

    @property
    def bracketed_paste(self) -> bool:
        """The program asked for pasted text to be marked (``ESC [ ? 2004 h``)."""
        return (BRACKETED_PASTE << _PRIVATE_SHIFT) in self._screen.mode
