"""Time as the engine sees it, with a fake a test can move by hand (any thread)."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def time(self) -> float:
        """Wall-clock epoch seconds (comparable with the agents' timestamps)."""
        ...

    def monotonic(self) -> float:
        """Seconds for measuring intervals."""
        ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start

    def time(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds
