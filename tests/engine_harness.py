"""A real engine over real files in a temporary HOME, with a fake process table and clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from claude_lines import T0, ClaudeTranscript, write_lines

from agentbar.core.agents.claude import AGENT as CLAUDE
from agentbar.core.clock import FakeClock
from agentbar.core.config import Settings
from agentbar.core.engine import Engine, PathTouched, Tick
from agentbar.core.index import Index
from agentbar.core.model import Agent, SessionKey, SessionSnapshot, StateChange
from agentbar.core.procs import FakeProcessTable
from agentbar.core.sources.base import ProcessInfo


@dataclass
class Rig:
    home: Path
    settings: Settings
    processes: FakeProcessTable = field(default_factory=FakeProcessTable)
    clock: FakeClock = field(default_factory=lambda: FakeClock(T0 + 0.5))
    events: list[StateChange] = field(default_factory=list)
    engine: Engine | None = None

    @property
    def claude(self) -> Path:
        return self.settings.homes_of(Agent("claude"))[0]

    @property
    def codex(self) -> Path:
        return self.settings.homes_of(Agent("codex"))[0]

    def open(self, **engine_args: Any) -> Engine:
        if self.engine is not None:
            self.engine.stop()
            self.engine.index.close()
        self.events = []
        engine = Engine(
            self.settings.sources(),
            Index.open(self.settings.index_path),
            processes=self.processes,
            traits=self.settings.traits(),
            clock=self.clock,
            **engine_args,
        )
        engine.subscribe(self.events.append)
        engine.catch_up()
        self.engine = engine
        return engine

    def close(self) -> None:
        if self.engine is not None:
            self.engine.stop()
            self.engine.index.close()
            self.engine = None

    # -- writing like an agent ----------------------------------------------------------------

    def transcript_path(self, session_id: str, project: str = "-work-demo") -> Path:
        return self.claude / "projects" / project / f"{session_id}.jsonl"

    def write(self, path: Path, *lines: dict[str, Any]) -> None:
        write_lines(path, list(lines))
        self.touch(path)

    def write_raw(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as fh:
            fh.write(data)
        self.touch(path)

    def write_json(self, path: Path, obj: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(obj))
        self.touch(path)

    def touch(self, path: Path) -> None:
        """What the watcher would post for this path."""
        if self.engine is not None:
            self.engine.post(PathTouched(path))

    def settle(self) -> None:
        assert self.engine is not None
        self.engine.drain()

    def tick(self, seconds: float = 2.0) -> None:
        assert self.engine is not None
        self.clock.advance(seconds)
        self.engine.post(Tick())
        self.engine.drain()

    # -- processes ----------------------------------------------------------------------------

    def claude_process(self, pid: int, cwd: str = "/work/demo", *args: str) -> ProcessInfo:
        proc = ProcessInfo(
            pid=pid,
            ppid=1,
            create_time=T0 - 60,
            name="claude",
            cmdline=("claude", *args),
            cwd=cwd,
        )
        self.processes.add(proc)
        return proc

    def codex_process(
        self, pid: int, cwd: str, *args: str, name: str = "codex", ppid: int = 1
    ) -> ProcessInfo:
        proc = ProcessInfo(
            pid=pid, ppid=ppid, create_time=T0 - 60, name=name, cmdline=(name, *args), cwd=cwd
        )
        self.processes.add(proc)
        return proc

    # -- reading back -------------------------------------------------------------------------

    def sessions(self) -> dict[str, SessionSnapshot]:
        assert self.engine is not None
        return {s.key.session_id: s for s in self.engine.sessions()}

    def state(self, session_id: str, agent: Agent = CLAUDE) -> tuple[str, str | None]:
        snap = self.sessions()[session_id]
        assert snap.key == SessionKey(agent, session_id)
        waiting = None if snap.state.waiting_for is None else str(snap.state.waiting_for)
        return str(snap.state.state), waiting

    def transitions(self) -> list[tuple[str, str | None, str]]:
        return [
            (
                e.snapshot.key.session_id[:8],
                None if e.prev is None else str(e.prev.state),
                str(e.snapshot.state.state),
            )
            for e in self.events
        ]


def make_rig(tmp_path: Path) -> Rig:
    home = tmp_path / "home"
    settings = Settings(
        homes={Agent("claude"): (home / ".claude",), Agent("codex"): (home / ".codex",)},
        data_dir=tmp_path / "data",
    )
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / ".claude" / "sessions").mkdir(parents=True)
    (home / ".codex" / "sessions").mkdir(parents=True)
    return Rig(home=home, settings=settings)


def new_transcript(session_id: str, cwd: str = "/work/demo", **kw: Any) -> ClaudeTranscript:
    return ClaudeTranscript(session_id, cwd, **kw)
