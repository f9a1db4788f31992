"""A remote host's usage over the channel: the ``limits`` frame's size with the host's notes'
makings (``heard``) against without, typical and at its bounds; and ``agentbar usage --host``'s
round trip against the local ``agentbar usage`` on the same history, in the same run.

The far side is the real ``agentbar channel`` under its own HOME (``--sessions`` Claude
sessions, each with its usage), reached by a local command as ``docker exec -i`` reaches a
container. Each run is a whole command as a person types it: ``agentbar usage --json`` with
the far HOME (local, warm index) and ``agentbar usage --host bench --json`` here (a channel of
its own: ssh's or the command's start, the far engine over its warm index, the call, the
printer), alternated, ``--runs`` of each; both print the same document (checked).
Run: ``python bench/bench_remote_usage.py [--sessions 300] [--runs 9]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from benchlib import distribution, machine, write_json  # noqa: E402
from remote_far import FarHome, make_far, near_settings  # noqa: E402

from agentbar.core.limits import LimitWindow  # noqa: E402
from agentbar.core.remote import frames  # noqa: E402
from agentbar.core.remote.gauges import (  # noqa: E402
    MAX_HEARD,
    MAX_NAME_CHARS,
    MAX_WINDOWS,
    heard_to_wire,
    limits_to_wire,
)


def frame_bytes(windows: tuple[LimitWindow, ...], heard: frozenset[str] | None) -> int:
    frame: dict[str, Any] = {"t": "limits", "limits": limits_to_wire(windows)}
    if heard is not None:
        frame["heard"] = heard_to_wire(heard)
    return len(frames.encode(frame))


def frame_sizes() -> dict[str, int]:
    now = time.time()
    typical = tuple(
        LimitWindow(agent, span, 38.25, now + 3600, "plus", now, f"{agent}-source")
        for agent in ("claude", "codex")
        for span in ("5h", "weekly")
    )
    widest = tuple(
        LimitWindow(
            "a" * MAX_NAME_CHARS,
            f"{i}m".rjust(MAX_NAME_CHARS, "9"),
            38.25,
            now + 3600,
            "p" * 40,
            now,
            "s" * MAX_NAME_CHARS,
        )
        for i in range(MAX_WINDOWS)
    )
    most_heard = frozenset(f"{i:02d}".rjust(MAX_NAME_CHARS, "x") for i in range(MAX_HEARD))
    return {
        "typical_without_heard": frame_bytes(typical, None),
        "typical_with_heard": frame_bytes(typical, frozenset({"claude", "codex"})),
        "bound_without_heard": frame_bytes(widest, None),
        "bound_with_heard": frame_bytes(widest, most_heard),
        "max_frame": frames.MAX_FRAME,
    }


def env_of(home: Path, data: Path, config: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))},
        "HOME": str(home),
        "AGENTBAR_DATA_DIR": str(data),
        "AGENTBAR_CONFIG_DIR": str(config),
    }


def usage(env: dict[str, str], *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    argv = [sys.executable, "-m", "agentbar.tray", "usage", "--json", *args]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, check=False)
    took = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"agentbar usage {' '.join(args)}: {done.stderr[-2000:]}")
    return took, done.stdout


def history(far: FarHome, sessions: int) -> None:
    start = time.time() - 86400
    for i in range(sessions):
        session_id = f"{i:08x}-0000-4000-8000-{i:012x}"
        far.claude(session_id, f"/srv/project{i % 17}", f"prompt {i}", start=start + i)


def round_trips(root: Path, sessions: int, runs: int) -> dict[str, Any]:
    far = make_far(root / "far")
    history(far, sessions)
    near = root / "near"
    near_settings(near, far, "bench")
    there = env_of(far.home, far.data, far.config)
    here = env_of(near / "home", near / "data", near / "config")
    (near / "home").mkdir(parents=True, exist_ok=True)
    _, local_doc = usage(there)  # the first reading: the index made, both warm after
    _, remote_doc = usage(here, "--host", "bench")
    if local_doc != remote_doc:
        raise RuntimeError("the host's report differs from the local one")
    local_ms: list[float] = []
    remote_ms: list[float] = []
    for _ in range(runs):
        local_ms.append(usage(there)[0])
        remote_ms.append(usage(here, "--host", "bench")[0])
    local, remote = distribution(local_ms), distribution(remote_ms)
    return {
        "sessions": sessions,
        "report_bytes": len(local_doc.encode()),
        "local_usage": local,
        "usage_host": remote,
        "ratio_p50": remote["p50_ms"] / local["p50_ms"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": machine(), "limits_frame_bytes": frame_sizes()}
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-usage-") as tmp:
        result["usage"] = round_trips(Path(tmp), args.sessions, args.runs)
    sizes, trips = result["limits_frame_bytes"], result["usage"]
    print(f"limits frame, 2 agents x 2 windows: {sizes['typical_without_heard']} B, with heard "
          f"{sizes['typical_with_heard']} B")  # fmt: skip
    print(f"limits frame at its bounds ({MAX_WINDOWS} windows, {MAX_HEARD} heard): "
          f"{sizes['bound_without_heard']} B, with heard {sizes['bound_with_heard']} B "
          f"(a frame: at most {sizes['max_frame']} B)")  # fmt: skip
    local, remote = trips["local_usage"], trips["usage_host"]
    print(f"{trips['sessions']} sessions, report {trips['report_bytes']} B, {args.runs} runs each:")
    print(f"  agentbar usage --json          p50 {local['p50_ms']:.0f} ms  "
          f"max {local['max_ms']:.0f} ms")  # fmt: skip
    print(f"  agentbar usage --host --json   p50 {remote['p50_ms']:.0f} ms  "
          f"max {remote['max_ms']:.0f} ms  ({trips['ratio_p50']:.2f}x local)")  # fmt: skip
    print(f"load average (1 min) at start: {result['machine']['loadavg_1m']}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
