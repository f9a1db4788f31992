"""A real loopback server over a real engine of fixture sessions, and an aiohttp client."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay_rig import Home

from agentbar.core.engine import Engine
from agentbar.core.launch.manager import TaskManager
from agentbar.core.replay.files import AgentRoots
from agentbar.core.search import Searcher
from agentbar.core.server.runner import LoopbackServer


@dataclass
class Running:
    home: Home
    engine: Engine
    server: LoopbackServer

    @property
    def origin(self) -> str:
        return self.server.origin

    @property
    def token(self) -> str:
        return self.server.token

    def auth(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **extra}


@contextmanager
def serving(home: Home, *, with_tasks: bool = False, **server_args: Any) -> Iterator[Running]:
    """``with_tasks``: a real task manager behind the task routes (none launched here)."""
    engine = home.caught_up()
    roots = AgentRoots(home.settings.agent_roots)
    tasks = TaskManager(home.settings, engine=engine) if with_tasks else None
    server = LoopbackServer(
        engine,
        roots,
        kits=home.settings.kits,
        searcher=Searcher(home.settings.index_path, roots=roots),
        tasks=tasks,
        **server_args,
    )
    server.start()
    try:
        yield Running(home, engine, server)
    finally:
        server.stop()
        if tasks is not None:
            tasks.shutdown(keep=False)
        engine.stop()
        engine.index.close()


def write_page(root: Path) -> Path:
    """A web folder with a page and a static file (the real one may change under us)."""
    (root / "static" / "js").mkdir(parents=True)
    (root / "index.html").write_text("<!DOCTYPE html><title>test page</title>")
    (root / "static" / "js" / "app.js").write_text("export const x = 1;\n")
    (root / "static" / "app.css").write_text("body{}\n")
    return root
