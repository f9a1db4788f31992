"""What privacy costs: the check every agentbar command makes at start (``privacy.tighten`` over
the data dir, by how many hook event files it holds, already private and left open by an older
version), and a flood of one fault through the throttled log against a plain rotating log.

    python bench/bench_privacy.py [--files 100,1000,10000] [--rounds 21] [--json FILE]

Figures only: nothing passes or fails.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import distribution, machine, table, write_json

from agentbar.core import logs, privacy

FLOOD = 10_000


def data_dir(root: Path, files: int, mode: int) -> Path:
    data = root / f"data-{files}"
    events = data / "events" / "claude"
    events.mkdir(parents=True)
    for name in ("agentbar.log", "serve.log", "server.json", "engine.lock", "index.sqlite3"):
        (data / name).write_text("x\n")
    for i in range(files):
        (events / f"{i:08d}.jsonl").write_text("{}\n")
    for path in (data, *data.rglob("*")):
        path.chmod((mode | 0o100) if path.is_dir() else mode)
    return data


def time_tighten(root: Path, files: int, rounds: int) -> dict[str, Any]:
    data = data_dir(root, files, 0o600)
    data.chmod(0o700)
    private = []
    for _ in range(rounds):
        started = time.perf_counter()
        privacy.tighten(data)
        private.append((time.perf_counter() - started) * 1000)
    opened = []
    for _ in range(max(3, rounds // 7)):
        for path in (data, *data.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        started = time.perf_counter()
        privacy.tighten(data)
        opened.append((time.perf_counter() - started) * 1000)
    shutil.rmtree(data)
    return {"files": files, "private": distribution(private), "left_open": distribution(opened)}


def flood(root: Path, handler: logging.Handler, name: str) -> dict[str, Any]:
    logger = logging.getLogger(f"bench.{name}")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        started = time.perf_counter()
        for i in range(FLOOD):
            try:
                raise ConnectionResetError(f"peer {i} went away")
            except ConnectionResetError:
                logger.exception("Error handling request")
        seconds = time.perf_counter() - started
    finally:
        logger.removeHandler(handler)
        handler.close()
    written = sum(p.stat().st_size for p in root.glob(f"{name}.log*"))
    lines = sum(len(p.read_bytes().splitlines()) for p in root.glob(f"{name}.log*"))
    return {"handler": name, "seconds": seconds, "bytes": written, "lines": lines}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="100,1000,10000")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="agentbar-bench-privacy-"))
    os.umask(0o022)
    try:
        starts = [time_tighten(root, int(n), args.rounds) for n in args.files.split(",")]
        plain = logging.handlers.RotatingFileHandler(
            root / "plain.log", maxBytes=logs.MAX_BYTES, backupCount=logs.BACKUPS
        )
        plain.setFormatter(logging.Formatter(logs.FORMAT))
        floods = [
            flood(root, plain, "plain"),
            flood(root, logs.file_log(root / "throttled.log"), "throttled"),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rows = [
        [f"{s['files']} event files, {what}", f"{s[key]['p50_ms']:.2f}", f"{s[key]['p99_ms']:.2f}"]
        for s in starts
        for what, key in (("private", "private"), ("left open", "left_open"))
    ]
    print(table(rows, ["tighten at start", "p50 ms", "p99 ms"]))
    print()
    print(
        table(
            [
                [f["handler"], f"{f['seconds']:.2f}", f"{f['bytes']:,}", f"{f['lines']:,}"]
                for f in floods
            ],
            [f"{FLOOD:,} identical faults", "seconds", "bytes on disk", "lines"],
        )
    )
    write_json(args.json, {"machine": machine(), "tighten": starts, "flood": floods})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
