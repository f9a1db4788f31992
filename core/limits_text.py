"""How the usage windows read, in words and in JSON, for every front end (pure).

"Codex: 62 % of 5 h left, resets 14:20" (the reset as local time; a date when it is not today);
a window whose reset has passed reads "reset"; an agent without windows gets its plain note
(Claude's: the status-line link is not installed, or has not seen limits yet). A remote host's
window names it ("Codex on devbox: ..."), and while that host is not connected says how old it
is ("... (last known 13:55, devbox not connected)"). The notes are each machine's own: this
machine's, then each host's that told which of its sources spoke, in the same words, named by
the host ("devbox: Claude's limits are not known (...)"), and while it is away said as last
known.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from .limits import FIVE_HOURS, WEEKLY, HostHeard, LimitWindow
from .limits_claude import NOT_KNOWN, NOT_SENT
from .model import LOCAL_HOST

_AGENT_NAMES = {"claude": "Claude", "codex": "Codex"}
_WINDOW_NAMES = {FIVE_HOURS: "5 h", WEEKLY: "the week"}


def agent_name(agent: str) -> str:
    return _AGENT_NAMES.get(agent, agent.capitalize())


def window_words(window: str) -> str:
    if window in _WINDOW_NAMES:
        return _WINDOW_NAMES[window]
    if window.endswith("m") and window[:-1].isdigit():
        count = int(window[:-1])
        return f"{count // 60} h" if count % 60 == 0 else f"{count} min"
    return window


def reset_words(resets_at: float, now: float) -> str:
    at, today = time.localtime(resets_at), time.localtime(now)
    if (at.tm_year, at.tm_yday) == (today.tm_year, today.tm_yday):
        return time.strftime("%H:%M", at)
    return time.strftime("%a %d %b %H:%M", at)


def whose(window: LimitWindow) -> str:
    """ "Codex", or "Codex on devbox" for a remote host's window."""
    who = agent_name(window.agent)
    return who if window.host == LOCAL_HOST else f"{who} on {window.host}"


def line(window: LimitWindow, now: float) -> str:
    """One window in words: "Codex: 62 % of 5 h left, resets 14:20"."""
    who, span = whose(window), window_words(window.window)
    if window.reset:
        text = f"{who}: {span} window reset (nothing used since it was last seen)"
    else:
        text = f"{who}: {window.left_percent:.0f} % of {span} left"
        if window.resets_at is not None:
            text += f", resets {reset_words(window.resets_at, now)}"
    if window.stale:
        seen = reset_words(window.observed_at, now)
        text += f" (last known {seen}, {window.host} not connected)"
    return text


def notes(
    windows: Sequence[LimitWindow],
    heard: frozenset[str] = frozenset(),
    host: str = LOCAL_HOST,
) -> list[str]:
    """What to say about ``host``'s agents with no windows known; ``heard``: the agents whose
    source spoke there without naming any (``Engine.limits_heard()``). Each host's alone: a
    remote host's Claude window says nothing of this machine's Claude."""
    if any(w.agent == "claude" and w.host == host for w in windows):
        return []
    return [NOT_SENT if "claude" in heard else NOT_KNOWN]


def host_notes(windows: Sequence[LimitWindow], hosts: Iterable[HostHeard]) -> list[str]:
    """Each remote host's notes, named by it ("devbox: Claude's limits are not known ...");
    a host not connected now: "... (last known, devbox not connected)"."""
    found: list[str] = []
    for told in hosts:
        away = f" (last known, {told.host} not connected)" if told.stale else ""
        found += [f"{told.host}: {note}{away}" for note in notes(windows, told.agents, told.host)]
    return found


def lines(
    windows: Sequence[LimitWindow],
    now: float | None = None,
    heard: frozenset[str] = frozenset(),
    hosts: Sequence[HostHeard] = (),
) -> list[str]:
    """This machine's windows' lines, its notes, then each remote host's windows' lines and
    the notes of those in ``hosts``."""
    when = time.time() if now is None else now
    here = [line(w, when) for w in windows if w.host == LOCAL_HOST]
    there = [line(w, when) for w in windows if w.host != LOCAL_HOST]
    return here + notes(windows, heard) + there + host_notes(windows, hosts)


def to_json(
    windows: Sequence[LimitWindow],
    now: float | None = None,
    heard: frozenset[str] = frozenset(),
    hosts: Sequence[HostHeard] = (),
) -> dict[str, Any]:
    when = time.time() if now is None else now
    return {
        "limits": [{**w.to_json(), "text": line(w, when)} for w in windows],
        "notes": notes(windows, heard) + host_notes(windows, hosts),
    }
