"""``agentbar usage`` on a warm index against ``ccusage daily --offline`` (main thread).

Both run as child processes on the same corpus HOME (``corpus.py``'s 1 GiB, 600 sessions by
default), taken in turns, ``--runs`` each: wall, CPU and peak RSS (wait4), medians. agentbar's
first run builds its index (the cold figure); the timed runs find it warm. The totals of both
(tokens by kind, cost) are printed side by side: they should agree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import corpus
from bench_index import ccusage_bin
from benchlib import generate_corpus_in_child, machine, table, write_json

DEFAULT_CORPUS = Path(__file__).resolve().parent / "corpus" / "index-1G-600-s1"
MB = 1024 * 1024


def timed(command: list[str], env: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One run of ``command``: its figures and its JSON output."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        doc = json.loads(out.read() or b"{}")
    figures = {
        "rc": os.waitstatus_to_exitcode(status),
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss * 1024 / MB,
    }
    return figures, doc


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s", "rss_mb")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus HOME")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    home: Path = args.corpus
    if not (home / ".claude").exists() and not (home / ".codex").exists():
        print(f"generating the corpus in {home}")
        generate_corpus_in_child(home, 600, corpus.parse_size("1G"), 1)
    work = Path(tempfile.mkdtemp(prefix="bench-usage-"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "XDG_"))},
        "HOME": str(home),
        "AGENTBAR_DATA_DIR": str(work / "data"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
    }
    try:
        return measure(args, home, env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args: argparse.Namespace, home: Path, env: dict[str, str]) -> int:
    mine_cmd = [sys.executable, "-m", "agentbar.tray", "usage", "--json"]
    cold, _ = timed(mine_cmd, env)
    binary = ccusage_bin("20")
    theirs_cmd = None if binary is None else [str(binary), "daily", "--offline", "--json"]
    mine_runs: list[dict[str, Any]] = []
    theirs_runs: list[dict[str, Any]] = []
    mine_doc: dict[str, Any] = {}
    theirs_doc: dict[str, Any] = {}
    for _ in range(args.runs):
        figures, mine_doc = timed(mine_cmd, env)
        mine_runs.append(figures)
        if theirs_cmd is not None:
            figures, theirs_doc = timed(theirs_cmd, env)
            theirs_runs.append(figures)
    mine, theirs = medians(mine_runs), medians(theirs_runs) if theirs_runs else None
    totals = mine_doc.get("totals", {})
    their_totals = theirs_doc.get("totals", {})
    rows = [
        ["agentbar usage (cold: builds the index)", f"{cold['wall_s']:.2f}", f"{cold['cpu_s']:.2f}",
         f"{cold['rss_mb']:.0f}"],
        ["agentbar usage (warm index)", f"{mine['wall_s']:.2f}", f"{mine['cpu_s']:.2f}",
         f"{mine['rss_mb']:.0f}"],
    ]  # fmt: skip
    if theirs is not None:
        rows.append(["ccusage 20 daily --offline", f"{theirs['wall_s']:.2f}",
                     f"{theirs['cpu_s']:.2f}", f"{theirs['rss_mb']:.0f}"])  # fmt: skip
    print(table(rows, ["run", "wall s (median)", "CPU s", "peak RSS MB"]))
    compare = [
        ["input", totals.get("input_tokens"), their_totals.get("inputTokens")],
        ["output", totals.get("output_tokens"), their_totals.get("outputTokens")],
        ["cache read", totals.get("cache_read_tokens"), their_totals.get("cacheReadTokens")],
        ["cache write", totals.get("cache_creation_tokens"),
         their_totals.get("cacheCreationTokens")],
        ["cost USD", totals.get("cost_usd"), their_totals.get("totalCost")],
    ]  # fmt: skip
    print(table(compare, ["totals", "agentbar", "ccusage 20"]))
    write_json(
        args.json,
        {
            "machine": machine(),
            "corpus": str(home),
            "cold": cold,
            "agentbar_warm": mine,
            "ccusage20": theirs,
            "runs": {"agentbar": mine_runs, "ccusage20": theirs_runs},
            "totals": {"agentbar": totals, "ccusage20": their_totals},
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
