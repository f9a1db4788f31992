"""How this agentbar launches agents: which programs, what terminal size, which hooks (pure).

Each agent's launch profile names the variable that says which program to run for it
(``AGENTBAR_CLAUDE``, ``AGENTBAR_CODEX``...: a path, or a command line split like a shell would:
``"node /opt/claude/cli.js"``); by default its wire name on ``PATH`` (``claude``, ``codex``).
``AGENTBAR_CODEX_BYPASS_HOOK_TRUST=1`` lets launched agents that review hooks first (Codex) run
agentbar's session-flag hooks without that review (``agents/codex/launch.py`` says why that is
only for a known hook set).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..agents.base import AgentKit
from ..model import Agent

DEFAULT_ROWS, DEFAULT_COLS = 50, 220  # a wide terminal, as Nezha's; the window resizes it
BYPASS_HOOK_TRUST_ENV = "AGENTBAR_CODEX_BYPASS_HOOK_TRUST"


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    programs: Mapping[Agent, tuple[str, ...]] = field(default_factory=dict)
    rows: int = DEFAULT_ROWS
    cols: int = DEFAULT_COLS
    hooks: bool = True  # agentbar's hooks as a per-launch layer
    bypass_hook_trust: bool = False
    scrape_status: bool = True  # allow /status typed into our own PTY as the last resort
    extra_env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str], kits: Iterable[AgentKit]) -> LaunchOptions:
        programs = {}
        for kit in kits:
            if kit.launch is None:
                continue
            value = env.get(kit.launch.program_env, "").strip()
            if value:
                programs[kit.agent] = tuple(shlex.split(value))
        bypass = env.get(BYPASS_HOOK_TRUST_ENV, "") in ("1", "true", "yes")
        return cls(programs=programs, bypass_hook_trust=bypass)

    def program(self, agent: Agent) -> tuple[str, ...]:
        return self.programs.get(agent) or (str(agent),)
