"""Codex's hook target: agentbar's hooks and ``notify`` in ``$CODEX_HOME/config.toml`` (main
thread).

The TOML editing is ``config.py``; the diff, backup, atomic write and exact undo are the
agent-neutral ``hooks/installer.py``.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from ...hooks.files import Record
from ...hooks.spec import HookCommand, parse_version
from ...hooks.target import AgentStatus, Target, command_notes, mismatch_note
from ..base import HookEdit, HookRemoval
from .events import CALLER, CODEX_EVENTS, CODEX_HOOKS_DEFAULT_ON, HELD_EVENT, handler

REVIEW_NOTE = (
    "Codex runs new hooks only after you review them: start codex, type /hooks and trust "
    "agentbar's hooks (one per event; a version lists only the events it has). agentbar never "
    "marks them trusted itself. Until then, finished turns still arrive through notify and "
    "every state through the rollout."
)


def _toml() -> ModuleType:
    """``config.py``, imported when a hook command runs: tomlkit costs a running agentbar
    2.6 MB that it never needs (bench/README.md, "The tray's memory")."""
    from . import config  # noqa: PLC0415

    return config


class CodexHooks:
    wants_version = False  # Codex ignores events it does not know: all are written

    def config_file(self, homes: tuple[Path, ...]) -> Path:
        return homes[0] / "config.toml"

    def add(
        self, text: str | None, where: str, command: HookCommand, *, version: str | None,
        notify: bool,
    ) -> HookEdit:  # fmt: skip
        config = _toml()
        doc = config.load(text, where)
        created = config.created_keys(config.remove(doc, config_path=where)[0])
        if config.is_current(doc, command, notify=notify, config_path=where):
            return HookEdit(None, created, len(CODEX_EVENTS))
        parsed = parse_version(version)
        new, notes, feature_added = config.add(
            doc,
            command,
            config_path=where,
            notify=notify,
            enable_feature=parsed is not None and parsed < CODEX_HOOKS_DEFAULT_ON,
        )
        after = config.dump_like(new, text)
        return HookEdit(after, created, len(CODEX_EVENTS), [*notes, REVIEW_NOTE], feature_added)

    def remove(self, text: str, where: str, record: Record | None) -> HookRemoval:
        config = _toml()
        doc = config.load(text, where)
        new_doc, removed = config.remove(
            doc,
            config_path=where,
            feature_added=record is not None and record.feature_added,
            created=record.created_keys if record is not None else None,
        )
        new_text = config.dump_like(new_doc, text)
        created = record is not None and record.before_sha256 is None
        return HookRemoval(None if created and not new_text.strip() else new_text, removed)

    def status(
        self, target: Target, text: str, command: HookCommand, version: str | None
    ) -> AgentStatus:
        config = _toml()
        doc = config.load(text, str(target.path))
        found = config.status(doc, str(target.path))
        notify = {"agentbar": "agentbar's notify", "other": "your own notify", None: "no notify"}
        if not found.hooks and found.notify != "agentbar":
            return AgentStatus(
                target.agent, target, False, f"not installed ({notify[found.notify]})"
            )
        trusted = sum(1 for h in found.hooks if h.trust == "trusted")
        summary = f"installed ({len(found.hooks)} hooks, {trusted} trusted; {notify[found.notify]})"
        status = AgentStatus(target.agent, target, bool(found.hooks), summary)
        if found.hooks and trusted < len(found.hooks):
            waiting = [h.event for h in found.hooks if h.trust == "needs review"]
            status.notes.append(
                f"{len(waiting)} still need trusting in Codex: start codex, type /hooks and "
                f"review them ({', '.join(waiting)}). Codex lists only the events its version "
                "has."
            )
        disabled = [h.event for h in found.hooks if h.trust == "disabled"]
        if disabled:
            status.notes.append(f"disabled in Codex's /hooks: {', '.join(disabled)}")
        held = str(handler(command, HELD_EVENT)["command"])
        others = {c for c in found.commands if c != held}
        status.notes += command_notes(others, command.shell(CALLER))
        status.notes.append(hold_note(found.commands, command.hold_for(CALLER.agent)))
        wanted = command.argv(CALLER, notify=True)
        if found.notify == "agentbar" and found.notify_command != wanted:
            shown = "notify = " + " ".join(found.notify_command)
            status.notes.append(mismatch_note(found.notify_command, wanted, shown))
        if found.features_off:
            status.notes.append("hooks are turned off in [features]: Codex runs none of them")
        return status


def installed_hold(commands: set[str]) -> int:
    """The hold written into the installed PermissionRequest command (0: none)."""
    for command in commands:
        words = command.split()
        if "--hold-seconds" in words[:-1]:
            value = words[words.index("--hold-seconds") + 1].strip("'\"")
            return int(value) if value.isdigit() else 0
    return 0


def hold_note(commands: set[str], wanted: int) -> str:
    """Whether Codex approvals can be decided from agentbar, and whether settings.toml agrees."""
    held = installed_hold(commands)
    if held:
        said = (f"approvals: Codex's PermissionRequest hook waits up to {held} s for an answer "
                "from agentbar, and draws its own prompt only after that")  # fmt: skip
    else:
        said = ("approvals: observed only (set [answers] codex_hold_seconds in settings.toml to "
                "decide them from agentbar)")  # fmt: skip
    if held != wanted:
        said += (f"; settings.toml now says codex_hold_seconds = {wanted}: run `agentbar hooks "
                 "install --agent codex` to apply it")  # fmt: skip
    return said


HOOKS = CodexHooks()
