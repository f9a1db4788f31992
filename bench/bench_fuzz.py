"""The mutation fuzzer at volume: real recorded lines, mutated, through both agents' parsers and
replay adapters and through a live engine over real files (tests/fuzz_lines.py holds every
mutator and target; tests/test_fuzz.py runs a bounded slice of the same in CI).

Prints the counts the issue asks for: mutated lines, crashes (expected 0), lost good lines
(expected 0), what the parsers made of the mutated lines by mutator, the engine's diagnostics,
and lines per second per target. ``--lines`` lines go through each target; the two are
interleaved in chunks, so a run stopped early (Ctrl-C, SIGTERM) still prints exact counts for
what it did. Every chunk's seed derives from ``--seed`` (printed; any failure names its seed).

    python bench/bench_fuzz.py [--lines 1000000] [--seed N] [--json PATH]
"""

from __future__ import annotations

import argparse
import logging
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchlib import OUT_DIR, REPO, machine, table, write_json

sys.path.insert(0, str(REPO / "tests"))

from fuzz_lines import Tally, fuzz_engine, fuzz_lines, load_corpus

LINE_CHUNK = 20_000  # mutated lines per parser/replay chunk
ENGINE_FILES = 20  # scenarios per live-engine round
ENGINE_PER_LINE = 4.0  # mutated lines per good line in a round


class Stop(BaseException):
    """SIGTERM: not an ``Exception``, so no target's containment takes it for a crash."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "fuzz.json")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    logging.disable(logging.WARNING)  # every skipped line is logged; errors still count

    def stop(_signum: int, _frame: Any) -> None:
        raise Stop

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # a background job ignores Ctrl-C's signal otherwise
    corpus = load_corpus()
    print(f"seed {seed}; corpus: {len(corpus.files)} files of the real CLIs and fixtures")
    lines, engine = Tally(seed), Tally(seed)
    started = time.perf_counter()
    chunk = 0
    try:
        with tempfile.TemporaryDirectory(prefix="agentbar-fuzz-") as work:
            while lines.lines < args.lines or engine.lines < args.lines:
                chunk += 1
                chunk_seed = seed * 100_000 + chunk
                if lines.lines <= engine.lines and lines.lines < args.lines:
                    lines.seed = chunk_seed
                    fuzz_lines(corpus, chunk_seed, min(LINE_CHUNK, args.lines - lines.lines), lines)
                else:
                    engine.seed = chunk_seed
                    fuzz_engine(
                        corpus,
                        chunk_seed,
                        Path(work),
                        files=ENGINE_FILES,
                        per_line=ENGINE_PER_LINE,
                        tally=engine,
                    )
                if chunk % 20 == 0:
                    print(
                        f"  {time.perf_counter() - started:7.0f} s: {lines.lines:,} lines through"
                        f" the parsers and replay, {engine.lines:,} through the engine;"
                        f" crashes {len(lines.crashes) + len(engine.crashes)},"
                        f" lost {len(engine.lost)}",
                        flush=True,
                    )
    except (KeyboardInterrupt, Stop):
        print("\nstopped early: the counts below are for what ran", flush=True)
    wall = time.perf_counter() - started
    report(seed, lines, engine, wall, args.json)


def report(seed: int, lines: Tally, engine: Tally, wall: float, json_path: Path) -> None:
    by_outcome: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    for (kind, outcome), count in lines.outcomes.items():
        by_outcome[outcome] += count
        by_kind.setdefault(kind, Counter())[outcome] += count
    outcomes = sorted(by_outcome)
    print(f"\nseed {seed}, {wall:.0f} s wall\n")
    print(
        table(
            [
                [
                    "parsers + replay adapters",
                    f"{lines.lines:,}",
                    len(lines.crashes),
                    "-",
                    f"{lines.lines / lines.seconds:,.0f}" if lines.seconds else "-",
                ],
                [
                    "live engine (+ replay, exports, search)",
                    f"{engine.lines:,} (+{engine.good_lines:,} good)",
                    len(engine.crashes),
                    len(engine.lost),
                    f"{engine.lines / engine.seconds:,.0f}" if engine.seconds else "-",
                ],
            ],
            ["target", "mutated lines", "crashes", "lost good lines", "lines/s"],
        )
    )
    print(
        f"\nregrouped files (every line there, filed under another session than in the clean"
        f" run): {len(engine.regrouped)}"
    )
    print("\nWhat the parsers made of the mutated lines, by mutator:\n")
    rows = [[kind, *(f"{c[o]:,}" for o in outcomes)] for kind, c in sorted(by_kind.items())]
    rows.append(["all", *(f"{by_outcome[o]:,}" for o in outcomes)])
    print(table(rows, ["mutator", *outcomes]))
    print("\nThe live engine's diagnostics over its runs:\n")
    print(
        table([[k, f"{v:,}"] for k, v in sorted(engine.engine_counts.items())], ["count", "lines"])
    )
    for failure in (lines.crashes + engine.crashes)[:5] + engine.lost[:10] + engine.regrouped[:5]:
        print("\n" + failure)
    write_json(
        json_path,
        {
            "machine": machine(),
            "seed": seed,
            "wall_seconds": round(wall, 1),
            "lines": lines.summary(),
            "engine": engine.summary(),
            "crash_details": (lines.crashes + engine.crashes)[:20],
            "lost_details": engine.lost[:50],
            "regrouped_details": engine.regrouped[:50],
        },
    )


if __name__ == "__main__":
    main()
