"""Launched agents for real: a throwaway HOME, a live engine over it (watchers, ticker, the real
process table), a TaskManager whose agents are ``fake_agent.py`` in real PTYs, with
agentbar's real hook program as their per-launch hooks."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from polling import wait_for

from agentbar.core.agents.claude import AGENT as CLAUDE
from agentbar.core.config import Settings
from agentbar.core.decisions import DecisionBook
from agentbar.core.launch.manager import TaskManager
from agentbar.core.launch.options import LaunchOptions
from agentbar.core.launch.request import LaunchRequest
from agentbar.core.launch.task import TaskInfo
from agentbar.core.model import Agent, SessionKey, SessionSnapshot
from agentbar.core.service import Service

FAKE_AGENT = Path(__file__).resolve().parent / "fake_agent.py"


def fake_programs() -> dict[Agent, tuple[str, ...]]:
    return {
        agent: (sys.executable, str(FAKE_AGENT), "--agent", str(agent))
        for agent in (Agent("claude"), Agent("codex"))
    }


def zombies_of_this_process() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


@dataclass
class LaunchRig:
    root: Path
    home: Path
    project: Path
    settings: Settings
    env: dict[str, str]
    service: Service | None = None
    managers: list[TaskManager] = field(default_factory=list)

    def manager(
        self, *, engine: bool = True, decisions: DecisionBook | None = None, **options: Any
    ) -> TaskManager:
        opts = LaunchOptions(programs=fake_programs(), **options)
        link = self.service.engine if engine and self.service is not None else None
        manager = TaskManager(
            self.settings, engine=link, options=opts, env=self.env, decisions=decisions
        )
        manager.start()
        self.managers.append(manager)
        return manager

    def launch(
        self, manager: TaskManager, agent: Agent = CLAUDE, prompt: str | None = None
    ) -> TaskInfo:
        return manager.launch(LaunchRequest(agent, str(self.project), prompt=prompt))

    def bound(self, manager: TaskManager, task_id: str, timeout: float = 10.0) -> TaskInfo:
        def check() -> TaskInfo | None:
            info = manager.get(task_id)
            return info if info.binding is not None and info.binding.confirmed else None

        return wait_for(check, timeout, f"task {task_id} binding")

    def session(self, info: TaskInfo) -> SessionSnapshot | None:
        assert self.service is not None and info.session_id is not None
        key = SessionKey(info.agent, info.session_id)
        return next((s for s in self.service.engine.sessions() if s.key == key), None)

    def state(
        self, info: TaskInfo, check: Callable[[SessionSnapshot], bool], timeout: float = 10.0
    ) -> SessionSnapshot:
        def look() -> SessionSnapshot | None:
            snap = self.session(info)
            return snap if snap is not None and check(snap) else None

        return wait_for(look, timeout, "the session's state")

    @contextmanager
    def serving(self, manager: TaskManager, quits: list[str] | None = None) -> Iterator[Any]:
        """A loopback server over the engine and ``manager`` (``quits``: what
        ``POST /api/quit`` asked for)."""
        from agentbar.core.replay.files import AgentRoots
        from agentbar.core.server.runner import LoopbackServer

        assert self.service is not None
        server = LoopbackServer(
            self.service.engine,
            AgentRoots(self.settings.agent_roots),
            kits=self.settings.kits,
            tasks=manager,
            quit=None if quits is None else quits.append,
        )
        server.start()
        try:
            yield server
        finally:
            server.stop()

    def close(self) -> None:
        for manager in self.managers:
            manager.shutdown(keep=False)
        if self.service is not None:
            self.service.close()


@contextmanager
def launch_rig(tmp_path: Path, *, engine: bool = True, **knobs: str) -> Iterator[LaunchRig]:
    home, data, project = tmp_path / "home", tmp_path / "data", tmp_path / "project"
    for folder in (home, data, project):
        folder.mkdir(parents=True)
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "AGENTBAR_DATA_DIR": str(data),
        **{f"FAKE_AGENT_{k.upper()}": v for k, v in knobs.items()},
    }
    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data)})
    rig = LaunchRig(root=tmp_path, home=home, project=project, settings=settings, env=env)
    if engine:
        rig.service = Service.open(settings, tick_seconds=0.5)
        rig.service.start()
        rig.service.engine.ready.wait(10)
    try:
        yield rig
    finally:
        rig.close()
