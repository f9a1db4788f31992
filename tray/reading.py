"""What the tray shows of the engine's first reading, and when: at most one change a second (the
tray host redraws the tooltip and rebuilds the menu for each), its end at once (a pure state
machine over the clock's monotonic seconds; driven by the tray's worker thread).

Nothing shows in the first half second after the tray starts either, so a warm start, whose
reading takes a tenth of a second or so (bench/README.md), never flashes a line into the menu.
"""

from __future__ import annotations

from ..core.engine_messages import IndexProgress

SHOW_EVERY_SECONDS = 1.0
QUIET_SECONDS = 0.5  # after the start, before the first line


class ReadingShown:
    def __init__(
        self, now: float, every: float = SHOW_EVERY_SECONDS, quiet: float = QUIET_SECONDS
    ) -> None:
        self.every = every
        self.shown: IndexProgress | None = None  # what the tray shows (None: no reading)
        self._latest: IndexProgress | None = None
        self._changed_at = now - every + quiet  # when ``shown`` last changed (as if)

    def offer(self, progress: IndexProgress, now: float) -> None:
        """The engine published ``progress``."""
        self._latest = progress
        self.settle(now)

    def settle(self, now: float) -> None:
        """Show the latest value if it is due: the end at once, a step a second at most."""
        wanted = self._wanted()
        if wanted == self.shown:
            return
        if wanted is None or now - self._changed_at >= self.every:
            self.shown = wanted
            self._changed_at = now

    def deadline(self) -> float | None:
        """When a value held back is due (monotonic), or None."""
        if self._wanted() == self.shown:
            return None
        return self._changed_at + self.every

    def _wanted(self) -> IndexProgress | None:
        latest = self._latest
        return None if latest is None or latest.done else latest
