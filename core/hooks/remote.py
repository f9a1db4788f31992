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
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from ..config import Settings
from ..remote.cli import DOWN, REFUSED, host_down, open_host, refused_there
from ..remote.link import Link, RemoteError
from .change import Change
from .cli import OK, Confirm, ask, carry_out

CANNOT = "cannot install hooks from here"
CALL_SECONDS = 120.0  # an agent's --version there, and the file read and written


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
    if args.status_line:
        print(f"agentbar: Claude's status-line link is set up on the host itself, not from here "
              f"(run agentbar hooks {args.hooks_command} --status-line on {host})",
              file=err)  # fmt: skip
        return REFUSED
    link = open_host(host, settings, err)
    if isinstance(link, int):
        return link
    try:
        if args.hooks_command == "status":
            return _status(link, args, out)
        return _change(link, args, out, err, confirm or ask)
    except RemoteError as exc:
        print(f"agentbar: {refused_there(host, exc, CANNOT)}", file=err)
        return DOWN if host_down(exc) else REFUSED
    except Unreadable as exc:
        print(f"agentbar: {host}'s agentbar answered {exc} that does not read", file=err)
        return REFUSED
    finally:
        link.stop()


def _status(link: Link, args: argparse.Namespace, out: TextIO) -> int:
    answer = link.call("hooks_status", {"agent": args.agent}, timeout=CALL_SECONDS)
    text = answer.get("text") if isinstance(answer, dict) else None
    if not isinstance(text, str):
        raise Unreadable("a status")
    out.write(text)
    return OK


def _change(
    link: Link, args: argparse.Namespace, out: TextIO, err: TextIO, confirm: Confirm
) -> int:
    host: str = args.host
    call = {"action": args.hooks_command, "agent": args.agent,
            "notify": getattr(args, "notify", True)}  # fmt: skip
    problems, changes = _plans(link.call("hooks_plan", call, timeout=CALL_SECONDS))
    for problem in problems:
        print(f"agentbar: {host}: {problem.removeprefix('agentbar: ')}", file=err)
    worst = OK
    for change in changes:
        if isinstance(change, str):  # the file there cannot be read: left as it is
            out.write(f"{change}; agentbar left it as it is.\n")
            worst = max(worst, REFUSED)
            continue

        def write(change: Change = change) -> list[str]:
            answer = link.call("hooks_apply", {**call, "agent": change.agent,
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
