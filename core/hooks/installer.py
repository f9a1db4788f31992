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

from ..agents.base import HookTarget
from ..config import Settings
from ..model import Agent
from ..privacy import private_dir
from . import files
from .errors import HooksFileError
from .files import InstallState, Record
from .spec import MARKER, HookCommand
from .target import AgentStatus, Target


def hook_target(agent: Agent, settings: Settings) -> HookTarget:
    """The agent's hook target; ``HooksFileError`` for an agent that takes no hooks."""
    found = settings.kit(agent).hooks
    if found is None:
        raise HooksFileError(f"agentbar has no hooks for {agent}")
    return found


def hooked_agents(settings: Settings) -> list[Agent]:
    """The agents whose settings files agentbar's hooks can go into (an agent with no folder
    known here is left out)."""
    return [
        kit.agent for kit in settings.kits if kit.hooks is not None and settings.homes_of(kit.agent)
    ]


def target(agent: Agent, settings: Settings) -> Target:
    homes = settings.homes_of(agent)
    if not homes:
        raise HooksFileError(f"no folder is known for {agent} on this machine")
    path = Path(os.path.abspath(hook_target(agent, settings).config_file(homes)))
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
    command = command or HookCommand.current(settings.data_dir, settings.options().agent_holds())
    before = files.read(where.real)
    text = files.decode(before, where.real)
    edit = hook_target(agent, settings).add(
        text, str(where.path), command, version=version, notify=notify
    )
    notes = list(edit.notes)
    if edit.after is None:
        return Plan(
            where,
            before,
            before,
            changed=False,
            summary=f"agentbar's hooks are already installed in {where.shown}; nothing to change",
            notes=notes,
        )
    after = edit.after.encode("utf-8")
    state = InstallState(settings.data_dir)
    backup = files.backup_path(where.real)
    record = _install_record(state.get(where.real), before, after, backup, edit.feature_added)
    if not record.created_keys:
        record.created_keys = edit.created_keys
    if before is None:
        record.made_folders = [str(f) for f in files.missing_folders(where.real)]
    plan = Plan(
        where,
        before,
        after,
        changed=after != before,
        summary=f"installed agentbar's hooks for {edit.events} events in {where.shown}",
        notes=notes,
        record=record,
        make_backup=before is not None and not backup.exists(),
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
    text = files.decode(before, where.real) or ""
    removal = hook_target(agent, settings).remove(text, str(where.path), record)
    after = None if removal.after is None else removal.after.encode("utf-8")
    removed = removal.removed
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
    command = command or HookCommand.current(settings.data_dir, settings.options().agent_holds())
    try:
        text = files.decode(files.read(where.real), where.real)
    except HooksFileError as exc:
        return AgentStatus(agent, where, False, f"unknown: {exc}")
    if text is None:
        return AgentStatus(agent, where, False, "not installed (no settings file)")
    try:
        return hook_target(agent, settings).status(where, text, command, version)
    except HooksFileError as exc:
        return AgentStatus(agent, where, False, f"unknown: {exc}")
