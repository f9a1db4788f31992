"""Measure what the exports and the replay's views cost on a big Claude transcript (main thread
only; nothing passes or fails).

1. Write one generated Claude 2.1 session of ``--size`` MB (``corpus.write_claude``: prompts,
   split responses, thinking, Bash/Read/Edit/Grep/Task calls with whole files as results) and
   index it.
2. Export it ``--runs`` times in each format, the whole stream drained: JSON (the items as they
   were before issue 18's views, plus the views) is the baseline; Markdown and HTML add the
   pairing of each result with its call and the rendering of diffs, commands and fences.
3. The spawn scan: what ``ClaudeReplay.spawns`` costs over the whole transcript (first look at
   a session whose sub-agent files name nothing), against reading every line and doing nothing
   (the baseline), and the rescan once the file is known (only what was appended: nothing).

    python bench/bench_export.py [--size 50] [--runs 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_replay import open_engine
from benchlib import MB, OUT_DIR, machine, table, write_json
from corpus import Pools, write_claude


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=50, help="MB of transcript")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "bench_export.json")
    args = parser.parse_args()

    from agentbar.core.agents.claude.replay import REPLAY
    from agentbar.core.replay.export import Format, export
    from agentbar.core.replay.files import AgentRoots
    from agentbar.core.replay.pages import Replay

    work = Path(tempfile.mkdtemp(prefix="agentbar-bench-export-"))
    try:
        home, data_dir = work / "home", work / "data"
        rng = random.Random(7)
        info = write_claude(
            rng, Pools(random.Random(8)), home, "7e57e57e-0000-4000-8000-000000000001",
            "/home/dev/src/bench", time.time() - 86400, args.size * MB, time.time(),
        )  # fmt: skip
        settings, engine = open_engine(home, data_dir)
        engine.catch_up()
        (snap,) = [s for s in engine.sessions() if s.transcript]
        path = Path(snap.transcript or "")
        size = path.stat().st_size
        replay = Replay(AgentRoots(settings.agent_roots), settings.replay_adapters())
        rows: list[list[Any]] = []
        result: dict[str, Any] = {"machine": machine(), "bytes": size, "session": info.path}
        base = None
        for fmt in (Format.JSON, Format.MARKDOWN, Format.HTML):
            seconds, out = [], 0
            for _ in range(args.runs):
                started = time.perf_counter()
                out = sum(len(chunk) for chunk in export(replay, snap, fmt))
                seconds.append(time.perf_counter() - started)
            median = statistics.median(seconds)
            base = base or median
            result[f"export_{fmt.value}_s"] = median
            rows.append([f"export {fmt.value}", f"{median:.2f} s", f"{size / MB / median:.0f} MB/s",
                         f"{median / base:.2f}", f"{out / MB:.1f} MB"])  # fmt: skip
        roots = AgentRoots(settings.agent_roots)
        scans: dict[str, list[float]] = {"read": [], "spawns": []}
        for _ in range(args.runs):
            for what in ("read", "spawns"):
                with roots.open(str(path)) as file:
                    started = time.perf_counter()
                    if what == "read":
                        for _line in file.all_lines():
                            pass
                    else:
                        REPLAY.spawns(file.all_lines())
                    scans[what].append(time.perf_counter() - started)
        read, spawns = (statistics.median(scans[k]) for k in ("read", "spawns"))
        again = []
        for _ in range(args.runs):
            started = time.perf_counter()
            replay._spawns(snap, REPLAY)
            again.append(time.perf_counter() - started)
        result.update(read_s=read, spawns_s=spawns, rescan_s=statistics.median(again[1:] or again))
        rows.append(["read every line (baseline)", f"{read * 1000:.0f} ms",
                     f"{size / MB / read:.0f} MB/s", "1.00", ""])  # fmt: skip
        rows.append(["spawn scan, first look", f"{spawns * 1000:.0f} ms",
                     f"{size / MB / spawns:.0f} MB/s", f"{spawns / read:.2f}", ""])  # fmt: skip
        rows.append(["spawn scan, again (appended only)", f"{result['rescan_s'] * 1000:.2f} ms",
                     "", "", ""])  # fmt: skip
        print(f"{size / MB:.1f} MB Claude transcript, median of {args.runs} runs")
        print(table(rows, ["what", "median", "rate", "ratio", "output"]))
        write_json(args.json, result)
        engine.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
