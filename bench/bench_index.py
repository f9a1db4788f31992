"""Measure cold index throughput, warm start time and peak RSS of the engine over a >=1 GB corpus.

1. Cold: ``Engine.catch_up()`` on an empty index (fresh data dir) with a ``FakeProcessTable()``
   (no processes), on this thread: wall and CPU seconds, MB/s (transcript bytes / wall s),
   lines/s and the engine's stats; ``--cold-runs`` runs (a fresh data dir each), the median one
   reported.
2. Warm: a second ``Engine`` (new in-memory state, same index file) ``catch_up()`` with nothing
   changed; the median of ``--warm-runs`` runs.
3. Baselines in the same process: reading every byte of the corpus (``open().read()`` in 8 MiB
   chunks) and ``orjson.loads`` of every line, so the engine's overhead is a ratio.
4. Peak RSS: the cold index again in a child process (this script with ``--child-cold``), its
   ``ru_maxrss`` from ``getrusage(RUSAGE_CHILDREN)``, next to a bare
   ``python -c "import agentbar.core.engine"`` child; with the cold read on workers, the
   child's own VmHWM and its largest worker's peak RSS too.
5. The cold read on every core (``core/cold_read.py``) against the serial read: the cold runs
   use the default workers (one per core), and ``--serial-runs`` more with
   ``AGENTBAR_READ_WORKERS=0``; CPU is the engine's own plus its workers' (the children's).
   Each cold run's phases: the scan, waiting on workers, reading on the engine thread, merging
   what workers read, staging search rows, saving the index, deciding and publishing (the
   rest), and after ``catch_up`` the full-text backlog (``drain()``).
6. ccusage 20 and ccusage 17 from npm on the same corpus (``--ccusage-runs`` each, median):
   installed on first use with ``npm install --prefix ~/.cache/agentbar-bench/npm<major>``
   (ccusage 20's native binary, an optional dependency npm may skip, is installed with it),
   run as ``ccusage daily --offline --json`` with ``HOME``, ``CLAUDE_CONFIG_DIR`` and
   ``CODEX_HOME`` pointing at the corpus. ccusage 20 reads the Claude and the Codex files (the
   same bytes the engine reads), ccusage 17 only the Claude ones; MB/s is of the bytes each
   reads. Wall, CPU (user + sys) and peak RSS from ``wait4``.

The corpus is generated once (``bench/corpus/`` by default, gitignored) and reused while its
manifest matches; ``--corpus DIR`` names another one (an existing corpus there is used as is).
Files are read from the page cache (they were just written or read), so the figures are for a
warm OS cache. Nothing here passes or fails: it prints figures.

    python bench/bench_index.py --size 1G
    python bench/bench_index.py --corpus bench/corpus/index-1G-600-s1 --json bench/out/index.json
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import json
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import corpus
import orjson
from benchlib import CORPUS_DIR, MB, OUT_DIR, Stopwatch, machine, profile_rows, table, write_json

READ_CHUNK = 8 * 1024 * 1024
TARGET_MB_S = 100.0
TARGET_WARM_S = 1.0
TARGET_RSS_MB = 100.0


def size_label(size: int) -> str:
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("k", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def open_engine(home: Path, data_dir: Path) -> Any:
    """An engine over ``home``'s agents with its index in ``data_dir`` and no processes."""
    from agentbar.core.config import Settings
    from agentbar.core.engine import Engine
    from agentbar.core.index import Index
    from agentbar.core.procs import FakeProcessTable

    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data_dir)})
    index = Index.open(settings.index_path)
    return Engine(settings.sources(), index, processes=FakeProcessTable(), traits=settings.traits())


class Phases:
    """Wall seconds spent in a few engine methods, each net of the others it calls (wrapped on
    the instance: a few calls per file)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[float] = []  # time the callers' children took, per open call

    def wrap(self, owner: Any, method: str, phase: str) -> None:
        inner = getattr(owner, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self._stack.append(0.0)
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self._close(phase, time.perf_counter() - start)

        setattr(owner, method, timed)

    def wrap_iterator(self, owner: Any, method: str, phase: str) -> None:
        """Time each step of the iterator ``method`` returns (waiting on workers)."""
        inner = getattr(owner, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            steps = inner(*args, **kwargs)
            while True:
                self._stack.append(0.0)
                start = time.perf_counter()
                try:
                    item = next(steps)
                except StopIteration:
                    self._close(phase, time.perf_counter() - start)
                    return
                self._close(phase, time.perf_counter() - start)
                yield item

        setattr(owner, method, timed)

    def _close(self, phase: str, elapsed: float) -> None:
        children = self._stack.pop()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + elapsed - children
        if self._stack:
            self._stack[-1] += elapsed


PHASES = (
    ("scan", "the scan (listing and classifying files)"),
    ("wait", "waiting on workers (their start included)"),
    ("read", "reading on the engine thread (parse + fold)"),
    ("merge", "merging what workers read (adopt + fold)"),
    ("stage", "staging search rows (SQLite)"),
    ("persist", "saving the index (SQLite)"),
    ("rest", "load, decide, publish (the rest of catch_up)"),
    ("fts", "full-text backlog after catch_up (drain)"),
)


def instrument(engine: Any) -> Phases:
    phases = Phases()
    phases.wrap(engine.streams, "scan", "scan")
    phases.wrap_iterator(engine.cold, "read", "wait")
    phases.wrap(engine, "_read", "read")
    phases.wrap(engine, "_take", "merge")
    phases.wrap(engine._writer, "stage_search", "stage")
    phases.wrap(engine._writer, "persist", "persist")
    return phases


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold_run(home: Path, data_dir: Path, *, workers: int | None = None) -> dict[str, Any]:
    shutil.rmtree(data_dir, ignore_errors=True)
    engine = open_engine(home, data_dir)
    if workers is not None:
        engine.cold.workers = workers
    phases = instrument(engine)
    children0 = children_cpu()
    watch = Stopwatch()
    engine.catch_up()
    watch.stop()
    workers_cpu = children_cpu() - children0
    fts = Stopwatch()
    engine.drain()  # the full-text backlog the catch-up left, slice by slice
    fts.stop()
    stats = engine.stats()
    engine.stop()
    engine.index.close()
    seconds = dict(phases.seconds)
    seconds["rest"] = watch.wall - sum(seconds.values())
    seconds["fts"] = fts.wall
    return {
        "wall_s": watch.wall,
        "cpu_s": watch.cpu,
        "workers": engine.cold.workers,
        "workers_cpu_s": workers_cpu,
        "total_cpu_s": watch.cpu + workers_cpu,
        "merged_files": engine.cold.merged,
        "phases_s": seconds,
        "searchable_s": watch.wall + fts.wall,
        "stats": dataclasses.asdict(stats),
    }


# -- ccusage, the baseline a user compares with ------------------------------------------------

CCUSAGE = {
    "20": ["ccusage@20.0.24", "@ccusage/ccusage-linux-x64@20.0.24"],
    "17": ["ccusage@17.2.1"],
}
NPM_CACHE = Path.home() / ".cache" / "agentbar-bench"


def ccusage_bin(major: str) -> Path | None:
    """ccusage ``major`` from npm, installed on first use (None when npm cannot)."""
    prefix = NPM_CACHE / f"npm{major}"
    binary = prefix / "node_modules" / ".bin" / "ccusage"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        print(f"ccusage {major}: npm not found; skipped")
        return None
    packages = CCUSAGE[major]
    if major == "20" and not (sys.platform == "linux" and os.uname().machine == "x86_64"):
        packages = packages[:1]  # npm picks the native binary of another platform itself
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *packages],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not binary.exists():
        print(f"ccusage {major}: npm install failed; skipped\n{done.stderr[-2000:]}")
        return None
    return binary


def ccusage_run(binary: Path, home: Path) -> dict[str, Any]:
    """One ``ccusage daily --offline --json`` over ``home``: wall, CPU and peak RSS (wait4)."""
    env = {
        **os.environ,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
    }
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(
            [str(binary), "daily", "--offline", "--json"],
            env=env,
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        report = json.loads(out.read() or b"{}")
    totals = report.get("totals", {})
    return {
        "rc": child.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss * 1024 / MB,
        "tokens": totals.get("totalTokens"),
        "agents": sorted(
            {
                a
                for day in report.get("daily", [])
                for a in day.get("metadata", {}).get("agents", [])
            }
        ),
    }


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        **sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2],
        "runs_wall_s": [r["wall_s"] for r in runs],
    }


def interleaved(
    home: Path, data_dir: Path, args: argparse.Namespace
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The cold runs on workers, the serial ones and ccusage's, taken in turns (round n runs
    the n-th of each), so that a load that comes and goes weighs on each alike."""
    binaries = {}
    for major, runs in (("20", args.ccusage_runs), ("17", args.ccusage17_runs)):
        binary = ccusage_bin(major) if runs else None
        if binary is not None:
            binaries[major] = (binary, runs)
    colds: list[dict[str, Any]] = []
    serials: list[dict[str, Any]] = []
    ccusage: dict[str, list[dict[str, Any]]] = {major: [] for major in binaries}
    rounds = max([args.cold_runs, args.serial_runs, *(n for _, n in binaries.values())])
    for n in range(rounds):
        for major, (binary, runs) in binaries.items():
            if n < runs:
                run = ccusage_run(binary, home)
                ccusage[major].append(run)
                print(
                    f"ccusage {major}:  {run['wall_s']:6.2f} s wall  {run['cpu_s']:6.2f} s CPU  "
                    f"{run['rss_mb']:6.0f} MB peak RSS  (rc {run['rc']}, agents {run['agents']})"
                )
        for runs, wanted, workers in (
            (colds, args.cold_runs, None),
            (serials, args.serial_runs, 0),
        ):
            if n < wanted:
                runs.append(cold_run(home, data_dir, workers=workers))
                run = runs[-1]
                print(
                    f"cold catch_up:   {run['wall_s']:6.2f} s wall  {run['cpu_s']:6.2f} s CPU "
                    f"(+{run['workers_cpu_s']:.2f} s in {run['workers']} workers)  "
                    f"{run['stats']['bytes_read'] / MB / run['wall_s']:8.1f} MB/s  "
                    f"{run['stats']['lines'] / run['wall_s']:,.0f} lines/s; "
                    f"searchable after {run['searchable_s']:.2f} s"
                )
    return colds, serials, ccusage


def warm_run(home: Path, data_dir: Path) -> dict[str, Any]:
    watch = Stopwatch()
    engine = open_engine(home, data_dir)
    opened = time.perf_counter() - watch.wall0
    engine.catch_up()
    watch.stop()
    stats = dataclasses.asdict(engine.stats())
    engine.stop()
    engine.index.close()
    return {"wall_s": watch.wall, "cpu_s": watch.cpu, "open_s": opened, "stats": stats}


def baseline_read(files: list[Path]) -> Stopwatch:
    watch = Stopwatch()
    total = 0
    for path in files:
        with open(path, "rb") as fh:
            while chunk := fh.read(READ_CHUNK):
                total += len(chunk)
    watch.stop()
    return watch


def baseline_orjson(files: list[Path]) -> tuple[Stopwatch, int]:
    """Read each file in 8 MiB chunks, split into lines and ``orjson.loads`` every one."""
    loads = orjson.loads
    watch = Stopwatch()
    lines = 0
    for path in files:
        held = b""
        with open(path, "rb") as fh:
            while chunk := fh.read(READ_CHUNK):
                pieces = (held + chunk).split(b"\n")
                held = pieces.pop()
                for line in pieces:
                    if line:
                        loads(line)
                lines += len(pieces)
        if held:
            loads(held)
            lines += 1
    watch.stop()
    return watch, lines


# Runs one command and reports its peak RSS. A child's ``ru_maxrss`` on Linux also counts the
# memory of the process that spawned it (fork/vfork shares the parent's pages until exec), so the
# benchmark's own big process must not be the direct parent: this small launcher is.
_LAUNCHER = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=False)
print(json.dumps({"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-4000:],
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def child_rss(args: list[str]) -> tuple[int, str]:
    """Run ``args`` in a grandchild; its peak RSS in bytes (``getrusage(RUSAGE_CHILDREN)`` in
    the launcher) and its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    )
    report = json.loads(done.stdout)
    if report["rc"] != 0:
        raise SystemExit(f"child failed ({report['rc']}): {' '.join(args)}\n{report['stderr']}")
    return report["maxrss_kb"] * 1024, report["stdout"]


def launcher_rss() -> int:
    """The launcher's own peak RSS: the floor under every figure ``child_rss`` reports."""
    code = "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(json.loads(done.stdout)["stdout"]) * 1024


def vm_hwm() -> int:
    """This process's own peak RSS (``VmHWM``), which excludes any parent's pages."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def profile_catch_up(home: Path, data_dir: Path, out: Path, top: int) -> list[str]:
    """cProfile one ``catch_up()`` (cold when ``data_dir`` is empty, else warm); the top rows
    by own time, as ``file:line(function)``."""
    engine = open_engine(home, data_dir)
    profiler = cProfile.Profile()
    profiler.enable()
    engine.catch_up()
    profiler.disable()
    engine.stop()
    engine.index.close()
    return profile_rows(profiler, out, top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=corpus.parse_size, default=corpus.parse_size("1G"))
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=None, help="corpus HOME to reuse or create")
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--serial-runs", type=int, default=3, help="cold runs with no workers")
    parser.add_argument("--ccusage-runs", type=int, default=3, help="ccusage 20 runs (0: none)")
    parser.add_argument("--ccusage17-runs", type=int, default=3, help="ccusage 17 runs (0: none)")
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--no-rss", action="store_true", help="skip the child-process RSS runs")
    parser.add_argument(
        "--profile", action="store_true", help="also run the cold index under cProfile"
    )
    parser.add_argument("--top", type=int, default=25, help="profile rows to print")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--child-cold", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    if args.child_cold:  # the RSS child: one cold index, figures on stdout
        result = cold_run(args.corpus, args.data_dir)
        result["vm_hwm"] = vm_hwm()
        # The largest worker's peak (they are all joined by now).
        result["workers_maxrss"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        print(json.dumps(result))
        return 0

    info = machine()
    load_start = os.getloadavg()
    home = args.corpus or CORPUS_DIR / f"index-{size_label(args.size)}-{args.sessions}-s{args.seed}"
    print(f"corpus: {home}")
    t0 = time.perf_counter()
    if args.corpus is not None and (home / corpus.MANIFEST).exists():
        built, generated = corpus.Corpus.load(home), False
    else:
        built, generated = corpus.ensure(
            home, args.sessions, args.size, seed=args.seed, progress=True
        )
    setup_s = time.perf_counter() - t0
    print(f"  {built.summary()}")
    print(f"  {'generated' if generated else 'reused'} in {setup_s:.1f} s")
    files = corpus.transcript_files(home)
    corpus_bytes = sum(p.stat().st_size for p in files)
    claude_bytes = sum(p.stat().st_size for p in files if (home / ".claude") in p.parents)

    def ccusage_bytes(major: str) -> int:
        return corpus_bytes if major == "20" else claude_bytes  # 17 reads Claude's alone

    scratch = Path(tempfile.mkdtemp(prefix="agentbar-bench-index-"))
    try:
        # Baselines first: they also make sure every file is in the page cache.
        read = baseline_read(files)
        read = baseline_read(files)
        parse, lines = baseline_orjson(files)
        print(
            f"baseline read:   {read.wall:6.2f} s wall  {read.cpu:6.2f} s CPU  "
            f"{corpus_bytes / MB / read.wall:8.0f} MB/s"
        )
        print(
            f"baseline orjson: {parse.wall:6.2f} s wall  {parse.cpu:6.2f} s CPU  "
            f"{corpus_bytes / MB / parse.wall:8.0f} MB/s  {lines / parse.wall:,.0f} lines/s"
        )

        data_dir = scratch / "data"
        colds, serials, ccusage_runs = interleaved(home, data_dir, args)
        ccusage = {major: median_run(runs) for major, runs in ccusage_runs.items()}
        cold = sorted(colds, key=lambda r: r["wall_s"])[len(colds) // 2]
        serial = sorted(serials, key=lambda r: r["wall_s"])[len(serials) // 2] if serials else None
        stats = cold["stats"]
        mb_s = corpus_bytes / MB / cold["wall_s"]
        if len(colds) > 1:
            print(f"  median of {len(colds)}: {cold['wall_s']:.2f} s wall, {mb_s:.1f} MB/s")
        print(f"  engine stats: {stats}")
        print("  phases of the median cold run (wall s; serial run beside it):")
        for phase, what in PHASES:
            beside = f"{serial['phases_s'].get(phase, 0.0):7.3f}" if serial else ""
            print(f"    {cold['phases_s'].get(phase, 0.0):7.3f}  {beside}  {phase:8} {what}")
        # Ensure the rows of the index are those of a default (pooled) run for the warm runs.
        cold_run(home, data_dir)
        index_bytes = sum(p.stat().st_size for p in data_dir.iterdir() if p.is_file())

        warm_runs = [warm_run(home, data_dir) for _ in range(args.warm_runs)]
        warm_walls = [r["wall_s"] for r in warm_runs]
        warm_median = statistics.median(warm_walls)
        print(
            f"warm catch_up:   median {warm_median * 1000:7.1f} ms of {len(warm_walls)} "
            f"(min {min(warm_walls) * 1000:.1f}, max {max(warm_walls) * 1000:.1f}); "
            f"read {warm_runs[-1]['stats']['bytes_read']} bytes"
        )

        rss: dict[str, Any] = {}
        if not args.no_rss:
            floor = launcher_rss()
            base_rss, _ = child_rss([sys.executable, "-c", "import agentbar.core.engine"])
            child_data = scratch / "child-data"
            cold_rss, out = child_rss(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--child-cold",
                    "--corpus",
                    str(home),
                    "--data-dir",
                    str(child_data),
                ]
            )
            child = json.loads(out.strip().splitlines()[-1])
            rss = {
                "baseline_import_rss_mb": base_rss / MB,
                "cold_index_rss_mb": cold_rss / MB,
                "cold_index_vm_hwm_mb": child["vm_hwm"] / MB,
                "cold_index_worker_peak_mb": child["workers_maxrss"] / MB,
                "cold_index_workers": child["workers"],
                "launcher_floor_mb": floor / MB,
                "child_cold_wall_s": child["wall_s"],
                "child_cold_cpu_s": child["cpu_s"],
            }
            print(
                f"peak RSS:        cold index child {cold_rss / MB:6.1f} MB (its VmHWM "
                f"{child['vm_hwm'] / MB:.1f} MB; largest of its {child['workers']} workers "
                f"{child['workers_maxrss'] / MB:.1f} MB); "
                f"bare import child {base_rss / MB:6.1f} MB "
                f"(launcher floor {floor / MB:.1f} MB; the child's cold run took "
                f"{child['wall_s']:.2f} s wall, {child['cpu_s']:.2f} s CPU)"
            )

        hotspots: dict[str, list[str]] = {}
        if args.profile:
            for kind in ("cold", "warm"):
                prof_path = OUT_DIR / f"bench_index.{kind}.prof"
                hotspots[kind] = profile_catch_up(
                    home, scratch / "profile-data", prof_path, args.top
                )
                print(f"\ncProfile of a {kind} catch_up (own time; saved to {prof_path}):")
                for row in hotspots[kind]:
                    print("  " + row)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    result: dict[str, Any] = {
        "benchmark": "index",
        "machine": info,
        "loadavg_1m_end": round(os.getloadavg()[0], 2),
        "loadavg_start": [round(v, 2) for v in load_start],
        "corpus": {
            "home": str(home),
            "sessions": len(built.sessions),
            "files": len(files),
            "bytes": corpus_bytes,
            "lines": lines,
            "generated": generated,
            "setup_s": setup_s,
        },
        "baseline_read": {
            "wall_s": read.wall,
            "cpu_s": read.cpu,
            "mb_s": corpus_bytes / MB / read.wall,
        },
        "baseline_orjson": {
            "wall_s": parse.wall,
            "cpu_s": parse.cpu,
            "mb_s": corpus_bytes / MB / parse.wall,
            "lines_s": lines / parse.wall,
        },
        "cold": {
            "wall_s": cold["wall_s"],
            "cpu_s": cold["cpu_s"],
            "workers": cold["workers"],
            "workers_cpu_s": cold["workers_cpu_s"],
            "total_cpu_s": cold["total_cpu_s"],
            "merged_files": cold["merged_files"],
            "phases_s": cold["phases_s"],
            "searchable_s": cold["searchable_s"],
            "mb_s": mb_s,
            "runs_wall_s": [r["wall_s"] for r in colds],
            "runs_cpu_s": [r["cpu_s"] for r in colds],
            "mb_per_cpu_s": corpus_bytes / MB / cold["cpu_s"],
            "lines_s": stats["lines"] / cold["wall_s"],
            "stats": stats,
            "index_bytes": index_bytes,
            "ratio_vs_read": cold["wall_s"] / read.wall,
            "ratio_vs_orjson": cold["wall_s"] / parse.wall,
        },
        "serial": serial,
        "ccusage": {
            major: {
                **run,
                "bytes": ccusage_bytes(major),
                "mb_s": ccusage_bytes(major) / MB / run["wall_s"],
                "cold_wall_ratio": cold["wall_s"] / run["wall_s"],
            }
            for major, run in ccusage.items()
        },
        "warm": {
            "median_s": warm_median,
            "runs_s": warm_walls,
            "cpu_s": [r["cpu_s"] for r in warm_runs],
        },
        "rss": rss,
        "hotspots": hotspots,
        "targets": {
            "cold_mb_s": {
                "target": f"> {TARGET_MB_S:.0f}",
                "value": mb_s,
                "met": mb_s > TARGET_MB_S,
            },
            "warm_s": {
                "target": f"< {TARGET_WARM_S:.0f}",
                "value": warm_median,
                "met": warm_median < TARGET_WARM_S,
            },
        },
    }
    if rss:
        result["targets"]["rss_mb"] = {
            "target": f"< {TARGET_RSS_MB:.0f}",
            "value": rss["cold_index_rss_mb"],
            "met": rss["cold_index_rss_mb"] < TARGET_RSS_MB,
        }
    print()
    print(
        table(
            [
                [
                    "read 8 MiB chunks",
                    f"{read.wall:.2f}",
                    f"{read.cpu:.2f}",
                    f"{corpus_bytes / MB / read.wall:.0f}",
                    "1.0x",
                ],
                [
                    "orjson.loads per line",
                    f"{parse.wall:.2f}",
                    f"{parse.cpu:.2f}",
                    f"{corpus_bytes / MB / parse.wall:.0f}",
                    f"{parse.wall / read.wall:.1f}x",
                ],
                [
                    f"engine cold catch_up ({cold['workers']} workers)",
                    f"{cold['wall_s']:.2f}",
                    f"{cold['total_cpu_s']:.2f}",
                    f"{mb_s:.1f}",
                    f"{cold['wall_s'] / read.wall:.1f}x",
                ],
                *(
                    [
                        [
                            f"engine cold, serial ({len(serials)} run)",
                            f"{serial['wall_s']:.2f}",
                            f"{serial['total_cpu_s']:.2f}",
                            f"{corpus_bytes / MB / serial['wall_s']:.1f}",
                            f"{serial['wall_s'] / read.wall:.1f}x",
                        ]
                    ]
                    if serial
                    else []
                ),
                *(
                    [
                        f"ccusage {major} daily (median)",
                        f"{run['wall_s']:.2f}",
                        f"{run['cpu_s']:.2f}",
                        f"{ccusage_bytes(major) / MB / run['wall_s']:.1f}",
                        f"{run['wall_s'] / read.wall:.1f}x",
                    ]
                    for major, run in ccusage.items()
                ),
                [
                    "engine warm catch_up (median)",
                    f"{warm_median:.3f}",
                    f"{statistics.median(r['cpu_s'] for r in warm_runs):.3f}",
                    "-",
                    "-",
                ],
            ],
            ["", "wall s", "CPU s", "MB/s", "vs read"],
        )
    )
    print(
        f"\ncorpus {corpus_bytes / MB:,.0f} MB in {len(files)} files "
        f"({claude_bytes / MB:,.0f} MB Claude's); "
        f"cold engine / orjson baseline = {cold['wall_s'] / parse.wall:.1f}x"
    )
    for major, run in ccusage.items():
        print(
            f"cold engine / ccusage {major}: {cold['wall_s'] / run['wall_s']:.2f}x the wall time "
            f"(ccusage {major} {run['wall_s']:.2f} s, engine {cold['wall_s']:.2f} s; CPU "
            f"{run['cpu_s']:.2f} s against {cold['total_cpu_s']:.2f} s)"
        )
    if serial:
        print(f"cold on workers / serial: {cold['wall_s'] / serial['wall_s']:.2f}x the wall time")
    print(
        f"load average (1 min): {load_start[0]:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end"
    )
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
