"""Measure how long an answer takes from the person to the request's holder: ``agentbar
approve SESSION`` run as a command, and ``POST /api/decisions/ID`` (what the window's button
sends), each until the holder waiting in ``DecisionBook.wait`` has the answer (the moment the
hook route prints the agent's reply, or the terminal route types its keys).

A real loopback server over a real engine of fixture sessions (``tests/server_rig.py``), found
by the command through ``server.json`` like any other; one open request per round, answered
once. Baseline, interleaved with the command's runs: ``python -m agentbar.tray --version``
(the same interpreter and entry point, answering nothing): what any ``agentbar`` command pays
before it does anything.

    python bench/bench_answer_cli.py [--runs 30] [--json F]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchlib import REPO, distribution, machine, table, write_json

sys.path[:0] = [str(REPO / "tests")]

from replay_rig import make_home  # noqa: E402
from server_rig import serving  # noqa: E402

from agentbar.core.decisions import (  # noqa: E402
    DecisionBook,
    PendingRequest,
    RequestKind,
    Route,
    new_request_id,
)
from agentbar.core.launch.client import api_call  # noqa: E402
from agentbar.core.server.runner import write_server_file  # noqa: E402

SESSION = "71000000-aaaa-4bbb-8ccc-000000000001"


def open_request(book: DecisionBook) -> tuple[str, threading.Event, list[float]]:
    """A fresh request and a holder thread waiting for its answer; the holder notes when."""
    request_id = new_request_id()
    waiting = PendingRequest(
        request_id=request_id, agent="codex", session_id=SESSION, kind=RequestKind.APPROVAL,
        route=Route.HOOK, tool="Bash", summary="make", opened_at=time.time(),
    )  # fmt: skip
    book.open(waiting)
    woke: list[float] = []
    ready = threading.Event()

    def hold() -> None:
        ready.set()
        if book.wait(request_id, 30) is not None:
            woke.append(time.perf_counter())

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    ready.wait()
    return request_id, ready, woke


def _wait(woke: list[float]) -> float:
    deadline = time.monotonic() + 30
    while not woke:
        if time.monotonic() > deadline:
            raise RuntimeError("the holder never got the answer")
        time.sleep(0.0005)
    return woke[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"cli": [], "api": [], "baseline": []}
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-answer-") as tmp:
        home = make_home(Path(tmp))
        book = DecisionBook()
        with serving(home, decisions=book) as running:
            home.settings.data_dir.mkdir(parents=True, exist_ok=True)
            write_server_file(home.settings.server_path, running.server.info())
            env = {**os.environ, "HOME": str(home.home),
                   "AGENTBAR_DATA_DIR": str(home.settings.data_dir)}  # fmt: skip
            command = [sys.executable, "-m", "agentbar.tray"]
            for _ in range(args.runs):
                _, _, woke = open_request(book)
                start = time.perf_counter()
                done = subprocess.run([*command, "approve", SESSION], env=env,
                                      capture_output=True, check=False)  # fmt: skip
                if done.returncode != 0:
                    raise RuntimeError(done.stderr.decode())
                times["cli"].append((_wait(woke) - start) * 1000)
                start = time.perf_counter()
                subprocess.run([*command, "--version"], env=env, capture_output=True, check=True)
                times["baseline"].append((time.perf_counter() - start) * 1000)
                request_id, _, woke = open_request(book)
                start = time.perf_counter()
                api_call(running.origin, running.token, "POST", f"/api/decisions/{request_id}",
                         {"verdict": "allow", "origin": "window"})  # fmt: skip
                times["api"].append((_wait(woke) - start) * 1000)
    result: dict[str, Any] = {"machine": machine(), "runs": args.runs}
    rows = []
    base = distribution(times["baseline"])
    for name, label in (("cli", "`agentbar approve SESSION` -> holder has it"),
                        ("api", "POST /api/decisions/ID -> holder has it"),
                        ("baseline", "`agentbar --version` (start-up floor)")):  # fmt: skip
        dist = distribution(times[name])
        result[name] = dist
        ratio = dist["p50_ms"] / base["p50_ms"]
        rows.append((label, f"{dist['p50_ms']:.1f} ms", f"{dist['p99_ms']:.1f} ms",
                     f"{ratio:.2f}"))  # fmt: skip
    print(f"load average {result['machine']['loadavg_1m']}, {args.runs} runs each")
    print(table(rows, ("what", "p50", "p99", "p50 / baseline")))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
