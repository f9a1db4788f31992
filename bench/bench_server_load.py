"""Measure what another process's idle connections cost the owner of agentbar's server.

A real ``agentbar serve`` runs in its own process over a throwaway HOME (no sessions: the
requests measured are the gate, the guard and a small route, not the engine). The owner is this
process: each request is ``GET /api/health`` on a fresh connection with the token, as the CLI,
the tray and ``agentbar window`` make them (``core/launch/client.py``'s ``api_call``).

Scenarios, each measured for ``--requests`` requests:

- ``baseline``: nobody else connected.
- ``same user, burst``: another process of the same user opens ``--connections`` connections
  and holds them without sending a byte; the owner's requests while it is still connecting.
- ``same user, held``: the same, once all of them are open (the server caps that process and
  closes the rest when idle too long).
- ``other user, burst`` / ``held``: the same from the second local user (``agentbar-other``,
  run through ``runuser`` with Debian's Python; only when this runs as root and the user
  exists, see tests/other_user.py): every one of its connections is refused at the door.

    python bench/bench_server_load.py [--requests 300] [--connections 2000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchlib import OUT_DIR, REPO, distribution, machine, table, write_json

sys.path.insert(0, str(REPO / "tests"))
from peer_scripts import FLOOD

from agentbar.core.launch.client import api_call

OTHER_USER = "agentbar-other"


def start_serve(root: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    home, data = root / "home", root / "data"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "AGENTBAR_DATA_DIR": str(data)}
    for key in [k for k in env if k.startswith(("CLAUDE_", "CODEX_", "XDG_"))]:
        del env[key]
    serve = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "serve", "--on-exit", "stop"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            info = json.loads((data / "server.json").read_text())
            origin = f"http://127.0.0.1:{info['port']}"
            api_call(origin, info["token"], "GET", "/api/health", timeout=5)
            return serve, origin, info["token"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    serve.kill()
    raise SystemExit("agentbar serve did not start")


def measure(
    origin: str, token: str, count: int, until: threading.Event | None = None
) -> list[float]:
    """Milliseconds per request; with ``until``, only while it is unset (at most ``count``)."""
    times: list[float] = []
    for _ in range(count):
        if until is not None and until.is_set():
            break
        start = time.perf_counter()
        status, _ = api_call(origin, token, "GET", "/api/health", timeout=60)
        times.append((time.perf_counter() - start) * 1000)
        assert status == 200
    return times


def flood_command(port: int, connections: int, other: bool) -> list[str]:
    python = ["/usr/bin/python3"] if other else [sys.executable]
    command = [*python, "-I", "-c", FLOOD, str(port), str(connections)]
    if other:
        runuser = shutil.which("runuser") or "/usr/sbin/runuser"
        command = [runuser, "-u", OTHER_USER, "--", *command]
    return command


def flooded(origin: str, token: str, args: argparse.Namespace, other: bool) -> dict[str, Any]:
    port = int(origin.rsplit(":", 1)[1])
    env = {"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8"} if other else None
    flood = subprocess.Popen(
        flood_command(port, args.connections, other),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    ready = threading.Event()
    line: list[str] = []

    def wait_ready() -> None:
        assert flood.stdout is not None
        line.append(flood.stdout.readline().strip())
        ready.set()

    waiter = threading.Thread(target=wait_ready, daemon=True)
    started = time.perf_counter()
    waiter.start()
    try:
        burst = measure(origin, token, args.requests, until=ready)
        waiter.join(120)
        connect_s = time.perf_counter() - started
        held = measure(origin, token, args.requests)
    finally:
        flood.kill()
        flood.wait(10)
    return {"burst": burst, "held": held, "flood": line[0] if line else "", "connect_s": connect_s}


def other_user_exists() -> bool:
    if os.geteuid() != 0 or not Path("/usr/bin/python3").exists():
        return False
    try:
        pwd.getpwnam(OTHER_USER)
    except KeyError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "server_load.json")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "machine": machine(),
        "requests": args.requests,
        "connections": args.connections,
    }
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-load-") as tmp:
        serve, origin, token = start_serve(Path(tmp))
        try:
            measure(origin, token, 20)  # warm up
            scenarios: dict[str, list[float]] = {"baseline": measure(origin, token, args.requests)}
            for name, other in (("same user", False), ("other user", True)):
                if other and not other_user_exists():
                    print(f"skipped {name}: needs root and the user {OTHER_USER}")
                    continue
                got = flooded(origin, token, args, other)
                scenarios[f"{name}, burst"] = got["burst"]
                scenarios[f"{name}, held"] = got["held"]
                result[f"{name} flood"] = {"said": got["flood"], "connect_s": got["connect_s"]}
            scenarios["after"] = measure(origin, token, args.requests)
        finally:
            serve.terminate()
            serve.wait(30)
    base = distribution(scenarios["baseline"])
    rows = []
    for name, times in scenarios.items():
        dist = distribution(times)
        result[name] = dist
        rows.append([
            name, dist["count"], f"{dist['p50_ms']:.2f}", f"{dist['p99_ms']:.2f}",
            f"{dist['max_ms']:.1f}", f"{dist['p50_ms'] / base['p50_ms']:.2f}",
        ])  # fmt: skip
    print(table(rows, ["scenario", "requests", "p50 ms", "p99 ms", "max ms", "p50 / baseline"]))
    for name in ("same user flood", "other user flood"):
        if name in result:
            print(f"{name}: {result[name]['said']} in {result[name]['connect_s']:.2f} s")
    write_json(args.json, result)


if __name__ == "__main__":
    main()
