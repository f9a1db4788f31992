"""Measure change-detection latency: from appending a transcript line to the StateChange callback.

Setup: ``--sessions`` small generated sessions (about 2:1 Claude/Codex, one working folder each) in
a temporary HOME, ``AGENTBAR_DATA_DIR`` in a temporary folder, and the real ``Service``
(``Service.open(Settings.from_env(env))`` then ``start()``: watchdog ``FileWatcher``, ``Ticker`` and
the engine thread). The one thing replaced is the process table: a session reports changes only
while its agent process is live, so before ``start()`` the engine's ``PsutilProcessTable`` is
swapped for a ``FakeProcessTable`` holding one fake client per session (``claude`` or ``codex``,
cwd = the session's cwd, started 30 s before the session's first line; ``--live N`` gives only N
sessions a client, and writes then go to those), which the engine's own liveness matcher binds
to the sessions. This is the same code path as real agents, without
spawning 500 processes; Claude's ``sessions/<pid>.json`` registry would instead make the registry,
not the transcript, decide the state, which is not what this measures.

Each measured write is one ``write()`` of what the agent appends at that step (``LiveWriter`` in
corpus.py): Claude's prompt line (-> ``running``), then its final assistant text with
``stop_reason: end_turn`` plus ``system/turn_duration`` (-> ``done``); Codex's
``event_msg/task_started`` (-> ``running``), then ``agent_message`` plus ``task_complete``
(-> ``done``). Latency runs from ``time.perf_counter()`` just before ``open()`` to the same clock
read first thing in the subscriber callback (engine thread). ``--writes`` writes, spaced
``--spacing-ms`` apart, round-robin over shuffled sessions. The wrapper around ``engine.post``
also times when the watcher handed the path to the engine, splitting the figure into "file event"
and "engine" parts.

Baseline, in the same process after the service is closed: a bare watchdog ``Observer`` on the same
folders, timing the same kind of write to the first modified/closed event for that file.

    python bench/bench_latency.py --sessions 500 --writes 200
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import corpus
from benchlib import (
    Breakdown,
    GcPauses,
    distribution,
    generate_corpus_in_child,
    machine,
    table,
    write_json,
)

TARGET_P99_MS = 100.0


class Probe:
    """The subscriber: waits for one (session, state) change and stamps when it arrived."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._want: tuple[str, str] | None = None
        self.arrived: float | None = None
        self.other_changes = 0

    def expect(self, session_id: str, state: str) -> None:
        with self._cond:
            self._want = (session_id, state)
            self.arrived = None

    def __call__(self, change: Any) -> None:
        now = time.perf_counter()
        snap = change.snapshot
        with self._cond:
            if self._want == (snap.key.session_id, str(snap.state.state)) and self.arrived is None:
                self.arrived = now
                self._cond.notify_all()
            else:
                self.other_changes += 1

    def wait(self, timeout: float) -> float | None:
        with self._cond:
            self._cond.wait_for(lambda: self.arrived is not None, timeout)
            return self.arrived


class PostSpy:
    """Wraps ``engine.post`` to stamp the first ``PathTouched`` for the file being written."""

    def __init__(self, post: Any) -> None:
        self._post = post
        self._path: str | None = None
        self.posted: float | None = None
        self.counts: dict[str, int] = {}

    def watch(self, path: str) -> None:
        self._path, self.posted = path, None

    def __call__(self, message: Any) -> None:
        name = type(message).__name__
        self.counts[name] = self.counts.get(name, 0) + 1
        if self.posted is None and name == "PathTouched" and str(message.path) == self._path:
            self.posted = time.perf_counter()
        self._post(message)


def fake_clients(sessions: list[corpus.SessionInfo]) -> list[Any]:
    from agentbar.core.sources.base import ProcessInfo

    procs = []
    for i, s in enumerate(sessions):
        program = "claude" if s.agent == "claude" else "codex"
        procs.append(
            ProcessInfo(
                pid=400_000 + i,
                ppid=1,
                create_time=s.started_at - 30.0,
                name=program,
                cmdline=(program,),
                cwd=s.cwd,
            )
        )
    return procs


def append(path: str, data: bytes) -> float:
    start = time.perf_counter()
    with open(path, "ab") as fh:
        fh.write(data)
    return start


def run_service(
    built: corpus.Corpus,
    data_dir: Path,
    writes: int,
    spacing: tuple[float, float],
    seed: int,
    live: int,
) -> dict[str, Any]:
    from agentbar.core.config import Settings
    from agentbar.core.procs import FakeProcessTable
    from agentbar.core.service import Service

    env = {"HOME": built.home, "AGENTBAR_DATA_DIR": str(data_dir)}
    service = Service.open(Settings.from_env(env))
    engine = service.engine
    chosen = list(built.sessions)
    random.Random(seed).shuffle(chosen)
    engine.processes = FakeProcessTable(fake_clients(chosen[: live or len(chosen)]))
    spy = PostSpy(engine.post)
    engine.post = spy  # type: ignore[method-assign]  # the watcher and ticker post through it
    breakdown = Breakdown(engine)  # how long the engine thread is busy per tick and per batch
    probe = Probe()
    engine.subscribe(probe)
    t0 = time.perf_counter()
    service.start()
    if not engine.ready.wait(600):
        raise SystemExit("the engine did not catch up within 600 s")
    ready_s = time.perf_counter() - t0
    time.sleep(2.0)  # let the watcher's initial rescans go through
    by_id = {s.key.session_id: s for s in engine.sessions()}
    bound = sum(1 for s in by_id.values() if s.process is not None)
    states: dict[str, int] = {}
    for snap in by_id.values():
        states[str(snap.state.state)] = states.get(str(snap.state.state), 0) + 1
    print(
        f"  service ready in {ready_s:.2f} s; {bound}/{len(by_id)} sessions bound to a process; "
        f"states {states}"
    )

    breakdown.reset()
    pauses = GcPauses().__enter__()
    rng = random.Random(seed)
    pools = corpus.Pools(random.Random(seed))
    order = [s for s in built.sessions if by_id.get(s.session_id) and by_id[s.session_id].process]
    rng.shuffle(order)
    writers = {s.session_id: corpus.LiveWriter(pools, s, rng.getrandbits(32)) for s in order}
    total_ms: list[float] = []
    event_ms: list[float] = []
    engine_ms: list[float] = []
    missed = 0
    per_state: dict[str, list[float]] = {"running": [], "done": []}
    i = 0
    while len(total_ms) + missed < writes:
        session = order[i % len(order)]
        i += 1
        writer = writers[session.session_id]
        for state in ("running", "done"):
            if len(total_ms) + missed >= writes:
                break
            data = writer.start_turn() if state == "running" else writer.finish_turn()
            probe.expect(session.session_id, state)
            spy.watch(session.path)
            start = append(session.path, data)
            arrived = probe.wait(5.0)
            if arrived is None:
                missed += 1
                print(f"  no {state} change for {session.agent}:{session.session_id} within 5 s")
            else:
                total_ms.append((arrived - start) * 1000)
                per_state[state].append((arrived - start) * 1000)
                if spy.posted is not None:
                    event_ms.append((spy.posted - start) * 1000)
                    engine_ms.append((arrived - spy.posted) * 1000)
            time.sleep(rng.uniform(*spacing))
    pauses.__exit__()
    stats = engine.stats()
    service.close()
    return {
        "ready_s": ready_s,
        "bound_sessions": bound,
        "visible_sessions": len(by_id),
        "states_before": states,
        "sessions_written": min(len(order), i),
        "missed": missed,
        "other_changes": probe.other_changes,
        "latency": distribution(total_ms),
        "latency_running": distribution(per_state["running"]),
        "latency_done": distribution(per_state["done"]),
        "write_to_post": distribution(event_ms),
        "post_to_change": distribution(engine_ms),
        "messages_posted": spy.counts,
        "engine_thread_breakdown": breakdown.report(),
        "gc_pauses": pauses.report(),
        "engine_stats": dataclasses.asdict(stats),
    }


def run_baseline(
    built: corpus.Corpus, writes: int, spacing: tuple[float, float], seed: int
) -> dict[str, Any]:
    """A bare watchdog observer on the same folders: write -> first event for that file."""
    from watchdog.events import FileClosedEvent, FileModifiedEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    cond = threading.Condition()
    state: dict[str, Any] = {"path": None, "at": None}

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            now = time.perf_counter()
            if not isinstance(event, FileModifiedEvent | FileClosedEvent):
                return
            path = event.src_path if isinstance(event.src_path, str) else event.src_path.decode()
            with cond:
                if path == state["path"] and state["at"] is None:
                    state["at"] = now
                    cond.notify_all()

    home = Path(built.home)
    observer = Observer()
    for root in (home / ".claude" / "projects", home / ".codex" / "sessions"):
        observer.schedule(Handler(), str(root), recursive=True)
    observer.start()
    time.sleep(1.0)
    rng = random.Random(seed + 1)
    pools = corpus.Pools(random.Random(seed))
    order = list(built.sessions)
    rng.shuffle(order)
    samples: list[float] = []
    missed = 0
    for i in range(writes):
        session = order[i % len(order)]
        writer = corpus.LiveWriter(pools, session, rng.getrandbits(32))
        data = writer.start_turn() if i % 2 == 0 else writer.finish_turn()
        with cond:
            state["path"], state["at"] = session.path, None
        start = append(session.path, data)
        with cond:
            cond.wait_for(lambda: state["at"] is not None, 5.0)
            at = state["at"]
        if at is None:
            missed += 1
        else:
            samples.append((at - start) * 1000)
        time.sleep(rng.uniform(*spacing))
    observer.stop()
    observer.join(5)
    return {"latency": distribution(samples), "missed": missed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument(
        "--session-size",
        type=corpus.parse_size,
        default=corpus.parse_size("24k"),
        help="average bytes per generated session",
    )
    parser.add_argument(
        "--live", type=int, default=0, help="sessions with a fake live process (default: all)"
    )
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument(
        "--spacing-ms", type=float, nargs=2, default=(50.0, 100.0), metavar=("MIN", "MAX")
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary HOME and data dir")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    info = machine()
    scratch = Path(tempfile.mkdtemp(prefix="agentbar-bench-latency-"))
    home, data_dir = scratch / "home", scratch / "data"
    spacing = (args.spacing_ms[0] / 1000, args.spacing_ms[1] / 1000)
    try:
        t0 = time.perf_counter()
        generate_corpus_in_child(
            home,
            args.sessions,
            args.sessions * args.session_size,
            args.seed,
            "--projects",
            str(args.sessions),
        )
        built = corpus.Corpus.load(home)
        print(f"corpus: {built.summary()} in {time.perf_counter() - t0:.1f} s")
        print("engine (Service: watchdog + ticker + engine thread, fake process table):")
        engine = run_service(built, data_dir, args.writes, spacing, args.seed, args.live)
        print("baseline (bare watchdog observer, same folders):")
        base = run_baseline(built, args.writes, spacing, args.seed)
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    lat, bl = engine["latency"], base["latency"]

    def row(name: str, d: dict[str, float]) -> list[str]:
        return [
            name,
            str(d["count"]),
            *(f"{d[k]:.1f}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms")),
        ]

    print()
    print(
        table(
            [
                row("engine: write -> StateChange", lat),
                row("  of which running", engine["latency_running"]),
                row("  of which done", engine["latency_done"]),
                row("  write -> PathTouched posted", engine["write_to_post"]),
                row("  posted -> StateChange", engine["post_to_change"]),
                row("baseline: write -> watchdog event", bl),
            ],
            ["", "n", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms"],
        )
    )
    ratio = {
        k: lat[k] / bl[k] if bl[k] else float("nan")
        for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")
    }
    print(
        f"\nengine/baseline: p50 {ratio['p50_ms']:.1f}x, p90 {ratio['p90_ms']:.1f}x, "
        f"p99 {ratio['p99_ms']:.1f}x"
    )
    print(
        f"missed (no change within 5 s): engine {engine['missed']}, baseline {base['missed']}; "
        f"messages posted: {engine['messages_posted']}"
    )
    print(f"garbage collections while writing: {engine['gc_pauses']}")
    print("engine thread while writing (a write that lands during a tick waits for it):")
    for name, row in engine["engine_thread_breakdown"].items():
        print(
            f"  {name:22s} {row['calls']:4d} calls, {row['cpu_s']:6.3f} CPU s, "
            f"longest {row['longest_ms']:6.1f} ms"
        )
    result = {
        "benchmark": "latency",
        "machine": info,
        "loadavg_1m_end": round(os.getloadavg()[0], 2),
        "sessions": args.sessions,
        "live_sessions": args.live or args.sessions,
        "corpus_bytes": built.total_bytes,
        "writes": args.writes,
        "spacing_ms": list(args.spacing_ms),
        "process_table": "FakeProcessTable, one fake client per live session (see docstring)",
        "engine": engine,
        "baseline": base,
        "ratio_engine_over_baseline": ratio,
        "targets": {
            "p99_ms": {
                "target": f"< {TARGET_P99_MS:.0f}",
                "value": lat["p99_ms"],
                "met": lat["p99_ms"] < TARGET_P99_MS,
            }
        },
    }
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
