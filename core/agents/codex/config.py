"""Codex's ``config.toml``: add, find and remove agentbar's hooks and ``notify`` (pure).

Edited with tomlkit, which keeps everything it is not asked to change byte for byte: comments,
key order, spacing, quoting. agentbar's entries are one matcher group per event with no matcher,
``{hooks = [<handler>]}``, appended after the user's groups in whatever form the event already
has (an inline array, or ``[[hooks.<Event>]]`` tables); a new ``[hooks]`` table goes at the end
of the file. Codex keys its trust records by position (``<config path>:<event>:<group>:<handler>``
under ``[hooks.state]``), so agentbar's groups go last, where they shift none of the user's.

``notify`` (Codex's legacy turn-complete program; agent-formats.md 4.1) is set only when there is
none: a user's own ``notify`` is left alone. ``[features]`` is touched only for a Codex older than
0.124 (hooks off by default) that has no hooks setting at all; ``hooks = false`` set by the user
is reported, never overridden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Array, InlineTable, Table

from ...hooks.errors import HooksFileError
from ...hooks.spec import MARKER, HookCommand, is_ours
from .events import CALLER, CODEX_EVENTS, codex_event_label, handler

LEGACY_FEATURE = "codex_hooks"  # the key before 0.129; still an alias after
FEATURE = "hooks"


@dataclass
class Hook:
    event: str
    key: str  # Codex's trust key for it
    trust: str  # "trusted", "disabled" or "needs review"


@dataclass
class Status:
    hooks: list[Hook] = field(default_factory=list)
    commands: set[str] = field(default_factory=set)
    notify: str | None = None  # "agentbar", "other" or None (no notify)
    notify_command: list[str] = field(default_factory=list)
    features_off: bool = False  # the user turned hooks off in [features]


def load(text: str | None, where: str) -> tomlkit.TOMLDocument:
    if text is None or not text.strip():
        return tomlkit.parse(text or "")
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise HooksFileError(f"{where} is not valid TOML ({exc})") from None
    hooks = doc.get("hooks")
    if hooks is not None and not isinstance(hooks, Table | InlineTable):
        raise HooksFileError(f"{where}: hooks is a {type(hooks).__name__}, not a table")
    return doc


def dump(doc: tomlkit.TOMLDocument) -> str:
    return tomlkit.dumps(doc)


def copy_of(doc: tomlkit.TOMLDocument) -> tomlkit.TOMLDocument:
    return tomlkit.parse(tomlkit.dumps(doc))


# -- reading ----------------------------------------------------------------------------------


def status(doc: tomlkit.TOMLDocument, config_path: str) -> Status:
    found = Status()
    hooks = doc.get("hooks")
    state = _state_table(doc)
    if isinstance(hooks, Table | InlineTable):
        for event, groups in hooks.items():
            if event == "state" or not isinstance(groups, AoT | Array):
                continue
            for gi, group in enumerate(groups):
                for hi, handler in enumerate(_group_handlers(group)):
                    plain = _plain(handler)
                    if not is_ours(plain):
                        continue
                    found.commands.add(str(plain["command"]))
                    key = trust_key(config_path, event, gi, hi)
                    found.hooks.append(Hook(event, key, _trust(state.get(key))))
    notify = doc.get("notify")
    if notify is not None:
        values = [str(v) for v in _plain(notify)] if isinstance(notify, Array) else [str(notify)]
        found.notify = "agentbar" if any(MARKER in v for v in values) else "other"
        found.notify_command = values
    features = doc.get("features")
    if isinstance(features, Table | InlineTable):
        found.features_off = any(features.get(k) is False for k in (FEATURE, LEGACY_FEATURE))
        found.features_off = found.features_off and features.get(FEATURE) is not True
    return found


def trust_key(config_path: str, event: str, group: int, handler: int) -> str:
    return f"{config_path}:{codex_event_label(event)}:{group}:{handler}"


def is_current(
    doc: tomlkit.TOMLDocument, command: HookCommand, *, notify: bool, config_path: str
) -> bool:
    hooks = doc.get("hooks")
    if not isinstance(hooks, Table | InlineTable):
        return False
    for event in CODEX_EVENTS:
        groups = hooks.get(event)
        if not isinstance(groups, AoT | Array):
            return False
        ours = [g for g in groups if any(is_ours(_plain(h)) for h in _group_handlers(g))]
        if len(ours) != 1 or _plain(ours[0]) != {"hooks": [handler(command, event)]}:
            return False
    extra = [h for h in status(doc, config_path).hooks if h.event not in CODEX_EVENTS]
    if extra:
        return False
    current = status(doc, config_path)
    if current.notify == "agentbar" and current.notify_command != command.argv(CALLER, notify=True):
        return False
    return not (notify and current.notify is None)


# -- writing ----------------------------------------------------------------------------------


def add(
    doc: tomlkit.TOMLDocument,
    command: HookCommand,
    *,
    config_path: str,
    notify: bool,
    enable_feature: bool,
) -> tuple[tomlkit.TOMLDocument, list[str], bool]:
    """A copy with agentbar's hooks (earlier ones of agentbar's replaced), its ``notify`` when
    there is none, and the feature flag when ``enable_feature`` and nothing says otherwise.
    Returns notes for the person, and whether the feature flag was set."""
    result, _ = remove(doc, config_path=config_path)
    notes: list[str] = []
    feature_added = False
    existing = status(result, config_path)
    if notify:
        if existing.notify is None:
            # A top-level key: tomlkit puts it after the other top-level keys, before tables.
            result["notify"] = _array(command.argv(CALLER, notify=True))
        elif existing.notify == "other":
            notes.append(
                "You already have a notify program ("
                + " ".join(existing.notify_command)
                + "); agentbar left it as it is (Codex runs only one)."
            )
    hooks = result.get("hooks")
    if hooks is None:
        hooks = tomlkit.table()
        for event in CODEX_EVENTS:
            hooks[event] = _inline_groups(command, event)
        _blank_line_before_new_table(result)
        result["hooks"] = hooks
    else:
        assert isinstance(hooks, Table | InlineTable)
        _add_to_hooks(hooks, command)
    if existing.features_off:
        notes.append(
            "Hooks are turned off in [features] of this file; agentbar left that alone, so "
            "its hooks will not run until you turn them on."
        )
    elif enable_feature and not _feature_set(result):
        features = result.get("features")
        if features is None:
            features = tomlkit.table()
            _blank_line_before_new_table(result)
            result["features"] = features
        if isinstance(features, Table | InlineTable):
            features[LEGACY_FEATURE] = True
            feature_added = True
            notes.append(
                "This Codex runs hooks only when asked: agentbar set [features] codex_hooks = true."
            )
    return result, notes, feature_added


def _add_to_hooks(hooks: Table | InlineTable, command: HookCommand) -> None:
    """Append agentbar's group to every event, in the form the file already uses: tables
    (``[[hooks.<Event>]]``) where the user writes tables, inline arrays otherwise."""
    events = [v for k, v in hooks.items() if k != "state"]
    as_tables = isinstance(hooks, Table) and (
        hooks.is_super_table() or (bool(events) and all(isinstance(v, AoT) for v in events))
    )
    for event in CODEX_EVENTS:
        groups = hooks.get(event)
        if groups is None:
            if as_tables:
                aot = tomlkit.aot()
                aot.append(_table_group(command, event))
                hooks[event] = aot
            else:
                hooks[event] = _inline_groups(command, event)
        elif isinstance(groups, AoT):
            if len(groups) and not groups[-1].as_string().endswith("\n\n"):
                groups[-1].add(tomlkit.nl())  # a blank line between theirs and ours
            groups.append(_table_group(command, event))
        elif isinstance(groups, Array):
            groups.append(_inline_group(command, event))
        else:
            raise HooksFileError(
                f"hooks.{event} is a {type(groups).__name__}, not a list of matcher groups"
            )


def dump_like(doc: tomlkit.TOMLDocument, original: str | None) -> str:
    """``doc`` as text with the original's line endings and its run of final newlines (tomlkit
    writes ``\\n`` and agentbar's tables end on a blank line)."""
    text = tomlkit.dumps(doc)
    if not original or not original.strip():
        return text.rstrip("\n") + "\n" if text.strip() else text
    if original.count("\r\n") == original.count("\n"):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    tail = original[len(original.rstrip("\r\n")) :]
    return text.rstrip("\r\n") + tail


def created_keys(doc: tomlkit.TOMLDocument) -> list[str]:
    """The tables ``add`` will create in ``doc`` (``hooks``, ``hooks.<Event>``)."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, Table | InlineTable):
        return ["hooks", *(f"hooks.{e}" for e in CODEX_EVENTS)]
    return [f"hooks.{e}" for e in CODEX_EVENTS if e not in hooks]


def remove(
    doc: tomlkit.TOMLDocument,
    *,
    config_path: str,
    feature_added: bool = False,
    created: list[str] | None = None,
) -> tuple[tomlkit.TOMLDocument, int]:
    """A copy without agentbar's hooks, their trust records and its ``notify``; the feature flag
    too when agentbar added it. An event list or ``hooks`` table left empty goes too, unless it
    was there before agentbar (``created``; None when unknown). Returns how many entries went."""
    result = copy_of(doc)
    removed = 0
    hooks = result.get("hooks")
    if isinstance(hooks, Table | InlineTable):
        removed += _remove_from_hooks(hooks, config_path=config_path, created=created)
        if removed and len(hooks) == 0 and (created is None or "hooks" in created):
            del result["hooks"]
    if status(result, config_path).notify == "agentbar":
        del result["notify"]
        removed += 1
    if feature_added:
        features = result.get("features")
        if isinstance(features, Table | InlineTable) and features.get(LEGACY_FEATURE) is True:
            del features[LEGACY_FEATURE]
            if len(features) == 0:
                del result["features"]
    return result, removed


def _remove_from_hooks(
    hooks: Table | InlineTable, *, config_path: str, created: list[str] | None
) -> int:
    """Takes agentbar's groups and their trust records out of ``hooks``, with an event list it
    leaves empty that agentbar created and an emptied ``state``. Returns how many groups went."""
    state = hooks.get("state")
    trust = state if isinstance(state, Table | InlineTable) else None
    removed = 0
    for event in [k for k in hooks if k != "state"]:
        groups = hooks[event]
        if not isinstance(groups, AoT | Array):
            continue
        taken = _remove_from_groups(groups, trust, config_path=config_path, event=event)
        if taken and len(groups) == 0 and (created is None or f"hooks.{event}" in created):
            del hooks[event]
        removed += taken
    if trust is not None and len(trust) == 0:
        del hooks["state"]
    return removed


def _remove_from_groups(
    groups: AoT | Array, trust: Table | InlineTable | None, *, config_path: str, event: str
) -> int:
    """Takes agentbar's handlers out of one event's groups (a group of only agentbar's goes
    whole) and their records out of ``trust``. Returns how many groups held one."""
    removed = 0
    for gi in reversed(range(len(groups))):  # from the end: a deleted group shifts none before
        handlers = _group_handlers(groups[gi])
        ours = [hi for hi, h in enumerate(handlers) if is_ours(_plain(h))]
        if not ours:
            continue
        removed += 1
        if trust is not None:
            for hi in ours:
                trust.pop(trust_key(config_path, event, gi, hi), None)
        if len(ours) == len(handlers):
            del groups[gi]
        else:
            for hi in reversed(ours):
                del handlers[hi]
    return removed


# -- helpers ----------------------------------------------------------------------------------


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _group_handlers(group: Any) -> Any:
    if isinstance(group, Table | InlineTable):
        handlers = group.get("hooks")
        if isinstance(handlers, AoT | Array):
            return handlers
    return []


def _state_table(doc: tomlkit.TOMLDocument) -> dict[str, Any]:
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, Table | InlineTable) else None
    plain = _plain(state) if state is not None else {}
    return plain if isinstance(plain, dict) else {}


def _trust(entry: Any) -> str:
    if not isinstance(entry, dict):
        return "needs review"
    if entry.get("enabled") is False:
        return "disabled"
    return "trusted" if entry.get("trusted_hash") else "needs review"


def _feature_set(doc: tomlkit.TOMLDocument) -> bool:
    features = doc.get("features")
    return isinstance(features, Table | InlineTable) and any(
        k in features for k in (FEATURE, LEGACY_FEATURE)
    )


def _inline_handler(command: HookCommand, event: str) -> InlineTable:
    table = tomlkit.inline_table()
    table.update(handler(command, event))
    return table


def _inline_handlers(command: HookCommand, event: str) -> Array:
    array = tomlkit.array()
    array.append(_inline_handler(command, event))
    return array


def _table_group(command: HookCommand, event: str) -> Table:
    group = tomlkit.table()
    group["hooks"] = _inline_handlers(command, event)
    group.add(tomlkit.nl())
    return group


def _inline_group(command: HookCommand, event: str) -> InlineTable:
    group = tomlkit.inline_table()
    group["hooks"] = _inline_handlers(command, event)
    return group


def _inline_groups(command: HookCommand, event: str) -> Array:
    array = tomlkit.array()
    array.append(_inline_group(command, event))
    return array


def _array(values: list[str]) -> Array:
    array = tomlkit.array()
    array.extend(values)
    return array


def _blank_line_before_new_table(doc: tomlkit.TOMLDocument) -> None:
    text = tomlkit.dumps(doc)
    if not text.strip():
        return
    if not text.endswith("\n"):
        doc.add(tomlkit.nl())
    if not text.endswith("\n\n"):
        doc.add(tomlkit.nl())
