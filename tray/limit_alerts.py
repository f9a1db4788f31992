"""When to tell the person a usage window is nearly spent: once per window, when it passes the
``limit_percent`` of settings.toml (pure state; the tray's worker thread calls it).

A window is one agent's one span until it resets: told once when its use reaches the threshold,
again only after its reset time has moved on (a new window). Windows already past the threshold
when agentbar starts are told too (the person did not know yet), once. A remote host's window
is its own (its account may not be this machine's): told apart, naming the host.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core import limits_text
from ..core.limits import LimitWindow
from . import actions
from .notices import Notice

MAX_TOLD = 64  # windows remembered (a few agents x a few spans; old ones fall out)


class LimitAlerts:
    def __init__(self) -> None:
        self._told: list[tuple[str, str, str, float | None]] = []

    def check(self, windows: Sequence[LimitWindow], threshold: float, now: float) -> list[Notice]:
        """The notices due now (each window at most once); ``threshold`` 0: none."""
        if threshold <= 0:
            return []
        due: list[Notice] = []
        for window in windows:
            current = window.as_of(now)
            if current.reset or current.used_percent < threshold:
                continue
            key = (window.host, window.agent, window.window, _minute(window.resets_at))
            if key in self._told:
                continue
            self._told = [*self._told[-(MAX_TOLD - 1) :], key]
            due.append(notice(current, now))
        return due


def _minute(resets_at: float | None) -> float | None:
    # Codex's resets_in_seconds moves a little with each observation: one window, one minute.
    return None if resets_at is None else float(int(resets_at // 60))


def notice(window: LimitWindow, now: float) -> Notice:
    who = limits_text.whose(window)
    span = limits_text.window_words(window.window)
    title = f"{who} has used {window.used_percent:.0f} % of {span}"
    return Notice(title=title, body=limits_text.line(window, now), click=actions.BOARD)
