"""What fitting ``agentbar status``'s table to the terminal costs: 5,000 sessions rendered by
``status_table.render_table`` (widths measured per character, paths cut in the middle, columns
shared by weight) against the plain ``text.table`` of the same cells at their natural widths
(the baseline, in the same run), ASCII titles and East Asian ones, at 80 and 200 columns.

    python bench/bench_status_table.py [--sessions 5000] [--runs 15] [--json FILE]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchlib import machine, percentile, write_json

from agentbar.core.model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
)
from agentbar.core.records import Usage
from agentbar.core.status_table import (
    ACTIVE,
    AGENT,
    ID,
    PROJECT,
    STATE,
    TITLE,
    render_table,
    row_cells,
)
from agentbar.core.text import natural_widths, table

NOW = 1_800_000_000.0
HOME = "/home/alice"


def sessions(count: int, title: str) -> list[SessionSnapshot]:
    return [
        SessionSnapshot(
            key=SessionKey(Agent("claude"), f"{i:08x}-0000-4000-8000-000000000000"),
            project=f"{HOME}/projects/client-{i % 40}/worktrees/feature-{i}",
            title=(title + " ") * 3 + str(i),
            state=SessionState(state=State.DONE, source=Source.TRANSCRIPT, detail="Done."),
            state_since=NOW,
            started_at=NOW - 600,
            last_activity=NOW - i,
            model=None,
            usage=Usage(input_tokens=30_000 + i, output_tokens=8_000, cache_read_tokens=10**7),
            transcript=None,
            process=None,
        )
        for i in range(count)
    ]


def plain(rows: list[SessionSnapshot]) -> str:
    """The baseline: the same cells, no fitting (what main's table did, at natural widths)."""
    names = [c.name for c in (STATE, ID, AGENT, PROJECT, TITLE, ACTIVE)]
    every = [row_cells(s, now=NOW, home=HOME) for s in rows]
    cells = [[row[n] for n in names] for row in every]
    return table(names, cells, natural_widths(names, cells))


def timed(run: Callable[[], str], runs: int) -> list[float]:
    run()  # warm: imports, caches
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    measured: list[dict[str, object]] = []
    result = {"machine": machine(), "sessions": args.sessions, "rows": measured}
    print("| titles | columns | render_table median | p99 | plain table median | ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for kind, title in (("ASCII", "fix the flaky login test"), ("East Asian", "データベース移行")):
        rows = sessions(args.sessions, title)
        base = timed(functools.partial(plain, rows), args.runs)
        for width in (80, 200):
            fit = functools.partial(render_table, rows, now=NOW, width=width, home=HOME)
            fitted = timed(fit, args.runs)
            ratio = statistics.median(fitted) / statistics.median(base)
            print(
                f"| {kind} | {width} | {statistics.median(fitted):.0f} ms | "
                f"{percentile(fitted, 99):.0f} ms | {statistics.median(base):.0f} ms | "
                f"{ratio:.2f} |"
            )
            measured.append(
                {"titles": kind, "columns": width, "fitted_ms": fitted, "plain_ms": base}
            )
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
