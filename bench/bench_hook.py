"""Measure the hook program: how long an agent waits for ``agentbar_hook.py`` per event.

Each invocation is what Claude Code or Codex does for one hook event: spawn
``<python> -I -S assets/hooks/agentbar_hook.py --agent <agent> --data-dir <dir>``, write the
event's JSON to its stdin, close it and wait for the exit. Payloads rotate over real shapes
(Claude PreToolUse/PermissionRequest/PostToolUse with a 20 KB tool response/Stop/Notification,
Codex PermissionRequest/Stop), and every invocation appends to one session's events file in a
temporary data dir. Wall time runs from just before the spawn to the exit, in this process.

Baseline, interleaved with the measured runs so both see the same machine load: the same
interpreter with the same flags doing nothing (``python -I -S -c pass``), which is the floor
any Python hook pays.

    python bench/bench_hook.py [--runs 200] [--json out/hook.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import REPO, distribution, machine, table, write_json

HOOK = REPO / "assets" / "hooks" / "agentbar_hook.py"
SESSION = "aaaaaaaa-0000-4000-8000-00000000b00c"
TARGET_P99_MS = 50.0


def payloads(cwd: str) -> list[tuple[str, bytes]]:
    common = {
        "session_id": SESSION,
        "transcript_path": f"/home/u/.claude/projects/-w/{SESSION}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
    }
    bash = {"command": "npm test -- --watch=false", "description": "Run the tests"}
    shapes: list[tuple[str, dict[str, Any]]] = [
        ("claude", {**common, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_input": bash, "tool_use_id": "toolu_01"}),
        ("claude", {**common, "hook_event_name": "PermissionRequest", "tool_name": "Bash",
                    "tool_input": bash}),
        ("claude", {**common, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                    "tool_input": bash, "tool_use_id": "toolu_01",
                    "tool_response": {"stdout": "ok\n" * 7000, "stderr": ""}}),
        ("claude", {**common, "hook_event_name": "Stop", "stop_hook_active": False,
                    "last_assistant_message": "All 42 tests pass. Shall I commit?"}),
        ("claude", {**common, "hook_event_name": "Notification",
                    "notification_type": "permission_prompt",
                    "message": "Claude needs your permission to use Bash"}),
        ("codex", {**common, "hook_event_name": "PermissionRequest", "turn_id": "t1",
                   "tool_name": "Bash", "tool_input": {"command": "rm -rf dist"}}),
        ("codex", {**common, "hook_event_name": "Stop", "turn_id": "t1",
                   "stop_hook_active": False, "last_assistant_message": "Done."}),
    ]  # fmt: skip
    return [(agent, json.dumps(p).encode()) for agent, p in shapes]


def timed(cmd: list[str], stdin: bytes) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    return (time.perf_counter() - start) * 1000.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="agentbar-bench-hook-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        shapes = payloads(tmp)
        base = [args.python, "-I", "-S"]
        for agent, body in shapes[:3]:  # warm the page cache, as a running agent's machine is
            timed([*base, str(HOOK), "--agent", agent, "--data-dir", str(data_dir)], body)
            timed([*base, "-c", "pass"], b"")
        hook_ms: list[float] = []
        floor_ms: list[float] = []
        for i in range(args.runs):
            agent, body = shapes[i % len(shapes)]
            cmd = [*base, str(HOOK), "--agent", agent, "--data-dir", str(data_dir)]
            hook_ms.append(timed(cmd, body))
            floor_ms.append(timed([*base, "-c", "pass"], b""))
        lines = sum(
            len(f.read_bytes().splitlines()) for f in (data_dir / "events").rglob("*.jsonl")
        )

    hook, floor = distribution(hook_ms), distribution(floor_ms)
    rows = [
        [name, *(f"{d[k]:.1f}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms"))]
        for name, d in (("agentbar_hook.py", hook), ("python -I -S -c pass", floor))
    ]
    print(f"{args.runs} invocations each, {args.python}")
    print(table(rows, ["", "p50 ms", "p90 ms", "p99 ms", "max ms"]))
    extra = hook["p50_ms"] - floor["p50_ms"]
    verdict = "met" if hook["p99_ms"] < TARGET_P99_MS else "MISSED"
    print(f"\nhook work over the interpreter floor: {extra:.1f} ms at p50")
    print(f"target p99 < {TARGET_P99_MS:.0f} ms: {verdict}; {lines} event lines written")
    write_json(
        args.json,
        {
            "machine": machine(),
            "runs": args.runs,
            "hook": hook,
            "baseline_python_pass": floor,
            "lines_written": lines,
            "target_p99_ms": TARGET_P99_MS,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
