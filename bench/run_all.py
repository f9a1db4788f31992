"""Run every benchmark with its default sizes and print one summary table (JSON in bench/out/).

Runs, one after another and each in its own process: ``bench_latency.py`` (change-detection
latency), ``bench_index.py`` (corpus generation or reuse, cold index throughput, warm start, peak
RSS) and ``bench_idle.py`` (idle CPU and RSS). Each writes ``bench/out/<name>.json``; this script
adds ``bench/out/summary.json``. Figures only: nothing passes or fails.

    python bench/run_all.py            # about 5 minutes (+12 s the first time, for the corpus)
    python bench/run_all.py --quick    # small sizes, about 70 seconds, for checking the scripts
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchlib import BENCH_DIR, OUT_DIR, machine, table, write_json


def run(name: str, extra: list[str], out: Path) -> tuple[dict[str, Any], float]:
    print(f"\n=== {name} {' '.join(extra)}", flush=True)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, str(BENCH_DIR / f"{name}.py"), *extra, "--json", str(out)], check=True
    )
    seconds = time.perf_counter() - started
    print(f"=== {name} took {seconds:.0f} s", flush=True)
    return json.loads(out.read_text()), seconds


def fmt(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the scripts")
    parser.add_argument(
        "--profile", action="store_true", help="add cProfile hotspots to index and idle"
    )
    args = parser.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    prof = ["--profile"] if args.profile else []
    if args.quick:
        plans = {
            "bench_latency": ["--sessions", "100", "--writes", "40"],
            "bench_index": ["--size", "100M", "--sessions", "60", "--warm-runs", "3", *prof],
            "bench_idle": ["--sessions", "300", "--seconds", "10", *prof],
        }
    else:
        plans = {"bench_latency": [], "bench_index": prof, "bench_idle": prof}
    results: dict[str, dict[str, Any]] = {}
    durations: dict[str, float] = {}
    for name, extra in plans.items():
        results[name], durations[name] = run(name, extra, OUT_DIR / f"{name}.json")

    lat, idx, idle = results["bench_latency"], results["bench_index"], results["bench_idle"]
    el, bl = lat["engine"]["latency"], lat["baseline"]["latency"]
    cold, read, parse = idx["cold"], idx["baseline_read"], idx["baseline_orjson"]
    rss = idx.get("rss", {})
    eng = idle["engine"]
    nothing = idle.get("baseline_nothing", {"pct_core": float("nan"), "cpu_s": float("nan")})
    watchdog = idle.get("baseline_watchdog", {"pct_core": float("nan")})

    def met(ok: bool) -> str:
        return "yes" if ok else "NO"

    rows = [
        [
            "latency p50 (ms)",
            fmt(el["p50_ms"]),
            f"watchdog {fmt(bl['p50_ms'])}",
            f"{el['p50_ms'] / bl['p50_ms']:.1f}x",
            "",
            "",
        ],
        [
            "latency p90 (ms)",
            fmt(el["p90_ms"]),
            f"watchdog {fmt(bl['p90_ms'])}",
            f"{el['p90_ms'] / bl['p90_ms']:.1f}x",
            "",
            "",
        ],
        [
            "latency p99 (ms)",
            fmt(el["p99_ms"]),
            f"watchdog {fmt(bl['p99_ms'])}",
            f"{el['p99_ms'] / bl['p99_ms']:.1f}x",
            "< 100",
            met(el["p99_ms"] < 100),
        ],
        [
            "latency max (ms)",
            fmt(el["max_ms"]),
            f"watchdog {fmt(bl['max_ms'])}",
            f"{el['max_ms'] / bl['max_ms']:.1f}x",
            "",
            "",
        ],
        [
            "cold index (MB/s, wall)",
            fmt(cold["mb_s"]),
            f"read {fmt(read['mb_s'], 0)} / orjson {fmt(parse['mb_s'], 0)}",
            f"{cold['wall_s'] / parse['wall_s']:.1f}x orjson",
            "> 100",
            met(cold["mb_s"] > 100),
        ],
        [
            "cold index (MB per CPU s)",
            fmt(cold["mb_per_cpu_s"]),
            f"orjson {fmt(idx['corpus']['bytes'] / 1e6 / parse['cpu_s'], 0)}",
            f"{cold['cpu_s'] / parse['cpu_s']:.1f}x orjson",
            "",
            "",
        ],
        [
            "cold index (lines/s)",
            fmt(cold["lines_s"], 0),
            f"orjson {fmt(parse['lines_s'], 0)}",
            "",
            "",
            "",
        ],
        [
            "warm start (s, median)",
            fmt(idx["warm"]["median_s"], 3),
            "",
            "",
            "< 1",
            met(idx["warm"]["median_s"] < 1),
        ],
        [
            "idle CPU (% of a core)",
            fmt(eng["pct_core"], 3),
            f"nothing {fmt(nothing['pct_core'], 3)} / watchdog {fmt(watchdog['pct_core'], 3)}",
            "",
            "< 0.5",
            met(eng["pct_core"] < 0.5),
        ],
        [
            "idle RSS (MB)",
            fmt(eng["rss_mb"]),
            f"before service {fmt(eng['rss_before_service_mb'])}",
            "",
            "< 100",
            met(eng["rss_mb"] < 100),
        ],
    ]
    if rss:
        rows.append(
            [
                "cold index peak RSS (MB)",
                fmt(rss["cold_index_rss_mb"]),
                f"bare import {fmt(rss['baseline_import_rss_mb'])}",
                "",
                "< 100",
                met(rss["cold_index_rss_mb"] < 100),
            ]
        )
    info = machine()
    print(
        f"\n=== summary ({info['date']}, {info['cpus']} CPUs, load {info['loadavg_1m']}, "
        f"commit {info['git_commit']})"
    )
    print(
        f"corpus: {idx['corpus']['bytes'] / 1e6:,.0f} MB in {idx['corpus']['files']} files; "
        f"latency over {lat['sessions']} sessions; "
        f"idle over {idle['sessions']} sessions for {idle['seconds']:.0f} s"
    )
    print(table(rows, ["figure", "value", "baseline", "ratio", "target", "met"]))
    print("durations: " + ", ".join(f"{k} {v:.0f} s" for k, v in durations.items()))
    write_json(
        OUT_DIR / "summary.json",
        {"machine": info, "durations_s": durations, "rows": rows, "results": results},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
