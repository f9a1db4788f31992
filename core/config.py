"""Where things live for this user: agent homes and agentbar's data dir (pure; any thread).

Agent homes follow the agents' own rules (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``);
agentbar's data dir is platformdirs' user data dir unless ``AGENTBAR_DATA_DIR`` says otherwise,
its config dir (the tray's ``settings.toml``) the user config dir unless ``AGENTBAR_CONFIG_DIR``
does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from agentbar.core.model import Agent
from agentbar.core.sources.base import AgentSource
from agentbar.core.agents.claude.files import ClaudeSource, default_claude_roots
from agentbar.core.agents.codex.files import CodexSource, default_codex_home
from agentbar.core.sources.hook_events import HookEventsSource, events_dir

APP_NAME = "agentbar"


@dataclass(frozen=True, slots=True)
class Settings:
    claude_roots: tuple[Path, ...]
    codex_home: Path
    data_dir: Path
    config_dir: Path | None = None  # None: agentbar's files there are not looked after

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            claude_roots=tuple(default_claude_roots(env)),
            codex_home=default_codex_home(env),
            data_dir=data_dir(env),
            config_dir=config_dir(env),
        )

    @property
    def index_path(self) -> Path:
        return self.data_dir / "index.sqlite3"

    @property
    def lock_path(self) -> Path:
        return self.data_dir / "engine.lock"

    @property
    def server_path(self) -> Path:
        """Where a running ``agentbar serve`` says where it is (mode 0600)."""
        return self.data_dir / "server.json"

    @property
    def agent_roots(self) -> tuple[Path, ...]:
        """The folders whose files the server and exports may read (the agents' own)."""
        return (*self.claude_roots, self.codex_home)

    def events_dir(self, agent: Agent) -> Path:
        """Where agentbar's hook program writes ``agent``'s events."""
        return events_dir(self.data_dir, agent)

    def sources(self) -> list[AgentSource]:
        return [
            *(ClaudeSource(root) for root in self.claude_roots),
            CodexSource(self.codex_home),
            *(HookEventsSource(self.data_dir, agent) for agent in Agent),
        ]


def data_dir(env: Mapping[str, str]) -> Path:
    override = env.get("AGENTBAR_DATA_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir(env: Mapping[str, str]) -> Path:
    override = env.get("AGENTBAR_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
