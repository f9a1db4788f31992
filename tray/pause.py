"""The global pause of notifications: for an hour, until tomorrow morning, or off until resumed
(a pure value and its arithmetic; the store is read and written on the tray's worker thread).

The pause survives a restart: it lives in ``<data dir>/notifications-paused.json``. A file that
cannot be read counts as no pause (and is logged); agentbar never fails on it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..core.privacy import write_private

log = logging.getLogger(__name__)

HOUR = "hour"
TOMORROW = "tomorrow"
OFF = "off"
RESUME = "resume"
CHOICES = (HOUR, TOMORROW, OFF)
# "Until tomorrow" said before this hour means this morning: nobody pausing at 1 a.m. wants the
# next 31 hours silent.
NIGHT_ENDS_HOUR = 4
FILE_NAME = "notifications-paused.json"


@dataclass(frozen=True, slots=True)
class Pause:
    until: float | None = None  # epoch seconds; None (and not off): notifications are on
    off: bool = False  # paused until resumed

    def active(self, now: float) -> bool:
        return self.off or (self.until is not None and now < self.until)

    def describe(self, now: float) -> str:
        """How the menu says it: "" when notifications are on."""
        if self.off:
            return "Notifications off"
        if self.until is None or now >= self.until:
            return ""
        end = dt.datetime.fromtimestamp(self.until).astimezone()
        today = dt.datetime.fromtimestamp(now).astimezone().date()
        when = end.strftime("%H:%M")
        if end.date() == today + dt.timedelta(days=1):
            when = f"tomorrow {when}"
        elif end.date() != today:
            when = f"{end:%a %d %b} {when}"
        return f"Notifications paused until {when}"


NO_PAUSE = Pause()


def choose(choice: str, now: float, tomorrow_at: tuple[int, int] = (8, 0)) -> Pause:
    """The pause a menu choice asks for, from ``now``."""
    if choice == HOUR:
        return Pause(until=now + 3600.0)
    if choice == TOMORROW:
        return Pause(until=next_morning(now, tomorrow_at))
    if choice == OFF:
        return Pause(off=True)
    if choice == RESUME:
        return NO_PAUSE
    raise ValueError(f"unknown pause {choice!r} (choose from {', '.join((*CHOICES, RESUME))})")


def next_morning(now: float, at: tuple[int, int]) -> float:
    """Tomorrow at ``at`` (local time); before the night ends, this morning at ``at``."""
    local = dt.datetime.fromtimestamp(now).astimezone()
    day = local.date()
    if local.hour >= NIGHT_ENDS_HOUR or local.time() >= dt.time(*at):
        day += dt.timedelta(days=1)
    # Local wall time on that day (its own UTC offset: a DST change in between is respected).
    naive = dt.datetime.combine(day, dt.time(*at))
    return naive.astimezone().timestamp()


class PauseStore:
    """The pause as a small JSON file: ``{"until": epoch|null, "off": bool}``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Pause:
        try:
            doc = orjson.loads(self.path.read_bytes())
        except FileNotFoundError:
            return NO_PAUSE
        except (OSError, orjson.JSONDecodeError) as exc:
            log.warning("cannot read %s (%s); notifications are not paused", self.path, exc)
            return NO_PAUSE
        if not isinstance(doc, dict):
            return NO_PAUSE
        until, off = doc.get("until"), doc.get("off")
        return Pause(
            until=float(until) if isinstance(until, int | float) else None,
            off=off is True,
        )

    def save(self, pause: Pause) -> None:
        try:
            if pause == NO_PAUSE:
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
                return
            write_private(self.path, orjson.dumps({"until": pause.until, "off": pause.off}))
        except OSError as exc:
            log.warning("cannot save the pause to %s: %s", self.path, exc)
