"""``agentbar hooks status|install|uninstall --status-line``: Claude's status-line link in its
settings.json (main thread; the editing is ``agents/claude/statusline.py``).

Exit status as for the hooks: 0 done (or nothing to do), 1 not confirmed, 2 a file could not be
read, parsed or written (and was left as it was).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from .agents.claude import statusline
from .config import Settings
from .hooks import installer
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
    if args.agent not in (None, str(CLAUDE)):
        out.write(f"{args.agent}: the status-line link is Claude Code's only\n")
        return FAILED
    try:
        path = installer.target(CLAUDE, settings).real
        if args.hooks_command == "status":
            out.write(f"claude: {statusline.status(path)}  {path}\n")
            return OK
        if args.hooks_command == "install":
            plan = statusline.plan_install(path, settings.data_dir)
        else:
            plan = statusline.plan_uninstall(path, settings.data_dir)
        return _carry_out(plan, settings.data_dir, out, args, confirm)
    except HooksFileError as exc:
        out.write(f"claude: {exc}; agentbar left it as it is.\n")
        return FAILED
    except OSError as exc:
        out.write(f"claude: could not write: {exc}; the file is as it was.\n")
        return FAILED


def _carry_out(
    plan: statusline.LinkPlan,
    data_dir: Path,
    out: TextIO,
    args: argparse.Namespace,
    confirm: Callable[[str], bool | None],
) -> int:
    if not plan.changed:
        out.write(f"claude: {plan.summary}\n")
        return OK
    out.write(f"claude: {plan.path}\n")
    out.write(plan.diff())
    if args.dry_run:
        out.write("claude: dry run, nothing written\n")
        return OK
    if not args.yes:
        answer = confirm(f"Write this change to {plan.path}? [y/N] ")
        if answer is None:
            out.write("claude: not a terminal, so not asking: pass --yes to write\n")
            return DECLINED
        if not answer:
            out.write("claude: left as it is\n")
            return DECLINED
    statusline.apply(plan, data_dir)
    out.write(f"claude: {plan.summary}\n")
    for note in plan.notes:
        out.write(f"claude: note: {note}\n")
    if plan.record is not None and os.name == "posix":
        out.write("claude: Claude's limits show in agentbar from its next status-line refresh\n")
    return OK
