"""``agentbar hooks status|install|uninstall [--agent NAME] [--dry-run] [--yes] [--host NAME]``:
agentbar's hooks in the settings files of the agents it is given (main thread).

Exit status: 0 done (or nothing to do), 1 not confirmed, 2 a file could not be read, parsed or
written (and was left as it was). ``--status-line``: Claude's status-line link instead
(``limits_cli.py``). ``--host NAME``: on a remote host, by its own agentbar, with or without
``--status-line`` (``remote.py``, with ``agentbar usage --host``'s exit status).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import TextIO

from ..config import Settings
from ..model import Agent
from . import installer
from .change import Change
from .errors import HooksFileError
from .spec import HookCommand, detect_version

Confirm = Callable[[str], bool | None]  # the question -> yes/no, or None: cannot ask
VersionOf = Callable[[Agent], str | None]

OK, DECLINED, FAILED = 0, 1, 2


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], agents: Sequence[str]
) -> None:
    """The ``hooks`` command; ``agents``: the names ``--agent`` takes (the hooked kits')."""
    hooks = commands.add_parser(
        "hooks",
        help="install agentbar's hooks into the agents' settings (faster, surer states)",
        description="Hooks make the agents tell agentbar what they do as they do it: an "
        "approval prompt shows within milliseconds.",
    )
    actions = hooks.add_subparsers(dest="hooks_command", metavar="ACTION", required=True)
    for name, text in (
        ("status", "whether the hooks are installed, and where"),
        ("install", "add the hooks to the agents' user settings (shows the change first)"),
        ("uninstall", "take them out again (restores the file exactly when it can)"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument("--agent", choices=list(agents), help="only this agent")
        action.add_argument(
            "--status-line",
            action="store_true",
            help="Claude's status-line link instead of the hooks: records Claude's usage limits, "
            "then runs your own status-line command",
        )
        action.add_argument(
            "--host",
            metavar="NAME",
            help="on a remote host (agentbar remote add), by its own agentbar: the change (to "
            "its hooks or, with --status-line, its Claude's status-line link) is shown here and "
            "written there",
        )
        if name == "status":
            continue
        action.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
        action.add_argument("--yes", "-y", action="store_true", help="do not ask before writing")
        if name == "install":
            action.add_argument(
                "--no-notify",
                dest="notify",
                action="store_false",
                help="Codex: do not set agentbar as the notify program",
            )


def run(
    args: argparse.Namespace,
    settings: Settings,
    out: TextIO,
    *,
    confirm: Confirm | None = None,
    version_of: VersionOf = detect_version,
) -> int:
    agents, command = agents_and_command(args.agent, settings, sys.stderr)
    if args.hooks_command == "status":
        return show_status(agents, settings, command, out, version_of)
    confirm = confirm or ask
    worst = OK
    for agent in agents:
        try:
            plan = make_plan(
                args.hooks_command,
                agent,
                settings,
                command,
                version_of,
                notify=getattr(args, "notify", True),
            )
            result = carry_out(
                Change.of(plan),
                partial(installer.apply, plan, settings),
                out,
                dry_run=args.dry_run,
                yes=args.yes,
                ask=confirm,
            )
        except HooksFileError as exc:
            out.write(f"{agent}: {exc}; agentbar left it as it is.\n")
            result = FAILED
        except OSError as exc:
            out.write(f"{agent}: could not write: {exc}; the file is as it was.\n")
            result = FAILED
        worst = max(worst, result)
    return worst


def agents_and_command(
    agent: str | None, settings: Settings, err: TextIO
) -> tuple[list[Agent], HookCommand]:
    """The agents the command is about (``--agent``, or every hooked one) and the hook command
    this agentbar installs; a wrong ``[answers]`` hold is named on ``err`` (none is installed)."""
    agents = [Agent(agent)] if agent else installer.hooked_agents(settings)
    options = settings.options()
    for problem in options.problems:
        print(f"agentbar: {problem}", file=err)
    return agents, HookCommand.current(settings.data_dir, options.agent_holds())


def make_plan(
    action: str,
    agent: Agent,
    settings: Settings,
    command: HookCommand,
    version_of: VersionOf,
    *,
    notify: bool,
) -> installer.Plan:
    """``install``'s or ``uninstall``'s plan for ``agent`` (nothing written)."""
    if action == "install":
        return installer.plan_install(
            agent, settings, command=command, version=version_of(agent), notify=notify
        )
    return installer.plan_uninstall(agent, settings)


def carry_out(
    change: Change,
    write: Callable[[], list[str]],
    out: TextIO,
    *,
    dry_run: bool,
    yes: bool,
    ask: Confirm,
    where: str = "",
) -> int:
    """Show ``change``, ask, and ``write`` it (``where``: " on HOST" for a remote's file)."""
    agent = change.agent
    if not change.changed:
        out.write(f"{agent}: {change.summary}\n")
        _notes(out, agent, change.notes)
        return OK
    out.write(f"{agent}: {change.shown}{where}\n")
    out.write(change.diff)
    if dry_run:
        out.write(f"{agent}: dry run, nothing written\n")
        _notes(out, agent, change.notes)
        return OK
    if not yes:
        answer = ask(f"Write this change to {change.path}{where}? [y/N] ")
        if answer is None:
            out.write(f"{agent}: not a terminal, so not asking: pass --yes to write\n")
            return DECLINED
        if not answer:
            out.write(f"{agent}: left as it is\n")
            return DECLINED
    for line in write():
        out.write(f"{agent}: {line}\n")
    _notes(out, agent, change.notes)
    return OK


def show_status(
    agents: list[Agent],
    settings: Settings,
    command: HookCommand,
    out: TextIO,
    version_of: VersionOf,
) -> int:
    rows = [
        installer.status(
            agent,
            settings,
            command=command,
            version=version_of(agent)
            if installer.hook_target(agent, settings).wants_version
            else None,
        )
        for agent in agents
    ]
    width = max(len(r.summary.split(" (")[0]) for r in rows)
    for row in rows:
        state, _, rest = row.summary.partition(" (")
        detail = f" ({rest}" if rest else ""
        out.write(f"{row.agent!s:<6}  {state:<{width}}  {row.target.shown}{detail}\n")
        for note in row.notes:
            out.write(f"{'':<6}  {note}\n")
    return OK


def _notes(out: TextIO, agent: str, notes: Sequence[str]) -> None:
    for note in notes:
        out.write(f"{agent}: note: {note}\n")


def ask(question: str) -> bool | None:
    if not sys.stdin.isatty():
        return None
    try:
        reply = input(question)
    except EOFError:
        return None
    return reply.strip().lower() in ("y", "yes")
