"""``agentbar hooks status|install|uninstall --status-line``: Claude's status-line link in its
settings.json (main thread; the editing is ``agents/claude/statusline.py``). The plan, its
change as shown, the write and the status line are also what the far side answers for
``--status-line --host NAME`` (``hooks/far_side.py``, on a channel call's pool thread there).

Exit status as for the hooks: 0 done (or nothing to do), 1 not confirmed, 2 a file could not be
read, parsed or written (and was left as it was).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TextIO

from .agents.claude import statusline
from .config import Settings
from .hooks import installer
from .hooks.change import Change, digest_of
from .hooks.cli import carry_out
from .hooks.errors import HooksFileError
from .model import Agent

OK, DECLINED, FAILED = 0, 1, 2
CLAUDE = Agent("claude")


def run(
    args: argparse.Namespace,
    settings: Settings,
    out: TextIO,
    confirm: Callable[[str], bool | None],
) -> int:
    refusal = not_claude(args.agent)
    if refusal:
        out.write(refusal)
        return FAILED
    try:
        if args.hooks_command == "status":
            text, result = status(settings)
            out.write(text)
            return result
        found = plan(args.hooks_command, settings)
        return carry_out(
            change_of(found),
            partial(write, found, settings.data_dir),
            out,
            dry_run=args.dry_run,
            yes=args.yes,
            ask=confirm,
        )
    except HooksFileError as exc:
        out.write(f"claude: {exc}; agentbar left it as it is.\n")
        return FAILED
    except OSError as exc:
        out.write(f"claude: could not write: {exc}; the file is as it was.\n")
        return FAILED


def not_claude(agent: str | None) -> str:
    """The line refusing ``--agent`` other than Claude ("" for Claude, or none given)."""
    if agent in (None, str(CLAUDE)):
        return ""
    return f"{agent}: the status-line link is Claude Code's only\n"


def plan(action: str, settings: Settings) -> statusline.LinkPlan:
    """``install``'s or ``uninstall``'s plan for this machine's Claude (nothing written);
    ``HooksFileError`` for a file it must not touch."""
    path = installer.target(CLAUDE, settings).real
    if action == "install":
        return statusline.plan_install(path, settings.data_dir)
    if action == "uninstall":
        return statusline.plan_uninstall(path, settings.data_dir)
    raise ValueError(f"action must be install or uninstall, not {action!r}")


def change_of(found: statusline.LinkPlan) -> Change:
    """The plan as the person is shown it (``hooks/cli.py``'s ``carry_out``): the file by its
    path, the diff; its notes come after it is written, with what ``write`` did."""
    return Change(
        agent=str(CLAUDE),
        shown=str(found.path),
        path=str(found.path),
        changed=found.changed,
        summary=found.summary,
        diff=found.diff() if found.changed else "",
        digest=digest_of(found.path, found.before, found.after),
    )


def write(found: statusline.LinkPlan, data_dir: Path) -> list[str]:
    """The plan written (a backup and the link record first, ``statusline.apply``); what was
    done, for the person."""
    statusline.apply(found, data_dir)
    done = [found.summary, *(f"note: {note}" for note in found.notes)]
    if found.record is not None and os.name == "posix":
        done.append("Claude's limits show in agentbar from its next status-line refresh")
    return done


def status(settings: Settings) -> tuple[str, int]:
    """The line ``status --status-line`` prints, and its exit status."""
    path = installer.target(CLAUDE, settings).real
    try:
        return f"claude: {statusline.status(path)}  {path}\n", OK
    except HooksFileError as exc:
        return f"claude: {exc}; agentbar left it as it is.\n", FAILED
