"""Helpers shared by the benchmark scripts: timing, percentiles, machine facts, JSON output."""

from __future__ import annotations

import contextlib
import cProfile
import datetime as dt
import gc
import json
import os
import platform
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out"
CORPUS_DIR = BENCH_DIR / "corpus"
MB = 1_000_000  # rates are reported in decimal megabytes per second


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (p99 of 200 samples is the 2nd largest)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100.0 * len(ordered) + 0.5 - 1e-9)))
    return ordered[rank - 1]


def distribution(values_ms: Sequence[float]) -> dict[str, float]:
    return {
        "count": len(values_ms),
        "p50_ms": percentile(values_ms, 50),
        "p90_ms": percentile(values_ms, 90),
        "p99_ms": percentile(values_ms, 99),
        "max_ms": max(values_ms) if values_ms else float("nan"),
        "mean_ms": sum(values_ms) / len(values_ms) if values_ms else float("nan"),
    }


def machine() -> dict[str, Any]:
    """What the figures were measured on, and how busy the machine was."""
    load = os.getloadavg()
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "loadavg_1m": round(load[0], 2),
        "git_commit": _git_commit(),
        "core_uncommitted": _core_changes(),
    }


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def _core_changes() -> list[str]:
    """Engine files that differ from the commit (others edit core/ while benchmarks run)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "core"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return []
    return [line[3:] for line in out.stdout.splitlines()]


def self_rss_bytes() -> int:
    """Current resident set size of this process (Linux: /proc; else the peak)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_json(path: Path | None, result: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"\nJSON written to {path}")


class Stopwatch:
    """Wall and CPU seconds (``time.process_time`` covers every thread of the process)."""

    def __init__(self) -> None:
        self.wall0 = time.perf_counter()
        self.cpu0 = time.process_time()
        self.wall = 0.0
        self.cpu = 0.0

    def stop(self) -> Stopwatch:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0
        return self


def profile_rows(profiler: cProfile.Profile, out: Path, top: int) -> list[str]:
    """Save ``profiler``'s figures to ``out`` and give its ``top`` rows by own time, as
    ``file:line(function)`` relative to the repository."""
    out.parent.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(out)
    stats = pstats.Stats(str(out))
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)  # type: ignore[attr-defined]
    repo = str(Path(__file__).resolve().parents[1]) + "/"
    rows = []
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in entries[:top]:
        where = filename.replace(repo, "")
        rows.append(
            f"{tottime:7.2f}s {100 * tottime / total:5.1f}%  cum {cumtime:7.2f}s  "
            f"{ncalls:>9}  {where}:{line}({func})"
        )
    return rows


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for n, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


class Breakdown:
    """Engine-thread CPU (``time.thread_time``, inclusive) and the longest wall time of a few
    engine methods, by wrapping them on the instance (before ``start()``): a handful of calls
    per tick or file event, so its own cost is negligible."""

    METHODS = (
        "_on_tick",
        "_rescan",
        "_stat_hot_streams",
        "_after_batch",
        "_publish",
    )

    def __init__(self, engine: Any) -> None:
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.longest: dict[str, float] = {}  # wall seconds of the longest call
        for name in self.METHODS:
            setattr(engine, name, self._wrap(name, getattr(engine, name)))
        # The parts that moved out of the engine: process binding, and the index writer's save.
        binder, writer = engine._binder, engine._writer
        binder.check = self._wrap("_binder.check", binder.check)
        writer.persist = self._wrap("_writer.persist", writer.persist)
        engine.processes.refresh = self._wrap("processes.refresh", engine.processes.refresh)

    def _wrap(self, name: str, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start, wall = time.thread_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu[name] = self.cpu.get(name, 0.0) + time.thread_time() - start
                self.calls[name] = self.calls.get(name, 0) + 1
                took = time.perf_counter() - wall
                self.longest[name] = max(self.longest.get(name, 0.0), took)

        return timed

    def reset(self) -> None:
        self.cpu.clear()
        self.calls.clear()
        self.longest.clear()

    def report(self) -> dict[str, dict[str, float]]:
        return {
            name: {
                "cpu_s": round(self.cpu[name], 4),
                "calls": self.calls[name],
                "longest_ms": round(self.longest[name] * 1000, 2),
            }
            for name in sorted(self.cpu, key=lambda n: -self.cpu[n])
        }


class GcPauses:
    """Collections of the cyclic garbage collector while installed, with the longest pause per
    generation (a collection holds the GIL, so every thread waits for it)."""

    def __init__(self) -> None:
        self._started: float | None = None
        self.count: dict[int, int] = {}
        self.longest_ms: dict[int, float] = {}

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            gen = info["generation"]
            took = (time.perf_counter() - self._started) * 1000
            self.count[gen] = self.count.get(gen, 0) + 1
            self.longest_ms[gen] = max(self.longest_ms.get(gen, 0.0), took)
            self._started = None

    def report(self) -> dict[str, dict[str, float]]:
        return {
            f"gen{gen}": {
                "collections": self.count[gen],
                "longest_ms": round(self.longest_ms[gen], 2),
            }
            for gen in sorted(self.count)
        }


def generate_corpus_in_child(home: Path, sessions: int, size: int, seed: int, *extra: str) -> None:
    """Run ``corpus.py`` in a child process, so the measuring process's memory and threads
    stay its own."""
    subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("corpus.py")),
            "--home", str(home),
            "--sessions", str(sessions),
            "--size", str(size),
            "--seed", str(seed),
            *extra,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


@dataclass(frozen=True)
class RealCliHome:
    """A throwaway HOME for the real agent CLIs (``--real`` benchmarks): its folders, the
    scripted model server they talk to and the environment that points them at it."""

    root: Path
    home: Path
    project: Path
    data: Path
    server: Any  # tests/conformance/model_server.ModelServer
    env: dict[str, str]


@contextlib.contextmanager
def real_cli_home(prefix: str, *, path_first: Sequence[Path] = ()) -> Iterator[RealCliHome]:
    """HOME, project and agentbar data folders in a temporary directory, a started model
    server and an environment for the CLIs (``path_first``: folders put ahead of PATH), with
    Claude's and Codex's configuration written; the server is stopped and every process run
    from that HOME killed on the way out."""
    # The conformance rigs: on the path of the --real benchmarks that call this.
    from agent_terminal import kill_tree_of_home
    from claude_rig import claude_env
    from claude_rig import write_config as write_claude
    from codex_rig import write_config as write_codex
    from model_server import ModelServer

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        root = Path(tmp)
        home, project, data = root / "home", root / "project", root / "data"
        for folder in (home, project, data):
            folder.mkdir()
        server = ModelServer().start()
        try:
            path = os.pathsep.join([*(str(p) for p in path_first), os.environ["PATH"]])
            env = {"HOME": str(home), "PATH": path, "TERM": "xterm-256color", "LANG": "C.UTF-8",
                   "AGENTBAR_DATA_DIR": str(data), "MOCK_API_KEY": "bench",
                   **claude_env(server.url)}  # fmt: skip
            write_claude(home, project)
            write_codex(home / ".codex", server.url, project)
            yield RealCliHome(root, home, project, data, server, env)
        finally:
            server.stop()
            kill_tree_of_home(home)
