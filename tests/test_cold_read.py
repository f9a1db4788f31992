"""The cold read on every core (core/cold_read.py) leaves the engine exactly where the serial
read leaves it: the same sessions, states, facts, usage, search hits, stream positions, parser
states and index rows, on every fixture set and on random corpora; a worker killed mid-read or
a file that cannot be read loses nothing."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from agentbar.core import live_first
from agentbar.core.clock import FakeClock
from agentbar.core.config import Settings
from agentbar.core.engine import Engine, PathTouched, Rescan
from agentbar.core.index import Index
from agentbar.core.procs import FakeProcessTable
from agentbar.core.search import Searcher

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import corpus

DATA = Path(__file__).parent / "data"
NOW = 1_800_000_000.0
QUERIES = ("the", "test", "file", "error", "bash", "run", "fix", "src", "deploy", "a")


# -- homes -------------------------------------------------------------------------------------


def _claude_tree(home: Path, scenario: str, root: Path) -> None:
    """A Claude config root's projects, each project folder renamed after its scenario (the
    same session ids may recur across scenarios: they then share a session, on purpose)."""
    for project in sorted((root / "projects").iterdir()):
        shutil.copytree(project, home / ".claude" / "projects" / f"{project.name}-{scenario}")


def _codex_tree(home: Path, scenario: str, root: Path) -> None:
    for top in ("sessions", "archived_sessions"):
        if (root / top).is_dir():
            shutil.copytree(root / top, home / ".codex" / top / scenario)


def fixture_homes() -> dict[str, list[tuple[str, str, Path]]]:
    """Each recorded agent version's scenarios, and the synthetic files: (agent, name, root)."""
    sets: dict[str, list[tuple[str, str, Path]]] = {}
    for version in sorted((DATA / "recorded").iterdir()):
        agent = version.name.split("-")[0]
        if agent not in ("claude", "codex"):
            continue
        sets[version.name] = [(agent, s.name, s) for s in sorted(version.iterdir()) if s.is_dir()]
    synthetic = DATA / "synthetic"
    sets["synthetic"] = [("claude", v.name, v) for v in sorted((synthetic / "claude").iterdir())]
    return sets


def build_fixture_home(home: Path, roots: list[tuple[str, str, Path]]) -> None:
    for agent, scenario, root in roots:
        if agent == "claude":
            _claude_tree(home, scenario, root)
        else:
            _codex_tree(home, scenario, root)
    if any(name == "v2.1" for _, name, _ in roots):  # the synthetic set: Codex files too
        day = home / ".codex" / "sessions" / "2026" / "01" / "01"
        day.mkdir(parents=True)
        for n, path in enumerate(sorted((DATA / "synthetic" / "codex").glob("*.jsonl"))):
            name = path.name if path.name.startswith("rollout-") else None
            uuid = f"01000000-0000-7000-8000-{n:012d}"
            shutil.copy(path, day / (name or f"rollout-2026-01-01T00-00-{n:02d}-{uuid}.jsonl"))


def transcripts(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*.jsonl") if p.stat().st_size > 0)


def cut_last_lines(home: Path) -> dict[Path, bytes]:
    """Leave every other file's last line half-written (its rest returned, to append later)."""
    rests = {}
    for n, path in enumerate(transcripts(home)):
        data = path.read_bytes()
        body = data.rstrip(b"\n")
        start = body.rfind(b"\n") + 1
        if n % 2 or start == 0 or len(body) - start < 4:
            continue
        middle = start + (len(body) - start) // 2
        path.write_bytes(data[:middle])
        rests[path] = data[middle:]
    return rests


# -- engines -----------------------------------------------------------------------------------


def open_engine(home: Path, data: Path, *, workers: int) -> Engine:
    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data)})
    engine = Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=FakeProcessTable(),
        traits=settings.traits(),
        clock=FakeClock(NOW),
    )
    engine.cold.workers = workers
    engine.cold.min_bytes = 0
    engine.cold.min_files = 1
    engine.cold.task_files = 3  # several tasks even on a small corpus
    return engine


def index_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("streams", "sessions", "search_files", "search_staging")
        }
        # A document's row id is the order its file was saved in, which a session read out of
        # the serial order (a resumed Claude 1.0.x file, folded again at the end) changes: the
        # documents themselves, and the hits, must be the same.
        rows["search_docs"] = sorted(
            row[1:] for row in conn.execute("SELECT * FROM search_docs").fetchall()
        )
        return rows
    finally:
        conn.close()


def picture(engine: Engine) -> dict[str, Any]:
    """Everything the engine shows and keeps: snapshots, stats, every stream's position,
    parser state and counters, its index rows and search hits."""
    assert engine.index.path is not None
    searcher = Searcher(engine.index.path)
    try:
        hits = {q: [h.to_json() for h in searcher.search(q, limit=200)] for q in QUERIES}
        counts = searcher.counts()
    finally:
        searcher.close()
    streams = {
        s.path: (
            s.position,
            s.parser.checkpoint(),
            s.session,
            s.agent_id,
            s.size,
            s.mtime_ns,
            (s.malformed, s.oversized, s.unknown, s.odd_times, s.clamped, s.last_error),
        )
        for s in engine.streams
    }
    return {
        "sessions": sorted(engine.sessions(), key=lambda s: (str(s.key.agent), s.key.session_id)),
        "stats": engine.stats(),
        "streams": streams,
        "rows": index_rows(engine.index.path),
        "hits": hits,
        "counts": counts,
    }


def caught_up(engine: Engine) -> Engine:
    engine.catch_up()
    engine.drain()  # the full-text backlog, a slice per step
    return engine


def touch_all(engine: Engine, paths: list[Path]) -> None:
    for path in paths:
        engine.post(PathTouched(path))
    engine.drain()


def assert_same(serial: dict[str, Any], pooled: dict[str, Any]) -> None:
    for part, value in serial.items():
        assert pooled[part] == value, part


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[list[Engine]]:
    opened: list[Engine] = []
    yield opened
    for engine in opened:
        engine.stop()
        engine.index.close()


def compare(home: Path, tmp: Path, engines: list[Engine], **pooled_args: Any) -> Engine:
    """Cold-read ``home`` serially and on workers; both the same, and again after the cut lines
    are finished and more is appended (the position and parser state carry on alike)."""
    rests = cut_last_lines(home)
    serial = open_engine(home, tmp / "serial", workers=0)
    pooled = open_engine(home, tmp / "pooled", workers=2)
    for name, value in pooled_args.items():
        setattr(pooled.cold, name, value)
    engines += [serial, pooled]
    caught_up(serial)
    caught_up(pooled)
    assert pooled.cold.merged > 0, "nothing was read by the workers"
    assert_same(picture(serial), picture(pooled))
    for path, rest in rests.items():
        with path.open("ab") as fh:
            fh.write(rest)
    for path in transcripts(home)[::3]:
        lines = path.read_bytes().splitlines(keepends=True)
        with path.open("ab") as fh:
            fh.writelines(lines[-2:])
    touch_all(serial, transcripts(home))
    touch_all(pooled, transcripts(home))
    assert_same(picture(serial), picture(pooled))
    return pooled


# -- the equality tests ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(fixture_homes()))
def test_every_fixture_set_reads_the_same_on_workers(
    name: str, tmp_path: Path, engines: list[Engine]
) -> None:
    home = tmp_path / "home"
    build_fixture_home(home, fixture_homes()[name])
    compare(home, tmp_path, engines)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_corpora_read_the_same_on_workers(
    seed: int, tmp_path: Path, engines: list[Engine]
) -> None:
    home = tmp_path / "home"
    corpus.generate(home, 14, 3 * corpus.MB, seed=seed, now=NOW, projects=3)
    compare(home, tmp_path, engines)


def test_a_second_file_of_a_session_is_folded_on_top_of_the_first(
    tmp_path: Path, engines: list[Engine]
) -> None:
    """The same session in two project folders (a session whose records a worker did not
    send is read again here): still the serial result."""
    home = tmp_path / "home"
    corpus.generate(home, 6, 1 * corpus.MB, seed=7, now=NOW, projects=2)
    projects = home / ".claude" / "projects"
    for folder in sorted(projects.iterdir()):
        shutil.copytree(folder, projects / f"{folder.name}-copy")
    pooled = compare(home, tmp_path, engines)
    assert pooled.cold.merged > 0


def test_a_session_rebuilt_mid_read_has_its_other_files_read_again_here(
    tmp_path: Path, engines: list[Engine]
) -> None:
    """A warm rescan where a session's main transcript was rewritten (its session is rebuilt
    from the top of every file, sub-agents' too) while its sub-agents' files, grown, were
    already with the workers: what they read is stale and read again on the engine thread."""
    home = tmp_path / "home"
    corpus.generate(home, 16, 6 * corpus.MB, seed=9, now=NOW, projects=2)
    mains = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))[:4]
    for main in mains:  # a sub-agent's file beside each: its lines name the parent session
        subagents = main.with_suffix("") / "subagents"
        subagents.mkdir(parents=True, exist_ok=True)
        shutil.copy(main, subagents / "agent-a1b2c3.jsonl")
    parents = [main.with_suffix("") for main in mains]
    serial = open_engine(home, tmp_path / "serial", workers=0)
    pooled = open_engine(home, tmp_path / "pooled", workers=2)
    engines += [serial, pooled]
    caught_up(serial)
    caught_up(pooled)
    for folder in parents:
        main = folder.with_suffix(".jsonl")
        lines = main.read_bytes().splitlines(keepends=True)
        main.write_bytes(b"".join(lines[: len(lines) // 2]))  # truncated: read again
        for sub in (folder / "subagents").glob("agent-*.jsonl"):
            grown = sub.read_bytes().splitlines(keepends=True)
            with sub.open("ab") as fh:
                fh.writelines(grown[-3:])
    merged = pooled.cold.merged
    for engine in (serial, pooled):
        engine.post(Rescan())
        engine.drain()
    assert pooled.cold.merged > merged
    assert_same(picture(serial), picture(pooled))


# -- failures lose nothing ---------------------------------------------------------------------


def test_a_file_that_cannot_be_read_is_read_by_the_engine_and_counted(
    tmp_path: Path, engines: list[Engine], caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    corpus.generate(home, 8, 2 * corpus.MB, seed=4, now=NOW)
    day = home / ".codex" / "sessions" / "2026" / "01" / "02"
    day.mkdir(parents=True)
    broken = day / "rollout-2026-01-02T00-00-00-01000000-0000-7000-8000-000000000001.jsonl.zst"
    broken.write_bytes(b"\x28\xb5\x2f\xfd" + b"not zstd at all" * 100)
    garbage = next(iter(transcripts(home)))
    with garbage.open("ab") as fh:
        fh.write(b"{not json\n")
    caplog.set_level(logging.WARNING)
    pooled = compare(home, tmp_path, engines)
    # The garbage line twice: ``compare`` appends the first file's last lines again.
    assert pooled.stats().unreadable == 1 and pooled.stats().malformed == 2
    said = [r.getMessage() for r in caplog.records if "cannot read" in r.getMessage()]
    assert len(said) == 2 and all(str(broken) in m for m in said)  # once per engine


def _kill_first_worker(stop: threading.Event, killed: list[int]) -> None:
    me = psutil.Process()
    while not stop.is_set():
        for child in me.children():
            if "spawn_main" in " ".join(child.cmdline()):
                child.kill()
                killed.append(child.pid)
                return
        time.sleep(0.005)


def test_a_worker_killed_mid_read_loses_nothing(
    tmp_path: Path, engines: list[Engine], caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    corpus.generate(home, 30, 40 * corpus.MB, seed=5, now=NOW)
    serial = open_engine(home, tmp_path / "serial", workers=0)
    pooled = open_engine(home, tmp_path / "pooled", workers=2)
    engines += [serial, pooled]
    caught_up(serial)
    stop, killed = threading.Event(), list[int]()
    killer = threading.Thread(target=_kill_first_worker, args=(stop, killed))
    caplog.set_level(logging.WARNING)
    killer.start()
    try:
        caught_up(pooled)
    finally:
        stop.set()
        killer.join()
    assert killed, "no worker was seen"
    said = [r.getMessage() for r in caplog.records if "reading the rest" in r.getMessage()]
    assert len(said) == 1, said
    assert_same(picture(serial), picture(pooled))


def _workers() -> list[int]:
    return [c.pid for c in psutil.Process().children() if "spawn_main" in " ".join(c.cmdline())]


def test_held_workers_serve_several_reads_and_go_after(
    tmp_path: Path, engines: list[Engine]
) -> None:
    """A catch-up that reads its history in parts starts its workers once."""
    home = tmp_path / "home"
    corpus.generate(home, 12, 2 * corpus.MB, seed=8, now=NOW)
    serial = open_engine(home, tmp_path / "serial", workers=0)
    pooled = open_engine(home, tmp_path / "pooled", workers=2)
    engines += [serial, pooled]
    caught_up(serial)
    streams = pooled.streams.scan()
    half = len(streams) // 2
    with pooled.cold.held():
        pooled._read_streams(streams[:half])
        first = _workers()
        pooled._read_streams(streams[half:])
        assert first and _workers() == first
    assert _workers() == []
    assert pooled.cold.merged == len(streams)
    caught_up(pooled)  # nothing left to read: decide, save, publish
    assert_same(picture(serial), picture(pooled))


def test_no_worker_outlives_the_cold_read(tmp_path: Path, engines: list[Engine]) -> None:
    home = tmp_path / "home"
    corpus.generate(home, 10, 2 * corpus.MB, seed=6, now=NOW)
    # What earlier tests left running in this process (a session's X server, bus, tray) is
    # not the cold read's.
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    pooled = open_engine(home, tmp_path / "pooled", workers=2)
    engines.append(pooled)
    caught_up(pooled)
    assert pooled.cold.merged > 0
    left = [
        c
        for c in psutil.Process().children(recursive=True)
        if c.pid not in before and c.is_running()
    ]
    assert [c.cmdline() for c in left if c.status() != psutil.STATUS_ZOMBIE] == []


def test_a_small_read_stays_on_the_engine_thread(tmp_path: Path, engines: list[Engine]) -> None:
    home = tmp_path / "home"
    corpus.generate(home, 10, 2 * corpus.MB, seed=6, now=NOW)
    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(tmp_path / "d")})
    engine = Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=FakeProcessTable(),
        traits=settings.traits(),
        clock=FakeClock(NOW),
    )
    engines.append(engine)
    engine.cold.workers = 2
    caught_up(engine)  # 2 MB: under the pool's threshold
    assert engine.cold.merged == 0 and engine.stats().sessions == 10


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """History slices of about 200 KB: a few MB of corpus is read in many slices, each one's
    successor handed to the workers while it is merged."""
    for name in ("MIN_SLICE_BYTES", "MAX_SLICE_BYTES"):
        monkeypatch.setattr(live_first, name, 200_000)
    plan = live_first.History.plan

    def first_slice_small(*args: Any) -> live_first.History:
        history = plan(*args)
        history.slice_bytes = 200_000
        return history

    monkeypatch.setattr(live_first.History, "plan", first_slice_small)


@pytest.mark.parametrize(("seed", "window"), [(4, None), (5, None), (4, 600_000)])
def test_slices_read_ahead_by_the_workers_read_the_same(
    seed: int, window: int | None, tmp_path: Path, engines: list[Engine], small_slices: None
) -> None:
    """The same history in small slices: serially, on workers slice by slice, and on workers
    with the slices to come handed out ahead (the whole history at once, or, with a small
    window, batch by batch as results are taken, across slices). All the same after the
    catch-up; the two pooled ones the same after appends too (a serial read that leaves a
    reader open counts the bytes of an unfinished line differently from a worker's, ahead or
    not)."""
    home = tmp_path / "home"
    corpus.generate(home, 16, 3 * corpus.MB, seed=seed, now=NOW, projects=3)
    rests = cut_last_lines(home)
    serial = open_engine(home, tmp_path / "serial", workers=0)
    plain = open_engine(home, tmp_path / "plain", workers=2)
    ahead = open_engine(home, tmp_path / "ahead", workers=2)
    if window is not None:
        ahead.cold.window_bytes, ahead.cold.task_bytes = window, window // 4
    engines += [serial, plain, ahead]
    read = plain.cold.read
    plain.cold.read = lambda streams, sessions=None, ahead=(): read(streams, sessions)  # type: ignore[method-assign]
    for engine in engines:
        caught_up(engine)
    assert plain.cold.merged > 0 and plain.cold.merged_ahead == 0
    assert ahead.cold.merged_ahead > 0, "no slice was read ahead"
    assert_same(picture(serial), picture(ahead))
    assert_same(picture(plain), picture(ahead))
    for path, rest in rests.items():
        with path.open("ab") as fh:
            fh.write(rest)
    for engine in (plain, ahead):
        touch_all(engine, transcripts(home))
    assert_same(picture(plain), picture(ahead))


def test_a_file_read_out_of_turn_after_it_was_handed_out_ahead_is_not_merged_twice(
    tmp_path: Path, engines: list[Engine], small_slices: None
) -> None:
    """A file event for a file of the next slice, already handed to a worker: the engine reads
    it at once (its session is live), and the worker's read of it, stale by the time its slice
    comes, is noticed and dropped."""
    home = tmp_path / "home"
    corpus.generate(home, 16, 3 * corpus.MB, seed=9, now=NOW, projects=3)
    pooled = open_engine(home, tmp_path / "pooled", workers=2)
    engines.append(pooled)
    pooled._catch_up_live()
    history = pooled._history
    assert history is not None
    pooled._read_history_slice()
    fetched = list(pooled.cold._ahead.values())
    assert fetched, "nothing was handed out ahead"
    # The first file handed out ahead: one of the next slice (the workers read on into the
    # slices after it as far as their window goes; a file read out of turn further on would
    # have its search rows saved before the slices between, in another order than serially).
    assert fetched[0].batch.future is not None
    fetched[0].batch.future.result()  # the worker read it before the write below
    stream = fetched[0].stream
    touched = stream.spec.path
    lines = touched.read_bytes().splitlines(keepends=True)
    with touched.open("ab") as fh:
        fh.writelines(lines[-2:])
    pooled.post(PathTouched(touched))
    pooled.step()
    assert not history.waiting(str(touched))
    assert stream.position.offset == touched.stat().st_size  # the new lines too, at once
    merged_ahead = pooled.cold.merged_ahead
    pooled.catch_up()
    pooled.drain()
    assert pooled.cold.merged_ahead > merged_ahead  # the others of the slice were used
    serial = open_engine(home, tmp_path / "serial", workers=0)
    engines.append(serial)
    caught_up(serial)
    assert_same(picture(serial), picture(pooled))
