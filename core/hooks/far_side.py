"""The far side's answers to the channel's hooks calls (a channel call's pool thread): this
machine's own installer, paths and hook command, for ``agentbar hooks ... --host`` on the near
side.

``hooks_plan`` answers each agent's change as ``agentbar hooks install|uninstall`` here would
show it, writing nothing; ``hooks_apply`` plans one agent's again and writes it only when the
plan is the one shown (its ``digest``: the file's bytes then and the bytes planned), so a file
changed in between is refused, never overwritten with what nobody saw. The backup, the atomic
write and the install record are the installer's, as for the local command.

``status_line_plan``, ``status_line_apply`` and ``status_line_status`` answer the same for
Claude's status-line link (``agentbar hooks ... --status-line --host``): this machine's
settings.json, data dir and link command, whatever ``statusLine`` command is there kept behind
it, the backup and the exact reversal ``limits_cli.py``'s, as ``--status-line`` here.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import partial
from typing import Any

from .. import limits_cli
from ..config import Settings
from . import installer
from .change import Change
from .cli import agents_and_command, make_plan, show_status
from .errors import HooksFileError
from .spec import detect_version

ACTIONS = ("install", "uninstall")


class ChangedSinceShown(HooksFileError):
    """The file (or what would be written to it) is no longer what the person was shown."""


def plan(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """Every agent's change (``agent``: only that one's) for ``action``, and the problems the
    local command would print first; an agent whose file cannot be read: its ``error``."""
    action, notify = _action(args), args.get("notify") is not False
    problems = io.StringIO()
    agents, command = agents_and_command(_agent(args), settings, problems)
    plans: list[dict[str, Any]] = []
    for agent in agents:
        try:
            found = make_plan(action, agent, settings, command, detect_version, notify=notify)
        except HooksFileError as exc:
            plans.append({"agent": str(agent), "error": str(exc)})
            continue
        plans.append(Change.of(found).to_wire())
    return {"problems": problems.getvalue().splitlines(), "plans": plans}


def apply(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """One agent's change written, when it is still the one shown (``digest``); what was done,
    for the person. ``HooksFileError`` (a refusal) otherwise, and nothing is written."""
    action, notify = _action(args), args.get("notify") is not False
    agent = _agent(args)
    if agent is None:
        raise ValueError("which agent's change to write?")
    agents, command = agents_and_command(agent, settings, io.StringIO())
    found = make_plan(action, agents[0], settings, command, detect_version, notify=notify)
    return _write_shown(Change.of(found), args, partial(installer.apply, found, settings))


def status_line_plan(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """The status-line link's change for ``action``, as ``plan`` answers an agent's (its
    ``error`` when the file cannot be edited); writes nothing."""
    try:
        found = limits_cli.plan(_action(args), settings)
    except HooksFileError as exc:
        return {"problems": [], "plans": [{"agent": str(limits_cli.CLAUDE), "error": str(exc)}]}
    return {"problems": [], "plans": [limits_cli.change_of(found).to_wire()]}


def status_line_apply(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """The status-line link's change written when it is still the one shown (``digest``), as
    ``apply``; ``HooksFileError`` (a refusal) otherwise, and nothing is written."""
    found = limits_cli.plan(_action(args), settings)
    write = partial(limits_cli.write, found, settings.data_dir)
    return _write_shown(limits_cli.change_of(found), args, write)


def status_line_status(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """The line ``agentbar hooks status --status-line`` prints here; ``failed`` when the file
    cannot be read (its exit status 2 here)."""
    text, result = limits_cli.status(settings)
    return {"text": text, "failed": result != limits_cli.OK}


def status(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """The table ``agentbar hooks status`` prints here."""
    agents, command = agents_and_command(_agent(args), settings, io.StringIO())
    text = io.StringIO()
    show_status(agents, settings, command, text, detect_version)
    return {"text": text.getvalue()}


def _write_shown(
    change: Change, args: dict[str, Any], write: Callable[[], list[str]]
) -> dict[str, Any]:
    """``change`` written (what was done, for the person) when it is the one shown
    (``args["digest"]``); ``ChangedSinceShown`` otherwise, and a write that failed a
    ``HooksFileError``."""
    if change.digest != args.get("digest"):
        raise ChangedSinceShown(
            f"{change.shown} changed since its change was shown; nothing was written (run the "
            "command again to see the change as it is now)"
        )
    try:
        return {"done": write()}
    except OSError as exc:
        raise HooksFileError(f"could not write: {exc}; the file is as it was") from None


def _action(args: dict[str, Any]) -> str:
    action = args.get("action")
    if action not in ACTIONS:
        raise ValueError(f"action must be install or uninstall, not {action!r}")
    return str(action)


def _agent(args: dict[str, Any]) -> str | None:
    agent = args.get("agent")
    return None if agent is None else str(agent)
