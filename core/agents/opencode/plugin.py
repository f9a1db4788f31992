"""agentbar's opencode plugin: a JavaScript file in opencode's plugins folder that relays its
permission and session events into agentbar's hook events folder (values; main thread).

opencode keeps a waiting permission in memory only (its tool part stays ``running``), and the
``permission.ask`` plugin hook is declared but never called (1.1.65 and 1.18.33 both: checked
with a plugin that logged every call). What does reach a plugin is the bus event
``permission.asked`` (and ``permission.replied``), so the plugin turns those into the lines
agentbar's own hook program writes (``<data>/events/opencode/<session>.jsonl``):

- ``permission.asked`` (``permission.updated`` before 1.1.1): ``PermissionRequest`` with the
  permission (``bash``, ``edit``...) and its command or pattern;
- ``permission.replied``: ``PostToolUse`` (running again; what follows is in the database);
- ``session.created``: ``SessionStart``; ``session.idle``: an ``idle_prompt`` notification,
  which changes no state but tells which process serves the session.

Every line carries opencode's pid, which binds the session to its process at once. The plugin
writes with ``appendFile`` and never awaits it: opencode's event loop is never held up, and
any failure (a full disk, a removed folder) is swallowed, never thrown into opencode.

The file is agentbar's alone (``agentbar.js``): install writes it whole, uninstall deletes it;
the agent-neutral installer shows the diff, backs up a file in the way and records what to
undo.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...hooks.errors import HooksFileError
from ...hooks.files import Record
from ...hooks.spec import HookCommand
from ...hooks.target import AgentStatus, Target
from ...sources.hook_events import events_dir
from ..base import HookEdit, HookRemoval
from .files import AGENT

PLUGIN_FILE = "agentbar.js"
MARKER = "// agentbar: relays opencode's events to agentbar."
RELAYED = ("permission.asked", "permission.replied", "session.created", "session.idle")

_TEMPLATE = """MARKER
// Installed by `agentbar hooks install --agent opencode`; `agentbar hooks uninstall` removes it.
// It only appends lines to agentbar's events folder and never holds opencode up.
import { appendFile, mkdir } from "node:fs/promises";

const EVENTS = EVENTS_DIR;
const SESSION_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

function summary(p) {
  const meta = p.metadata && typeof p.metadata === "object" ? p.metadata : {};
  const patterns = Array.isArray(p.patterns) ? p.patterns : [p.pattern].flat();
  const text = meta.command ?? meta.filepath ?? meta.filePath ?? patterns.find(Boolean) ?? p.title;
  return typeof text === "string" ? text.split("\\n")[0].slice(0, 300) : undefined;
}

export const AgentbarPlugin = async ({ directory }) => {
  let ready;
  const write = (sessionID, event, fields) => {
    if (typeof sessionID !== "string" || !SESSION_ID.test(sessionID)) return;
    const line = JSON.stringify({
      event, ts: new Date().toISOString(), pid: process.pid, cwd: directory, ...fields,
    }) + "\\n";
    ready ??= mkdir(EVENTS, { recursive: true, mode: 0o700 });
    ready
      .then(() => appendFile(`${EVENTS}/${sessionID}.jsonl`, line, { mode: 0o600 }))
      .catch(() => { ready = undefined; });
  };
  return {
    event: async ({ event }) => {
      try {
        const p = (event && event.properties) || {};
        switch (event && event.type) {
          case "permission.asked":
          case "permission.updated":
            write(p.sessionID, "PermissionRequest", {
              tool_name: p.permission ?? p.type, tool_summary: summary(p),
            });
            break;
          case "permission.replied":
            write(p.sessionID, "PostToolUse", { message: p.reply ?? p.response });
            break;
          case "session.created":
            write(p.sessionID ?? (p.info && p.info.id), "SessionStart", { source: "startup" });
            break;
          case "session.idle":
            write(p.sessionID, "Notification", { notification_type: "idle_prompt" });
            break;
        }
      } catch {
        // never break opencode
      }
    },
  };
};
"""


def plugin_text(command: HookCommand) -> str:
    """The plugin, with agentbar's events folder for opencode written into it."""
    folder = events_dir(Path(command.data_dir), AGENT).as_posix()
    return _TEMPLATE.replace("MARKER", MARKER).replace("EVENTS_DIR", json.dumps(folder))


def is_ours(text: str) -> bool:
    return text.startswith(MARKER)


class OpencodePlugin:
    """The ``HookTarget`` of opencode: ``<config>/plugins/agentbar.js``."""

    wants_version = False  # the same plugin serves every version (it knows both event names)

    def config_file(self, homes: tuple[Path, ...]) -> Path:
        return homes[0] / "plugins" / PLUGIN_FILE

    def add(
        self, text: str | None, where: str, command: HookCommand, *, version: str | None,
        notify: bool,
    ) -> HookEdit:  # fmt: skip
        wanted = plugin_text(command)
        if text is not None and not is_ours(text):
            raise HooksFileError(f"{where} is not agentbar's plugin; move it away first")
        return HookEdit(None if text == wanted else wanted, [], len(RELAYED))

    def remove(self, text: str, where: str, record: Record | None) -> HookRemoval:
        if not is_ours(text):
            return HookRemoval(text, 0)  # someone else's file: left as it is
        return HookRemoval(None, 1)

    def status(
        self, target: Target, text: str, command: HookCommand, version: str | None
    ) -> AgentStatus:
        if not text:
            return AgentStatus(target.agent, target, False, "not installed")
        if not is_ours(text):
            return AgentStatus(target.agent, target, False, "not installed (another file there)")
        status = AgentStatus(target.agent, target, True, f"installed ({len(RELAYED)} events)")
        if text != plugin_text(command):
            status.notes.append("installed by another agentbar (run install again)")
        return status


HOOKS = OpencodePlugin()
