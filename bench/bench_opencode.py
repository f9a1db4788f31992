"""What reading opencode's database costs agentbar, on a database the size of a long-used one.

A database recorded from the real opencode 1.18.33 (``tests/data/recorded/opencode-1.18.33``)
is grown to ``--sessions`` sessions of ``--turns`` turns each (its rows copied under new ids,
times spread over the last weeks), kept in WAL mode. Then, with ``--runs`` repetitions each:

1. cold: ``DatabaseReader.read()`` and the translation of every row (agentbar's start);
2. idle: a read when nothing changed (a tick while opencode is open);
3. live: a read after one new turn was written (what each change of the WAL costs);
4. baseline: ``SELECT count(*)`` over ``part``, the cheapest full pass SQLite can make.

Then, ``--starts`` times each, agentbar's start as the engine makes it (``Engine.catch_up()``
over the real index, the sessions folded and saved, before anything is shown):

5. first start: an empty index, every session read;
6. a restart: the index of the last run, its cursor resumed (the sessions unchanged since are
   not read);
7. a restart after one session changed while agentbar was off.

Medians and p99 in milliseconds, with the database's size. Nothing passes or fails.

    python bench/bench_opencode.py --sessions 2000 --turns 20
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from agentbar.core.agents.opencode.database import DatabaseReader
from agentbar.core.agents.opencode.files import AGENT
from agentbar.core.agents.opencode.translate import Translator
from agentbar.core.config import Settings
from agentbar.core.engine import Engine
from agentbar.core.index import Index
from agentbar.core.procs import FakeProcessTable

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / "tests" / "data" / "recorded" / "opencode-1.18.33" / "approve-plugin" / "02"


def grow(path: Path, sessions: int, turns: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    session = conn.execute("SELECT * FROM session").fetchone()
    messages = conn.execute("SELECT * FROM message").fetchall()
    parts = conn.execute("SELECT * FROM part").fetchall()
    start = int(time.time() * 1000) - 30 * 86_400_000
    for s in range(sessions):
        sid = f"ses_bench{s:08d}"
        t = start + s * 1_000_000
        conn.execute(
            "INSERT INTO session VALUES (" + ",".join("?" * len(session)) + ")",
            (sid, *session[1:25], t, t + 500_000, *session[27:]),
        )
        for turn in range(turns):
            for m in messages:
                mid = f"{m[0]}_{s}_{turn}"
                at = t + turn * 10_000
                conn.execute("INSERT INTO message VALUES (?,?,?,?,?)", (mid, sid, at, at, m[4]))
            for p in parts:
                at = t + turn * 10_000
                conn.execute(
                    "INSERT INTO part VALUES (?,?,?,?,?,?)",
                    (f"{p[0]}_{s}_{turn}", f"{p[1]}_{s}_{turn}", sid, at, at, p[5]),
                )
    conn.commit()
    conn.close()


def add_turn(path: Path, n: int) -> None:
    conn = sqlite3.connect(path, timeout=5)
    now = int(time.time() * 1000)
    sid = conn.execute("SELECT id FROM session LIMIT 1").fetchone()[0]
    data = f'{{"role":"user","time":{{"created":{now}}}}}'
    conn.execute(
        "INSERT INTO message VALUES (?,?,?,?,?)", (f"msg_live{n:06d}", sid, now, now, data)
    )
    conn.commit()
    conn.close()


def engine_start(data_dir: Path, agentbar_dir: Path) -> float:
    """Milliseconds of one start of the engine over opencode's folder alone."""
    settings = Settings(
        homes={AGENT: (data_dir.parent / "config", data_dir)}, data_dir=agentbar_dir
    )
    engine = Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=FakeProcessTable(),
        traits=settings.traits(),
    )
    began = time.perf_counter()
    engine.catch_up()
    took = (time.perf_counter() - began) * 1000
    engine.stop()
    engine.index.close()
    return took


def starts(path: Path, runs: int) -> None:
    first, again, changed = [], [], []
    for run in range(runs):
        with tempfile.TemporaryDirectory() as agentbar_dir:
            first.append(engine_start(path.parent, Path(agentbar_dir)))
            again.append(engine_start(path.parent, Path(agentbar_dir)))
            add_turn(path, 1000 + run)
            changed.append(engine_start(path.parent, Path(agentbar_dir)))
    print(f"first start (empty index)   {figures(first)}")
    print(f"restart, nothing changed    {figures(again)}")
    print(f"restart, one session moved  {figures(changed)}")


def figures(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered):8.2f} ms   p99 {p99:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "opencode.db"
        shutil.copy(TEMPLATE / "opencode.db", path)
        grow(path, args.sessions, args.turns)
        holder = sqlite3.connect(path)  # opencode keeps it open: the WAL stays
        holder.execute("SELECT 1").fetchall()
        size = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 1e6
        parts = holder.execute("SELECT count(*) FROM part").fetchone()[0]
        print(f"database: {args.sessions} sessions, {parts} parts, {size:.1f} MB")
        cold, idle, live, base = [], [], [], []
        for run in range(args.runs):
            reader, translator = DatabaseReader(path), Translator()
            began = time.perf_counter()
            translator.translate(reader.read())
            cold.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            translator.translate(reader.read())
            idle.append((time.perf_counter() - began) * 1000)
            add_turn(path, run)
            began = time.perf_counter()
            translator.translate(reader.read())
            live.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            holder.execute("SELECT count(*) FROM part").fetchone()
            base.append((time.perf_counter() - began) * 1000)
        print(f"cold read + translation   {figures(cold)}")
        print(f"read, nothing changed     {figures(idle)}")
        print(f"read after one new row    {figures(live)}")
        print(f"baseline count(*) of part {figures(base)}")
        starts(path, args.starts)
        holder.close()


if __name__ == "__main__":
    main()
