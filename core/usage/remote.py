"""``agentbar usage --host NAME``: a remote host's report, computed by its own agentbar (main
thread here; the far side answers on a channel call's pool thread).

The near side opens a channel of its own to the host (``agentbar remote test``'s ``probe``),
asks the ``usage`` call with the options (``--since``, ``--project``, ``--agent``) and prints the
answer with ``agentbar usage``'s own printer. The far side answers what its ``agentbar usage
--json`` would print, once its engine has read what is on disk. Exit status as ``agentbar stop
--host``: 1 for a host not configured, a refusal or an agentbar there too old to have the call;
2 for a host that cannot be reached (or stops answering).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

from ..config import Settings
from ..errors import AgentbarError
from ..remote import remotes as config
from ..remote.cli import probe
from ..remote.link import RemoteError
from . import report as report_mod
from .cli import render, report_doc, show

if TYPE_CHECKING:
    from ..app import Agentbar

OP = "usage"
READ_SECONDS = 600.0  # the far side's first reading of its history, waited for at most
CALL_SECONDS = READ_SECONDS + 30.0
REFUSED, DOWN = 1, 2
UPGRADE_HINT = "pipx upgrade agentbar (or python3 -m pip install --user -U agentbar)"


class StillReading(AgentbarError):
    """The far side has not read its history yet, long after it was asked."""

    title = "The remote is still reading its history"


# -- near side -------------------------------------------------------------------------------


def args_of(filters: report_mod.Filters) -> dict[str, Any]:
    return {"since": filters.since, "project": filters.project, "agent": filters.agent}


def run(
    host: str,
    filters: report_mod.Filters,
    settings: Settings,
    *,
    as_json: bool,
    out: TextIO,
    err: TextIO | None = None,
) -> int:
    err = sys.stderr if err is None else err
    path = settings.options_path
    remote = None if path is None else config.load(path).get(host)
    if remote is None:
        print(f"agentbar: no remote named {host!r} (see: agentbar remote list)", file=err)
        return REFUSED
    try:
        link, _round_trip = probe(remote)
    except RemoteError as exc:
        print(f"agentbar: {exc}", file=err)
        return DOWN
    try:
        doc = link.call(OP, args_of(filters), timeout=CALL_SECONDS)
    except RemoteError as exc:
        print(f"agentbar: {refusal(host, exc)}", file=err)
        return DOWN if exc.kind in ("unreachable", "timeout") else REFUSED
    finally:
        link.stop()
    try:
        render(doc, width=80)  # an answer the printer cannot read is said, not a traceback
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        print(f"agentbar: {host}'s agentbar answered a usage report that does not read", file=err)
        return REFUSED
    return show(doc, as_json=as_json, out=out)


def refusal(host: str, exc: RemoteError) -> str:
    if exc.older_far_side:
        return (f"the agentbar on {host} is older than this one and cannot report its usage: "
                f"upgrade agentbar there ({UPGRADE_HINT})")  # fmt: skip
    return f"{host}: {exc}"


# -- far side --------------------------------------------------------------------------------


def answer(app: Agentbar, args: dict[str, Any]) -> dict[str, Any]:
    """What ``agentbar usage --json`` with these options would print on this machine (its own
    sessions, never a remote's), once what is on disk is read; a ``--since`` that is no date:
    ``ValueError`` (a refusal)."""
    since, project, agent = args.get("since"), args.get("project"), args.get("agent")
    filters = report_mod.Filters(
        since=None if since is None else report_mod.parse_day(str(since)),
        project=None if project is None else str(project),
        agent=None if agent is None else str(agent),
    )
    if not app.engine.ready.wait(READ_SECONDS):
        raise StillReading(f"still reading its history after {READ_SECONDS:.0f} s: ask again")
    return report_doc(app.engine.sessions(), filters)
