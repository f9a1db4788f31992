"""What showing the first reading's progress costs: a cold ``agentbar status`` over a generated
corpus with stderr on a terminal (the progress bar drawn, a real PTY) against the same command
piped (no bar), alternated run by run in one script; how many frames the bar drew and what the
engine published meanwhile (main thread; each run a child process).

    python bench/bench_progress.py [--size 1G] [--sessions 300] [--runs 3] [--json PATH]

The figure that matters is the ratio terminal / piped (1.00: the bar costs nothing). Absolute
seconds move with the machine's load (printed with them) and with the engine's speed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import corpus
from benchlib import CORPUS_DIR, MB, machine, table, write_json
from ptyprocess import PtyProcess

CLEAR = "\r\x1b[K"  # core/progress_bar.py's redraw


def status_env(home: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.update(HOME=str(home), AGENTBAR_DATA_DIR=str(data), TERM="xterm", COLUMNS="120")
    env.pop("XDG_DATA_HOME", None)
    env.pop("XDG_CONFIG_HOME", None)
    return env


def piped(env: dict[str, str]) -> tuple[float, int]:
    """Seconds of a cold status with stdout and stderr piped, and the bar's frames (none)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agentbar.tray", "status"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, done.stderr.count(CLEAR)


def on_terminal(env: dict[str, str]) -> tuple[float, int]:
    """Seconds of a cold status on a PTY (stdout and stderr both), and the bar's frames."""
    started = time.perf_counter()
    child = PtyProcess.spawn(
        [sys.executable, "-m", "agentbar.tray", "status"], env=env, dimensions=(40, 120)
    )
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(child.read(65536))
        except EOFError:
            break
    child.wait()
    seconds = time.perf_counter() - started
    if child.exitstatus != 0:
        raise SystemExit(f"status failed on the terminal: {b''.join(chunks)[-500:]!r}")
    return seconds, b"".join(chunks).decode().count(CLEAR) - 1  # the last one clears it


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1G", help="corpus size (corpus.py's --size)")
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3, help="cold runs of each mode")
    parser.add_argument("--corpus", type=Path, help="where the corpus is (made if needed)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    size = corpus.parse_size(args.size)
    home = args.corpus or CORPUS_DIR / f"progress-{args.sessions}-{args.size}"
    made, generated = corpus.ensure(home, args.sessions, size, seed=14)
    print(f"corpus: {home} ({made.total_bytes / MB:,.0f} MB, {len(made.sessions)} sessions"
          f"{', generated now' if generated else ''})")  # fmt: skip
    times: dict[str, list[float]] = {"piped": [], "terminal": []}
    frames: list[int] = []
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-progress-") as tmp:
        for run in range(args.runs):
            for mode in ("piped", "terminal") if run % 2 == 0 else ("terminal", "piped"):
                env = status_env(home, Path(tmp) / f"{mode}-{run}")
                seconds, drawn = (piped if mode == "piped" else on_terminal)(env)
                times[mode].append(seconds)
                if mode == "terminal":
                    frames.append(drawn)
                print(f"  run {run + 1} {mode:8} {seconds:6.2f} s  {drawn} frames", flush=True)
    medians = {mode: statistics.median(values) for mode, values in times.items()}
    ratio = medians["terminal"] / medians["piped"]
    rate = made.total_bytes / MB / medians["piped"]
    facts = machine()
    print()
    print(
        table(
            [
                ["piped (no bar)", f"{medians['piped']:.2f}", f"{rate:,.0f}", "1.00", "0"],
                [
                    "terminal (bar)",
                    f"{medians['terminal']:.2f}",
                    f"{made.total_bytes / MB / medians['terminal']:,.0f}",
                    f"{ratio:.2f}",
                    str(int(statistics.median(frames))),
                ],
            ],
            ["cold agentbar status", "median s", "MB/s", "ratio", "frames"],
        )
    )
    print(f"load average (1 min) at the end: {facts['loadavg_1m']}")
    result: dict[str, Any] = {
        "machine": facts,
        "corpus": {"home": str(home), "bytes": made.total_bytes, "sessions": len(made.sessions)},
        "seconds": times,
        "median_seconds": medians,
        "ratio_terminal_to_piped": round(ratio, 3),
        "frames": frames,
    }
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
