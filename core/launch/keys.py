"""The keys a task is sent: named keys, each agent's answers to an approval prompt, how each
agent is asked to exit, and how text is typed so a TUI takes it (pure).

Both TUIs take a fast burst of characters for a paste, in which Enter is a newline, not "send":
text is typed (inside bracketed-paste markers when the program asked for them), then Enter after
a pause. Their approval dialogs ignore a key that comes right after they appear, so an answer
waits until the dialog has been up ``DIALOG_SETTLE_SECONDS``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentbar.core.model import Agent

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
    approve: bytes  # accept the first choice ("Yes")
    deny: bytes  # "No, and tell it what to do differently"
    enter_pause: float  # seconds between typed text and Enter
    exit_keys: tuple[tuple[bytes, float], ...]  # the agent's own way out: (keys, pause after)


AGENT_KEYS = {
    # Claude: Enter on the highlighted choice (the first unless someone moved it: then "1",
    # see ``approve_keys``); Esc refuses. Ctrl-C twice leaves (the first clears the input or
    # interrupts a turn).
    Agent.CLAUDE: AgentKeys(
        approve=b"\r",
        deny=b"\x1b",
        enter_pause=0.5,
        exit_keys=((b"\x1b", 0.3), (b"\x03", 0.4), (b"\x03", 0.4), (b"\x03", 0.0)),
    ),
    # Codex: "Yes, proceed (y)", "No, and tell Codex what to do differently (esc)"; Ctrl-C
    # twice quits.
    Agent.CODEX: AgentKeys(
        approve=b"y",
        deny=b"\x1b",
        enter_pause=1.0,
        exit_keys=((b"\x1b", 0.3), (b"\x03", 0.4), (b"\x03", 0.4), (b"\x03", 0.0)),
    ),
}


def named(name: str) -> bytes:
    """A key by name (``enter``, ``ctrl-c``, ...) or a single character; ``KeyError`` else."""
    if name in KEYS:
        return KEYS[name]
    if len(name) == 1 and name.isprintable():
        return name.encode()
    raise KeyError(name)


def approve_keys(agent: Agent, prompt_rows: tuple[str, ...]) -> bytes:
    """What accepts the prompt whose rows are these: Enter when the highlight is on choice 1,
    else its number (both agents take a choice's number)."""
    keys = AGENT_KEYS[agent]
    if agent is Agent.CLAUDE:
        highlighted = [row for row in prompt_rows if row.lstrip().startswith(("❯", ">", "›"))]
        if highlighted and "1." not in highlighted[0]:
            return b"1"
    return keys.approve


def typed(text: str, *, bracketed: bool) -> bytes:
    """``text`` as the bytes a terminal sends when it is pasted (newlines as CR)."""
    body = text.replace("\r\n", "\n").replace("\n", "\r").encode("utf-8")
    body = body.replace(PASTE_END, b"")  # the text cannot end the paste early
    return PASTE_START + body + PASTE_END if bracketed else body
