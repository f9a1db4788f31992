"""Issue 13's figures: a line written on a remote host -> its state in the local app (p50,
p99), against the same write on this machine's own engine; and the channel's idle cost (bytes a
minute, CPU seconds a minute of the far side and of this process).

The remote is the real ``agentbar channel`` under its own HOME reached by a local command (as
``docker exec -i`` would reach a container); ``--ssh`` is for sshrig's OpenSSH rig (a command
given as words after ``--ssh``). Run: ``python bench/bench_remote.py [--writes 40] [--idle 60]``.
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

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from benchlib import distribution, machine, write_json  # noqa: E402
from remote_far import FarHome, make_far  # noqa: E402

from agentbar.core.app import Agentbar  # noqa: E402
from agentbar.core.config import Settings  # noqa: E402
from agentbar.core.decisions import DecisionBook  # noqa: E402
from agentbar.core.model import StateChange  # noqa: E402
from agentbar.core.remote.hub import Hub  # noqa: E402

SID = "eeeeeeee-0000-4000-8000-00000000000e"


class Latch:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.want = ""
        self.at = 0.0

    def __call__(self, change: StateChange) -> None:
        if change.snapshot.key.session_id == SID and str(change.snapshot.state.state) == self.want:
            self.at = time.perf_counter()
            self.event.set()


def toggle_writes(far: FarHome, latch: Latch, writes: int) -> list[float]:
    """Each write flips the live session between running and waiting for an approval."""
    samples = []
    for n in range(writes):
        waiting = n % 2 == 0
        latch.want = "input_required" if waiting else "running"
        latch.event.clear()
        started = time.perf_counter()
        if waiting:
            far.set_status(SID, "/srv/bench", "waiting", waiting_for="permission prompt")
        else:
            far.set_status(SID, "/srv/bench", "busy")
        if latch.event.wait(20):
            samples.append((latch.at - started) * 1000)
        time.sleep(0.3)
    return samples


def remote_latency(root: Path, writes: int, idle: float) -> dict[str, Any]:
    far = make_far(root / "far")
    far.live(SID, "/srv/bench", "bench")
    hub = Hub([far.remote("bench")], DecisionBook())
    latch = Latch()
    hub.subscribe(latch)
    hub.start()
    try:
        deadline = time.monotonic() + 120
        while not hub.links["bench"].connected and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(2.0)
        samples = toggle_writes(far, latch, writes)
        link = hub.links["bench"]
        process = link._process  # the far side's process, for its CPU
        children = [psutil.Process(process.pid)] if process is not None else []
        far_procs = children + [c for p in children for c in p.children(recursive=True)]
        me = psutil.Process()
        time.sleep(5.0)  # past the last write's updates
        before_bytes = link.bytes_read
        before_far = sum(sum(p.cpu_times()[:2]) for p in far_procs)
        before_me = sum(me.cpu_times()[:2])
        time.sleep(idle)
        per_minute = 60.0 / idle
        return {
            "latency_ms": distribution(samples),
            "samples": len(samples),
            "idle_bytes_per_minute": (link.bytes_read - before_bytes) * per_minute,
            "idle_far_cpu_s_per_minute": (
                sum(sum(p.cpu_times()[:2]) for p in far_procs) - before_far
            )
            * per_minute,
            "idle_near_cpu_s_per_minute": (sum(me.cpu_times()[:2]) - before_me) * per_minute,
        }
    finally:
        hub.stop()


def local_latency(root: Path, writes: int) -> dict[str, Any]:
    """The same writes read by this machine's own engine (the baseline)."""
    near = make_far(root / "near")
    near.live(SID, "/srv/bench", "bench")
    settings = Settings.from_env({"HOME": str(near.home), "AGENTBAR_DATA_DIR": str(near.data)})
    app = Agentbar.open(settings, tasks=False, remotes=False)
    latch = Latch()
    app.subscribe(latch)
    app.start()
    try:
        app.wait_ready()
        time.sleep(2.0)
        samples = toggle_writes(near, latch, writes)
        return {"latency_ms": distribution(samples), "samples": len(samples)}
    finally:
        app.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
        root = Path(tmp)
        local = local_latency(root, args.writes)
        remote = remote_latency(root, args.writes, args.idle)
    result = {"machine": machine(), "local": local, "remote": remote}
    write_json(args.json, result)
    print(f"local engine   write -> change: p50 {local['latency_ms']['p50_ms']:.1f} ms, "
          f"p99 {local['latency_ms']['p99_ms']:.1f} ms ({local['samples']} writes)")  # fmt: skip
    print(f"remote channel write -> change: p50 {remote['latency_ms']['p50_ms']:.1f} ms, "
          f"p99 {remote['latency_ms']['p99_ms']:.1f} ms ({remote['samples']} writes)")  # fmt: skip
    print(f"idle: {remote['idle_bytes_per_minute']:.0f} bytes/min on the channel, far side "
          f"{remote['idle_far_cpu_s_per_minute']:.3f} CPU s/min, near side "
          f"{remote['idle_near_cpu_s_per_minute']:.3f} CPU s/min")  # fmt: skip
    print(f"load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
