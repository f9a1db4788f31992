"""The agents' usage windows: parsed from what they report, the newest of each kept (any thread).

Codex writes its ``rate_limits`` into every ``token_count`` event of a rollout (a primary and a
secondary window: percent used, the window's length in minutes, when it resets, the plan);
Claude Code hands them to its status-line command (the 5-hour and 7-day windows), which
agentbar's status-line link records (``limits_claude.py``). Both become ``LimitWindow`` values;
``LimitStore`` keeps the newest observation per agent and window. A window whose reset time has
passed is shown as reset (0 % used), never as the percent it had before.

Every number comes from a file another program wrote: a percent that is not a finite number is
dropped, one below 0 is dropped, one above 100 is shown as 100 (a window can be overdrawn, but
"more than all of it used" says nothing more); a reset time that is not a plausible epoch second
is unknown.

A remote host's windows (``core/remote/``) keep its name in ``host``: its Claude or Codex account
may not be this machine's, so they are never merged into this machine's ``LimitStore``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .model import LOCAL_HOST
from .records import Record

FIVE_HOURS = "5h"
WEEKLY = "weekly"
_NAMED_WINDOWS = {300: FIVE_HOURS, 10080: WEEKLY}
MAX_WINDOW_MINUTES = 366 * 24 * 60  # longer than a year: not a window anyone reports
# Epoch seconds agentbar believes: after 2001, before 5138 (a millisecond value is far above).
MIN_EPOCH, MAX_EPOCH = 1e9, 1e11
MAX_PLAN_CHARS = 40
SOURCE_CODEX = "codex-rollout"
SOURCE_CLAUDE = "claude-status-line"


@dataclass(frozen=True, slots=True)
class LimitWindow:
    """One usage window of one agent as last observed. ``window``: ``"5h"``, ``"weekly"`` or
    its length in minutes (``"90m"``); ``resets_at`` and ``observed_at`` are epoch seconds;
    ``reset``: the reset time has passed since, so ``used_percent`` is 0 whatever was seen;
    ``host``: the machine whose agent reported it; ``stale``: that host is not connected now,
    so this is its last known (``observed_at`` says how old)."""

    agent: str
    window: str
    used_percent: float
    resets_at: float | None
    plan: str | None
    observed_at: float
    source: str
    reset: bool = False
    host: str = LOCAL_HOST
    stale: bool = False

    @property
    def left_percent(self) -> float:
        return 100.0 - self.used_percent

    def as_of(self, now: float) -> LimitWindow:
        """This window as it stands at ``now``: reset once its reset time has passed."""
        if self.reset or self.resets_at is None or self.resets_at > now:
            return self
        return replace(self, used_percent=0.0, reset=True)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "window": self.window,
            "used_percent": round(self.used_percent, 2),
            "left_percent": round(self.left_percent, 2),
            "resets_at": self.resets_at,
            "plan": self.plan,
            "observed_at": self.observed_at,
            "source": self.source,
            "reset": self.reset,
            "host": self.host,
            "stale": self.stale,
        }


@dataclass(frozen=True, slots=True)
class HostHeard:
    """Which agents' limit sources spoke on a remote host (its ``Engine.limits_heard()``, as
    its agentbar sent it), for that host's notes; ``stale``: the host is not connected now, so
    this is its last known."""

    host: str
    agents: frozenset[str]
    stale: bool = False


class LimitsSeen(Record, frozen=True, kw_only=True):
    """A Codex ``token_count``'s ``rate_limits`` object as the rollout has it (read into
    windows by ``codex_windows`` once the record's ``ts``, the observation time, is known)."""

    rate_limits: Mapping[str, Any]

    def windows(self) -> tuple[LimitWindow, ...]:
        return codex_windows(self.rate_limits, self.ts or 0.0)


def window_name(minutes: int) -> str:
    return _NAMED_WINDOWS.get(minutes, f"{minutes}m")


def _number(value: object) -> float | None:
    """A finite number, or None (a bool, text, NaN, infinity, an integer too large for a float:
    JSON allows ``1e999`` and 400-digit integers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def percent(value: object) -> float | None:
    """A used percent as agentbar shows it, or None for a value that says nothing."""
    number = _number(value)
    if number is None or number < 0:
        return None
    return min(number, 100.0)


def epoch(value: object) -> float | None:
    number = _number(value)
    return number if number is not None and MIN_EPOCH <= number <= MAX_EPOCH else None


def minutes(value: object) -> int | None:
    number = _number(value)
    if number is None:
        return None
    whole = int(number)
    return whole if 0 < whole <= MAX_WINDOW_MINUTES else None


def plan_name(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:MAX_PLAN_CHARS]


def codex_windows(rate_limits: object, observed_at: float) -> tuple[LimitWindow, ...]:
    """The windows of one Codex ``rate_limits`` object (``primary``/``secondary``: percent,
    ``window_minutes``, ``resets_at`` in epoch seconds, or the older ``resets_in_seconds``)."""
    if not isinstance(rate_limits, Mapping):
        return ()
    plan = plan_name(rate_limits.get("plan_type"))
    found: list[LimitWindow] = []
    for slot in ("primary", "secondary"):
        window = rate_limits.get(slot)
        if not isinstance(window, Mapping):
            continue
        used = percent(window.get("used_percent"))
        length = minutes(window.get("window_minutes"))
        if used is None:
            continue
        resets_at = epoch(window.get("resets_at"))
        if resets_at is None:
            resets_at = _after(observed_at, window.get("resets_in_seconds"))
        name = window_name(length) if length is not None else slot
        found.append(LimitWindow("codex", name, used, resets_at, plan, observed_at, SOURCE_CODEX))
    return tuple(found)


def _after(observed_at: float, seconds: object) -> float | None:
    number = _number(seconds)
    if observed_at <= 0 or number is None or not 0 <= number <= MAX_WINDOW_MINUTES * 60:
        return None
    return observed_at + number


_CLAUDE_WINDOWS = (("five_hour", FIVE_HOURS), ("seven_day", WEEKLY))


def claude_windows(payload: object, observed_at: float) -> tuple[LimitWindow, ...]:
    """The windows of one status-line payload Claude Code handed its command: ``rate_limits``
    with ``five_hour`` and ``seven_day``, each ``used_percentage`` and ``resets_at`` (epoch
    seconds), as Claude's status-line documentation gives them."""
    if not isinstance(payload, Mapping):
        return ()
    limits = payload.get("rate_limits")
    if not isinstance(limits, Mapping):
        return ()
    found: list[LimitWindow] = []
    for key, name in _CLAUDE_WINDOWS:
        window = limits.get(key)
        if not isinstance(window, Mapping):
            continue
        used = percent(window.get("used_percentage"))
        if used is None:
            continue
        resets_at = epoch(window.get("resets_at"))
        found.append(LimitWindow("claude", name, used, resets_at, None, observed_at, SOURCE_CLAUDE))
    return tuple(found)


class LimitStore:
    """The newest observation of each agent's windows (written on the engine thread, read on
    any: a lock guards the dict, values are frozen)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, str], LimitWindow] = {}
        self._heard: set[str] = set()  # agents whose source spoke, windows or none

    def note(self, windows: Iterable[LimitWindow]) -> bool:
        """Keep those newer than what is kept; whether anything changed."""
        changed = False
        with self._lock:
            for window in windows:
                key = (window.agent, window.window)
                kept = self._windows.get(key)
                if kept is None or window.observed_at > kept.observed_at:
                    self._windows[key] = window
                    changed = True
        return changed

    def windows(self, now: float) -> tuple[LimitWindow, ...]:
        """Every agent's windows as they stand at ``now``, by agent, the shortest window first."""
        with self._lock:
            kept = list(self._windows.values())
        kept.sort(key=lambda w: (w.agent, _order(w.window)))
        return tuple(window.as_of(now) for window in kept)

    def agents(self) -> set[str]:
        with self._lock:
            return {agent for agent, _ in self._windows}

    def note_heard(self, agent: str) -> None:
        """``agent``'s source reported, whether or not it named any window (Claude's status
        line without ``rate_limits``: an API-key login)."""
        with self._lock:
            self._heard.add(agent)

    def heard(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._heard)


def _order(window: str) -> tuple[int, str]:
    if window == FIVE_HOURS:
        return (300, window)
    if window == WEEKLY:
        return (10080, window)
    if window.endswith("m") and window[:-1].isdigit():
        return (int(window[:-1]), window)
    return (1 << 30, window)
