"""How the first reading's progress reads: as JSON for the API and ``status --json``, and as
words for a person (the tray's tooltip and menu, ``agentbar status``'s bar) (pure; any thread).

One wording everywhere: the live sessions are read first ("Reading live sessions…"), then the
history behind them ("Reading history: 42 % (1.3 of 3.1 GB)"); once done there is nothing to
say (``None``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .engine_messages import IndexProgress
from .model import LOCAL_HOST

UNITS = ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB"))


def progress_json(progress: IndexProgress, host: str = LOCAL_HOST) -> dict[str, Any]:
    """The API's ``progress`` object (docs/api.md): ``host`` is the machine reading (a remote
    host's is in its status, ``/api/hosts``)."""
    return {"host": host, **dataclasses.asdict(progress), "fraction": round(progress.fraction, 4)}


def percent(progress: IndexProgress) -> int:
    """Whole percent, never 100 before it is done (a bar at 100 % that stays would lie)."""
    whole = int(progress.fraction * 100)
    return whole if progress.done else min(whole, 99)


def size(count: int) -> str:
    """``3.1 GB``, ``640 MB``, ``12 KB``, ``300 bytes`` (powers of 1024, as du -h counts)."""
    for unit, name in UNITS:
        if count >= unit:
            value = count / unit
            return f"{value:.1f} {name}" if value < 10 else f"{value:.0f} {name}"
    return f"{count} bytes"


def sizes(done: int, total: int) -> str:
    """``1.3 of 3.1 GB``: the unit said once when both share it (``0 of 3.1 GB``)."""
    whole = size(total)
    part = size(done)
    unit = whole.rsplit(" ", 1)[-1]
    if (part.endswith(" " + unit) and unit != "bytes") or done == 0:
        part = part.rsplit(" ", 1)[0]
    return f"{part} of {whole}"


def reading_line(progress: IndexProgress) -> str | None:
    """One line saying how far the reading has come (the tray's menu, the bar's words), or
    None once it is done."""
    if progress.done:
        return None
    if not progress.live_ready:
        return "Reading live sessions…"
    if progress.bytes_total <= 0:
        return "Reading history…"
    return (
        f"Reading history: {percent(progress)} % "
        f"({sizes(progress.bytes_done, progress.bytes_total)})"
    )


def tooltip_part(progress: IndexProgress) -> str | None:
    """What the tray's tooltip adds while reading (lower case: it follows a comma), or None."""
    line = reading_line(progress)
    if line is None:
        return None
    if progress.live_ready:
        line += ", live sessions are up to date"
    return line[0].lower() + line[1:]
