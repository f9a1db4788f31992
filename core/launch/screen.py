"""What a task's terminal shows now: a VT emulation (pyte) of everything the program drew, and
what can be read off it, such as an approval prompt (the task's reader thread feeds it; other
threads read it under the task's lock). The emulator itself is ``emulator.py``, imported with
the first screen.

The screen is how agentbar knows, without guessing from a byte stream full of cursor movements,
that "Do you want to proceed?" is up right now and not merely was once. It also answers the
terminal queries a TUI makes at start-up (cursor position, device attributes): crossterm-based
TUIs give up when nobody answers, and a browser attached to the task may not be there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# An approval dialog, in every agent: a yes/no question over a numbered list whose first choice
# is "Yes" (Claude: "Do you want to proceed?", "Do you want to make this edit to x.py?"; Codex:
# "Would you like to run the following command?", "Would you like to make the following edits?")
# or Gemini CLI's "Allow once" ("Allow execution of [Shell]?", the choice marked with "●").
_QUESTION = re.compile(r"\b(Do you want|Would you like|Allow)\b[^?]{0,200}\?")
_FIRST_CHOICE_YES = re.compile(r"^[\s│|>❯›▶*●]*1[.)]\s+(?:Yes|Allow once)\b")
# opencode's: "△ Permission required" over the request, its first choice "Allow once" in a row
# of buttons ("Allow once   Allow always   Reject").
_PERMISSION = re.compile(r"\bPermission required\b")
_ALLOW_ONCE_FIRST = re.compile(r"^[\s┃│|]*Allow once\b.*\bReject\b")
BRACKETED_PASTE = 2004
_PRIVATE_SHIFT = 5  # pyte stores DEC private modes shifted left by 5


@dataclass(frozen=True, slots=True)
class Prompt:
    """An approval prompt on screen: its question and the rows it spans (to tell two apart)."""

    question: str
    rows: tuple[str, ...]


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

    def prompt(self) -> Prompt | None:
        return find_prompt(self.lines())


def find_prompt(lines: list[str]) -> Prompt | None:
    """The approval prompt these screen lines show, if any (the lowest one wins: a TUI that
    scrolls keeps old dialogs above the live one)."""
    for index in range(len(lines) - 1, -1, -1):
        if _ALLOW_ONCE_FIRST.match(lines[index]):
            question = _PERMISSION
        elif _FIRST_CHOICE_YES.match(lines[index]):
            question = _QUESTION
        else:
            continue
        for above in range(index - 1, max(index - 40, -1), -1):
            found = question.search(lines[above])
            if found is not None:
                block = tuple(line for line in lines[above : index + 1] if line.strip())
                return Prompt(question=found.group(0).strip(), rows=block)
    return None
