"""A JSON settings file with a Claude-style ``hooks`` object (Claude Code's and Gemini CLI's
``settings.json``): add, find and remove agentbar's hook entries (pure).

``hooks`` maps an event to a list of matcher groups ``{"matcher"?, "hooks": [<handler>]}``; the
agent's kit gives the handler (its command, and the timeout in the agent's unit). The file is
JSON, so it is parsed and written back whole, in the file's own style: the
indentation of its first nested line (both agents write two spaces), one line if it was one line,
its line endings, a byte-order mark, and a final newline only if it had one. Keys keep their
order. agentbar's entries are one matcher group per event, ``{"hooks": [<handler>]}`` with no
matcher (every tool, every notification type), appended after the user's own groups; nothing of
the user's is removed, rewritten or reordered. An empty file counts as ``{}``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import HooksFileError
from .files import Record
from .spec import command_of, is_ours

BOM = "\ufeff"

# agentbar's handler: the same for every event, or the one for each event (an event whose
# hook holds a request gets a command line and a timeout of its own).
Handlers = dict[str, object] | Callable[[str], dict[str, object]]


def handler_for(handlers: Handlers, event: str) -> dict[str, object]:
    return handlers(event) if callable(handlers) else handlers


@dataclass
class Style:
    indent: int | str | None = 2  # None: the whole document on one line
    final_newline: bool = True
    crlf: bool = False
    bom: bool = False


@dataclass
class Status:
    events: list[str] = field(default_factory=list)  # events with an agentbar handler
    commands: set[str] = field(default_factory=set)  # their commands (more than one: stale)
    all_disabled: bool = False  # ``disableAllHooks: true``


def load(text: str | None, where: str) -> tuple[dict[str, Any], Style]:
    """The settings and the file's style; raises ``HooksFileError`` for anything that is not a
    JSON object with a ``hooks`` object (or none)."""
    if text is None:
        return {}, Style()
    style = _style(text)
    body = text[1:] if style.bom else text
    if not body.strip():
        return {}, style
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise HooksFileError(
            f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise HooksFileError(f"{where} holds a JSON {type(data).__name__}, not an object")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise HooksFileError(f'{where}: "hooks" is a {type(hooks).__name__}, not an object')
    return data, style


def dump(data: dict[str, Any], style: Style) -> str:
    if style.indent is None:
        text = json.dumps(data, ensure_ascii=False)
    else:
        text = json.dumps(data, ensure_ascii=False, indent=style.indent)
    if style.final_newline:
        text += "\n"
    if style.crlf:
        text = text.replace("\n", "\r\n")
    return (BOM if style.bom else "") + text


def _style(text: str) -> Style:
    bom = text.startswith(BOM)
    body = text[1:] if bom else text
    style = Style(
        final_newline=body.endswith("\n") or not body.strip(),
        crlf="\r\n" in body,
        bom=bom,
    )
    lines = body.strip().splitlines()
    if len(lines) <= 1:
        style.indent = None if body.strip() else 2
        return style
    for line in lines[1:]:
        stripped = line.lstrip(" \t")
        lead = line[: len(line) - len(stripped)]
        if lead and stripped:
            style.indent = "\t" if lead.startswith("\t") else len(lead)
            break
    return style


def status(data: dict[str, Any]) -> Status:
    found = Status(all_disabled=data.get("disableAllHooks") is True)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for handler in _handlers(groups):
            command = command_of(handler)
            if command is not None and is_ours(handler):
                if event not in found.events:
                    found.events.append(event)
                found.commands.add(command)
    return found


def is_current(data: dict[str, Any], handlers: Handlers, events: list[str]) -> bool:
    """Exactly agentbar's wanted entries: one group per wanted event holding only the wanted
    handler, and no other agentbar handler anywhere."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return not events
    for event, groups in hooks.items():
        ours = [h for h in _handlers(groups) if is_ours(h)]
        if event not in events:
            if ours:
                return False
            continue
        wanted = handler_for(handlers, event)
        if ours != [wanted]:
            return False
        if {"hooks": [wanted]} not in groups:
            return False
    return all(event in hooks for event in events)


def add(data: dict[str, Any], handlers: Handlers, events: list[str]) -> dict[str, Any]:
    """A copy with agentbar's entries (any earlier ones of agentbar's replaced)."""
    result, _ = remove(data)
    hooks = result.setdefault("hooks", {})
    for event in events:
        groups = hooks.get(event)
        if groups is None:
            groups = hooks[event] = []
        if not isinstance(groups, list):
            raise HooksFileError(
                f'"hooks.{event}" is a {type(groups).__name__}, not a list of matcher groups'
            )
        groups.append({"hooks": [handler_for(handlers, event)]})
    return result


def created_keys(data: dict[str, Any], events: list[str]) -> list[str]:
    """The containers ``add`` will create in ``data`` (``hooks``, ``hooks.<Event>``)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return ["hooks", *(f"hooks.{e}" for e in events)]
    return [f"hooks.{e}" for e in events if e not in hooks]


def remove(data: dict[str, Any], created: list[str] | None = None) -> tuple[dict[str, Any], int]:
    """A copy without agentbar's handlers, and how many went. A group left empty by that goes
    too, and so does an event list or the ``hooks`` object left empty, unless it was there
    before agentbar (``created``: what agentbar added; None when unknown)."""
    result = copy.deepcopy(data)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result, 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        touched = False
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept_groups.append(group)
                continue
            touched = True
            kept = [h for h in handlers if not is_ours(h)]
            removed += len(handlers) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if touched:
            if kept_groups or (created is not None and f"hooks.{event}" not in created):
                hooks[event] = kept_groups
            else:
                del hooks[event]
    if removed and not hooks and (created is None or "hooks" in created):
        del result["hooks"]
    return result, removed


def added(
    data: dict[str, Any], style: Style, handlers: Handlers, events: list[str]
) -> tuple[str | None, list[str]]:
    """The file's text with agentbar's ``handlers`` for ``events`` (None: exactly there
    already), and the containers the addition creates (taken out again on uninstall)."""
    created = created_keys(remove(data)[0], events)
    if is_current(data, handlers, events):
        return None, created
    return dump(add(data, handlers, events), style), created


def removed(data: dict[str, Any], style: Style, record: Record | None) -> tuple[str | None, int]:
    """The file's text without agentbar's entries (None: nothing is left of a file agentbar
    created: delete it), and how many entries went; ``record``: what the install did."""
    new_data, count = remove(data, record.created_keys if record is not None else None)
    if record is not None and record.before_sha256 is None and not new_data:
        return None, count
    return dump(new_data, style), count


def _handlers(groups: object) -> list[object]:
    if not isinstance(groups, list):
        return []
    out: list[object] = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(handlers, list):
            out.extend(handlers)
    return out
