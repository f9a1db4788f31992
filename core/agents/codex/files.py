"""Codex CLI adapter: where rollouts live and which processes are Codex clients (engine thread).

Files: ``$CODEX_HOME/sessions/**/rollout-*.jsonl`` (live, usually under ``YYYY/MM/DD/``; old builds
wrote them flat) and ``$CODEX_HOME/archived_sessions/**`` (``.jsonl`` or zstd ``.jsonl.zst``).
Their lines are read by ``codex_rollout.CodexRolloutParser``.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...model import Agent
from ...sources.base import (
    JS_RUNTIMES,
    ProcessInfo,
    RegistryEntry,
    StreamKind,
    StreamSpec,
    WatchRoot,
    is_uuid,
    option_value,
    positionals,
    program_name,
)
from .rollout import CodexRolloutParser

log = logging.getLogger(__name__)

AGENT = Agent("codex")

_Json = dict[str, Any]

SESSIONS_DIR = "sessions"
ARCHIVED_DIR = "archived_sessions"
_ROLLOUT_NAME = re.compile(r"^rollout-(?P<body>.+)\.jsonl(?P<zst>\.zst)?$")


def default_codex_home(env: Mapping[str, str]) -> Path:
    """Codex's state folder: ``$CODEX_HOME``, else ``$HOME/.codex`` (Codex's own rule)."""
    codex_home = env.get("CODEX_HOME")
    if codex_home:
        return Path(codex_home).expanduser()
    home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
    return Path(home) / ".codex"


def rollout_session_hint(name: str) -> str | None:
    """The thread uuid in ``rollout-<time>-<uuid>[_<rollout-id>].jsonl[.zst]``, if it has one."""
    match = _ROLLOUT_NAME.match(name)
    if match is None:
        return None
    # The timestamp part has no underscore; newer builds append ``_<rollout-id>`` after the uuid.
    candidate = match["body"].split("_", 1)[0][-36:]
    return candidate if is_uuid(candidate) else None


# --------------------------------------------------------------------------------------------
# The source: paths, discovery, processes
# --------------------------------------------------------------------------------------------


class CodexSource:
    """Where Codex keeps rollouts and which processes are its clients."""

    agent: Agent = AGENT
    finds_processes = True
    # Its parsers keep nothing their checkpoint leaves out: another process may read its
    # files and hand back the checkpoint (``core/cold_read.py``).
    checkpoint_is_state = True

    def __init__(self, home: Path) -> None:
        self.home = home
        self._roots = (home / SESSIONS_DIR, home / ARCHIVED_DIR)

    def watch_roots(self) -> list[WatchRoot]:
        return [WatchRoot(root, recursive=True) for root in self._roots]

    def classify(self, path: Path) -> StreamSpec | None:
        match = _ROLLOUT_NAME.match(path.name)
        if match is None or not any(path.is_relative_to(root) for root in self._roots):
            return None
        return StreamSpec(
            agent=AGENT,
            kind=StreamKind.TRANSCRIPT,
            path=path,
            session_hint=rollout_session_hint(path.name),
            compressed=match["zst"] is not None,
        )

    def parser(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> CodexRolloutParser:
        return CodexRolloutParser(spec, checkpoint)

    def parse_registry(self, data: bytes) -> RegistryEntry | None:
        return None  # Codex keeps no live-session registry file

    def is_client_process(self, proc: ProcessInfo) -> bool:
        args = _codex_args(proc)
        if args is None or _asks_for_help(args):
            return False
        words = positionals(args, _VALUE_OPTIONS)
        if not words or words[0] in _CLIENT_SUBCOMMANDS:
            return True
        return words[0] not in _OTHER_SUBCOMMANDS  # any other first word is the TUI's prompt

    def process_session_hint(self, proc: ProcessInfo) -> str | None:
        args = _codex_args(proc)
        if args is None:
            return None
        words = positionals(args, _VALUE_OPTIONS)
        if words[:1] == ["resume"]:
            candidate = words[1] if len(words) > 1 else None
        elif words[:1] in (["exec"], ["e"]) and words[1:2] == ["resume"]:
            candidate = words[2] if len(words) > 2 else None
        else:
            candidate = None
        return candidate if candidate is not None and is_uuid(candidate) else None

    def process_cwd(self, proc: ProcessInfo) -> str | None:
        args = _codex_args(proc)
        chosen = option_value(args, "-C", "--cd", glued="-C") if args is not None else None
        if chosen is None:
            return proc.cwd
        if proc.cwd is None or os.path.isabs(chosen):
            return chosen
        return os.path.normpath(os.path.join(proc.cwd, chosen))


# -- command lines ---------------------------------------------------------------------------

_CLIENT_SUBCOMMANDS = frozenset({"exec", "e", "resume", "fork", "review"})
# Everything else Codex's CLI knows: daemons, servers and one-shot helpers, never a session.
_OTHER_SUBCOMMANDS = frozenset(
    {
        "app-server", "daemon", "mcp-server", "mcp", "login", "logout", "proto", "p",
        "completion", "sandbox", "debug", "apply", "a", "cloud", "cloud-tasks",
        "migrate-rollouts", "responses-api-proxy", "stdio-to-uds", "features", "execpolicy",
        "help",
    }
)  # fmt: skip
# Options (global, exec's and resume's) that take a separate value.
_VALUE_OPTIONS = frozenset(
    {
        "-c", "--config", "-C", "--cd", "-m", "--model", "-p", "--profile", "-s", "--sandbox",
        "-a", "--ask-for-approval", "-i", "--image", "--add-dir", "--enable", "--disable",
        "--local-provider", "-o", "--output-last-message", "--output-schema", "--color",
        "--remote", "--remote-auth-token-env",
    }
)  # fmt: skip
_HELP_OPTIONS = frozenset({"-h", "--help", "-V", "--version"})
_CODEX_SCRIPTS = frozenset({"codex", "codex.js", "codex.mjs", "codex.cjs"})
# 2025 npm packages shipped the native binary as bin/codex-<target triple>; newer ones as
# vendor/<triple>/codex/codex.
_NATIVE_BINARY = re.compile(r"^codex-(x86_64|aarch64|arm64)-")


def _codex_args(proc: ProcessInfo) -> list[str] | None:
    """The arguments after Codex's program (or its node wrapper script); None if not Codex.

    An empty command line (a zombie, or a process we may not inspect) gives None: without it a
    TUI cannot be told from the app-server daemon, which has the same program name.
    """
    argv = list(proc.cmdline)
    if not argv:
        return None
    program = program_name(argv[0])
    if program == "codex" or _NATIVE_BINARY.match(program):
        return argv[1:]
    if program in JS_RUNTIMES:
        script = next((i for i, arg in enumerate(argv[1:], 1) if not arg.startswith("-")), None)
        if script is not None and program_name(argv[script]) in _CODEX_SCRIPTS:
            return argv[script + 1 :]
        return None
    if program_name(proc.name) == "codex":  # argv[0] rewritten, the OS name still says codex
        return argv[1:]
    return None


def _asks_for_help(args: list[str]) -> bool:
    return any(arg in _HELP_OPTIONS for arg in args[: args.index("--") if "--" in args else None])


# --------------------------------------------------------------------------------------------
# Field access that never raises on a wrong shape
# --------------------------------------------------------------------------------------------
