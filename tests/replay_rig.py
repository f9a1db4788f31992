"""A real engine over copies of the fixture transcripts in a throwaway HOME, for replay, search,
export and server tests."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from engine_harness import Rig

from agentbar.core.agents.base import replay_adapters
from agentbar.core.agents.registry import KITS
from agentbar.core.config import Settings
from agentbar.core.engine import Engine
from agentbar.core.index import Index
from agentbar.core.model import SessionSnapshot
from agentbar.core.procs import FakeProcessTable
from agentbar.core.replay.files import AgentRoots
from agentbar.core.replay.pages import Replay

DATA = Path(__file__).parent / "data"
SYNTHETIC = DATA / "synthetic"
V10 = "10000000-0000-4000-8000-000000000001"
V20 = "20000000-0000-4000-8000-000000000002"
V21 = "30000000-0000-4000-8000-000000000003"


@dataclass
class Home(Rig):
    """The engine harness's throwaway HOME, with the fixture sessions and a replay over it."""

    def caught_up(self) -> Engine:
        """A new engine that has read everything, full-text index included."""
        engine = Engine(
            self.settings.sources(),
            Index.open(self.settings.index_path),
            processes=FakeProcessTable(),
            traits=self.settings.traits(),
        )
        engine.catch_up()
        engine.drain()  # the full-text index of what the catch-up saved
        return engine

    def replay(self) -> Replay:
        return Replay(AgentRoots(self.settings.agent_roots), replay_adapters(KITS))

    def codex_rollout(self, name: str, session_id: str) -> Path:
        """Copy a Codex fixture under sessions/ with a rollout name the engine accepts."""
        target = self.codex / "sessions" / "2026" / "11" / "29"
        target.mkdir(parents=True, exist_ok=True)
        path = target / f"rollout-2026-11-29T10-00-00-{session_id}.jsonl"
        shutil.copyfile(SYNTHETIC / "codex" / name, path)
        return path


def make_home(tmp_path: Path, *, claude: tuple[str, ...] = ("v1.0", "v2.0", "v2.1")) -> Home:
    root = tmp_path / "home"
    root.mkdir()
    settings = Settings.from_env({"HOME": str(root), "AGENTBAR_DATA_DIR": str(tmp_path / "data")})
    home = Home(home=root, settings=settings)
    for version in claude:
        shutil.copytree(SYNTHETIC / "claude" / version / "projects", home.claude / "projects",
                        dirs_exist_ok=True)  # fmt: skip
    return home


def snapshot(engine: Engine, session_id: str) -> SessionSnapshot:
    return next(s for s in engine.sessions() if s.key.session_id == session_id)
