"""How this agentbar launches agents: which programs, what terminal size, which hooks (pure).

``AGENTBAR_CLAUDE`` / ``AGENTBAR_CODEX`` name the program to run for each agent (a path, or a
command line split like a shell would: ``"node /opt/claude/cli.js"``); by default ``claude`` and
``codex`` on ``PATH``. ``AGENTBAR_CODEX_BYPASS_HOOK_TRUST=1`` lets launched Codex sessions run
agentbar's session-flag hooks without their review in ``/hooks`` (``layers.py`` says why that is
only for a known hook set).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentbar.core.model import Agent

DEFAULT_ROWS, DEFAULT_COLS = 50, 220  # a wide terminal, as Nezha's; the window resizes it
PROGRAM_ENV = {Agent.CLAUDE: "AGENTBAR_CLAUDE", Agent.CODEX: "AGENTBAR_CODEX"}


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    programs: Mapping[Agent, tuple[str, ...]] = field(default_factory=dict)
    rows: int = DEFAULT_ROWS
    cols: int = DEFAULT_COLS
    hooks: bool = True  # agentbar's hooks as a per-launch layer
    codex_bypass_hook_trust: bool = False
    scrape_status: bool = True  # allow /status typed into our own PTY as the last resort
    extra_env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LaunchOptions:
        programs = {}
        for agent, name in PROGRAM_ENV.items():
            value = env.get(name, "").strip()
            if value:
                programs[agent] = tuple(shlex.split(value))
        bypass = env.get("AGENTBAR_CODEX_BYPASS_HOOK_TRUST", "") in ("1", "true", "yes")
        return cls(programs=programs, codex_bypass_hook_trust=bypass)

    def program(self, agent: Agent) -> tuple[str, ...]:
        return self.programs.get(agent) or (str(agent),)
