"""Measure answering from the front ends: the time from a notification's action (or a menu
entry's: the same path) and from a window button's POST to the decision book's ``decide``, in
one process, against a direct ``decide`` (the baseline).

The world: ``Agentbar.open`` over an empty temporary HOME (the real engine, its thread
running), its real decision book, the tray's real worker thread and answer handler
(``TrayAnswers``), and the real loopback server (``Agentbar.serving``). Each sample opens one
request in the book, then:

- baseline: ``book.decide`` called on this thread (the book alone);
- notification: the action handed to the worker as desktop-notifier's callback hands it
  (``worker.post``), then the worker thread's handler decides;
- window: ``POST /api/decisions/<id>`` with the token and our own Origin, as the window's
  button sends it (a kept-alive HTTP connection, like the page's), then the server decides.

The clock stops in the book's own listener, when ``decide`` closes the request. Times are
``time.perf_counter`` in this process. The engine runs idle beside it (no sessions), as it does
in the tray.

    python bench/bench_answer.py --samples 500
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchlib import OUT_DIR, distribution, machine, table, write_json

from agentbar.core.app import Agentbar
from agentbar.core.clock import SystemClock
from agentbar.core.config import Settings
from agentbar.core.decisions import (
    BookChange,
    Decision,
    PendingRequest,
    RequestKind,
    Route,
    Verdict,
    new_request_id,
)
from agentbar.core.model import Agent
from agentbar.tray.actions import Action
from agentbar.tray.answer_entries import ANSWER
from agentbar.tray.answers import TrayAnswers
from agentbar.tray.notify import SilentNotifier
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import PreferencesFile
from agentbar.tray.worker import TrayWorker


class Closed:
    """The book's listener: when each request closed (perf_counter)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.event = threading.Event()
        self.waiting_for = ""

    def __call__(self, change: BookChange) -> None:
        if change.opened:
            return
        self.at[change.request.request_id] = time.perf_counter()
        if change.request.request_id == self.waiting_for:
            self.event.set()

    def wait(self, request_id: str) -> float:
        if request_id not in self.at:
            assert self.event.wait(10), f"{request_id} was never decided"
        return self.at[request_id]


def request() -> PendingRequest:
    return PendingRequest(
        request_id=new_request_id(), agent="claude", session_id="bench-session",
        kind=RequestKind.APPROVAL, route=Route.HOOK, tool="Bash", summary="npm test",
        opened_at=time.time(), always_rule="Bash(npm test:*)",
    )  # fmt: skip


def sample(app: Agentbar, closed: Closed, answer: object) -> float:
    """One request opened, answered by ``answer(request_id)``; ms to its ``decide``."""
    opened = request()
    app.decisions.open(opened)
    closed.event.clear()
    closed.waiting_for = opened.request_id
    started = time.perf_counter()
    answer(opened.request_id)  # type: ignore[operator]
    return (closed.wait(opened.request_id) - started) * 1000.0


def run(samples: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-answer-") as tmp:
        root = Path(tmp)
        (root / "home" / ".claude" / "projects").mkdir(parents=True)
        settings = Settings(
            homes={Agent("claude"): (root / "home" / ".claude",)}, data_dir=root / "data"
        )
        app = Agentbar.open(settings, tasks=False)
        closed = Closed()
        app.decisions.subscribe(closed)
        worker = TrayWorker(
            app.engine, SilentNotifier("the bench shows nothing"), clock=SystemClock(),
            prefs=PreferencesFile(root / "settings.toml"), pauses=PauseStore(root / "paused.json"),
            show=lambda _view: None, decisions=app.decisions,
        )  # fmt: skip
        answers = TrayAnswers(app.decisions, lambda fault: None)
        answers.register(worker.router)
        try:
            with app.serving() as server:
                app.start()
                worker.start()
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
                headers = {
                    "X-Agentbar-Token": server.token, "Origin": server.origin,
                    "Content-Type": "application/json",
                }  # fmt: skip
                body = json.dumps({"verdict": "allow", "origin": "window"})

                def direct(request_id: str) -> None:
                    app.decisions.decide(Decision(request_id, Verdict.ALLOW, "api"))

                def notification(request_id: str) -> None:
                    worker.post(Action(ANSWER, f"{request_id}:{Verdict.ALLOW}"))

                def window(request_id: str) -> None:
                    connection.request("POST", f"/api/decisions/{request_id}", body, headers)
                    reply = connection.getresponse()
                    reply.read()
                    assert reply.status == 200, reply.status

                paths = {"baseline": direct, "notification": notification, "window": window}
                for answer in paths.values():  # warm up each path
                    for _ in range(20):
                        sample(app, closed, answer)
                times: dict[str, list[float]] = {name: [] for name in paths}
                for _ in range(samples):  # interleaved: the same load on each path
                    for name, answer in paths.items():
                        times[name].append(sample(app, closed, answer))
                connection.close()
        finally:
            worker.stop()
            answers.close()
            app.close()
    result: dict[str, object] = {"machine": machine(), "samples": samples}
    base = distribution(times["baseline"])
    for name, values in times.items():
        figures = distribution(values)
        figures["p50_ratio_to_baseline"] = figures["p50_ms"] / base["p50_ms"]
        result[name] = figures
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--out", type=Path, default=OUT_DIR / "answer.json")
    args = parser.parse_args()
    result = run(args.samples)
    write_json(args.out, result)
    rows = [
        [name, f"{f['p50_ms']:.3f}", f"{f['p99_ms']:.3f}", f"{f['p50_ratio_to_baseline']:.0f}×"]
        for name in ("baseline", "notification", "window")
        if isinstance(f := result[name], dict)
    ]
    print(table(rows, ["path to decide", "p50 ms", "p99 ms", "p50 / baseline"]))
    print(f"load average (1 min): {result['machine']['loadavg_1m']}")  # type: ignore[index]
    return 0


if __name__ == "__main__":
    sys.exit(main())
