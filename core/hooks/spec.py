"""What agentbar installs: the hook command, the same for every agent (pure).

The command is ``<python> -I -S <abs path>/agentbar_hook.py --agent <agent> [what differs for
that agent] --data-dir <dir>``: the Python that runs agentbar (standard library only is needed,
``-I -S`` keeps the user's environment and site packages out and start-up fast), the script
shipped in ``agentbar.assets.hooks``, the agent as its kit describes it (``HookCaller``: the
hook program itself names no agent) and agentbar's data dir baked in. agentbar finds its own
entries again by the script's file name (``MARKER``), whatever folder it was installed from.
The events each agent runs it for are its own package's (``agents/<agent>/events.py``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...assets import hooks as hook_assets
from ...assets.hooks.agentbar_hook_impl import is_agent_name
from ..model import Agent

MARKER = "agentbar_hook.py"
TIMEOUT_SECONDS = 5  # the hook takes ~20 ms; a hung file system must not hold the agent long


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``2.1.197 (Claude Code)`` or ``codex-cli 0.171.0`` -> (2, 1, 197) / (0, 171, 0)."""
    if not text:
        return None
    for word in text.replace("v", " ").split():
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts[:3]):
            return tuple(int(p) for p in parts[:3])
    return None


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
class HookCaller:
    """One agent as agentbar's hook program sees it: what its kit bakes into the command line,
    so that the program, which cannot read the kits, names no agent."""

    agent: Agent  # the folder its events go to: a name ``is_agent_name`` accepts
    pid_env: str | None = None  # the variable carrying the agent's pid (else: the parent)
    session_envs: tuple[str, ...] = ()  # variables carrying the session id, if none is sent
    replies: tuple[tuple[str, str], ...] = ()  # (event, what the agent needs printed for it)
    # A standard-library-only module of the agent's package, ``translate(event, payload) ->
    # (event, payload)``: its events under the names the state machine reads (state/hooks.py).
    translator: Path | None = None
    # Events whose hook holds a request and waits, at most ``hold_seconds``, for the person's
    # answer from the running agentbar (``--hold``; the hook route of ``core/decisions.py``).
    holds: tuple[str, ...] = ()
    hold_seconds: int | None = None

    def __post_init__(self) -> None:
        if not is_agent_name(self.agent):
            raise ValueError(
                f"{self.agent!r} cannot name a hook events folder: lower-case letters, digits,"
                " _ and -, a letter first, at most 32"
            )
        for event, _ in self.replies:
            if not event or "=" in event:
                raise ValueError(f"{event!r} cannot be a reply's event name")

    def args(self) -> list[str]:
        args = ["--agent", str(self.agent)]
        if self.pid_env:
            args += ["--pid-env", self.pid_env]
        for name in self.session_envs:
            args += ["--session-env", name]
        for event, text in self.replies:
            args += ["--reply", f"{event}={text}"]
        if self.translator is not None:
            args += ["--translate", str(self.translator.resolve())]
        for event in self.holds:
            args += ["--hold", event]
        if self.holds and self.hold_seconds is not None:
            args += ["--hold-seconds", str(self.hold_seconds)]
        return args


@dataclass(frozen=True, slots=True)
class HookCommand:
    """How the agents run agentbar's hook program."""

    python: str
    script: str
    data_dir: str
    # (agent, seconds): how long that agent's held events may wait for an answer from agentbar,
    # as the person chose in settings.toml (``options.py``); an agent not named holds nothing.
    agent_holds: tuple[tuple[str, int], ...] = ()

    @classmethod
    def current(cls, data_dir: Path, agent_holds: tuple[tuple[str, int], ...] = ()) -> HookCommand:
        """This agentbar's Python and script, ``data_dir``, and the holds chosen."""
        return cls(
            python=os.path.abspath(sys.executable),
            script=str(hook_script()),
            data_dir=os.path.abspath(data_dir),
            agent_holds=agent_holds,
        )

    def hold_for(self, agent: str) -> int:
        """The seconds ``agent``'s held events may wait (0: it holds nothing)."""
        return dict(self.agent_holds).get(agent, 0)

    def argv(self, caller: HookCaller | Agent, *, notify: bool = False) -> list[str]:
        """The command for ``caller`` (an agent alone: one with nothing of its own to add)."""
        if not isinstance(caller, HookCaller):
            caller = HookCaller(caller)
        args = [self.python, "-I", "-S", self.script, *caller.args()]
        args += ["--data-dir", self.data_dir]
        return [*args, "--notify"] if notify else args

    def shell(self, caller: HookCaller | Agent) -> str:
        """The command as one string, quoted for the shell the agent runs hooks with (POSIX
        ``sh``; on Windows, quoted for ``cmd``/Git Bash alike)."""
        argv = self.argv(caller)
        if sys.platform == "win32":
            return subprocess.list2cmdline(argv)
        else:
            return shlex.join(argv)

    def handler(
        self, caller: HookCaller | Agent, timeout: int = TIMEOUT_SECONDS
    ) -> dict[str, object]:
        """One hook handler entry, the same shape for every agent (``timeout``: a holding
        event's is its hold and a margin)."""
        return {"type": "command", "command": self.shell(caller), "timeout": timeout}


def command_of(handler: object) -> str | None:
    if not isinstance(handler, dict):
        return None
    command = handler.get("command")
    return command if isinstance(command, str) else None


def is_ours(handler: object) -> bool:
    """An agentbar handler, from this installation or an earlier one."""
    command = command_of(handler)
    return command is not None and MARKER in command
