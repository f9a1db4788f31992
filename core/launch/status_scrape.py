"""Reading a session id off an agent's ``/status`` output, typed into a PTY agentbar owns (pure).

The last way to bind a task (``binding.py`` tries the others first): both TUIs print the session
id in their status panel, Claude as ``Session ID: <uuid>``, Codex inside a box as
``│  Session:   <uuid>   │``. The output is full of escape sequences and Claude positions its
text with cursor movements, so after stripping there may be no spaces or newlines at all; every
escape sequence is removed (CSI, OSC up to BEL or ST, DCS/SOS/PM/APC strings, two-character
escapes) and cursor movements become a space, as do box-drawing characters; only an id shaped
like a UUID, and not part of a longer run of hex digits, counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]            # CSI ... final byte
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)? # OSC ... BEL or ST (or cut off)
  | \x1b[PX^_][^\x1b]*(?:\x1b\\)?      # DCS, SOS, PM, APC ... ST
  | \x1b[ -/]*[0-~]                    # two-character (and nF) escapes
  | \x9b[0-?]*[ -/]*[@-~]              # 8-bit CSI
  | [\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]  # other controls (keep \t \n, ESC handled above)
    """,
    re.VERBOSE,
)
_BOX = re.compile(r"[\u2500-\u257f]")  # box drawing: │ ╭ ╰ ─ ╮ ╯ ├ ┤ ...
UUID_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# Cursor movements put text where they say, so the text around one is not contiguous: they
# become a space (colours and the like just go).
_MOVES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[A-HJKSTdfr`]")


def strip_ansi(text: str) -> str:
    return _ESCAPES.sub("", _MOVES.sub(" ", text))


def plain_text(output: str) -> str:
    """The screen text with escapes stripped and box drawing as spaces: what an agent's
    ``StatusScreen.session_id_in`` reads."""
    return _BOX.sub(" ", strip_ansi(output))


@dataclass(frozen=True, slots=True)
class StatusPlan:
    """When to type ``/status``: not before the faster ways had their chance, never while the
    person types, a few tries at most."""

    first_after: float  # seconds after the program's first output
    retry_every: float
    max_sends: int
    quiet_input: float  # seconds without anyone typing into the task before we may


@dataclass(frozen=True, slots=True)
class SessionLabelScreen:
    """A ``StatusScreen`` whose session id follows a label on the panel ``/status`` shows:
    ``label`` matches it with the id as its one group; the last one on screen counts."""

    plan: StatusPlan
    label: re.Pattern[str]
    close_after: bool  # the panel stays open until Escape closes it

    def session_id_in(self, plain: str) -> str | None:
        found = self.label.findall(plain)
        return found[-1].lower() if found else None


def should_send(
    plan: StatusPlan,
    *,
    now: float,
    first_output_at: float | None,
    sends: int,
    last_send_at: float | None,
    last_input_at: float | None,
) -> bool:
    """Whether to type ``/status`` now (all times on one monotonic clock)."""
    if first_output_at is None or sends >= plan.max_sends:
        return False
    if now - first_output_at < plan.first_after:
        return False
    if last_input_at is not None and now - last_input_at < plan.quiet_input:
        return False
    return last_send_at is None or now - last_send_at >= plan.retry_every
