"""A host's task in the tray's "Launched agents": from a launch there (the far side's ``launch``
call through the real ``agentbar channel`` reached by a local command) to the task in
``Hub.tasks()``, what the menu is built from (the far side's ``tasks`` frame), against the
launch call's own reply in the same run; then from a ``stop`` call to the task gone from it,
against the stop's reply. And the ``tasks`` frame's bytes against the ``tasks`` call's reply for
the same tasks (what a poll would read each time). Run:
``python bench/bench_tray_remote_tasks.py [--runs 20] [--tasks 5]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from bench_remote import _until  # noqa: E402
from benchlib import distribution, machine, write_json  # noqa: E402
from remote_far import end_far_agents, make_far, near_settings  # noqa: E402

from agentbar.core.app import Agentbar  # noqa: E402
from agentbar.core.remote import frames  # noqa: E402
from agentbar.core.remote.host_tasks import SENT  # noqa: E402


class Seen:
    """When each task id first showed in ``Hub.tasks()`` and when it left (the host listener,
    on the link's thread, as the tray's wake is)."""

    def __init__(self, app: Agentbar) -> None:
        assert app.hub is not None
        self.hub = app.hub
        self.came: dict[str, float] = {}
        self.left: dict[str, float] = {}
        self.lock = threading.Lock()
        app.subscribe_hosts(lambda _status: self.look())

    def look(self) -> None:
        now = time.perf_counter()
        ids = {task.task_id for task in self.hub.tasks()}
        with self.lock:
            for task_id in ids - self.came.keys():
                self.came[task_id] = now
            for task_id in self.came.keys() - ids - self.left.keys():
                self.left[task_id] = now


def measure(root: Path, runs: int, running: int) -> dict[str, Any]:
    far = make_far(root / "far")
    project = far.root / "proj"
    project.mkdir()
    app = Agentbar.open(near_settings(root / "near", far, "bench"), tasks=False)
    assert app.hub is not None
    hub = app.hub
    seen = Seen(app)
    timed: dict[str, list[float]] = {"launch_reply": [], "in_menu": [], "stop_reply": [],
                                     "off_menu": []}  # fmt: skip
    sizes: dict[str, int] = {}
    args = {"agent": "claude", "project": str(project)}
    try:
        app.start()
        _until(lambda: hub.links["bench"].connected, 120)
        for _ in range(runs):
            began = time.perf_counter()
            task_id = hub.call("bench", "launch", args)["task_id"]
            timed["launch_reply"].append((time.perf_counter() - began) * 1000)
            _until(lambda task_id=task_id: task_id in seen.came, 30)
            timed["in_menu"].append((seen.came[task_id] - began) * 1000)
            began = time.perf_counter()
            hub.call("bench", "stop", {"task_id": task_id, "graceful": False}, 60)
            timed["stop_reply"].append((time.perf_counter() - began) * 1000)
            _until(lambda task_id=task_id: task_id in seen.left, 30)
            timed["off_menu"].append((seen.left[task_id] - began) * 1000)
        ids = [hub.call("bench", "launch", args)["task_id"] for _ in range(running)]
        _until(lambda: len(hub.tasks()) == running, 30)
        docs = hub.call("bench", "tasks", {})["tasks"]
        alive = [doc for doc in docs if doc["status"] == "running"]
        frame = {"t": "tasks", "tasks": [{k: doc[k] for k in SENT} for doc in alive]}
        sizes = {"tasks_frame": len(frames.encode(frame)),
                 "tasks_reply": len(frames.encode({"t": "reply", "id": 1,
                                                   "result": {"tasks": alive}}))}  # fmt: skip
        for task_id in ids:
            hub.call("bench", "stop", {"task_id": task_id, "graceful": False}, 60)
    finally:
        app.close()
        end_far_agents(far)
    return {"ms": {kind: distribution(values) for kind, values in timed.items()},
            "bytes": sizes}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="launches and stops there")
    parser.add_argument("--tasks", type=int, default=5, help="running tasks, for the sizes")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tray-remote-tasks-") as tmp:
        figures = measure(Path(tmp), args.runs, args.tasks)
    write_json(args.json, {"machine": machine(), **figures})
    for kind, d in figures["ms"].items():
        print(f"{kind:<12}: p50 {d['p50_ms']:.1f} ms, p99 {d['p99_ms']:.1f} ms, "
              f"max {d['max_ms']:.1f} ms ({d['count']})")  # fmt: skip
    p50 = {kind: d["p50_ms"] for kind, d in figures["ms"].items()}
    print(f"in menu / launch reply p50: {p50['in_menu'] / p50['launch_reply']:.2f}x; "
          f"off menu / stop reply p50: {p50['off_menu'] / p50['stop_reply']:.2f}x")  # fmt: skip
    size = figures["bytes"]
    print(f"{args.tasks} tasks: tasks frame {size['tasks_frame']} B, tasks reply "
          f"{size['tasks_reply']} B ({size['tasks_frame'] / size['tasks_reply']:.2f}x); "
          f"load average {os.getloadavg()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
