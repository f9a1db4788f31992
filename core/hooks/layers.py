"""Per-launch settings layers: agentbar's hooks for an agent agentbar starts itself, without
touching the user's files (pure).

Claude Code: ``claude --settings <json>`` adds a settings layer for that run; its hooks merge
with every other source's (agent-formats.md 2.1). It is not restored by ``--resume``: pass it
again on every launch.

Codex: ``-c key=value`` overrides form a session-flags config layer; hooks from all layers run
(4.3). A Codex without hooks ignores them (checked with 0.99.0; 0.58.0 gets ``notify``
instead). Codex runs a non-managed hook only once it is trusted: either the person trusts
agentbar's session-flag hooks once in ``/hooks`` (the trust is recorded by position and hash, so
the same command stays trusted from launch to launch), or the launcher passes
``--dangerously-bypass-hook-trust`` (``bypass_trust=True``). That flag exists from Codex 0.130
(an older Codex refuses to start with it, so the version must be given), must come before any
subcommand, ``--`` or prompt, and lifts the review for every hook of the run, the user's
unreviewed ones too: use it only where the hook set is known (a test rig, a throwaway HOME).
Codex reads a ``-c`` value as TOML.

    command = HookCommand.current(settings.data_dir)
    subprocess.run(["claude", *claude_launch_args(command), "fix the tests"])
    subprocess.run(["codex", *codex_launch_args(command), "fix the tests"])
"""

from __future__ import annotations

import json
from typing import Any

from agentbar.core.hooks.spec import CODEX_EVENTS, HookCommand, claude_events, parse_version
from agentbar.core.model import Agent

CODEX_BYPASS_TRUST = "--dangerously-bypass-hook-trust"
CODEX_BYPASS_TRUST_SINCE = (0, 130, 0)  # openai/codex#21768, May 2026


def claude_launch_settings(command: HookCommand, *, version: str | None = None) -> dict[str, Any]:
    """The settings layer for ``claude --settings``: agentbar's hooks and nothing else."""
    handler = command.handler(Agent.CLAUDE)
    return {"hooks": {event: [{"hooks": [handler]}] for event in claude_events(version)}}


def claude_launch_args(command: HookCommand, *, version: str | None = None) -> list[str]:
    """``["--settings", "<json>"]`` to put right after ``claude``."""
    layer = claude_launch_settings(command, version=version)
    return ["--settings", json.dumps(layer, separators=(",", ":"), ensure_ascii=False)]


def codex_launch_overrides(
    command: HookCommand, *, notify: bool = False, enable_hooks: bool = False
) -> list[str]:
    """``-c`` overrides, flattened: ``["-c", "hooks.SessionStart=[...]", "-c", ...]``.

    ``notify`` also sets Codex's ``notify`` program for this run (it replaces the user's own for
    the run: only for a Codex without hooks). ``enable_hooks`` sets ``features.hooks`` for a
    Codex that has hooks off."""
    group = {"hooks": [command.handler(Agent.CODEX)]}
    args: list[str] = []
    for event in CODEX_EVENTS:
        args += ["-c", f"hooks.{event}={toml_value([group])}"]
    if enable_hooks:
        args += ["-c", "features.hooks=true"]
    if notify:
        args += ["-c", f"notify={toml_value(command.argv(Agent.CODEX, notify=True))}"]
    return args


def codex_launch_args(
    command: HookCommand,
    *,
    bypass_trust: bool = False,
    version: str | None = None,
    notify: bool = False,
    enable_hooks: bool = False,
) -> list[str]:
    """Everything to put right after ``codex`` (before any subcommand or prompt).
    ``bypass_trust`` needs ``version`` (``codex --version``): below 0.130 the flag is left out,
    since that Codex would refuse to start."""
    args = codex_launch_overrides(command, notify=notify, enable_hooks=enable_hooks)
    if not bypass_trust:
        return args
    parsed = parse_version(version)
    if parsed is None:
        raise ValueError("bypass_trust needs the Codex version: older builds refuse the flag")
    return [CODEX_BYPASS_TRUST, *args] if parsed >= CODEX_BYPASS_TRUST_SINCE else args


def toml_value(value: object) -> str:
    """A TOML inline value (strings, integers, booleans, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "_-" for c in key) and key.isascii()
    return key if bare else json.dumps(key)
