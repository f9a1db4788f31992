"""Where things live for this user: agent homes and agentbar's data dir (pure; any thread).

Agent homes follow the agents' own rules (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...),
as each agent's kit reads them (``AgentKit.homes``); the kits are the composition root's
(``agentbar.core.agents.registry``) unless a caller hands others;
agentbar's data dir is platformdirs' user data dir unless ``AGENTBAR_DATA_DIR`` says otherwise,
its config dir (the tray's ``settings.toml``) the user config dir unless ``AGENTBAR_CONFIG_DIR``
does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from . import options
from .agents import registry
from .agents.base import AgentKit, by_agent, display_names, replay_adapters
from .model import Agent
from .replay.model import ReplayAdapter
from .sources.base import AgentSource
from .sources.hook_events import HookEventsSource, events_dir
from .state.fusion import AgentTraits

APP_NAME = "agentbar"


@dataclass(frozen=True, slots=True)
class Settings:
    # Each agent's folders, most important first (``AgentKit.homes``: Claude's config roots,
    # ``CODEX_HOME``...); an agent missing here has none on this machine.
    homes: Mapping[Agent, tuple[Path, ...]]
    data_dir: Path
    config_dir: Path | None = None  # None: agentbar's files there are not looked after
    # The agents this agentbar knows: the composition root's list, read when settings are made.
    kits: tuple[AgentKit, ...] = field(default_factory=lambda: registry.KITS)

    def __post_init__(self) -> None:
        by_agent(self.kits)  # two kits for one agent: a ValueError now, not a mix-up later

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, kits: tuple[AgentKit, ...] | None = None
    ) -> Settings:
        env = os.environ if env is None else env
        kits = registry.KITS if kits is None else kits
        return cls(
            homes={kit.agent: kit.homes(env) for kit in kits},
            data_dir=data_dir(env),
            config_dir=config_dir(env),
            kits=kits,
        )

    @property
    def agents(self) -> tuple[Agent, ...]:
        return tuple(kit.agent for kit in self.kits)

    def kit(self, agent: str) -> AgentKit:
        """The kit of ``agent`` (a wire name); ``UnknownAgent`` when no kit has it."""
        found = by_agent(self.kits).get(Agent(agent))
        if found is None:
            raise UnknownAgent(agent, self.agents)
        return found

    def traits(self) -> dict[Agent, AgentTraits]:
        """Each agent's state traits, for the engine."""
        return {kit.agent: kit.traits for kit in self.kits}

    def process_names(self) -> frozenset[str]:
        """The starts of the process names any agent's client may have."""
        return frozenset(name for kit in self.kits for name in kit.process_names)

    def display_names(self) -> dict[Agent, str]:
        """What a person calls each agent ("Claude Code")."""
        return display_names(self.kits)

    def replay_adapters(self) -> dict[Agent, ReplayAdapter]:
        """Each agent's replay adapter, for ``Replay``: agents without one are left out."""
        return replay_adapters(self.kits)

    def homes_of(self, agent: Agent) -> tuple[Path, ...]:
        return tuple(self.homes.get(agent, ()))

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
    def options_path(self) -> Path | None:
        """``settings.toml``: the engine's options in it (``options.py``), the tray's too."""
        return None if self.config_dir is None else self.config_dir / options.FILE_NAME

    def options(self) -> options.Options:
        """The engine's options as the file says now (defaults when there is none)."""
        return options.load(self.options_path)

    @property
    def agent_roots(self) -> tuple[Path, ...]:
        """The folders whose files the server and exports may read (the agents' own)."""
        return tuple(path for kit in self.kits for path in self.homes_of(kit.agent))

    def events_dir(self, agent: Agent) -> Path:
        """Where agentbar's hook program writes ``agent``'s events."""
        return events_dir(self.data_dir, agent)

    def sources(self) -> list[AgentSource]:
        """Every agent's file sources, then agentbar's hook events for each agent."""
        found: list[AgentSource] = []
        for kit in self.kits:
            found += kit.sources(self.homes_of(kit.agent))
        return [*found, *(HookEventsSource(self.data_dir, kit.agent) for kit in self.kits)]


class UnknownAgent(ValueError):
    """A name no agent kit has (from a request, a command line or a stored row)."""

    def __init__(self, name: str, known: tuple[Agent, ...]) -> None:
        super().__init__(f"unknown agent {name!r} (known: {', '.join(known)})")
        self.name = name


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
