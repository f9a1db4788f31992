"""Measure the tray: the time from a state change to its notification arriving at the
notification server, and the tray's idle CPU and memory against the bare engine's.

Everything runs on a private desktop (``tests/desktop.py``: Xvfb, a session D-Bus of its own,
dunst, trayer), with the real ``agentbar`` (tray) and ``agentbar serve`` as child processes
over a temporary HOME.

1. Latency. ``--changes`` times, a new live Claude session starts waiting for an approval: its
   transcript gets the prompt and the Bash call, a ``sleep`` plays its agent process, and once
   the tray's server lists it as running the clock starts and the registry file says
   ``waiting`` (the write that makes it ``input_required``, as Claude Code's own order is).
   The clock stops at the ``Notify`` call's timestamp on the bus (``dbus-monitor``: the moment
   the message reached the notification server). Measured twice: with the default
   ``coalesce_seconds = 1.0`` (the tray waits that long for a burst to coalesce) and with
   ``coalesce_seconds = 0`` (the pipeline alone: file event, engine, tray worker,
   desktop-notifier, D-Bus). One session at a time, ``--gap`` seconds apart, so no burst
   coalesces.
2. Idle. ``--sessions`` generated sessions (bench/corpus.py) in a HOME; ``agentbar serve``
   (engine + server: the baseline) and then the tray (engine + server + icon + worker +
   notifier) on each Linux backend: the StatusNotifierItem in a real host
   (``status-notifier-watcher`` + ``gtk-sni-tray-standalone``), and the XEmbed icon in trayer.
   Each in a fresh data dir, waited for until its engine is ready and its icon shows, left
   ``--settle`` seconds, then measured for ``--idle-seconds``: CPU (user + system of the
   process and its children, all threads) as % of one core, and RSS at the end.
3. Where the memory goes: the RSS of a fresh Python after importing each part alone (a child
   process per part), so the tray's RSS above the baseline can be read part by part; and "a
   bare Python with the same imports": a child imports every module the tray holds at rest
   (listed by another child that imports the tray's modules and runs its engine and server
   over an empty HOME) and does nothing else: the tray's RSS above it is its data and threads.

    python bench/bench_tray.py --changes 40 --sessions 2000 --idle-seconds 60
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import psutil
from benchlib import (
    MB,
    OUT_DIR,
    REPO,
    distribution,
    generate_corpus_in_child,
    machine,
    table,
    write_json,
)

sys.path.insert(0, str(REPO / "tests"))
from claude_lines import ClaudeTranscript, registry, write_lines
from desktop import Desktop, running_desktop, wait_until
from sni_client import registered_items

NOTIFY = re.compile(r"^method call time=(\d+\.\d+) .*member=Notify$")


class Agentbar:
    """``agentbar`` (or ``agentbar serve``) over a HOME, and its server."""

    def __init__(self, desktop: Desktop, home: Path, data: Path, *args: str, **extra: str) -> None:
        self.home, self.data = home, data
        config = data.parent / f"{data.name}-config"
        config.mkdir(parents=True, exist_ok=True)
        if "coalesce" in extra:
            (config / "settings.toml").write_text(
                f"[notifications]\ncoalesce_seconds = {extra['coalesce']}\n"
            )
        self.env = dict(
            desktop.env,
            HOME=str(home),
            AGENTBAR_DATA_DIR=str(data),
            AGENTBAR_CONFIG_DIR=str(config),
            XDG_CONFIG_HOME=str(data.parent / "xdg"),
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentbar.tray", *args],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.info = wait_until("server.json", self._announced, 120)
        wait_until("the engine", lambda: self.api("/api/health")["ready"], 600)

    def _announced(self) -> dict[str, Any] | None:
        try:
            return orjson.loads((self.data / "server.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None

    def api(self, path: str) -> Any:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.info['port']}{path}",
            headers={"Authorization": f"Bearer {self.info['token']}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return orjson.loads(response.read())

    def state(self, session_id: str) -> str | None:
        rows = self.api("/api/sessions")["sessions"]
        return next((s["state"] for s in rows if s["session_id"] == session_id), None)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class NotifyTimes:
    """``dbus-monitor`` on the bus: the timestamp of every ``Notify`` call, as it happens."""

    def __init__(self, desktop: Desktop) -> None:
        self.times: list[float] = []
        self.arrived = threading.Condition()
        self.proc = subprocess.Popen(
            ["dbus-monitor", "--session", "type='method_call',member='Notify'"],
            env=desktop.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            found = NOTIFY.match(line.strip())
            if found:
                with self.arrived:
                    self.times.append(float(found.group(1)))
                    self.arrived.notify_all()

    def wait_for(self, count: int, timeout: float = 30.0) -> float:
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.times) >= count, timeout):
                raise TimeoutError("no notification reached the server")
            return self.times[count - 1]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def latency_run(
    desktop: Desktop, root: Path, changes: int, coalesce: float, gap: float
) -> list[float]:
    home = root / f"home-latency-{coalesce}"
    for folder in (".claude/projects", ".claude/sessions"):
        (home / folder).mkdir(parents=True)
    tray = Agentbar(desktop, home, root / f"data-latency-{coalesce}", coalesce=str(coalesce))
    monitor = NotifyTimes(desktop)
    agents: list[subprocess.Popen[bytes]] = []
    latencies: list[float] = []
    try:
        wait_until("the icon", lambda: desktop.docked_icon("agentbar"), 60)
        time.sleep(1.0)
        for n in range(changes):
            session_id = f"{n:08x}-0000-4000-8000-{os.getpid():012x}"
            project = f"/work/bench{n}"
            agent = subprocess.Popen(["sleep", "900"])
            agents.append(agent)
            started = time.time()
            t = ClaudeTranscript(session_id, project, start=started)
            path = home / ".claude" / "projects" / project.replace("/", "-") / f"{session_id}.jsonl"
            write_lines(path, [t.prompt("Clean the build"), t.bash("rm -rf build")])
            reg = home / ".claude" / "sessions" / f"{agent.pid}.json"
            reg.write_bytes(
                orjson.dumps(
                    registry(agent.pid, session_id, status="busy", cwd=project, started_at=started)
                )
            )
            wait_until("the session to run", lambda sid=session_id: tray.state(sid) == "running")
            entry = registry(
                agent.pid,
                session_id,
                status="waiting",
                waiting_for="permission prompt",
                cwd=project,
                started_at=started,
                updated_at=time.time(),
            )
            data = orjson.dumps(entry)
            temp = reg.with_suffix(".tmp")
            temp.write_bytes(data)
            t0 = time.time()
            os.replace(temp, reg)  # Claude Code replaces its registry file the same way
            arrived = monitor.wait_for(n + 1)
            latencies.append((arrived - t0) * 1000.0)
            time.sleep(gap)
    finally:
        monitor.close()
        tray.stop()
        for agent in agents:
            agent.kill()
            agent.wait(5)
    return latencies


def idle_run(
    desktop: Desktop,
    home: Path,
    data: Path,
    args: tuple[str, ...],
    settle: float,
    seconds: float,
    icon: Any = None,
) -> dict[str, float]:
    running = Agentbar(desktop, home, data, *args)
    try:
        if icon is not None:
            wait_until("the icon", icon, 60)
        time.sleep(settle)
        proc = psutil.Process(running.proc.pid)

        def cpu() -> float:
            total = proc.cpu_times()
            kids = sum(c.cpu_times().user + c.cpu_times().system for c in proc.children(True))
            return total.user + total.system + kids

        cpu0, wall0 = cpu(), time.perf_counter()
        time.sleep(seconds)
        cpu1, wall1 = cpu(), time.perf_counter()
        rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(True))
        return {
            "cpu_pct": (cpu1 - cpu0) / (wall1 - wall0) * 100.0,
            "rss_mb": rss / MB,
            "threads": proc.num_threads(),
            "sessions": len(running.api("/api/sessions?all=1")["sessions"]),
        }
    finally:
        running.stop()


IMPORT_PARTS = {
    "python alone": "",
    "engine (agentbar.core.service)": "agentbar.core.service",
    "server (aiohttp)": "aiohttp",
    "badge (Pillow)": "agentbar.tray.badge",
    "notifications (desktop-notifier)": "agentbar.tray.notify",
    "StatusNotifierItem (dbus-fast)": "agentbar.tray.sni.service",
    "XEmbed icon (python-xlib)": "agentbar.tray.xembed",
    "the whole tray (agentbar.tray.app)": "agentbar.tray.app",
}


AT_REST_MODULES = r"""
import json, os, sys
from agentbar.tray import __main__, app, badge, notify, xembed
from agentbar.tray.sni import service
from agentbar.core.app import Agentbar
from agentbar.core.config import Settings
agentbar = Agentbar.open(Settings.from_env(os.environ))
with agentbar.serving():
    agentbar.start()
    agentbar.wait_ready(60)
agentbar.close()
print(json.dumps(sorted(m for m in sys.modules if m not in ("__main__", "__mp_main__"))))
"""

SAME_IMPORTS = r"""
import importlib, json, sys, psutil
for name in json.loads(sys.stdin.read()):
    try:
        importlib.import_module(name)
    except Exception:
        pass
print(psutil.Process().memory_info().rss)
"""


def same_imports_rss(root: Path) -> dict[str, float]:
    """RSS (MB) of a fresh Python that imports what the tray holds at rest and nothing else
    (median of three), and how many modules that is."""
    env = dict(
        os.environ,
        HOME=str(root / "home-empty"),
        AGENTBAR_DATA_DIR=str(root / "data-empty"),
        AGENTBAR_CONFIG_DIR=str(root / "config-empty"),
    )
    listed = subprocess.run(
        [sys.executable, "-c", AT_REST_MODULES], env=env, capture_output=True, text=True,
        check=True,
    ).stdout.splitlines()[-1]  # fmt: skip
    runs = sorted(
        int(
            subprocess.run(
                [sys.executable, "-c", SAME_IMPORTS],
                input=listed,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(3)
    )
    return {"rss_mb": runs[1] / MB, "modules": len(orjson.loads(listed))}


def import_costs() -> dict[str, float]:
    """RSS (MB) of a fresh interpreter after importing each part alone (median of three)."""
    found: dict[str, float] = {}
    for name, module in IMPORT_PARTS.items():
        code = (
            f"import psutil\n{'import ' + module if module else ''}\n"
            "print(psutil.Process().memory_info().rss)"
        )
        command = [sys.executable, "-c", code]
        runs = sorted(
            int(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
            for _ in range(3)
        )
        found[name] = runs[1] / MB
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=40)
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between sessions")
    parser.add_argument("--sessions", type=int, default=2000, help="on disk, for the idle run")
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "tray.json")
    args = parser.parse_args()

    result: dict[str, Any] = {"machine": machine(), "args": vars(args) | {"json": str(args.json)}}
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-tray-") as tmp:
        root = Path(tmp)
        (root / "desktop").mkdir()
        with running_desktop(root / "desktop") as desktop:
            latency: dict[str, Any] = {}
            for coalesce in (1.0, 0.0) if args.changes else ():  # --changes 0: idle only
                ms = latency_run(desktop, root, args.changes, coalesce, args.gap)
                latency[f"coalesce_{coalesce:g}s"] = distribution(ms)
            result["latency"] = latency
            home = root / "home-idle"
            generate_corpus_in_child(home, args.sessions, args.sessions * 24_000, args.seed)
            idle: dict[str, Any] = {}
            idle["serve (engine + server)"] = idle_run(
                desktop, home, root / "data-serve", ("serve",), args.settle, args.idle_seconds
            )
            idle["tray, XEmbed icon in trayer"] = idle_run(
                desktop, home, root / "data-xembed", (), args.settle, args.idle_seconds,
                icon=lambda: desktop.docked_icon("agentbar"),
            )  # fmt: skip
            watcher = desktop.start_sni_watcher()
            host = desktop.start_sni_host()
            try:
                bus = desktop.env["DBUS_SESSION_BUS_ADDRESS"]
                idle["tray, StatusNotifierItem in a host"] = idle_run(
                    desktop, home, root / "data-sni", (), args.settle, args.idle_seconds,
                    icon=lambda: registered_items(bus),
                )  # fmt: skip
            finally:
                desktop.stop(host)
                desktop.stop(watcher)
            result["idle"] = idle
    result["imports"] = import_costs()
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-tray-") as tmp:
        result["same_imports"] = same_imports_rss(Path(tmp))
    rows = [
        (name, d["count"], f"{d['p50_ms']:.1f}", f"{d['p90_ms']:.1f}", f"{d['p99_ms']:.1f}",
         f"{d['max_ms']:.1f}")
        for name, d in result["latency"].items()
    ]  # fmt: skip
    print("state change -> Notify at the notification server (ms)")
    print(table(rows, ("setting", "n", "p50", "p90", "p99", "max")))
    rows = [
        (name, d["sessions"], f"{d['cpu_pct']:.2f}", f"{d['rss_mb']:.1f}", d["threads"])
        for name, d in result["idle"].items()
    ]
    same = result["same_imports"]
    rows.append(
        (
            f"bare python, the tray's {same['modules']} modules imported",
            0,
            "",
            f"{same['rss_mb']:.1f}",
            1,
        )
    )
    print(f"\nidle over {args.idle_seconds:g} s")
    print(table(rows, ("process", "sessions", "% of a core", "RSS MB", "threads")))
    rows = [(name, f"{mb:.1f}") for name, mb in result["imports"].items()]
    print("\nRSS of a fresh Python after importing one part (MB)")
    print(table(rows, ("part", "RSS MB")))
    result["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    print(
        f"\nload average (1 min) at start: {result['machine']['loadavg_1m']}, at the end: "
        f"{result['loadavg_1m_end']}"
    )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
