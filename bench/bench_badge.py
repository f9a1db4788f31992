"""Measure what drawing the tray icon costs: one badge's StatusNotifier pixmaps (every size, 16
to 64 px), drawn from nothing, against the same set from the cache, and against the bitmap-font
badge it replaced (``git show BASE:tray/badge.py``, drawn at the sizes it had), in turns.

The tray draws a new set when the badge changes to a state it has not shown since it started
(on the D-Bus thread for the StatusNotifierItem, the X thread for XEmbed); the same state again
comes from the cache.

    python bench/bench_badge.py [--rounds 20] [--base main] [--json out/badge.json]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from benchlib import distribution, machine, table, write_json

from agentbar.tray import badge, view
from agentbar.tray.sni import pixmaps
from agentbar.tray.view import Badge

ROOT = Path(__file__).resolve().parents[1]
STATES = [Badge(), Badge(failed=True), *(Badge(needs=n) for n in range(1, 11))]


def old_badge(base: str) -> Any:
    """The badge module as it was at ``base``, its ``.view`` import pointed at today's."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{base}:tray/badge.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("old_badge")
    module.__dict__["__name__"] = "old_badge"
    code = source.replace("from .view import Badge, Mark", "")
    module.__dict__.update(Badge=view.Badge, Mark=view.Mark)
    exec(compile(code, f"{base}:tray/badge.py", "exec"), module.__dict__)
    return module


def new_set(state: Badge) -> float:
    badge._render.cache_clear()
    badge._fitted.cache_clear()
    pixmaps.pixmaps.cache_clear()
    start = time.perf_counter()
    pixmaps.pixmaps(state)
    return (time.perf_counter() - start) * 1000.0


def cached_set(state: Badge) -> float:
    pixmaps.pixmaps(state)
    start = time.perf_counter()
    pixmaps.pixmaps(state)
    return (time.perf_counter() - start) * 1000.0


def old_set(old: Any, state: Badge) -> float:
    start = time.perf_counter()
    for size in (*old.SIZES, 48):  # the sizes its pixmaps had
        pixmaps.argb32(old.render(state, size))
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--base", default="main", help="the commit with the old badge")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    old = old_badge(args.base)
    samples: dict[str, list[float]] = {"new, drawn": [], "new, cached": [], "old, drawn": []}
    for _ in range(args.rounds):
        for state in STATES:  # in turns: the same load for all three
            samples["new, drawn"].append(new_set(state))
            samples["new, cached"].append(cached_set(state))
            samples["old, drawn"].append(old_set(old, state))
    figures = {name: distribution(values) for name, values in samples.items()}
    base = figures["old, drawn"]["p50_ms"]
    rows = [
        [name, f"{f['p50_ms']:.2f}", f"{f['p99_ms']:.2f}", f"{f['p50_ms'] / base:.2f}"]
        for name, f in figures.items()
    ]
    print(table(rows, ["pixmap set (one badge)", "p50 ms", "p99 ms", "p50 / old"]))
    write_json(
        args.json,
        {"machine": machine(), "rounds": args.rounds, "sizes": list(badge.SIZES),
         "figures": figures},
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
