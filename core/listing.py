"""Which sessions a listing shows and in what order, and the engine's skipped-input counts:
shared by ``agentbar status`` and the server's session list (pure; any thread)."""

from __future__ import annotations

from collections.abc import Sequence

from .engine_messages import EngineStats
from .model import SessionSnapshot, State

RECENT_SECONDS = 24 * 3600
STATE_ORDER = {
    State.INPUT_REQUIRED: 0,
    State.FAILED: 1,
    State.RUNNING: 2,
    State.DONE: 3,
    State.ENDED: 4,
}


def select(
    snapshots: Sequence[SessionSnapshot], *, now: float, show_all: bool
) -> list[SessionSnapshot]:
    """Live and recent sessions (or all), those that need you first, newest first."""
    chosen = [
        s
        for s in snapshots
        if show_all
        or s.state.state is not State.ENDED
        or (s.last_activity or 0.0) >= now - RECENT_SECONDS
    ]
    chosen.sort(key=lambda s: -(s.last_activity or 0.0))
    chosen.sort(key=lambda s: STATE_ORDER[s.state.state])
    return chosen


def diagnostics(stats: EngineStats) -> dict[str, int]:
    return {
        "malformed_lines": stats.malformed,
        "oversized_lines": stats.oversized,
        "unknown_records": stats.unknown,
        "unrepresentable_timestamps": stats.odd_times,
        "clamped_numbers": stats.clamped,
        "unreadable_files": stats.unreadable,
    }
