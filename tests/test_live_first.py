"""The live-first catch-up ends exactly where the serial one does (sessions, index rows, search)
on random corpora and the recorded sessions, whatever is live and whichever files are touched
while the history is read (real files, real SQLite; the engine on its own thread)."""

from __future__ import annotations

import importlib
import io
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest
from claude_lines import ClaudeTranscript, registry, write_lines
from polling import end_process, wait_for

from agentbar.core import jsonsafe, limits_text, live_first, status_cli
from agentbar.core.app import Agentbar
from agentbar.core.clock import FakeClock
from agentbar.core.config import Settings
from agentbar.core.engine import Engine, PathTouched, Tick
from agentbar.core.engine_messages import EngineStats, IndexProgress, Message
from agentbar.core.index import Index, SessionRow, StreamRow
from agentbar.core.listing import diagnostics, select
from agentbar.core.model import Agent, SessionKey, SessionSnapshot
from agentbar.core.procs import FakeProcessTable, PsutilProcessTable
from agentbar.core.search import Searcher
from agentbar.core.sources.base import ProcessInfo

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
corpus: Any = importlib.import_module("corpus")  # bench/corpus.py: the generated histories

RECORDED = REPO / "tests" / "data" / "recorded"
WORDS = ("build", "test", "error", "file", "config", "the", "return", "import", "session")
READY_SECONDS = 120.0


@dataclass(frozen=True)
class Outcome:
    """Everything a catch-up leaves: what is published, what is saved, what is found."""

    snapshots: dict[SessionKey, SessionSnapshot]
    stats: EngineStats
    streams: dict[str, StreamRow]
    sessions: dict[SessionKey, SessionRow]
    counts: dict[SessionKey, dict[str, int]]
    hits: dict[str, list[tuple[str, str, int, str]]]


def settings_for(home: Path, data: Path) -> Settings:
    return Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data)})


def engine_over(
    home: Path, data: Path, processes: FakeProcessTable, now: float, *, live_first: bool
) -> Engine:
    settings = settings_for(home, data)
    return Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=processes,
        traits=settings.traits(),
        clock=FakeClock(now),
        full_rescan_seconds=0.0,  # every tick walks everything (it must pass the history by)
        read_live_first=live_first,
    )


def outcome(engine: Engine, data: Path, home: Path) -> Outcome:
    """Stop ``engine`` (its search backlog indexed first) and read back what it left."""
    snapshots = {s.key: s for s in engine.sessions()}
    stats = engine.stats()
    engine.stop()
    engine.drain()  # the full-text slices still queued
    engine.index.close()
    settings = settings_for(home, data)
    index = Index.open(settings.index_path)
    streams, sessions = index.load()
    index.close()
    searcher = Searcher(settings.index_path)
    try:
        counts = searcher.counts()
        hits = {
            word: sorted((str(h.key), h.thread, h.offset, h.kind) for h in searcher.search(word))
            for word in WORDS
        }
    finally:
        searcher.close()
    return Outcome(snapshots, stats, streams, sessions, counts, hits)


def serial(home: Path, tmp: Path, processes: FakeProcessTable, now: float) -> Outcome:
    data = tmp / "data-serial"
    engine = engine_over(home, data, processes, now, live_first=False)
    engine.catch_up()
    engine.drain()
    return outcome(engine, data, home)


def phased(
    home: Path, tmp: Path, processes: FakeProcessTable, now: float, touched: list[Path]
) -> tuple[Outcome, list[IndexProgress]]:
    """The live-first catch-up on the engine's own thread, with file events for ``touched``
    waiting in its inbox (served between the slices of history)."""
    data = tmp / "data-phased"
    engine = engine_over(home, data, processes, now, live_first=True)
    seen: list[IndexProgress] = []
    engine.subscribe_progress(seen.append)
    for path in touched:
        engine.post(PathTouched(path))
        engine.post(Tick())
    engine.start()
    assert engine.ready.wait(READY_SECONDS)
    return outcome(engine, data, home), seen


def assert_same(got: Outcome, want: Outcome) -> None:
    assert got.snapshots.keys() == want.snapshots.keys()
    for key, snap in want.snapshots.items():
        assert got.snapshots[key] == snap, key
    assert got.sessions == want.sessions
    assert got.streams == want.streams
    assert got.counts == want.counts
    assert got.hits == want.hits
    assert got.stats == want.stats


def make_live(rng: random.Random, files: list[Path], share: float, now: float) -> list[Path]:
    """Give a random ``share`` of ``files`` an mtime in the live window (a recent write)."""
    chosen = [f for f in files if rng.random() < share]
    for path in chosen:
        moment = now - rng.uniform(0.0, live_first.LIVE_WINDOW_SECONDS * 0.9)
        os.utime(path, (moment, moment))
    return chosen


def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of a few files each, so a small corpus is read in many of them."""
    monkeypatch.setattr(live_first, "FIRST_SLICE_BYTES", 64 * 1024)
    monkeypatch.setattr(live_first, "MAX_SLICE_BYTES", 64 * 1024)
    monkeypatch.setattr(live_first, "MIN_SLICE_BYTES", 16 * 1024)


def all_files(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*.jsonl") if p.is_file())


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_phased_catch_up_ends_as_the_serial_one_on_random_corpora(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_slices(monkeypatch)
    home = tmp_path / "home"
    now = 1_800_000_000.0
    made = corpus.generate(home, 16 + seed * 4, 2 * 1024 * 1024, seed=seed, now=now - 3600)
    rng = random.Random(seed)
    files = all_files(home)
    live = make_live(rng, files, 0.2, now)
    touched = rng.sample(files, min(len(files), 6))
    # A client process in one project, started before some sessions there: the live phase must
    # bind it as the serial catch-up does.
    info = rng.choice(made.sessions)
    processes = FakeProcessTable(
        [
            ProcessInfo(
                pid=4242,
                ppid=1,
                create_time=info.started_at - 30,
                name=info.agent,
                cmdline=(info.agent,),
                cwd=info.cwd,
            )
        ]
    )
    want = serial(home, tmp_path, processes, now)
    got, progress = phased(home, tmp_path, processes, now, touched)
    assert_same(got, want)
    assert progress[0].live_ready and not progress[0].done
    assert progress[0].files_total <= len(files) - len(live)  # the live ones came first
    assert progress[-1].done
    assert progress[-1].files_done == progress[-1].files_total > 0
    done = [p.bytes_done for p in progress]
    assert done == sorted(done)  # the progress only moves on


def recorded_home(home: Path) -> list[Path]:
    """Every recorded Claude and Codex session in one HOME (each CLI's files as it wrote
    them), and the files."""
    for scenario in sorted(RECORDED.glob("claude-*/*")):
        if (scenario / "projects").is_dir():
            shutil.copytree(
                scenario / "projects", home / ".claude" / "projects", dirs_exist_ok=True
            )
    for scenario in sorted(RECORDED.glob("codex-*/*")):
        if (scenario / "sessions").is_dir():
            shutil.copytree(scenario / "sessions", home / ".codex" / "sessions", dirs_exist_ok=True)
    return all_files(home)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_phased_catch_up_ends_as_the_serial_one_on_the_recorded_sessions(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_slices(monkeypatch)
    monkeypatch.setattr(live_first, "MAX_SLICE_BYTES", 1)  # one file per slice
    home = tmp_path / "home"
    files = recorded_home(home)
    now = max(p.stat().st_mtime for p in files) + 24 * 3600
    rng = random.Random(seed)
    for path in files:  # the history: a day old and more
        old = now - 86400 - rng.uniform(0, 86400)
        os.utime(path, (old, old))
    make_live(rng, files, 0.3, now)
    touched = rng.sample(files, 5)
    processes = FakeProcessTable()
    want = serial(home, tmp_path, processes, now)
    got, _ = phased(home, tmp_path, processes, now, touched)
    assert_same(got, want)


def test_a_resumed_file_naming_a_history_session_is_folded_in_the_serial_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude 1.0.x resumes into a new file whose lines carry the old session's id: when that
    file is live and the old one is history, the session is read out of the serial order, and
    is folded again in it at the end."""
    small_slices(monkeypatch)
    home = tmp_path / "home"
    scenario = RECORDED / "claude-1.0.128" / "resume"
    shutil.copytree(scenario / "projects", home / ".claude" / "projects")
    (home / ".codex").mkdir()
    files = all_files(home)
    assert len(files) == 2
    now = max(p.stat().st_mtime for p in files) + 7 * 86400
    for live in files:
        for path in files:
            moment = now - 60 if path == live else now - 3 * 86400
            os.utime(path, (moment, moment))
        run = tmp_path / live.name
        run.mkdir()
        want = serial(home, run, FakeProcessTable(), now)
        got, _ = phased(home, run, FakeProcessTable(), now, [])
        assert_same(got, want)
        assert len(want.snapshots) == 1  # one session, its two files


def test_progress_is_published_through_the_seam_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_slices(monkeypatch)
    home = tmp_path / "home"
    now = 1_800_000_000.0
    corpus.generate(home, 12, 1024 * 1024, seed=7, now=now - 7200)
    engine = engine_over(home, tmp_path / "data", FakeProcessTable(), now, live_first=True)
    seen: list[tuple[IndexProgress, bool]] = []
    engine.subscribe_progress(lambda p: seen.append((p, engine.live_ready.is_set())))
    assert engine.progress() == IndexProgress(live_ready=False, done=False)
    engine.catch_up()  # on this thread: everything before it returns
    assert engine.ready.is_set() and engine.live_ready.is_set()
    first, *middle, last = [p for p, _ in seen]
    assert first.live_ready and not first.done and first.files_done == 0
    assert first.files_total == len(all_files(home)) and first.bytes_total > 0
    assert all(not p.done and p.live_ready for p in middle)
    assert last.done and last.files_done == last.files_total
    assert last.bytes_done == last.bytes_total and last.fraction == 1.0
    assert all(live for _, live in seen)  # live_ready is set before the first value
    assert engine.progress() == last
    engine.stop()
    engine.index.close()


LIVE = "1f1f1f1f-2222-4333-8444-555555555555"


def test_the_live_session_is_right_before_the_history_is_read_and_its_changes_are_reported(
    tmp_path: Path,
) -> None:
    """A real agent process named by its registry, a real watcher, a real index: when the live
    phase is published the live session is right and no history is read; the turn it ends
    while the history is read is reported once; ``status`` at the end is the serial one's."""
    home = tmp_path / "home"
    now = time.time()
    corpus.generate(home, 40, 64 * 1024 * 1024, seed=5, now=now - 7200)
    agent = subprocess.Popen(["sleep", "300"])
    try:
        started = psutil.Process(agent.pid).create_time()
        t = ClaudeTranscript(LIVE, "/work/live", start=now - 30)
        path = home / ".claude" / "projects" / "-work-live" / f"{LIVE}.jsonl"
        write_lines(path, [t.prompt("Run the tests"), t.bash("pytest -q")])
        reg = home / ".claude" / "sessions" / f"{agent.pid}.json"
        reg.parent.mkdir(parents=True, exist_ok=True)

        def registry_says(status: str, at: float) -> None:
            entry = registry(
                agent.pid, LIVE, status=status, cwd="/work/live", started_at=started, updated_at=at
            )
            reg.write_bytes(orjson.dumps(entry))

        registry_says("busy", now - 60)  # busy since before the prompt line
        settings = settings_for(home, tmp_path / "data")
        app = Agentbar.open(settings, tasks=False)
        at_live: dict[str, Any] = {}
        changes: list[tuple[str, str | None, str, bool]] = []

        def on_progress(progress: IndexProgress) -> None:
            if progress.live_ready and not at_live:
                snaps = {s.key.session_id: s for s in app.sessions()}
                at_live.update(
                    state=str(snaps[LIVE].state.state),
                    sessions=len(snaps),
                    done=progress.done,
                    ready=app.engine.ready.is_set(),
                    live=app.engine.live_ready.is_set(),
                )
                # The agent ends its turn now, while the history is still to be read; the
                # engine goes on once the watcher has told it (so the history cannot be read
                # before the events are handled, however fast it is read).
                write_lines(path, [t.tool_result(), t.text("All green."), t.turn_duration()])
                registry_says("idle", time.time())
                wait_for(lambda: {str(path), str(reg)} <= told, what="the watcher's events")

        app.subscribe_progress(on_progress)
        told: set[str] = set()
        engine_post = app.engine.post

        def post(message: Message) -> None:  # what the watcher posts, noted on its way in
            engine_post(message)
            if isinstance(message, PathTouched):
                told.add(str(message.path))

        app.engine.post = post  # type: ignore[method-assign]
        app.subscribe(
            lambda c: changes.append(
                (
                    c.snapshot.key.session_id,
                    None if c.prev is None else str(c.prev.state),
                    str(c.snapshot.state.state),
                    app.engine.ready.is_set(),
                )
            )
        )
        try:
            app.start()
            assert app.wait_live(READY_SECONDS)
            assert app.wait_ready(READY_SECONDS)
            wait_for(lambda: changes, timeout=10.0, what="the live turn's end reported")
            time.sleep(1.5)  # a repeat (or a history session's transition) would come now
            snaps = {s.key.session_id: s for s in app.sessions()}
        finally:
            app.close()
        assert at_live == {
            "state": "running",
            "sessions": 1,  # the history is not read yet
            "done": False,
            "ready": False,
            "live": True,
        }
        assert [c[:3] for c in changes] == [(LIVE, "running", "done")]
        assert not changes[0][3], "reported while the history was read"
        assert str(snaps[LIVE].state.state) == "done"
        assert len(snaps) == 41
        # ``agentbar status`` at the end: what the serial catch-up shows.
        out = io.StringIO()
        status_cli.status(
            settings_for(home, tmp_path / "status"), show_all=True, as_json=True, out=out
        )
        reference = serial_status(home, tmp_path / "serial")
        assert without_times(orjson.loads(out.getvalue())) == without_times(reference)
    finally:
        end_process(agent)


def serial_status(home: Path, data: Path) -> dict[str, Any]:
    """The document ``status --json`` prints, from a serial catch-up over the real processes."""
    settings = settings_for(home, data)
    engine = Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=PsutilProcessTable(settings.process_names()),
        traits=settings.traits(),
        read_live_first=False,
    )
    engine.catch_up()
    rows = select(engine.sessions(), now=time.time(), show_all=True)
    document = {
        "sessions": [s.to_json() for s in rows],
        "total": len(rows),
        "diagnostics": diagnostics(engine.stats()),
        "problems": [fault.to_json() for fault in engine.faults()],
        "limits": limits_text.to_json(engine.limits(), time.time(), engine.limits_heard()),
        "hosts": [],  # no remote configured
    }
    engine.stop()
    engine.index.close()
    parsed: dict[str, Any] = orjson.loads(jsonsafe.dumps(document))
    return parsed


def without_times(document: dict[str, Any]) -> dict[str, Any]:
    """``status --json`` without the moments each run decided at (``state_since``), and
    without the reading's progress (the reference builds its document by hand: the run under
    test must say it is done)."""
    for row in document["sessions"]:
        row.pop("state_since", None)
    progress = document.pop("progress", None)
    assert progress is None or progress["done"] is True
    return document


def test_what_is_read_first(tmp_path: Path) -> None:
    """The live phase's pick, from paths and mtimes alone: registries; files written in the
    window; files written since the oldest unnamed client process of their agent started; the
    sessions named; and a live file's whole group (its sub-agents, its parent)."""
    home = tmp_path / "home"
    now = 1_800_000_000.0
    projects = home / ".claude" / "projects" / "-work"
    ids = [f"{n}{n}{n}{n}{n}{n}{n}{n}-1111-4111-8111-111111111111" for n in range(1, 6)]
    ages = {ids[0]: 60.0, ids[1]: 3 * 3600, ids[2]: 7200.0, ids[3]: 5 * 86400, ids[4]: 86400}
    for session_id, age in ages.items():
        path = projects / f"{session_id}.jsonl"
        write_lines(path, [{"type": "summary"}])
        os.utime(path, (now - age, now - age))
    # A sub-agent written just now under a session last written five days ago.
    sub = projects / ids[3] / "subagents" / "agent-abc.jsonl"
    write_lines(sub, [{"type": "summary"}])
    os.utime(sub, (now - 5, now - 5))
    reg = home / ".claude" / "sessions" / "4242.json"
    reg.parent.mkdir(parents=True)
    reg.write_bytes(b"{}")
    os.utime(reg, (now - 86400, now - 86400))
    engine = engine_over(home, tmp_path / "data", FakeProcessTable(), now, live_first=True)
    engine.streams.scan()
    pending = live_first.changed(engine.streams)
    rules = live_first.LiveRules(
        now=now,
        keys=frozenset({SessionKey(Agent("claude"), ids[4])}),  # named by a registry
        since={Agent("claude"): now - 2 * 3600},  # a client process started two hours ago
    )
    live, history = live_first.split_live(pending, rules)
    name = {str(reg): "registry", str(sub): "sub-agent"} | {
        str(projects / f"{i}.jsonl"): i[:1] for i in ids
    }
    assert sorted(name[p.stream.path] for p in live) == [
        "1",
        "3",
        "4",
        "5",
        "registry",
        "sub-agent",
    ]
    assert sorted(name[p.stream.path] for p in history) == ["2"]
    assert len(pending) == len(live) + len(history) == 7
    engine.index.close()


def test_the_history_is_sliced_and_split_sessions_are_noticed(tmp_path: Path) -> None:
    """``History`` alone: slices of about ``slice_bytes`` (one file at least), a group taken
    out of turn is not read again, and a session read against the serial order is split."""
    home = tmp_path / "home"
    projects = home / ".claude" / "projects" / "-work"
    a, b = "aaaaaaaa-1111-4111-8111-111111111111", "bbbbbbbb-1111-4111-8111-111111111111"
    paths = [
        projects / f"{a}.jsonl",
        projects / a / "subagents" / "agent-x.jsonl",
        projects / f"{b}.jsonl",
        projects / b / "subagents" / "agent-y.jsonl",
    ]
    for n, path in enumerate(paths):
        write_lines(path, [{"type": "summary", "summary": "x" * 1000 * (n + 1)}])
    engine = engine_over(home, tmp_path / "data", FakeProcessTable(), 1e9, live_first=True)
    engine.streams.scan()
    pending = sorted(live_first.changed(engine.streams), key=lambda p: p.stream.path)
    history = live_first.History.plan([], pending, pending)
    assert history.files_total == 4 and history.bytes_total == sum(p.size for p in pending)
    history.slice_bytes = 1
    first = history.next_slice()
    assert len(first) == 1 and history.files_done == 1
    rest = [p.stream for p in pending if p.stream not in first]
    taken = history.take_group(rest[-1])  # b's sub-agent: b's transcript comes along
    assert {s.spec.session_hint for s in taken} == {b}
    assert len(taken) == 2 and not history.waiting(taken[0].path)
    history.slice_bytes = 10**9
    assert history.next_slice() == [s for s in rest if s not in taken]
    assert history.empty and history.files_done == 4
    assert history.bytes_done == history.bytes_total
    for stream in (s.stream for s in pending):
        stream.session = SessionKey(Agent("claude"), stream.spec.session_hint or "")
    history.note_read([pending[0].stream, pending[1].stream])  # in the serial order
    history.note_read([pending[3].stream, pending[2].stream])  # against it
    assert history.split == {SessionKey(Agent("claude"), b)}
    engine.index.close()
