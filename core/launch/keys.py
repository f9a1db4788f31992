"""The keys a task is sent: named keys, each agent's answers to an approval prompt, how each
agent is asked to exit, and how text is typed so a TUI takes it (pure).

Both TUIs take a fast burst of characters for a paste, in which Enter is a newline, not "send":
text is typed (inside bracketed-paste markers when the program asked for them), then Enter after
a pause. Their approval dialogs ignore a key that comes right after they appear, so an answer
waits until the dialog has been up ``DIALOG_SETTLE_SECONDS``.
"""

from __future__ import annotations

from dataclasses import dataclass

KEYS: dict[str, bytes] = {
    "enter": b"\r",
    "escape": b"\x1b",
    "tab": b"\t",
    "shift-tab": b"\x1b[Z",
    "backspace": b"\x7f",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
    "right": b"\x1b[C",
    "left": b"\x1b[D",
    "ctrl-c": b"\x03",
    "ctrl-d": b"\x04",
    "ctrl-u": b"\x15",
    "space": b" ",
}
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
DIALOG_SETTLE_SECONDS = 0.8


@dataclass(frozen=True, slots=True)
class AgentKeys:
    """The keys one agent's TUI takes (each agent's launch profile has its own)."""

    approve: bytes  # accept the first choice ("Yes")
    deny: bytes  # "No, and tell it what to do differently"
    enter_pause: float  # seconds between typed text and Enter
    exit_keys: tuple[tuple[bytes, float], ...]  # the agent's own way out: (keys, pause after)


def named(name: str) -> bytes:
    """A key by name (``enter``, ``ctrl-c``, ...) or a single character; ``KeyError`` else."""
    if name in KEYS:
        return KEYS[name]
    if len(name) == 1 and name.isprintable():
        return name.encode()
    raise KeyError(name)


def typed(text: str, *, bracketed: bool) -> bytes:
    """``text`` as the bytes a terminal sends when it is pasted (newlines as CR)."""
    body = text.replace("\r\n", "\n").replace("\n", "\r").encode("utf-8")
    body = body.replace(PASTE_END, b"")  # the text cannot end the paste early
    return PASTE_START + body + PASTE_END if bracketed else body
