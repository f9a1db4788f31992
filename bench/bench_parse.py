"""Measure the per-line parse step alone on one core: the stream table reading every transcript.

The parse step is what ``StreamTable.read`` does for each stream of the corpus: tail the file
(``FileTailer``), decode each line, turn it into records (the agents' parsers), pick the search
rows and count what was odd. No engine, no index, no SQLite: what is left of a cold catch-up when
those are taken away, on this thread.

Figures, all as CPU seconds and MB/s of transcript bytes per CPU second, in one run:

1. ``orjson.loads`` of every line (files read in 8 MiB chunks and split), the baseline: what a
   parser that decodes every byte pays before doing anything with the values.
2. The parse step with the full decode (``full_decode()``: every line through ``orjson.loads``
   into the same parsers): the parse step as it was before the fast decoding.
3. The parse step as the engine runs it (the fast decoding: only the fields the parsers read).
4. The floor (``scan``): every line's syntax checked by msgspec into a struct with no fields,
   so nothing is built: what any reader pays that checks each line's JSON as strictly as the
   parse step does, before one line of Python per line. The parse step's distance to it is
   the per-line Python (issue 14: the cold index against ccusage 20).
5. The usage-only pass (``usage``): every line cut, and only the lines holding ``"usage"`` or
   ``"token_count"`` syntax-checked as in 4 (the others skipped by a byte search): what a
   reader that reads usage alone, as ccusage does, pays in Python before building anything.
   It is no exact first pass (a malformed line elsewhere, a time, a turn's records would go
   unseen); it bounds from below what any reading of this corpus in Python costs.

With ``--kinds``, one more table: the parse step per kind of line (Claude's line type and first
content block, Codex's line type and payload type), each line timed alone through its stream's
parser, with ``orjson.loads`` and the syntax check of the same lines beside it, and the parse
step's Python per line over the syntax check: where the per-line work of the parsers goes.

Each is run ``--runs`` times (interleaved), the median reported, with its ratio to the
baseline. Both parse modes must produce the same records, search rows and counters: the script
checks a digest of them and fails loudly when they differ. The digest reads each value as its
type's name and its fields' values (``neutral``), not its ``repr``: the same on a tree whose
records are dataclasses and on one whose records are msgspec Structs, so two trees' digests
compare too.

    python bench/bench_parse.py --size 1G
    python bench/bench_parse.py --corpus bench/corpus/index-1G-600-s1 --profile
    python bench/bench_parse.py --corpus bench/corpus/index-1G-600-s1 --runs 1 --kinds
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import corpus
import msgspec
import orjson
from benchlib import CORPUS_DIR, MB, OUT_DIR, machine, profile_rows, table, write_json

READ_CHUNK = 8 * 1024 * 1024


@dataclass
class Run:
    cpu_s: float
    wall_s: float
    bytes: int
    lines: int
    records: int = 0
    search_rows: int = 0
    digest: str = ""


class _NoField(msgspec.Struct):
    """A line's JSON object with every field skipped: the decoder only checks its syntax."""


_USAGE_MARKS = (b'"usage"', b'"token_count"')


def usage_only(decode: Any) -> Any:
    """``decode`` for the lines that may hold usage (a byte search), nothing for the rest."""

    def check(line: bytes) -> None:
        if _USAGE_MARKS[0] in line or _USAGE_MARKS[1] in line:
            decode(line)

    return check


def baseline_orjson(files: list[Path], loads: Any = orjson.loads) -> Run:
    """Read each file in 8 MiB chunks, split it into lines and ``loads`` every one."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    lines = size = 0
    for path in files:
        held = b""
        with open(path, "rb") as fh:
            while chunk := fh.read(READ_CHUNK):
                size += len(chunk)
                pieces = (held + chunk).split(b"\n")
                held = pieces.pop()
                for line in pieces:
                    if line:
                        loads(line)
                        lines += 1
        if held:
            loads(held)
            lines += 1
    return Run(time.process_time() - cpu0, time.perf_counter() - wall0, size, lines)


def stream_table(home: Path, data_dir: Path) -> Any:
    from agentbar.core.config import Settings
    from agentbar.core.streams import StreamTable

    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data_dir)})
    return StreamTable(settings.sources(), max_open=8)


def parse_all(home: Path, data_dir: Path, *, full: bool, digest: bool = True) -> Run:
    """Read every stream of ``home`` to its end through a fresh stream table."""
    try:
        from agentbar.core.sources.base import full_decode
    except ImportError:  # a tree before the fast decoding: its only decoding is the full one
        full_decode = nullcontext  # type: ignore[assignment]

    table_ = stream_table(home, data_dir)
    streams = table_.scan()
    mode: AbstractContextManager[Any] = full_decode() if full else nullcontext()
    sha = hashlib.sha256()
    size = lines = records = rows = 0
    outcomes = []
    with mode:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for stream in streams:
            outcome = table_.read(stream, None)
            size += outcome.bytes_read
            lines += outcome.lines
            records += len(outcome.records)
            rows += len(outcome.search)
            if digest:  # kept, as the engine keeps them until it applies them
                outcomes.append(outcome)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    for stream, outcome in zip(streams, outcomes, strict=False):  # the digest: not timed
        counters = (stream.malformed, stream.oversized, stream.unknown, stream.odd_times)
        sha.update(repr(neutral((stream.path, outcome.records, outcome.search))).encode())
        sha.update(repr(neutral((counters, stream.clamped, stream.parser.checkpoint()))).encode())
    table_.close_all()
    return Run(cpu, wall, size, lines, records, rows, sha.hexdigest()[:16])


def neutral(value: Any) -> Any:
    """``value`` with every dataclass or msgspec Struct in it (however deep) made a tuple of its
    type's name and its fields' names and values, in order: what the digest reads, so that it
    does not depend on which of the two a record is, nor on how its ``repr`` reads."""
    if isinstance(value, msgspec.Struct):
        names: tuple[str, ...] = value.__struct_fields__
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value))
    elif isinstance(value, list | tuple):
        return type(value)(neutral(v) for v in value)
    elif isinstance(value, dict):
        return {k: neutral(v) for k, v in value.items()}
    else:
        return value
    return (type(value).__name__, tuple((n, neutral(getattr(value, n))) for n in names))


def line_kind(obj: Any, codex: bool) -> str:
    """A line's kind: Codex's ``type/payload.type``, Claude's ``type/first block's type``."""
    if not isinstance(obj, dict):
        return "?"
    if codex:
        payload = obj.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else ""
        return f"codex {obj.get('type')}/{sub}"
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    first = content[0] if isinstance(content, list) and content else None
    sub = first.get("type") if isinstance(first, dict) else type(content).__name__
    return f"claude {obj.get('type')}/{sub}"


@dataclass
class KindCost:
    lines: int = 0
    bytes: int = 0
    parse_s: float = 0.0
    orjson_s: float = 0.0
    scan_s: float = 0.0


def kind_costs(home: Path, data_dir: Path) -> dict[str, KindCost]:
    """Each line of every stream through its stream's parser, in order, timed alone, with
    ``orjson.loads`` and the syntax check of the same line (``perf_counter``: a CPU clock's
    reading costs more than the shortest of these calls)."""
    scan = msgspec.json.Decoder(_NoField).decode
    clock = time.perf_counter
    costs: dict[str, KindCost] = {}
    table_ = stream_table(home, data_dir)
    for stream in table_.scan():
        parse, codex = stream.parser.parse, "/.codex/" in str(stream.path)
        with open(stream.path, "rb") as fh:
            for line in fh:
                try:
                    kind = line_kind(orjson.loads(line), codex)
                except orjson.JSONDecodeError:
                    kind = "malformed"
                cost = costs.setdefault(kind, KindCost())
                t0 = clock()
                with contextlib.suppress(Exception):  # a malformed line: timed all the same
                    parse(line)
                t1 = clock()
                try:
                    orjson.loads(line)
                    t2 = clock()
                    scan(line)
                except (orjson.JSONDecodeError, msgspec.DecodeError):
                    t2 = clock()
                t3 = clock()
                cost.lines += 1
                cost.bytes += len(line)
                cost.parse_s += t1 - t0
                cost.orjson_s += t2 - t1
                cost.scan_s += t3 - t2
    table_.close_all()
    return costs


def kinds_rows(costs: dict[str, KindCost], top: int) -> list[list[str]]:
    rows = []
    for kind, c in sorted(costs.items(), key=lambda kc: -kc[1].parse_s)[:top]:
        over = (c.parse_s - c.scan_s) / c.lines * 1e6
        rows.append(
            [
                kind,
                f"{c.lines:,}",
                f"{c.bytes / MB:.0f}",
                f"{c.parse_s:.2f}",
                f"{c.orjson_s:.2f}",
                f"{c.scan_s:.2f}",
                f"{over:.1f}",
            ]
        )
    return rows


def profile_parse(home: Path, data_dir: Path, out: Path, top: int) -> list[str]:
    """cProfile one fast parse of the corpus; the top rows by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    parse_all(home, data_dir, full=False, digest=False)
    profiler.disable()
    return profile_rows(profiler, out, top)


def _median(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda r: r.cpu_s)[len(runs) // 2]


def _modes(runs: int) -> Iterator[str]:
    for _ in range(runs):
        yield from ("orjson", "full", "fast", "scan", "usage")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=corpus.parse_size, default=corpus.parse_size("1G"))
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=None, help="corpus HOME to reuse or create")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also profile one fast parse")
    parser.add_argument("--top", type=int, default=25, help="profile rows to print")
    parser.add_argument("--kinds", action="store_true", help="also the cost per kind of line")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")

    info = machine()
    home = (
        args.corpus or CORPUS_DIR / f"index-{_size_label(args.size)}-{args.sessions}-s{args.seed}"
    )
    print(f"corpus: {home}")
    if args.corpus is not None and (home / corpus.MANIFEST).exists():
        built = corpus.Corpus.load(home)
    else:
        built, _ = corpus.ensure(home, args.sessions, args.size, seed=args.seed, progress=True)
    print(f"  {built.summary()}")
    files = corpus.transcript_files(home)
    results: dict[str, list[Run]] = {m: [] for m in ("orjson", "full", "fast", "scan", "usage")}
    scan = msgspec.json.Decoder(_NoField).decode
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-parse-") as scratch:
        data_dir = Path(scratch) / "data"
        baseline_orjson(files)  # warms the page cache
        for mode in _modes(args.runs):
            if mode == "orjson":
                run = baseline_orjson(files)
            elif mode == "scan":
                run = baseline_orjson(files, scan)
            elif mode == "usage":
                run = baseline_orjson(files, usage_only(scan))
            else:
                run = parse_all(home, data_dir, full=mode == "full")
            results[mode].append(run)
            print(
                f"  {mode:6}  {run.cpu_s:6.2f} s CPU  {run.wall_s:6.2f} s wall  "
                f"{run.bytes / MB / run.cpu_s:7.1f} MB/CPU-s  {run.lines:,} lines  "
                f"{run.records:,} records  {run.search_rows:,} search rows  {run.digest}"
            )
        hotspots: list[str] = []
        if args.profile:
            prof_path = OUT_DIR / "bench_parse.fast.prof"
            hotspots = profile_parse(home, data_dir, prof_path, args.top)
            print(f"\ncProfile of a fast parse (own time; saved to {prof_path}):")
            for row in hotspots:
                print("  " + row)
        kinds: dict[str, KindCost] = {}
        if args.kinds:
            kinds = kind_costs(home, data_dir)
            print("\nThe parse step per kind of line (s; each line timed alone):")
            head = ["kind", "lines", "MB", "parse", "orjson", "check", "us/line over check"]
            print(table(kinds_rows(kinds, args.top), head))
    digests = {r.digest for mode in ("full", "fast") for r in results[mode]}
    if len(digests) != 1:
        raise SystemExit(f"the fast and the full decode differ: digests {sorted(digests)}")
    medians = {mode: _median(runs) for mode, runs in results.items()}
    base = medians["orjson"]
    rows = []
    for mode, name in (
        ("orjson", "orjson.loads of every line"),
        ("full", "parse step, full decode (before)"),
        ("fast", "parse step, fast decode (after)"),
        ("scan", "syntax check of every line (floor)"),
        ("usage", "usage lines only (ccusage's reading)"),
    ):
        run = medians[mode]
        rows.append(
            [
                name,
                f"{run.cpu_s:.2f}",
                f"{run.bytes / MB / run.cpu_s:.0f}",
                f"{run.cpu_s / base.cpu_s:.2f}",
            ]
        )
    print()
    print(table(rows, ["step", "CPU s", "MB/CPU-s", "CPU vs orjson.loads"]))
    speedup = medians["full"].cpu_s / medians["fast"].cpu_s
    print(f"fast vs full: {speedup:.2f}x less CPU; load average {os.getloadavg()[0]:.2f}")
    python_s = medians["fast"].cpu_s - medians["scan"].cpu_s
    per_line_us = python_s / max(1, medians["fast"].lines) * 1e6
    print(f"fast minus the floor: {python_s:.2f} s CPU, {per_line_us:.1f} us a line")
    result = {
        "benchmark": "parse",
        "machine": info,
        "loadavg_1m_end": round(os.getloadavg()[0], 2),
        "corpus": {"home": str(home), "files": len(files), "bytes": base.bytes},
        "runs": {mode: [vars(r) for r in runs] for mode, runs in results.items()},
        "median": {mode: vars(r) for mode, r in medians.items()},
        "ratio_to_orjson": {
            m: medians[m].cpu_s / base.cpu_s for m in ("full", "fast", "scan", "usage")
        },
        "fast_over_floor_s": python_s,
        "fast_over_floor_us_per_line": per_line_us,
        "fast_vs_full": speedup,
        "hotspots": hotspots,
        "kinds": {kind: vars(cost) for kind, cost in kinds.items()},
    }
    write_json(args.json or OUT_DIR / "bench_parse.json", result)
    return 0


def _size_label(size: int) -> str:
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("k", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


if __name__ == "__main__":
    raise SystemExit(main())
