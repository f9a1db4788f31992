"""The settings file agentbar's hooks go into for one agent, and what is found there (values;
main thread)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from agentbar.core.model import Agent


@dataclass(frozen=True)
class Target:
    agent: Agent
    path: Path  # as the agent finds it
    real: Path  # symlinks resolved: what is read and written

    @property
    def shown(self) -> str:
        return str(self.path) if self.path == self.real else f"{self.path} (-> {self.real})"


@dataclass
class AgentStatus:
    agent: Agent
    target: Target
    installed: bool
    summary: str
    notes: list[str] = field(default_factory=list)


def command_notes(found: set[str], wanted: str) -> list[str]:
    """What is wrong with the agentbar commands ``found`` in a settings file, against the one
    this agentbar would install (``wanted``)."""
    notes = []
    for installed in sorted(found):
        if installed != wanted:
            notes.append(f"installed by another agentbar (run install again): {installed}")
        try:
            argv = shlex.split(installed)
        except ValueError:
            continue
        for path in (argv[0], argv[3]) if len(argv) > 3 else ():
            if not Path(path).exists():
                notes.append(f"broken: {path} no longer exists (run install again)")
    return notes
