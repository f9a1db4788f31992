"""The save after each batch takes only the rows marked since the last one (``core/unsaved.py``)
and the binder matches only the sessions that can bind after a process change: both must do
exactly what scanning every stream and session did. Random operations on the tables, a real
engine over real files whose index is compared with a full rewrite of it after every step, and
random process tables against the whole-table match."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from claude_lines import T0, registry, write_lines
from engine_harness import Rig, make_rig, new_transcript

from agentbar.core.clock import FakeClock
from agentbar.core.facts import SessionFacts
from agentbar.core.index import Index
from agentbar.core.index_writer import session_row, stream_row
from agentbar.core.model import Agent, Process, SessionKey
from agentbar.core.process_binding import ProcessBinder
from agentbar.core.procs import FakeProcessTable
from agentbar.core.session_record import SessionRecord, SessionTable
from agentbar.core.sources.base import ProcessInfo
from agentbar.core.state.hooks import HookState
from agentbar.core.streams import Stream, StreamTable

CLAUDE, CODEX = Agent("claude"), Agent("codex")


@pytest.fixture
def rig(tmp_path: Path) -> Any:
    r = make_rig(tmp_path)
    yield r
    r.close()


def _scan_and_clear(rows: list[Any]) -> list[Any]:
    """The old way: every row of the table still marked, then unmarked as a save does."""
    found = [r for r in rows if r.unsaved]
    for r in found:
        r.unsaved = False
    return found


@pytest.mark.parametrize("seed", range(8))
def test_taking_the_marked_rows_gives_what_a_scan_of_every_row_finds(rig: Rig, seed: int) -> None:
    rng = random.Random(seed)
    streams = StreamTable(rig.settings.sources())
    sessions = SessionTable()
    paths = [rig.transcript_path(f"{n:08d}-0000-4000-8000-000000000000") for n in range(12)]
    keys = [SessionKey(CLAUDE, f"s{n}") for n in range(12)]
    for _ in range(400):
        op = rng.random()
        path, key = rng.choice(paths), rng.choice(keys)
        if op < 0.25:  # a new stream or session, or one replacing another under its name
            found = streams.classify(path)
            assert found is not None
            source, spec = found
            stream = Stream(spec=spec, source=source, parser=source.parser(spec, None))
            stream.unsaved = rng.random() < 0.7
            streams.add(stream)
            record = SessionRecord(key, unsaved=rng.random() < 0.7)
            sessions.add(record)
        elif op < 0.35:
            gone = streams.get(str(path))
            if gone is not None:
                streams.remove(gone)
            if key in sessions:
                sessions.remove(key)
        elif op < 0.75:  # marked, or unmarked (as the live-first phase does), or marked twice
            s = streams.get(str(path))
            if s is not None:
                s.unsaved = rng.random() < 0.8
            r = sessions.get(key)
            if r is not None:
                if rng.random() < 0.5:
                    sessions.changed(r)
                else:
                    r.unsaved = rng.random() < 0.5
        elif op < 0.9:  # a save
            assert streams.take_unsaved() == _scan_and_clear(list(streams))
            assert sessions.take_unsaved() == _scan_and_clear(list(sessions))
        else:  # a save that failed: everything taken comes back
            taken = streams.take_unsaved()
            streams.unsaved.put_back(taken)
            assert streams.take_unsaved() == [s for s in streams if s.unsaved]
            streams.unsaved.put_back(taken)
    assert streams.take_unsaved() == _scan_and_clear(list(streams))
    assert sessions.take_unsaved() == _scan_and_clear(list(sessions))


def _full_rewrite(rig: Rig, tmp: Path) -> tuple[Any, Any]:
    """The index a full scan writes from the engine's memory, read back."""
    engine = rig.engine
    assert engine is not None
    writer = engine._writer
    index = Index.open(tmp / f"full-{random.random()}.db")
    try:
        index.replace_all(
            [*(stream_row(s) for s in engine.streams), *writer._cursor_rows()],
            [session_row(s) for s in engine._sessions],
        )
        return index.load()
    finally:
        index.close()


def _assert_saved_as_a_full_scan_would(rig: Rig, tmp: Path) -> None:
    engine = rig.engine
    assert engine is not None
    assert [s.path for s in engine.streams if s.unsaved] == []  # nothing left behind
    assert [r.key for r in engine._sessions if r.unsaved] == []
    assert engine.index.load() == _full_rewrite(rig, tmp)


def test_the_index_after_each_change_equals_a_full_rewrite(rig: Rig, tmp_path: Path) -> None:
    """A real engine over real files: new sessions, appends, a process bound and lost, a
    registry, a rewritten and a deleted file, ticks and full rescans; after every step the
    saved index is the one a scan of every stream and session would have written."""
    rng = random.Random(7)
    ids = [f"{n:08x}-0000-4000-8000-{n:012x}" for n in range(1, 9)]
    transcripts = {sid: new_transcript(sid, f"/work/p{n % 3}") for n, sid in enumerate(ids)}
    paths = {sid: rig.transcript_path(sid, f"-work-p{n % 3}") for n, sid in enumerate(ids)}
    for sid in ids[:4]:
        write_lines(paths[sid], [transcripts[sid].prompt("hello")])
    rig.open(full_rescan_seconds=10)
    _assert_saved_as_a_full_scan_would(rig, tmp_path)
    for step in range(60):
        sid = rng.choice(ids)
        t, path = transcripts[sid], paths[sid]
        op = rng.randrange(8)
        if op <= 2:
            rig.write(path, rng.choice([t.prompt(f"p{step}"), t.text(f"t{step}")]))
        elif op == 3:
            rig.write(path, t.turn_duration())
        elif op == 4:
            pid = 5000 + ids.index(sid)
            if rng.random() < 0.5:
                rig.claude_process(pid, t.cwd, "--resume", sid)
            else:
                rig.processes.remove(pid)
            rig.tick(2)
        elif op == 5 and path.exists():
            if rng.random() < 0.5:
                path.unlink()
            else:
                write_lines(path, [t.prompt(f"again {step}")], mode="wb")  # rewritten
            rig.touch(path)
        elif op == 6:
            reg = rig.claude / "sessions" / f"{6000 + ids.index(sid)}.json"
            rig.claude_process(6000 + ids.index(sid), t.cwd)
            rig.write_json(reg, registry(6000 + ids.index(sid), sid, status="busy", cwd=t.cwd))
        else:
            rig.tick(rng.choice([2, 11]))  # ticks, and full rescans
        rig.settle()
        _assert_saved_as_a_full_scan_would(rig, tmp_path)


def _proc(pid: int, name: str, cwd: str, create: float, *args: str) -> ProcessInfo:
    return ProcessInfo(
        pid=pid, ppid=1, create_time=create, name=name, cmdline=(name, *args), cwd=cwd
    )


def _binding(table: SessionTable) -> list[tuple[SessionKey, Process | None, bool | None, bool]]:
    return [(r.key, r.process, r.alive, r.had_process) for r in table]


def _random_world(rng: random.Random, now: float) -> tuple[SessionTable, list[ProcessInfo]]:
    """Sessions of two agents in a few folders: cold ones (ended long ago, dead), warm ones,
    bound ones, some with a hook's pid; and running client processes, some resuming."""
    table = SessionTable()
    procs: list[ProcessInfo] = []
    for n in range(40):
        agent = rng.choice([CLAUDE, CODEX])
        key = SessionKey(agent, f"{n:08x}-0000-4000-8000-{n:012x}")
        cwd = f"/work/p{rng.randrange(4)}"
        last = now - rng.choice([3, 30, 600, 86400 * 3])
        record = SessionRecord(
            key,
            facts=SessionFacts(project=cwd, started_at=last - 100, last_activity=last),
            alive=rng.choice([None, False, False, True]),
            had_process=rng.random() < 0.5,
            unsaved=False,
            undecided=rng.random() < 0.3,
        )
        if record.alive and rng.random() < 0.7:
            pid = 100 + n
            procs.append(_proc(pid, str(agent), cwd, last - 200))
            record.process = Process(pid=pid, create_time=last - 200)
        if rng.random() < 0.15:
            pid = 300 + n
            record.hooks = HookState(pid=pid, pid_at=now - 5, cwd=cwd)
            if rng.random() < 0.5:
                procs.append(_proc(pid, str(agent), cwd, now - 50))
        table.add(record)
    for n in range(rng.randrange(5)):  # running clients no session holds yet, some resuming
        target = rng.choice(list(table))  # (an old one, written before the client started)
        agent, resumed = target.key.agent, target.key.session_id
        args = (("--resume", resumed) if agent == CLAUDE else ("resume", resumed)) * (
            rng.random() < 0.4
        )
        started = now - rng.choice([20, 603, 700, 90000])  # (603: just before a write)
        procs.append(_proc(500 + n, str(agent), f"/work/p{rng.randrange(4)}", started, *args))
    table.touched.clear()
    return table, procs


@pytest.mark.parametrize("seed", range(60))
def test_after_a_process_change_the_warm_sessions_bind_as_the_whole_table_does(
    rig: Rig, seed: int
) -> None:
    """The engine hands the binder its warm sessions (every one bound, not known dead, fresh
    or undecided); after a change in the process table the binder also looks at the cold
    ones that could bind. The result must be the whole table's, session by session."""
    now = T0 + 10_000
    sources = rig.settings.sources()
    clients = {s.agent: s for s in sources if s.finds_processes and s.agent in (CLAUDE, CODEX)}
    results = []
    for whole in (True, False):
        table, procs = _random_world(random.Random(seed), now)
        processes = FakeProcessTable(procs)
        binder = ProcessBinder(table, processes, clients, FakeClock(now))
        warm = [
            r
            for r in table
            if r.process is not None
            or r.alive is not False
            or r.undecided
            or ProcessBinder._fresh(r, now)
        ]
        binder.check(full=True, among=None if whole else warm)
        results.append((_binding(table), sorted(map(str, table.touched))))
    assert results[0] == results[1]
