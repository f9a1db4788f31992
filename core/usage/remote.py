"""``agentbar usage --host NAME``: a remote host's report, computed by its own agentbar
(main thread; the far side's answer is ``far_side.py``).

The near side opens a channel of its own to the host (``agentbar remote test``'s ``probe``),
asks the ``usage`` call with the options (``--since``, ``--project``, ``--agent``) and prints the
answer with ``agentbar usage``'s own printer. The far side answers what its ``agentbar usage
--json`` would print, once its engine has read what is on disk; meanwhile, on a terminal, the
bar of a cold ``agentbar usage`` shows how far that reading has come, from the progress frames
the far side sends. Exit status as ``agentbar stop
--host``: 1 for a host not configured, a refusal or an agentbar there too old to have the call;
2 for a host that cannot be reached (or stops answering).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from ..config import Settings
from ..engine_messages import IndexProgress
from ..progress_bar import ProgressBar
from ..remote.cli import DOWN, REFUSED, host_down, open_host
from ..remote.link import Link, RemoteError, refused_there
from . import report as report_mod
from .cli import filters_or_say, render, show
from .far_side import READ_SECONDS

OP = "usage"
CALL_SECONDS = READ_SECONDS + 30.0
CANNOT = "cannot report its usage"
# What an agentbar there that tells no progress (an older one) is taken to have: nothing drawn.
UNTOLD = IndexProgress(live_ready=True, done=True)


def args_of(filters: report_mod.Filters) -> dict[str, Any]:
    return {"since": filters.since, "project": filters.project, "agent": filters.agent}


def run(
    args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO | None = None
) -> int:
    """``agentbar usage --host NAME`` with ``agentbar usage``'s options."""
    err = sys.stderr if err is None else err
    filters = filters_or_say(args, err)
    if filters is None:
        return 2
    return report(args.host, filters, settings, as_json=args.json, out=out, err=err)


def report(
    host: str,
    filters: report_mod.Filters,
    settings: Settings,
    *,
    as_json: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    link = open_host(host, settings, err)
    if isinstance(link, int):
        return link
    try:
        with ProgressBar(lambda: far_progress(link), err, prefix=f"agentbar: {host}: "):
            doc = link.call(OP, args_of(filters), timeout=CALL_SECONDS)
    except RemoteError as exc:
        print(f"agentbar: {refused_there(host, exc, CANNOT)}", file=err)
        return DOWN if host_down(exc) else REFUSED
    finally:
        link.stop()
    try:
        render(doc, width=80)  # an answer the printer cannot read is said, not a traceback
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        print(f"agentbar: {host}'s agentbar answered a usage report that does not read", file=err)
        return REFUSED
    return show(doc, as_json=as_json, out=out)


def far_progress(link: Link) -> IndexProgress:
    """How far the host's agentbar has read its history, as its last progress frame said."""
    return link.status().progress or UNTOLD
