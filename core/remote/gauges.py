"""A host's usage windows and its first reading's progress as the channel carries them, and
back (pure; any thread).

The far side sends its own windows (``limits`` frame) and its engine's ``IndexProgress``
(``progress`` frame); the near side reads them with the far side's name as their host. Every
number is checked as the agents' own files are (``core/limits.py``): what does not read is left
out, never shown as something else. A far side from before these frames sends neither: the near
side then knows no limits and no progress of it, and shows none.

The ``limits`` frame also names the agents whose limit sources spoke there (``heard``: the far
engine's ``limits_heard()``), so the near side says that host's notes as the host itself would.
A far side from before ``heard`` sends none: that host then has no notes here (not knowing
whether its sources spoke, saying its limits are not known could be wrong).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..engine_messages import IndexProgress
from ..limits import LimitWindow, epoch, percent, plan_name
from .wire import WireError

MAX_WINDOWS = 64  # a few agents x a few spans; more is not a matching agentbar
MAX_NAME_CHARS = 40
MAX_HEARD = 16  # agents whose sources spoke: a few; more is not a matching agentbar


# A window's fields the near side gives it itself: its host (the far side's name there) and
# whether that host is connected.
NOT_SENT = ("host", "stale")


def limits_to_wire(windows: tuple[LimitWindow, ...]) -> list[dict[str, Any]]:
    """Each window's fields as observed (unrounded), but those the near side gives it."""
    return [
        {name: value for name, value in dataclasses.asdict(w).items() if name not in NOT_SENT}
        for w in windows
    ]


def limits_from_wire(docs: object, host: str) -> tuple[LimitWindow, ...]:
    """The windows a far side sent, each named ``host``; one that does not read is left out."""
    if not isinstance(docs, list) or len(docs) > MAX_WINDOWS:
        raise WireError(f"limits is a list of at most {MAX_WINDOWS}")
    found: list[LimitWindow] = []
    for doc in docs:
        window = _window(doc, host)
        if window is not None:
            found.append(window)
    return tuple(found)


def _window(doc: object, host: str) -> LimitWindow | None:
    if not isinstance(doc, dict):
        return None
    agent, name, source = (
        _name(doc.get("agent")),
        _name(doc.get("window")),
        _name(doc.get("source")),
    )
    used, observed_at = percent(doc.get("used_percent")), epoch(doc.get("observed_at"))
    if agent is None or name is None or source is None or used is None or observed_at is None:
        return None
    return LimitWindow(
        agent=agent,
        window=name,
        used_percent=used,
        resets_at=epoch(doc.get("resets_at")),
        plan=plan_name(doc.get("plan")),
        observed_at=observed_at,
        source=source,
        reset=doc.get("reset") is True,
        host=host,
    )


def _name(value: object) -> str | None:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_CHARS:
        return None
    return value


def heard_to_wire(heard: frozenset[str]) -> list[str]:
    return sorted(heard)


def heard_from_wire(doc: object) -> frozenset[str] | None:
    """The agents a far side said its limit sources heard from; None when it did not say (an
    agentbar from before). A name that does not read is left out."""
    if doc is None:
        return None
    if not isinstance(doc, list) or len(doc) > MAX_HEARD:
        raise WireError(f"heard is a list of at most {MAX_HEARD}")
    return frozenset(name for name in map(_name, doc) if name is not None)


def progress_to_wire(progress: IndexProgress) -> dict[str, Any]:
    return dataclasses.asdict(progress)  # every field, as IndexProgress names them


def progress_from_wire(doc: object) -> IndexProgress:
    if not isinstance(doc, dict):
        raise WireError("progress is an object")
    flags = doc.get("live_ready"), doc.get("done")
    if not all(isinstance(flag, bool) for flag in flags):
        raise WireError("progress's live_ready and done are true or false")
    counts = [
        _count(doc.get(k)) for k in ("files_done", "files_total", "bytes_done", "bytes_total")
    ]
    return IndexProgress(bool(flags[0]), bool(flags[1]), *counts)


def _count(value: object) -> int:
    if type(value) is not int or not 0 <= value < 1 << 62:
        raise WireError("progress counts are non-negative integers")
    return value
