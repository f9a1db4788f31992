"""A remote host's task list read from here (``GET /api/tasks?host=bench``: the far side's
``tasks`` call through the real ``agentbar channel`` reached by a local command) against this
machine's own list by the same route without ``host``, in the same run, alternated, each with
``--tasks`` running agents (the launch tests' scripted ``claude``). The time to the reply: p50,
p99 and their ratio. Run: ``python bench/bench_remote_tasks.py [--tasks 5] [--reads 200]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from bench_remote import FAKE_CLAUDE, _poster, _until  # noqa: E402
from benchlib import distribution, machine, write_json  # noqa: E402
from remote_far import make_far, near_settings  # noqa: E402

from agentbar.core.app import Agentbar  # noqa: E402


def _lister(origin: str, token: str) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def tasks(path: str) -> list[dict[str, Any]]:
        request = urllib.request.Request(
            origin + path, headers={"Authorization": f"Bearer {token}"}
        )
        with opener.open(request, timeout=60) as response:
            found: list[dict[str, Any]] = json.loads(response.read())["tasks"]
            return found

    return tasks


def list_latency(root: Path, running: int, reads: int) -> dict[str, Any]:
    """The host's list through the channel against this machine's, ``running`` tasks each."""
    far = make_far(root / "far")
    project = far.root / "proj"
    project.mkdir()
    os.environ["AGENTBAR_CLAUDE"] = FAKE_CLAUDE  # this process's tasks read it at launch
    app = Agentbar.open(near_settings(root / "near", far, "bench"))
    timed: dict[str, list[float]] = {"local": [], "remote": []}
    started: list[tuple[str, dict[str, Any]]] = []  # (the query naming its host, the task)
    try:
        with app.serving() as server:
            app.start()
            _until(lambda: app.hub is not None and app.hub.links["bench"].connected, 120)
            post, tasks = _poster(server.origin, server.token), _lister(server.origin, server.token)
            for _ in range(running):
                started.append(
                    ("", post("/api/tasks", {"agent": "claude", "project": str(project)}))
                )
                there = {"agent": "claude", "project": str(project), "host": "bench"}
                started.append(("?host=bench", post("/api/tasks", there)))
            paths = {"local": "/api/tasks", "remote": "/api/tasks?host=bench"}
            for path in paths.values():  # both lists whole before timing
                _until(lambda path=path: len(tasks(path)) == running, 60)
            for read in range(reads):
                order = ("local", "remote") if read % 2 == 0 else ("remote", "local")
                for kind in order:
                    began = time.perf_counter()
                    found = tasks(paths[kind])
                    timed[kind].append((time.perf_counter() - began) * 1000)
                    assert len(found) == running, found
            for query, task in started:  # a far task would outlive its channel
                post(f"/api/tasks/{task['task_id']}/stop{query}", {"graceful": False})
    finally:
        app.close()
    return {kind: distribution(values) for kind, values in timed.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5, help="running tasks on each side")
    parser.add_argument("--reads", type=int, default=200, help="lists read, of each")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-remote-tasks-") as tmp:
        figures = list_latency(Path(tmp), args.tasks, args.reads)
    write_json(args.json, {"machine": machine(), "list": figures})
    for kind, d in figures.items():
        print(f"{kind:<6} list of {args.tasks}: p50 {d['p50_ms']:.2f} ms, "
              f"p99 {d['p99_ms']:.2f} ms, max {d['max_ms']:.2f} ms "
              f"({d['count']} reads)")  # fmt: skip
    ratio = figures["remote"]["p50_ms"] / figures["local"]["p50_ms"]
    print(f"remote / local list p50: {ratio:.2f}x; load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
