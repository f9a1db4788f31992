"""``agentbar hooks status|install|uninstall [--agent NAME] [--dry-run] [--yes]``: agentbar's
hooks in the settings files of the agents it is given (main thread).

Exit status: 0 done (or nothing to do), 1 not confirmed, 2 a file could not be read, parsed or
written (and was left as it was).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from ..config import Settings
from ..model import Agent
from . import installer
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
    agents = [Agent(args.agent)] if args.agent else installer.hooked_agents(settings)
    options = settings.options()
    for problem in options.problems:  # a wrong [answers] hold is named, and none is installed
        print(f"agentbar: {problem}", file=sys.stderr)
    command = HookCommand.current(settings.data_dir, options.agent_holds())
    if args.hooks_command == "status":
        return _status(agents, settings, command, out, version_of)
    confirm = confirm or ask
    worst = OK
    for agent in agents:
        try:
            if args.hooks_command == "install":
                plan = installer.plan_install(
                    agent, settings, command=command, version=version_of(agent), notify=args.notify
                )
            else:
                plan = installer.plan_uninstall(agent, settings)
            result = _carry_out(
                plan, settings, out, dry_run=args.dry_run, yes=args.yes, ask=confirm
            )
        except HooksFileError as exc:
            out.write(f"{agent}: {exc}; agentbar left it as it is.\n")
            result = FAILED
        except OSError as exc:
            out.write(f"{agent}: could not write: {exc}; the file is as it was.\n")
            result = FAILED
        worst = max(worst, result)
    return worst


def _carry_out(
    plan: installer.Plan, settings: Settings, out: TextIO, *, dry_run: bool, yes: bool, ask: Confirm
) -> int:
    agent = plan.target.agent
    if not plan.changed:
        out.write(f"{agent}: {plan.summary}\n")
        _notes(out, agent, plan.notes)
        return OK
    out.write(f"{agent}: {plan.target.shown}\n")
    out.write(plan.diff())
    if dry_run:
        out.write(f"{agent}: dry run, nothing written\n")
        _notes(out, agent, plan.notes)
        return OK
    if not yes:
        answer = ask(f"Write this change to {plan.target.path}? [y/N] ")
        if answer is None:
            out.write(f"{agent}: not a terminal, so not asking: pass --yes to write\n")
            return DECLINED
        if not answer:
            out.write(f"{agent}: left as it is\n")
            return DECLINED
    for line in installer.apply(plan, settings):
        out.write(f"{agent}: {line}\n")
    _notes(out, agent, plan.notes)
    return OK


def _status(
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


def _notes(out: TextIO, agent: Agent, notes: list[str]) -> None:
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
