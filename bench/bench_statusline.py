"""Measure Claude's status-line link: what agentbar's program adds to each status-line refresh.

Each run is what Claude Code does to draw its status line: spawn the ``statusLine.command``
through the shell with the session's JSON (~1 KB, the 5-hour and 7-day ``rate_limits`` and the
``cost`` in it) on stdin and wait for its output. Three commands, interleaved so all see the
same machine load:

* ``direct``: the person's own status-line command alone (a small shell line that reads stdin
  and prints one line, like most people's);
* ``linked``: the command the link installs: agentbar's program, which records the payload
  (0600, atomic rename) and then runs the same person's command with the same stdin;
* ``alone``: the link with no command of its own (it prints its short default line);
* ``python``: the floor any Python program pays, ``python -I -S -c pass`` through the shell.

The figure that matters is ``linked - direct``: what the person's status line waits for
because agentbar records the limits.

    python bench/bench_statusline.py [--runs 200] [--json out/statusline.json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import distribution, machine, table, write_json

from agentbar.core.agents.claude.statusline import link_command

USERS_COMMAND = 'input=$(cat); printf \'%s | %s\\n\' "${input%%,*}" "$(date +%H:%M)"'
PAYLOAD = json.dumps({
    "hook_event_name": "Status",
    "session_id": "aaaaaaaa-0000-4000-8000-000000000001",
    "transcript_path": "/home/u/.claude/projects/-w/aaaaaaaa-0000-4000-8000-000000000001.jsonl",
    "cwd": "/home/u/src/web",
    "model": {"id": "claude-opus-4-1", "display_name": "Opus"},
    "workspace": {"current_dir": "/home/u/src/web", "project_dir": "/home/u/src/web"},
    "version": "2.1.332",
    "output_style": {"name": "default"},
    "cost": {"total_cost_usd": 1.37, "total_duration_ms": 4_500_000,
             "total_api_duration_ms": 930_000, "total_lines_added": 156,
             "total_lines_removed": 23},
    "rate_limits": {"five_hour": {"used_percentage": 38.0, "resets_at": 1_800_000_000},
                    "seven_day": {"used_percentage": 12.0, "resets_at": 1_800_400_000}},
}).encode()  # fmt: skip


def once(command: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["/bin/sh", "-c", command], input=PAYLOAD, capture_output=True, check=True, timeout=30
    )
    return (time.perf_counter() - start) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            "direct": USERS_COMMAND,
            "linked": link_command(Path(tmp) / "data", USERS_COMMAND),
            "alone": link_command(Path(tmp) / "data", None),
            "python": shlex.join([sys.executable, "-I", "-S", "-c", "pass"]),
        }
        for command in commands.values():  # warm the caches (bytecode, page cache)
            once(command)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(once(command))
    figures = {name: distribution(values) for name, values in times.items()}
    added = [
        linked - direct for linked, direct in zip(times["linked"], times["direct"], strict=True)
    ]
    figures["added"] = distribution(added)
    rows = [
        [name, f"{f['p50_ms']:.1f}", f"{f['p90_ms']:.1f}", f"{f['p99_ms']:.1f}"]
        for name, f in figures.items()
    ]
    about = machine()
    print(table(rows, ["ms per refresh", "p50", "p90", "p99"]))
    print(f"({args.runs} runs each, interleaved; load average {about['loadavg_1m']})")
    write_json(args.json, {"machine": about, "runs": args.runs, "figures": figures})


if __name__ == "__main__":
    main()
