"""The far side's answer to the channel's ``usage`` call (a channel call's pool thread): what
``agentbar usage --json`` with the near side's options would print on this machine.

Its own sessions only (a far side has no remotes), once its engine has read what is on disk, as
the local command waits for its catch-up; past ``READ_SECONDS`` it refuses rather than answer
with part of the history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import AgentbarError
from . import report as report_mod

if TYPE_CHECKING:
    from ..app import Agentbar

READ_SECONDS = 600.0  # the far side's first reading of its history, waited for at most


class StillReading(AgentbarError):
    """The far side has not read its history yet, long after it was asked."""

    title = "The remote is still reading its history"


def answer(app: Agentbar, args: dict[str, Any]) -> dict[str, Any]:
    """The report for ``args`` (``since``, ``project``, ``agent``; a ``since`` that is no date:
    ``ValueError``, a refusal)."""
    filters = report_mod.filters(args.get("since"), args.get("project"), args.get("agent"))
    if not app.engine.ready.wait(READ_SECONDS):
        raise StillReading(f"still reading its history after {READ_SECONDS:.0f} s: ask again")
    return report_mod.document(app.engine.sessions(), filters)
