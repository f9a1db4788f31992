"""Gemini CLI adapter: where its chats live and which processes are Gemini CLI (engine thread).

Files (``packages/core/src/config/storage.ts``, checked on 0.38.2 and 0.61.0): the state folder
is ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``. Each project has a folder
``tmp/<project>/`` named by a short slug from ``projects.json`` (``{"projects": {"/path":
"slug"}}``; older releases named it by the sha256 of the path), holding ``.project_root`` (the
path) and ``chats/``:

- ``chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the id>.jsonl``: a session (0.39 on);
- ``chats/session-<...>.json``: a session as one JSON document (up to 0.38);
- ``chats/<parent session id>/<session id>.jsonl``: a sub-agent's chat, part of its parent.

One release (Dec 2025) named ``tmp`` ``data``; both are watched. The lines are read by
``chat.GeminiChatParser``.

Processes: the npm package's ``bin/gemini`` is a Node script, and it starts itself again as a
child Node process (``--max-old-space-size``, ``GEMINI_CLI_NO_RELAUNCH=true``); both have the
same arguments, and the engine keeps the child (``liveness.without_wrappers``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

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
from .chat import GeminiChatParser

log = logging.getLogger(__name__)

AGENT = Agent("gemini")

STATE_DIR = ".gemini"
PROJECT_FOLDERS = ("tmp", "data")
CHATS_DIR = "chats"
SESSION_PREFIX = "session-"
PROJECT_ROOT_FILE = ".project_root"
PROJECTS_FILE = "projects.json"


def default_gemini_home(env: Mapping[str, str]) -> Path:
    """Gemini CLI's state folder: ``$GEMINI_CLI_HOME/.gemini``, else ``$HOME/.gemini``."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or env.get("USERPROFILE")
    return Path(home or os.path.expanduser("~")).expanduser() / STATE_DIR


class GeminiSource:
    """Where Gemini CLI keeps chats and which processes are its clients."""

    agent: Agent = AGENT
    finds_processes = True

    def __init__(self, home: Path) -> None:
        self.home = home
        self._roots = tuple(home / name for name in PROJECT_FOLDERS)
        self._project_paths: dict[Path, str | None] = {}

    def watch_roots(self) -> list[WatchRoot]:
        return [WatchRoot(root, recursive=True) for root in self._roots]

    def classify(self, path: Path) -> StreamSpec | None:
        name = path.name
        if name.endswith(".jsonl"):
            whole = False
        elif name.endswith(".json"):
            whole = True
        else:
            return None
        root = next((r for r in self._roots if path.is_relative_to(r)), None)
        if root is None:
            return None
        parts = path.relative_to(root).parts
        if len(parts) == 3 and parts[1] == CHATS_DIR and name.startswith(SESSION_PREFIX):
            return StreamSpec(AGENT, StreamKind.TRANSCRIPT, path, whole_document=whole)
        if len(parts) == 4 and parts[1] == CHATS_DIR:
            parent, stem = parts[2], name.rsplit(".", 1)[0]
            if is_uuid(parent) and stem:
                return StreamSpec(
                    AGENT,
                    StreamKind.SUBAGENT,
                    path,
                    session_hint=parent,
                    agent_id_hint=stem,
                    whole_document=whole,
                )
        return None

    def parser(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> GeminiChatParser:
        return GeminiChatParser(spec, checkpoint, cwd=self.project_path(spec.path))

    def project_path(self, chat: Path) -> str | None:
        """The project folder a chat belongs to: its project folder's ``.project_root``, else
        the path ``projects.json`` gives that folder's slug."""
        folder = chat.parent.parent if chat.parent.name == CHATS_DIR else chat.parent.parent.parent
        if folder in self._project_paths:
            return self._project_paths[folder]
        found = _read_text(folder / PROJECT_ROOT_FILE) or self._projects().get(folder.name)
        if found is not None:
            self._project_paths[folder] = found  # only a found path is kept: it never moves
        return found

    def _projects(self) -> dict[str, str]:
        """``projects.json`` turned around: slug -> project path."""
        raw = _read_text(self.home / PROJECTS_FILE)
        if raw is None:
            return {}
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            log.warning(
                "%s is not JSON; project paths come from .project_root alone",
                self.home / PROJECTS_FILE,
            )
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {
            slug: path
            for path, slug in projects.items()
            if isinstance(path, str) and isinstance(slug, str)
        }

    def parse_registry(self, data: bytes) -> RegistryEntry | None:
        return None  # Gemini CLI keeps no live-session registry file

    def is_client_process(self, proc: ProcessInfo) -> bool:
        args = gemini_args(proc)
        if args is None:
            return False
        words = positionals(args, _VALUE_OPTIONS)
        if any(a in _ONE_SHOT_OPTIONS for a in _options(args)):
            return False
        return not words or words[0] not in _OTHER_SUBCOMMANDS

    def process_session_hint(self, proc: ProcessInfo) -> str | None:
        args = gemini_args(proc)
        if args is None:
            return None
        value = option_value(args, "-r", "--resume") or option_value(args, "--session-id")
        return value.lower() if value is not None and is_uuid(value) else None

    def process_cwd(self, proc: ProcessInfo) -> str | None:
        return proc.cwd


# -- command lines ---------------------------------------------------------------------------

# Subcommands that manage the CLI rather than run a session.
_OTHER_SUBCOMMANDS = frozenset({"mcp", "extensions", "extension", "skills", "hooks", "help"})
# Options that print something and exit.
_ONE_SHOT_OPTIONS = frozenset(
    {
        "-h",
        "--help",
        "-v",
        "--version",
        "--list-sessions",
        "--delete-session",
        "--list-extensions",
        "-l",
    }
)
_VALUE_OPTIONS = frozenset(
    {
        "-m",
        "--model",
        "-p",
        "--prompt",
        "-i",
        "--prompt-interactive",
        "-r",
        "--resume",
        "--approval-mode",
        "-e",
        "--extensions",
        "--include-directories",
        "-o",
        "--output-format",
        "--allowed-tools",
        "--allowed-mcp-server-names",
        "--delete-session",
        "-w",
        "--worktree",
        "--policy",
        "--session-id",
    }
)


def gemini_args(proc: ProcessInfo) -> list[str] | None:
    """The arguments after Gemini CLI's script (``node [opts] .../gemini args``); None if the
    process is not Gemini CLI."""
    argv = list(proc.cmdline)
    if not argv:
        return None
    program = program_name(argv[0])
    if program == "gemini":
        return argv[1:]
    if program not in JS_RUNTIMES:
        return None
    script = next((i for i, arg in enumerate(argv[1:], 1) if not arg.startswith("-")), None)
    if script is None:
        return None
    path = argv[script].replace("\\", "/")
    name = program_name(path)
    if name in ("gemini", "gemini.js", "gemini.mjs") or (
        name == "index.js" and "/gemini-cli/" in path
    ):
        return argv[script + 1 :]
    return None


def _options(args: list[str]) -> list[str]:
    return [
        a.split("=", 1)[0]
        for a in args[: args.index("--") if "--" in args else None]
        if a.startswith("-")
    ]


def _read_text(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None
