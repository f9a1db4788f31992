"""Measure the time from a cold start to a correct badge (the live sessions' states right) with a
large history on disk, against the time to the end of the full catch-up in the same run.

Each run starts the whole application as the tray does (``Agentbar.open`` + ``start()``: the
real process table, the real watcher, a fresh index) over a generated history (``bench/corpus.py``,
1 GB and 5 GB by default; kept in ``bench/corpus/`` and shared with ``bench_index.py``) plus a
second Claude and Codex root holding the live sessions, made fresh for each run:

- Claude session A: running (its registry says busy, a real process, a prompt and a tool call);
- Claude session B: waiting for an approval (its registry says so, a real process);
- a Codex rollout written a minute ago (no process: it settles as ended).

The clock starts before ``Agentbar.open``; ``start()`` returns once the watcher watches every
folder and the engine thread runs. "Live right" is the first moment a progress value
(published on the engine thread, at the live phase's end and a few times a second after) finds
every live session's published state equal to its state once everything is read; "ready" is
``Engine.ready``. The ratio live/ready is the figure; a serial catch-up (``read_live_first=False``,
the same engine on this thread) gives the baseline total in the same run. The files are read from
the page cache (the corpus is read once before the runs). Nothing here passes or fails.

    python bench/bench_livefirst.py --sizes 1G 5G
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import corpus
import orjson
import psutil
from benchlib import CORPUS_DIR, MB, OUT_DIR, REPO, machine, table, write_json

sys.path.insert(0, str(REPO / "tests"))

from claude_lines import ClaudeTranscript, registry, write_lines

from agentbar.core.app import Agentbar
from agentbar.core.config import Settings
from agentbar.core.engine import Engine
from agentbar.core.engine_messages import IndexProgress
from agentbar.core.index import Index
from agentbar.core.model import Agent, SessionKey
from agentbar.core.procs import PsutilProcessTable

CLAUDE, CODEX = Agent("claude"), Agent("codex")
RUNNING = "a1a1a1a1-1111-4111-8111-111111111111"
APPROVAL = "b2b2b2b2-2222-4222-8222-222222222222"
SESSIONS_PER_GB = 600
RECORDED_ROLLOUT = next(
    (REPO / "tests" / "data" / "recorded" / "codex-0.171.0" / "answer").rglob("rollout-*.jsonl")
)
READY_SECONDS = 900.0


def size_label(size: int) -> str:
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


@dataclass
class LiveSet:
    """The live sessions of one run: their roots, their processes, what they must show."""

    root: Path
    processes: list[subprocess.Popen[bytes]]
    keys: list[SessionKey]

    def close(self) -> None:
        for proc in self.processes:
            proc.kill()
            proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def make_live(root: Path) -> LiveSet:
    """Two Claude sessions with a registry and a real process each, one recent Codex rollout."""
    now = time.time()
    processes = []
    claude = root / ".claude"
    for session_id, status, waiting in (
        (RUNNING, "busy", None),
        (APPROVAL, "waiting", "permission prompt"),
    ):
        proc = subprocess.Popen(["sleep", "3600"])
        processes.append(proc)
        started = psutil.Process(proc.pid).create_time()
        t = ClaudeTranscript(session_id, "/work/live", start=now - 20)
        lines = [t.prompt("Clean the build and run the tests"), t.bash("rm -rf build")]
        write_lines(claude / "projects" / "-work-live" / f"{session_id}.jsonl", lines)
        entry = registry(
            proc.pid,
            session_id,
            status=status,
            waiting_for=waiting,
            cwd="/work/live",
            started_at=started,
            updated_at=now - 30,
        )
        (claude / "sessions").mkdir(parents=True, exist_ok=True)
        (claude / "sessions" / f"{proc.pid}.json").write_bytes(orjson.dumps(entry))
    rollout = root / ".codex" / "sessions" / "2026" / "11" / "30" / RECORDED_ROLLOUT.name
    rollout.parent.mkdir(parents=True)
    shutil.copyfile(RECORDED_ROLLOUT, rollout)
    os.utime(rollout, (now - 60, now - 60))
    codex_id = RECORDED_ROLLOUT.stem[-36:]
    keys = [SessionKey(CLAUDE, RUNNING), SessionKey(CLAUDE, APPROVAL), SessionKey(CODEX, codex_id)]
    return LiveSet(root, processes, keys)


def settings_for(history: Path, live: Path, data: Path) -> Settings:
    return Settings(
        homes={
            CLAUDE: (history / ".claude", live / ".claude"),
            CODEX: (history / ".codex", live / ".codex"),
        },
        data_dir=data,
    )


def phased_run(history: Path, scratch: Path) -> dict[str, Any]:
    """One cold start of the application: seconds to live_ready, to the live sessions right,
    to ready; the live states."""
    live = make_live(scratch / "live")
    data = scratch / "data"
    shutil.rmtree(data, ignore_errors=True)
    marks: dict[str, float] = {}
    states: list[tuple[float, dict[SessionKey, str]]] = []
    try:
        t0 = time.perf_counter()
        app = Agentbar.open(settings_for(history, live.root, data), tasks=False)

        def on_progress(progress: IndexProgress) -> None:
            now = time.perf_counter() - t0
            if progress.live_ready:
                marks.setdefault("live_ready", now)
            published = {s.key: str(s.state.state) for s in app.sessions()}
            states.append((now, {k: published.get(k, "absent") for k in live.keys}))

        app.subscribe_progress(on_progress)
        try:
            app.start()
            marks["started"] = time.perf_counter() - t0  # the watcher is on, the engine reads
            if not app.wait_ready(READY_SECONDS):
                raise SystemExit("the catch-up did not end")
            marks["ready"] = time.perf_counter() - t0
            final = {s.key: str(s.state.state) for s in app.sessions()}
            stats = app.stats()
        finally:
            app.close()
    finally:
        live.close()
    want = {k: final.get(k, "absent") for k in live.keys}
    right = next((at for at, seen in states if seen == want), marks["ready"])
    return {
        "started_s": marks["started"],
        "live_ready_s": marks["live_ready"],
        "live_right_s": right,
        "ready_s": marks["ready"],
        "ratio": right / marks["ready"],
        "states": {f"{k.agent}/{k.session_id[:8]}": v for k, v in want.items()},
        "sessions": stats.sessions,
        "bytes_read": stats.bytes_read,
    }


def serial_run(history: Path, scratch: Path) -> float:
    """The serial catch-up (everything in one go, on this thread) from a cold index: seconds."""
    live = make_live(scratch / "live")
    data = scratch / "data-serial"
    shutil.rmtree(data, ignore_errors=True)
    try:
        settings = settings_for(history, live.root, data)
        t0 = time.perf_counter()
        engine = Engine(
            settings.sources(),
            Index.open(settings.index_path),
            processes=PsutilProcessTable(settings.process_names()),
            traits=settings.traits(),
            read_live_first=False,
        )
        engine.catch_up()
        seconds = time.perf_counter() - t0
        engine.stop()
        engine.index.close()
    finally:
        live.close()
        shutil.rmtree(data, ignore_errors=True)
    return seconds


def warm_cache(home: Path) -> None:
    """Read every file once so each run reads from the page cache alike."""
    for path in corpus.transcript_files(home):
        with open(path, "rb") as fh:
            while fh.read(8 * 1024 * 1024):
                pass


def measure(size: int, args: argparse.Namespace) -> dict[str, Any]:
    sessions = max(1, round(size / (1 << 30) * SESSIONS_PER_GB))
    home = CORPUS_DIR / f"index-{size_label(size)}-{sessions}-s{args.seed}"
    built, generated = corpus.ensure(home, sessions, size, seed=args.seed)
    print(f"{size_label(size)}: {built.summary()}{' (generated now)' if generated else ''}")
    warm_cache(home)
    runs = []
    serial = []
    with tempfile.TemporaryDirectory(prefix="agentbar-livefirst-") as tmp:
        scratch = Path(tmp)
        for n in range(args.runs):
            result = phased_run(home, scratch)
            runs.append(result)
            print(
                f"  run {n + 1}: start() {result['started_s']:.3f} s, "
                f"live right {result['live_right_s']:.3f} s, "
                f"ready {result['ready_s']:.2f} s ({result['ratio']:.3f}), {result['states']}"
            )
        for _ in range(args.serial_runs):
            serial.append(serial_run(home, scratch))
            print(f"  serial catch-up: {serial[-1]:.2f} s")
    load = os.getloadavg()
    median = statistics.median
    return {
        "size": size_label(size),
        "corpus_mb": built.total_bytes / MB,
        "files": built.files,
        "runs": runs,
        "live_right_s": median(r["live_right_s"] for r in runs),
        "started_s": median(r["started_s"] for r in runs),
        "live_ready_s": median(r["live_ready_s"] for r in runs),
        "ready_s": median(r["ready_s"] for r in runs),
        "ratio": median(r["ratio"] for r in runs),
        "serial_s": median(serial) if serial else None,
        "loadavg": load,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=corpus.parse_size, default=[1 << 30, 5 << 30])
    parser.add_argument("--runs", type=int, default=3, help="cold starts per size")
    parser.add_argument("--serial-runs", type=int, default=1, help="serial baselines per size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "bench_livefirst.json")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    results = [measure(size, args) for size in args.sizes]
    rows = [
        (
            r["size"],
            f"{r['corpus_mb']:,.0f}",
            f"{r['started_s']:.3f}",
            f"{r['live_ready_s']:.3f}",
            f"{r['live_right_s']:.3f}",
            f"{r['ready_s']:.2f}",
            f"{r['ratio']:.3f}",
            "-" if r["serial_s"] is None else f"{r['serial_s']:.2f}",
            " ".join(f"{x:.2f}" for x in r["loadavg"]),
        )
        for r in results
    ]
    print()
    print(
        table(
            rows,
            (
                "history",
                "MB",
                "start() s",
                "live_ready s",
                "live right s",
                "ready s",
                "right/ready",
                "serial s",
                "load avg",
            ),
        )
    )
    write_json(args.json, {"machine": machine(), "results": results})
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
