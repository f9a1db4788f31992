"""What agentbar installs: the hook command, and the events each agent runs it for (pure).

The command is ``<python> -I -S <abs path>/agentbar_hook.py --agent <agent> --data-dir <dir>``:
the Python that runs agentbar (standard library only is needed, ``-I -S`` keeps the user's
environment and site packages out and start-up fast), the script shipped in
``agentbar.assets.hooks``, and agentbar's data dir baked in. agentbar finds its own entries
again by the script's file name (``MARKER``), whatever folder it was installed from.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentbar.assets import hooks as hook_assets
from agentbar.core.model import Agent

MARKER = "agentbar_hook.py"
TIMEOUT_SECONDS = 5  # the hook takes ~20 ms; a hung file system must not hold the agent long

# Claude Code events and the first version that has each (agent-formats.md 2.5 and 6). Claude
# validates its settings, so an event an older build does not know is left out for that build.
CLAUDE_EVENTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("SessionStart", (1, 0, 62)),
    ("UserPromptSubmit", (1, 0, 54)),
    ("PreToolUse", (1, 0, 38)),
    ("PostToolUse", (1, 0, 38)),
    ("PostToolUseFailure", (2, 1, 33)),  # between 2.1.10 and 2.1.33; the later, to be safe
    ("PermissionRequest", (2, 0, 45)),
    ("Notification", (1, 0, 38)),
    ("Stop", (1, 0, 38)),
    ("StopFailure", (2, 1, 78)),
    ("SubagentStop", (1, 0, 41)),
    ("SessionEnd", (1, 0, 85)),
)
# Codex events (agent-formats.md 4.3). Codex ignores hook events it does not know (its hooks
# table has no deny_unknown_fields), so the newer ones are written for every version and start
# working when Codex does.
CODEX_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "SessionEnd",
    "Interrupt",
    "StopFailure",
)
CODEX_HOOKS_DEFAULT_ON = (0, 124, 0)  # hooks on by default from here; before, [features]


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``2.1.197 (Claude Code)`` or ``codex-cli 0.171.0`` -> (2, 1, 197) / (0, 171, 0)."""
    if not text:
        return None
    for word in text.replace("v", " ").split():
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts[:3]):
            return tuple(int(p) for p in parts[:3])
    return None


def claude_events(version: str | None) -> list[str]:
    """The events to hook for this Claude Code version (all of them when it is unknown)."""
    parsed = parse_version(version)
    return [name for name, first in CLAUDE_EVENTS if parsed is None or parsed >= first]


def detect_version(
    agent: Agent, timeout: float = 15.0, program: Sequence[str] | None = None
) -> str | None:
    """``claude --version`` / ``codex --version`` (or ``<program> --version``), or None when it
    cannot be run."""
    try:
        result = subprocess.run(
            [*(program or [str(agent)]), "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = result.stdout.strip() or result.stderr.strip()
    return text if result.returncode == 0 and parse_version(text) else None


def hook_script() -> Path:
    """The hook program shipped with this agentbar."""
    return Path(hook_assets.__file__).resolve().parent / "agentbar_hook.py"


@dataclass(frozen=True, slots=True)
class HookCommand:
    """How the agents run agentbar's hook program."""

    python: str
    script: str
    data_dir: str

    @classmethod
    def current(cls, data_dir: Path) -> HookCommand:
        """This agentbar's Python and script, and ``data_dir``."""
        return cls(
            python=os.path.abspath(sys.executable),
            script=str(hook_script()),
            data_dir=os.path.abspath(data_dir),
        )

    def argv(self, agent: Agent, *, notify: bool = False) -> list[str]:
        args = [self.python, "-I", "-S", self.script, "--agent", str(agent)]
        args += ["--data-dir", self.data_dir]
        return [*args, "--notify"] if notify else args

    def shell(self, agent: Agent) -> str:
        """The command as one string, quoted for the shell the agent runs hooks with (POSIX
        ``sh``; on Windows, quoted for ``cmd``/Git Bash alike)."""
        argv = self.argv(agent)
        if sys.platform == "win32":
            return subprocess.list2cmdline(argv)
        else:
            return shlex.join(argv)

    def handler(self, agent: Agent) -> dict[str, object]:
        """One hook handler entry, the same shape for both agents."""
        return {"type": "command", "command": self.shell(agent), "timeout": TIMEOUT_SECONDS}


def command_of(handler: object) -> str | None:
    if not isinstance(handler, dict):
        return None
    command = handler.get("command")
    return command if isinstance(command, str) else None


def is_ours(handler: object) -> bool:
    """An agentbar handler, from this installation or an earlier one."""
    command = command_of(handler)
    return command is not None and MARKER in command


def codex_event_label(event: str) -> str:
    """Codex's label for an event in its hook keys: ``PreToolUse`` -> ``pre_tool_use``."""
    out: list[str] = []
    for i, char in enumerate(event):
        if char.isupper() and i:
            out.append("_")
        out.append(char.lower())
    return "".join(out)
