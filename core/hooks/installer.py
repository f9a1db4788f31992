"""Install agentbar's hooks into the user's own settings files, and take them out again
(main thread).

``plan_install`` / ``plan_uninstall`` read the file and work out the exact new bytes (nothing is
written); ``apply`` writes a plan: it checks the file did not change in between, backs the
original up once (``<file>.agentbar-backup``, never overwritten), writes atomically, and records
hashes in the data dir. ``uninstall`` restores the original byte for byte when the file is still
exactly what agentbar wrote, and otherwise takes out only agentbar's entries. A file agentbar
created is deleted again. A file that cannot be read or parsed raises ``HooksFileError`` and is
never touched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from agentbar.core.config import Settings
from agentbar.core.hooks import claude_settings, codex_config, files
from agentbar.core.hooks.errors import HooksFileError
from agentbar.core.hooks.files import InstallState, Record
from agentbar.core.hooks.spec import (
    CODEX_EVENTS,
    CODEX_HOOKS_DEFAULT_ON,
    MARKER,
    HookCommand,
    claude_events,
    parse_version,
)
from agentbar.core.model import Agent
from agentbar.core.privacy import private_dir


def target(agent: Agent, settings: Settings) -> Target:
    if agent is Agent.CLAUDE:
        path = settings.claude_roots[0] / "settings.json"
    else:
        path = settings.codex_home / "config.toml"
    path = Path(os.path.abspath(path))
    return Target(agent, path, files.real_path(path))


@dataclass
class Plan:
    target: Target
    before: bytes | None
    after: bytes | None  # None: delete the file
    changed: bool
    summary: str
    notes: list[str] = field(default_factory=list)
    record: Record | None = None  # what to remember once applied (None: forget the file)
    make_backup: bool = False
    drop_backup: bool = False  # the backup was restored: it has done its job
    made_folders: list[str] = field(default_factory=list)  # to remove with the file, if empty

    def diff(self) -> str:
        before = None if self.before is None else self.before.decode("utf-8", "replace")
        after = None if self.after is None else self.after.decode("utf-8", "replace")
        return files.unified_diff(before, after, str(self.target.path))


# -- install ----------------------------------------------------------------------------------


def plan_install(
    agent: Agent,
    settings: Settings,
    *,
    command: HookCommand | None = None,
    version: str | None = None,
    notify: bool = True,
) -> Plan:
    where = target(agent, settings)
    command = command or HookCommand.current(settings.data_dir)
    before = files.read(where.real)
    text = files.decode(before, where.real)
    notes: list[str] = []
    feature_added = False
    if agent is Agent.CLAUDE:
        data, style = claude_settings.load(text, str(where.path))
        events = claude_events(version)
        created = claude_settings.created_keys(claude_settings.remove(data)[0], events)
        current = claude_settings.is_current(data, command, events)
        after_text = (
            None
            if current
            else claude_settings.dump(claude_settings.add(data, command, events), style)
        )
        found = claude_settings.status(data)
        if found.all_disabled:
            notes.append(
                "disableAllHooks is true in this file: Claude Code runs no hooks at all, "
                "agentbar's included, until it is removed."
            )
        count = len(events)
    else:
        doc = codex_config.load(text, str(where.path))
        created = codex_config.created_keys(
            codex_config.remove(doc, config_path=str(where.path))[0]
        )
        parsed = parse_version(version)
        enable_feature = parsed is not None and parsed < CODEX_HOOKS_DEFAULT_ON
        current = codex_config.is_current(doc, command, notify=notify, config_path=str(where.path))
        after_text = None
        if not current:
            new, notes, feature_added = codex_config.add(
                doc,
                command,
                config_path=str(where.path),
                notify=notify,
                enable_feature=enable_feature,
            )
            after_text = codex_config.dump_like(new, text)
        count = len(CODEX_EVENTS)
    if current:
        return Plan(
            where,
            before,
            before,
            changed=False,
            summary=f"agentbar's hooks are already installed in {where.shown}; nothing to change",
            notes=notes,
        )
    assert after_text is not None
    after = after_text.encode("utf-8")
    state = InstallState(settings.data_dir)
    backup = files.backup_path(where.real)
    record = _install_record(state.get(where.real), before, after, backup, feature_added)
    if not record.created_keys:
        record.created_keys = created
    if before is None:
        record.made_folders = [str(f) for f in files.missing_folders(where.real)]
    plan = Plan(
        where,
        before,
        after,
        changed=after != before,
        summary=f"installed agentbar's hooks for {count} events in {where.shown}",
        notes=notes,
        record=record,
        make_backup=before is not None and not backup.exists(),
    )
    if agent is Agent.CODEX:
        plan.notes.append(
            "Codex runs new hooks only after you review them: start codex, type /hooks and "
            "trust agentbar's hooks (one per event; a version lists only the events it has). "
            "agentbar never marks them trusted itself. Until then, finished turns still "
            "arrive through notify and every state through the rollout."
        )
    if version is None:
        plan.notes.append(
            f"{agent} --version could not be run: agentbar assumed a current {agent} (all events)."
        )
    return plan


def _install_record(
    previous: Record | None, before: bytes | None, after: bytes, backup: Path, feature: bool
) -> Record:
    if previous is not None and files.sha256(before) == previous.after_sha256:
        # agentbar's own earlier install, untouched since: the original is still the one
        # recorded then.
        return Record(
            before_sha256=previous.before_sha256,
            after_sha256=files.sha256(after) or "",
            backup=previous.backup,
            feature_added=previous.feature_added or feature,
            made_folders=previous.made_folders,
            created_keys=previous.created_keys,
        )
    kept = None
    if before is not None:
        existing = files.read(backup) if backup.exists() else None
        if existing is None or files.sha256(existing) == files.sha256(before):
            kept = str(backup)  # made now, or an older backup that is this very original
    return Record(
        before_sha256=files.sha256(before),
        after_sha256=files.sha256(after) or "",
        backup=kept,
        feature_added=feature,
    )


# -- uninstall --------------------------------------------------------------------------------


def plan_uninstall(agent: Agent, settings: Settings) -> Plan:
    where = target(agent, settings)
    before = files.read(where.real)
    record = InstallState(settings.data_dir).get(where.real)
    if before is None:
        return Plan(
            where, None, None, changed=False, summary=f"{where.shown} does not exist; nothing to do"
        )
    if record is not None and files.sha256(before) == record.after_sha256:
        if record.before_sha256 is None:
            return Plan(
                where, before, None, changed=True,
                summary=f"removed {where.shown}, which agentbar had created",
                made_folders=record.made_folders,
            )  # fmt: skip
        original = _backup_holding(record)
        if original is not None:
            return Plan(
                where, before, original, changed=True,
                summary=f"restored {where.shown} exactly as it was before agentbar",
                drop_backup=True,
            )  # fmt: skip
    text = files.decode(before, where.real)
    removed: int
    if agent is Agent.CLAUDE:
        data, style = claude_settings.load(text, str(where.path))
        new_data, removed = claude_settings.remove(
            data, record.created_keys if record is not None else None
        )
        created = record is not None and record.before_sha256 is None
        after: bytes | None = (
            None
            if created and not new_data
            else claude_settings.dump(new_data, style).encode("utf-8")
        )
    else:
        doc = codex_config.load(text, str(where.path))
        new_doc, removed = codex_config.remove(
            doc,
            config_path=str(where.path),
            feature_added=record is not None and record.feature_added,
            created=record.created_keys if record is not None else None,
        )
        new_text = codex_config.dump_like(new_doc, text)
        created = record is not None and record.before_sha256 is None
        after = None if created and not new_text.strip() else new_text.encode("utf-8")
    if not removed:
        return Plan(
            where, before, before, changed=False,
            summary=f"agentbar's hooks are not in {where.shown}; nothing to do",
        )  # fmt: skip
    notes = []
    if record is not None:
        notes.append(
            "The file changed since agentbar wrote it, so only agentbar's entries were taken "
            "out; everything else is as you left it."
        )
    return Plan(
        where, before, after, changed=True,
        summary=f"removed agentbar's hooks from {where.shown}", notes=notes,
        made_folders=record.made_folders if record is not None and after is None else [],
    )  # fmt: skip


def _backup_holding(record: Record) -> bytes | None:
    """The original, when the backup holds it, and it had no agentbar entries of its own (an
    earlier agentbar's, from before the state was kept: restoring those would reinstall them)."""
    if record.backup is None:
        return None
    try:
        data = files.read(Path(record.backup))
    except HooksFileError:
        return None
    if data is None or files.sha256(data) != record.before_sha256:
        return None
    return None if MARKER.encode() in data else data


# -- applying ---------------------------------------------------------------------------------


def apply(plan: Plan, settings: Settings) -> list[str]:
    """Write ``plan``; returns what was done, for the person."""
    if not plan.changed:
        return []
    where = plan.target
    if files.read(where.real) != plan.before:
        raise HooksFileError(
            f"{where.shown} changed while agentbar was working on it; nothing was written "
            "(run the command again)"
        )
    done: list[str] = []
    mode = files.mode_of(where.real)
    backup = files.backup_path(where.real)
    if plan.make_backup and plan.before is not None and not backup.exists():
        files.atomic_write(backup, plan.before, mode)
        done.append(f"backed up the original to {backup}")
    if plan.after is None:
        files.remove_file(where.real)
        if plan.made_folders:
            files.remove_empty_folders(plan.made_folders)
    else:
        files.atomic_write(where.real, plan.after, mode)
    if plan.drop_backup:
        files.remove_file(backup)
    state = InstallState(settings.data_dir)
    state.put(where.real, plan.record)
    if plan.record is not None:
        # The hook program writes here but never creates the data dir itself.
        private_dir(settings.events_dir(where.agent))
    done.append(plan.summary)
    return done


# -- status -----------------------------------------------------------------------------------


def status(
    agent: Agent,
    settings: Settings,
    *,
    command: HookCommand | None = None,
    version: str | None = None,
) -> AgentStatus:
    where = target(agent, settings)
    command = command or HookCommand.current(settings.data_dir)
    try:
        text = files.decode(files.read(where.real), where.real)
    except HooksFileError as exc:
        return AgentStatus(agent, where, False, f"unknown: {exc}")
    if text is None:
        return AgentStatus(agent, where, False, "not installed (no settings file)")
    try:
        if agent is Agent.CLAUDE:
            return _claude_status(where, text, command, version)
        return _codex_status(where, text, command)
    except HooksFileError as exc:
        return AgentStatus(agent, where, False, f"unknown: {exc}")


def _claude_status(
    where: Target, text: str, command: HookCommand, version: str | None
) -> AgentStatus:
    data, _ = claude_settings.load(text, str(where.path))
    found = claude_settings.status(data)
    wanted = claude_events(version)
    if not found.events:
        return AgentStatus(where.agent, where, False, "not installed")
    missing = [e for e in wanted if e not in found.events]
    summary = f"installed ({len(found.events)} events)"
    if missing:
        summary = f"partly installed ({len(found.events)} events; missing {', '.join(missing)})"
    status = AgentStatus(where.agent, where, True, summary)
    status.notes += _command_notes(found.commands, command.shell(Agent.CLAUDE))
    if found.all_disabled:
        status.notes.append("disableAllHooks is true: Claude Code runs no hooks at all")
    return status


def _codex_status(where: Target, text: str, command: HookCommand) -> AgentStatus:
    doc = codex_config.load(text, str(where.path))
    found = codex_config.status(doc, str(where.path))
    notify = {"agentbar": "agentbar's notify", "other": "your own notify", None: "no notify"}
    if not found.hooks and found.notify != "agentbar":
        return AgentStatus(where.agent, where, False, f"not installed ({notify[found.notify]})")
    trusted = sum(1 for h in found.hooks if h.trust == "trusted")
    summary = f"installed ({len(found.hooks)} hooks, {trusted} trusted; {notify[found.notify]})"
    status = AgentStatus(where.agent, where, bool(found.hooks), summary)
    if found.hooks and trusted < len(found.hooks):
        waiting = [h.event for h in found.hooks if h.trust == "needs review"]
        status.notes.append(
            f"{len(waiting)} still need trusting in Codex: start codex, type /hooks and review "
            f"them ({', '.join(waiting)}). Codex lists only the events its version has."
        )
    disabled = [h.event for h in found.hooks if h.trust == "disabled"]
    if disabled:
        status.notes.append(f"disabled in Codex's /hooks: {', '.join(disabled)}")
    status.notes += _command_notes(found.commands, command.shell(Agent.CODEX))
    if found.features_off:
        status.notes.append("hooks are turned off in [features]: Codex runs none of them")
    return status
