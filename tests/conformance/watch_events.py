"""``agentbar watch --json`` as a separate process, the way another program would use it:
every line it prints is kept with the moment this process received it (a reader thread)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbar.core.engine import CAUGHT_UP

# A build of agentbar older than the CAUGHT_UP log line (AGENTBAR_CONFORMANCE_PYTHONPATH) does
# not say when it has caught up: it gets this long, which a loaded machine can overrun.
OLD_BUILD_READY_SECONDS = 1.5


@dataclass(frozen=True)
class Seen:
    at: float  # time.perf_counter() when the line arrived here
    event: dict[str, Any]


class WatchEvents:
    def __init__(self, env: Mapping[str, str], log_path: Path) -> None:
        self._log_path = log_path
        self._events: list[Seen] = []
        self._arrived = threading.Condition()
        self._stderr = open(log_path, "w")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentbar.tray", "-v", "watch", "--json"],
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def wait_caught_up(self, timeout: float = 90.0) -> None:
        """Until the watch has read what is on disk and reports every change from then on
        (``-v`` logs ``CAUGHT_UP``). A fixed wait was not enough: on a loaded 2-core machine
        the watch took 5-10 s to start, caught up after the agent had turned busy and never
        reported that ``running``."""
        if not _says_caught_up(os.environ.get("AGENTBAR_CONFORMANCE_PYTHONPATH")):
            time.sleep(OLD_BUILD_READY_SECONDS)
            return
        deadline = time.monotonic() + timeout
        while CAUGHT_UP not in self._log_path.read_text(errors="replace"):
            if self.proc.poll() is not None:
                raise AssertionError(f"agentbar watch exited ({self.proc.returncode}) at start")
            if time.monotonic() > deadline:
                raise AssertionError(f"agentbar watch did not catch up in {timeout} s")
            time.sleep(0.05)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            now = time.perf_counter()
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._arrived:
                self._events.append(Seen(now, event))
                self._arrived.notify_all()

    def events(self, session_id: str | None = None) -> list[Seen]:
        with self._arrived:
            return [s for s in self._events if session_id in (None, s.event["session_id"])]

    def wait_for(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 30.0, *, after: int = 0
    ) -> Seen:
        """The first event (from index ``after`` on) that ``match`` accepts."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for seen in self._events[after:]:
                    if match(seen.event):
                        return seen
                left = deadline - time.monotonic()
                if left <= 0:
                    got = [(s.event["state"], s.event.get("detail")) for s in self._events]
                    raise AssertionError(f"no matching watch event in {timeout} s; got {got}")
                self._arrived.wait(min(left, 0.25))

    def wait_state(
        self, session_id: str, state: str, timeout: float = 30.0, *, after: int = 0
    ) -> Seen:
        return self.wait_for(
            lambda e: e["session_id"] == session_id and e["state"] == state, timeout, after=after
        )

    def count(self) -> int:
        with self._arrived:
            return len(self._events)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._stderr.close()


def _says_caught_up(pythonpath: str | None) -> bool:
    """Whether the agentbar the watch runs logs ``CAUGHT_UP`` (the installed one does)."""
    if not pythonpath:
        return True
    for folder in pythonpath.split(os.pathsep):
        engine = Path(folder) / "agentbar" / "core" / "engine.py"
        if engine.exists():
            return CAUGHT_UP in engine.read_text(errors="replace")
    return False
