"""Measure the folds alone on one core: every record of the corpus through ``turns.reduce_all``
and ``facts.fold_all``, one fresh state per stream, and the records' pickling (what a cold-read
worker sends back).

The records are read first through the stream table (``bench_parse.stream_table``), untimed;
then each fold over all of them is timed ``--runs`` times (CPU seconds) and the median given.
Written for issue 14 (records as msgspec Structs): the folds read the records' fields, so a
record type that is cheaper to build must not be dearer to read.

    python bench/bench_fold.py --corpus bench/corpus/index-1G-600-s1 --runs 5
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_parse import stream_table
from benchlib import CORPUS_DIR


def read_records(home: Path, data_dir: Path) -> list[list[Any]]:
    """Every stream's records, in the order the stream table reads them."""
    table = stream_table(home, data_dir)
    out = [list(table.read(stream, None).records) for stream in table.scan()]
    table.close_all()
    return out


def timed(work: Callable[[], object], runs: int) -> float:
    """The median CPU seconds of ``runs`` calls of ``work``."""
    spent = []
    for _ in range(runs):
        cpu0 = time.process_time()
        work()
        spent.append(time.process_time() - cpu0)
    return statistics.median(spent)


def main(argv: list[str] | None = None) -> int:
    from agentbar.core import facts
    from agentbar.core.state import turns

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR / "index-1G-600-s1")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-fold-") as scratch:
        streams = read_records(args.corpus, Path(scratch) / "data")
    count = sum(len(records) for records in streams)
    empty_turn, empty_facts = turns.TurnState(), facts.SessionFacts()

    def reduce_all() -> None:
        for records in streams:
            turns.reduce_all(empty_turn, records)

    def fold_all() -> None:
        for records in streams:
            facts.fold_all(empty_facts, records)

    def pickles() -> None:
        for records in streams:
            pickle.loads(pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL))

    size = sum(len(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL)) for r in streams)
    print(f"{len(streams)} streams, {count:,} records, pickled {size / 2**20:.1f} MiB")
    for name, work in (
        ("turns.reduce_all", reduce_all),
        ("facts.fold_all", fold_all),
        ("pickle dumps+loads", pickles),
    ):
        cpu = timed(work, args.runs)
        print(f"  {name:20} {cpu:6.3f} s CPU  {cpu / count * 1e6:6.3f} us/record")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
