"""The settings file agentbar's hooks go into for one agent, and what is found there (values;
main thread)."""

from __future__ import annotations

import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Agent


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


def command_notes(found: set[str], wanted: str, also: Collection[str] = ()) -> list[str]:
    """What is wrong with the agentbar commands ``found`` in a settings file, against the one
    this agentbar would install (``wanted``; ``also``: the others it installs, for an event
    with a command line of its own)."""
    notes = []
    for installed in sorted(found):
        argv = _split(installed)
        if installed != wanted and installed not in also:
            notes.append(mismatch_note(argv, _split(wanted), installed))
        files = [argv[0], argv[3]] if len(argv) > 3 else []
        if "--translate" in argv[:-1]:
            files.append(argv[argv.index("--translate") + 1])
        for path in files:
            if not Path(path).exists():
                notes.append(f"broken: {path} no longer exists (run install again)")
    return notes


def mismatch_note(installed: list[str], wanted: list[str], shown: str) -> str:
    """What to say of an agentbar command (``installed``) that is not the one this agentbar
    would install (``wanted``): an earlier version's, or another installation's."""
    data_dir = _data_dir(wanted)
    if data_dir is not None and installed[:4] == wanted[:4] and _data_dir(installed) == data_dir:
        # The same Python, hook script and data dir: this installation, in the form an earlier
        # version wrote (what the agent's kit puts on the command line has changed since).
        fix = "run `agentbar hooks install` to update it"
        return f"outdated: written by an earlier version of agentbar ({fix}): {shown}"
    return f"installed by another agentbar (run install again): {shown}"


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _data_dir(argv: list[str]) -> str | None:
    if "--data-dir" in argv[:-1]:
        return argv[argv.index("--data-dir") + 1]
    return None
