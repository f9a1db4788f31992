"""``agentbar hooks status|install|uninstall --host NAME``: agentbar's hooks on a remote host,
by its own agentbar (main thread; the far side's answers are ``far_side.py``).

The near side opens a channel of its own to the host (``agentbar remote test``'s ``probe``),
asks for the changes there (``hooks_plan``: the far machine's own files, paths and hook
command), shows each one here as the local command does and asks the same question, then has
the far side write it (``hooks_apply``), which refuses when the file there changed since it was
shown. The backup and the atomic write are the far side's installer's. Exit status as
``agentbar usage --host``: 0 done, 1 a host not configured, a change not confirmed, a refusal
there (a file changed or not readable) or an agentbar there too old to have the calls; 2 a host
that cannot be reached (or stops answering).

``--status-line``: Claude's status-line link there, the same way with its own calls
(``status_line_plan``, ``status_line_apply``, ``status_line_status``): the far machine's
settings.json, data dir and link command, the status-line command there kept behind the link.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from ..config import Settings
from ..limits_cli import not_claude
from ..remote.cli import DOWN, REFUSED, host_down, open_host
from ..remote.link import Link, RemoteError, refused_there
from .change import Change
from .cli import OK, Confirm, ask, carry_out

CALL_SECONDS = 120.0  # an agent's --version there, and the file read and written


@dataclass(frozen=True)
class Calls:
    """The far side's calls for one kind of change, and what an older far side cannot do."""

    plan: str
    apply: str
    status: str
    cannot: str


HOOKS = Calls("hooks_plan", "hooks_apply", "hooks_status", "cannot install hooks from here")
STATUS_LINE = Calls(
    "status_line_plan",
    "status_line_apply",
    "status_line_status",
    "cannot set up Claude's status-line link from here",
)


class Unreadable(Exception):
    """An answer from the far side that is not what the calls answer."""


def run(
    args: argparse.Namespace,
    settings: Settings,
    out: TextIO,
    err: TextIO | None = None,
    *,
    confirm: Confirm | None = None,
) -> int:
    err = sys.stderr if err is None else err
    host: str = args.host
    calls = STATUS_LINE if args.status_line else HOOKS
    refusal = not_claude(args.agent) if args.status_line else ""
    if refusal:
        out.write(refusal)
        return REFUSED
    link = open_host(host, settings, err)
    if isinstance(link, int):
        return link
    try:
        if args.hooks_command == "status":
            return _status(link, calls, args, out)
        return _change(link, calls, args, out, err, confirm=confirm or ask)
    except RemoteError as exc:
        print(f"agentbar: {refused_there(host, exc, calls.cannot)}", file=err)
        return DOWN if host_down(exc) else REFUSED
    except Unreadable as exc:
        print(f"agentbar: {host}'s agentbar answered {exc} that does not read", file=err)
        return REFUSED
    finally:
        link.stop()


def _status(link: Link, calls: Calls, args: argparse.Namespace, out: TextIO) -> int:
    """What ``status`` prints there; 1 when it could not read the file there (``failed``)."""
    answer = link.call(calls.status, {"agent": args.agent}, timeout=CALL_SECONDS)
    text = answer.get("text") if isinstance(answer, dict) else None
    failed = answer.get("failed", False) if isinstance(answer, dict) else None
    if not isinstance(text, str) or not isinstance(failed, bool):
        raise Unreadable("a status")
    out.write(text)
    return REFUSED if failed else OK


def _change(
    link: Link,
    calls: Calls,
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    *,
    confirm: Confirm,
) -> int:
    host: str = args.host
    call = {"action": args.hooks_command, "agent": args.agent,
            "notify": getattr(args, "notify", True)}  # fmt: skip
    problems, changes = _plans(link.call(calls.plan, call, timeout=CALL_SECONDS))
    for problem in problems:
        print(f"agentbar: {host}: {problem.removeprefix('agentbar: ')}", file=err)
    worst = OK
    for change in changes:
        if isinstance(change, str):  # the file there cannot be read: left as it is
            out.write(f"{change}; agentbar left it as it is.\n")
            worst = max(worst, REFUSED)
            continue

        def write(change: Change = change) -> list[str]:
            answer = link.call(calls.apply, {**call, "agent": change.agent,
                               "digest": change.digest}, timeout=CALL_SECONDS)  # fmt: skip
            done = answer.get("done") if isinstance(answer, dict) else None
            if not isinstance(done, list):
                raise Unreadable("a write")
            return [str(line) for line in done]

        try:
            result = carry_out(change, write, out, dry_run=args.dry_run, yes=args.yes,
                               ask=confirm, where=f" on {host}")  # fmt: skip
        except RemoteError as exc:
            if host_down(exc) or exc.older_far_side:
                raise
            out.write(f"{change.agent}: {exc}\n")  # refused there: nothing was written
            result = REFUSED
        worst = max(worst, result)
    return worst


def _plans(answer: Any) -> tuple[list[str], list[Change | str]]:
    """The problems and each agent's change (or, for a file that cannot be read, the line
    saying so) in a ``hooks_plan`` answer."""
    try:
        problems = [str(p) for p in answer["problems"]]
        changes: list[Change | str] = [
            f"{doc['agent']}: {doc['error']}" if "error" in doc else Change.from_wire(doc)
            for doc in answer["plans"]
        ]
    except (KeyError, TypeError) as exc:
        raise Unreadable("a plan") from exc
    return problems, changes
