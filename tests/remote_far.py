"""A remote host made of a local command: the real ``agentbar channel`` run under its own
``HOME`` and data dir with ``env``, as ``docker exec -i C`` or ``wsl.exe -d D`` would run it on
the other side of their pipe (this machine runs no docker daemon and no WSL) (test thread)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
import psutil
from claude_lines import ClaudeTranscript, registry, write_lines
from engine_harness import new_transcript
from launch_rig import FAKE_AGENT

from agentbar.core.config import Settings
from agentbar.core.remote.remotes import Remote


@dataclass
class FarHome:
    """The far side's machine: its HOME (agents' files), its agentbar data dir."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def config(self) -> Path:
        return self.root / "config"

    def remote(self, name: str = "box", program: str = "agentbar.tray") -> Remote:
        """The remote as settings.toml would hold it: ``env ... python -m`` reaches "the
        machine", and ``agentbar.tray channel`` runs there."""
        command = (
            "env",
            f"HOME={self.home}",
            f"AGENTBAR_DATA_DIR={self.data}",
            f"AGENTBAR_CONFIG_DIR={self.config}",
            f"PATH={os.environ.get('PATH', '')}",
            # Its agents, when one is launched there: the launch tests' scripted CLI.
            f"AGENTBAR_CLAUDE={sys.executable} {FAKE_AGENT} --agent claude",
            sys.executable,
            "-m",
        )
        return Remote(name, command, program)

    def claude(self, session_id: str, cwd: str, prompt: str, *, start: float) -> Path:
        t = new_transcript(session_id, cwd, start=start)
        path = self.transcript_path(session_id, cwd)
        write_lines(path, [t.prompt(prompt), t.text("Done.", stop_reason="end_turn")])
        return path

    def transcript_path(self, session_id: str, cwd: str) -> Path:
        return self.home / ".claude" / "projects" / cwd.replace("/", "-") / f"{session_id}.jsonl"

    def live(self, session_id: str, cwd: str, prompt: str) -> tuple[ClaudeTranscript, Path]:
        """A live Claude session (a registry naming this test's process) that runs."""
        t = new_transcript(session_id, cwd, start=time.time())
        path = self.transcript_path(session_id, cwd)
        write_lines(path, [t.prompt(prompt)])
        self.set_status(session_id, cwd, "busy")
        return t, path

    def set_status(self, session_id: str, cwd: str, status: str, **extra: str) -> None:
        folder = self.home / ".claude" / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        doc = registry(
            os.getpid(), session_id, status=status, cwd=cwd, started_at=time.time(), **extra
        )
        (folder / f"{os.getpid()}.json").write_bytes(orjson.dumps(doc))


def make_far(root: Path) -> FarHome:
    far = FarHome(root)
    far.home.mkdir(parents=True)
    return far


def near_settings(near: Path, far: FarHome, name: str = "box") -> Settings:
    """This machine's settings under ``near`` (its HOME, data and config dirs) with ``far`` as
    the one remote in its settings.toml, named ``name``."""
    config = near / "config"
    config.mkdir(parents=True, exist_ok=True)
    remote = far.remote(name)
    command = ", ".join(f'"{part}"' for part in remote.command)
    (config / "settings.toml").write_text(
        f'[[remotes]]\nname = "{name}"\ncommand = [{command}]\nagentbar = "{remote.program}"\n'
    )
    return Settings.from_env(
        {
            "HOME": str(near / "home"),
            "AGENTBAR_DATA_DIR": str(near / "data"),
            "AGENTBAR_CONFIG_DIR": str(config),
        }
    )


_OLDER_FAR = """
import sys

from agentbar.core.remote import far
from agentbar.tray.__main__ import main

_init = far.FarSide.__init__


def _older(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    for op in {ops!r}:
        self._ops.pop(op, None)


far.FarSide.__init__ = _older
sys.exit(main())
"""


def older_far(*ops: str) -> str:
    """The source of an agentbar from before the far side's calls ``ops``, as a channel's far
    side (its module, for ``settings_with_far_module``)."""
    return _OLDER_FAR.format(ops=ops)


def settings_with_far_module(far: FarHome, tmp_path: Path, name: str, source: str) -> Settings:
    """This machine's settings under ``tmp_path / "near"`` whose remote ``box`` runs the
    module ``name`` (``source``) as its agentbar there, instead of the installed one."""
    modules = tmp_path / "modules"
    modules.mkdir(exist_ok=True)
    (modules / f"{name}.py").write_text(source)
    near = tmp_path / "near"
    near_settings(near, far)
    toml = near / "config" / "settings.toml"
    toml.write_text(
        toml.read_text()
        .replace('"env", ', f'"env", "PYTHONPATH={modules}", ')
        .replace('agentbar = "agentbar.tray"', f'agentbar = "{name}"')
    )
    env = {"HOME": str(near / "home"), "AGENTBAR_DATA_DIR": str(near / "data"),
           "AGENTBAR_CONFIG_DIR": str(near / "config")}  # fmt: skip
    return Settings.from_env(env)


def end_far_agents(far: FarHome) -> list[str]:
    """End what still runs in the far home's folders (an agent launched there outlives its
    channel, as a task does on a real host), and say what it was."""
    ended: list[str] = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if Path(proc.cwd()).is_relative_to(far.root):
                ended.append(" ".join(proc.cmdline()))
                proc.kill()
    return ended
