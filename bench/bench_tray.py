"""Measure the tray: the time from a state change to the tray's view and to its notification
arriving at the notification server, and the tray's idle CPU and memory against the bare
engine's.

Everything runs on a private desktop (``tests/desktop.py``: Xvfb, a session D-Bus of its own,
dunst, trayer), with the real ``agentbar`` (tray) and ``agentbar serve`` as child processes
over a temporary HOME.

1. Latency. ``--changes`` times, a new live Claude session starts waiting for an approval: its
   transcript gets the prompt and the Bash call, a ``sleep`` plays its agent process, and once
   the tray's server lists it as running the clock starts and the registry file says
   ``waiting`` (the write that makes it ``input_required``, as Claude Code's own order is).
   Times taken, all on the wall clock: the write; the engine's change (its ``ts``, on the
   tray's ``/api/events``); the tray's view showing it (the StatusNotifierItem's ``NewIcon``
   signal on the bus: the badge's count went up; the tray runs in a real StatusNotifier host);
   the ``Notify`` call on the bus (``dbus-monitor``: the moment the message reached the
   notification server). A lone change comes ``--gap`` seconds after the last notice (more
   than the coalescing window); a burst is ``--burst`` sessions starting to wait at once,
   ``--bursts`` times, timed to its first and its last notice. Each with the default
   ``coalesce_seconds = 1.0`` and with ``0`` (the pipeline alone: file event, engine, tray
   worker, desktop-notifier, D-Bus: the baseline), for this tree ("after") and for the
   commit ``--before`` ("before": the engine told a change before publishing it and the tray
   held even a lone change for the whole window), run from a ``git archive`` of it on
   ``PYTHONPATH``, in the same run. dunst closes what it shows after each measure, so every
   run and every sample meets the same notification server (one holding hundreds of
   notifications answers its first calls seconds late).
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
    python bench/bench_tray.py --parts latency          # the latency part alone (about 8 min)
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
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

import aiohttp
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

BUS_EVENT = re.compile(r"^(?:method call|signal) time=(\d+\.\d+) .*member=(\w+)$")
# The last commit before issue 14's fix: the engine told a change before it published it (the
# tray re-read the old state), and a lone change waited out the whole coalescing window.
BEFORE = "edd754b"
BURST_QUIET = 1.5  # seconds after the window closes with no further notice: a burst is over


class Agentbar:
    """``agentbar`` (or ``agentbar serve``) over a HOME, and its server."""

    def __init__(
        self,
        desktop: Desktop,
        home: Path,
        data: Path,
        *args: str,
        code: Path | None = None,
        **extra: str,
    ) -> None:
        """``code``: a tree to import ``agentbar`` from instead of this one (``PYTHONPATH``)."""
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
        if code is not None:
            self.env["PYTHONPATH"] = str(code)
        self.log = data.parent / f"{data.name}.log"  # what it said, for a run that fails
        with self.log.open("wb") as said:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "agentbar.tray", *args],
                env=self.env,
                stdout=said,
                stderr=subprocess.STDOUT,
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


class BusTimes:
    """``dbus-monitor`` on the bus: the timestamp of every ``Notify`` call and every
    StatusNotifierItem ``NewIcon`` signal, as they happen."""

    RULES = (
        "type='method_call',member='Notify'",
        "type='signal',interface='org.kde.StatusNotifierItem',member='NewIcon'",
    )

    def __init__(self, desktop: Desktop) -> None:
        self.times: dict[str, list[float]] = {"Notify": [], "NewIcon": []}
        self.arrived = threading.Condition()
        self.proc = subprocess.Popen(
            ["dbus-monitor", "--session", *self.RULES],
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
            found = BUS_EVENT.match(line.strip())
            if found and found.group(2) in self.times:
                with self.arrived:
                    self.times[found.group(2)].append(float(found.group(1)))
                    self.arrived.notify_all()

    def after(self, member: str, since: float) -> list[float]:
        with self.arrived:
            return [t for t in self.times[member] if t >= since]

    def first_after(self, member: str, since: float, timeout: float = 30.0) -> float:
        with self.arrived:
            if not self.arrived.wait_for(lambda: self.after(member, since), timeout):
                raise TimeoutError(f"no {member} on the bus")
            return self.after(member, since)[0]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class ChangeTimes:
    """The tray's ``/api/events``: when its engine decided each change (the change's ``ts``),
    by session and state, read on a thread of its own."""

    def __init__(self, tray: Agentbar) -> None:
        self.origin = f"http://127.0.0.1:{tray.info['port']}"
        self.token = tray.info["token"]
        self.seen: dict[tuple[str, str], float] = {}
        self.arrived = threading.Condition()
        self.connected = threading.Event()
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.reading = asyncio.run_coroutine_threadsafe(self._read(), self.loop)
        if not self.connected.wait(30):
            raise TimeoutError("no connection to /api/events")

    async def _read(self) -> None:
        headers = {"Origin": self.origin, "Authorization": f"Bearer {self.token}"}
        async with (
            aiohttp.ClientSession() as client,
            client.ws_connect(f"{self.origin}/api/events", headers=headers) as ws,
        ):
            self.ws = ws
            self.connected.set()
            async for message in ws:
                if message.type is not aiohttp.WSMsgType.TEXT:
                    continue
                event = orjson.loads(message.data)
                if event.get("type") != "change":
                    continue
                change = event["change"]
                ts = dt.datetime.fromisoformat(change["ts"]).timestamp()
                with self.arrived:
                    self.seen[(change["session_id"], change["state"])] = ts
                    self.arrived.notify_all()

    def wait(self, session_id: str, state: str, timeout: float = 30.0) -> float:
        key = (session_id, state)
        with self.arrived:
            if not self.arrived.wait_for(lambda: key in self.seen, timeout):
                raise TimeoutError(f"no {state} change for {session_id} on /api/events")
            return self.seen[key]

    def close(self) -> None:
        async def hang_up() -> None:
            if self.ws is not None:
                await self.ws.close()

        asyncio.run_coroutine_threadsafe(hang_up(), self.loop).result(10)
        self.reading.result(10)  # the reading ends with the connection
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class LiveSessions:
    """New live Claude sessions in a HOME, each played by a ``sleep``: running, then waiting
    for an approval when its registry file is replaced (as Claude Code replaces it)."""

    def __init__(self, home: Path, tray: Agentbar) -> None:
        self.home, self.tray = home, tray
        self.agents: list[subprocess.Popen[bytes]] = []
        self.count = 0

    def running(self) -> tuple[str, Path, bytes]:
        """A new session, running once the tray's server lists it so: its id, its registry
        file and the bytes that make it wait."""
        n, self.count = self.count, self.count + 1
        session_id = f"{n:08x}-0000-4000-8000-{os.getpid():012x}"
        project = f"/work/bench{n}"
        agent = subprocess.Popen(["sleep", "900"])
        self.agents.append(agent)
        started = time.time()
        t = ClaudeTranscript(session_id, project, start=started)
        path = self.home / ".claude/projects" / project.replace("/", "-") / f"{session_id}.jsonl"
        write_lines(path, [t.prompt("Clean the build"), t.bash("rm -rf build")])
        reg = self.home / ".claude" / "sessions" / f"{agent.pid}.json"
        reg.write_bytes(
            orjson.dumps(
                registry(agent.pid, session_id, status="busy", cwd=project, started_at=started)
            )
        )
        wait_until("the session to run", lambda: self.tray.state(session_id) == "running")
        waiting = registry(
            agent.pid,
            session_id,
            status="waiting",
            waiting_for="permission prompt",
            cwd=project,
            started_at=started,
            updated_at=time.time(),
        )
        return session_id, reg, orjson.dumps(waiting)

    @staticmethod
    def wait(reg: Path, data: bytes) -> None:
        temp = reg.with_suffix(".tmp")
        temp.write_bytes(data)
        os.replace(temp, reg)  # Claude Code replaces its registry file the same way

    def close(self) -> None:
        for agent in self.agents:
            agent.kill()
            agent.wait(5)


def latency_run(
    desktop: Desktop,
    root: Path,
    name: str,
    code: Path | None,
    coalesce: float,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Lone changes, then bursts, through one tray (``code``: the tree it runs from)."""
    home = root / f"home-latency-{name}-{coalesce}"
    for folder in (".claude/projects", ".claude/sessions"):
        (home / folder).mkdir(parents=True)
    data = root / f"data-latency-{name}-{coalesce}"
    desktop.run("dunstctl", "close-all")  # every run starts with an empty screen
    tray = Agentbar(desktop, home, data, code=code, coalesce=str(coalesce))
    bus = BusTimes(desktop)
    sessions = LiveSessions(home, tray)
    changes: ChangeTimes | None = None
    lone: dict[str, list[float]] = {"notify": [], "view": [], "change_to_view": [], "change": []}
    burst: dict[str, list[float]] = {"first": [], "last": [], "notices": []}
    try:
        wait_until("the icon", lambda: registered_items(desktop.env["DBUS_SESSION_BUS_ADDRESS"]))
        changes = ChangeTimes(tray)
        time.sleep(1.0)
        for _ in range(args.changes):
            session_id, reg, waiting = sessions.running()
            t0 = time.time()
            sessions.wait(reg, waiting)
            notified = bus.first_after("Notify", t0)
            viewed = bus.first_after("NewIcon", t0)
            changed = changes.wait(session_id, "input_required")
            lone["notify"].append((notified - t0) * 1000.0)
            lone["view"].append((viewed - t0) * 1000.0)
            lone["change"].append((changed - t0) * 1000.0)
            lone["change_to_view"].append((viewed - changed) * 1000.0)
            desktop.run("dunstctl", "close-all")  # a server holding hundreds answers slowly
            time.sleep(args.gap)  # past the window the notice opened: the next change is lone
        for _ in range(args.bursts):
            ready = [sessions.running() for _ in range(args.burst)]
            t0 = time.time()
            for _session_id, reg, waiting in ready:
                sessions.wait(reg, waiting)
            bus.first_after("Notify", t0)
            while time.time() - bus.after("Notify", t0)[-1] < coalesce + BURST_QUIET:
                time.sleep(0.1)
            told = bus.after("Notify", t0)
            burst["first"].append((told[0] - t0) * 1000.0)
            burst["last"].append((told[-1] - t0) * 1000.0)
            burst["notices"].append(float(len(told)))
            desktop.run("dunstctl", "close-all")
            time.sleep(args.gap)
    finally:
        if changes is not None:
            changes.close()
        bus.close()
        tray.stop()
        sessions.close()
    found: dict[str, Any] = {f"lone_{k}": distribution(v) for k, v in lone.items()}
    found |= {f"burst_{k}": distribution(v) for k, v in burst.items() if k != "notices"}
    found["burst_notices"] = burst["notices"]
    # Every sample, in order, so an outlier can be told from a trend (and from the machine).
    found["samples_ms"] = {f"lone_{k}": v for k, v in lone.items()} | {
        f"burst_{k}": v for k, v in burst.items() if k != "notices"
    }
    return found


def source_tree(rev: str, root: Path) -> Path:
    """``rev``'s packages, importable as ``agentbar.*`` from the returned folder (put it on
    ``PYTHONPATH``): a ``git archive`` of ``core/``, ``tray/`` and ``assets/`` and the
    ``.layout`` symlinks lint-imports uses."""
    src = root / f"src-{rev}"
    src.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "core", "tray", "assets"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    package = root / f"layout-{rev}" / "agentbar"
    package.mkdir(parents=True)
    for part in ("core", "tray", "assets"):
        (package / part).symlink_to(src / part)
    return package.parent


def latency(desktop: Desktop, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Every latency run: before and after, each with the default window and with none."""
    trees: dict[str, Path | None] = {"after": None}
    if args.before:
        trees = {f"before ({args.before})": source_tree(args.before, root), **trees}
    found: dict[str, Any] = {}
    watcher = desktop.start_sni_watcher()
    host = desktop.start_sni_host()
    try:
        for name, code in trees.items():
            for coalesce in (1.0, 0.0):
                run = latency_run(desktop, root, name.split()[0], code, coalesce, args)
                found[f"{name}, coalesce_seconds = {coalesce:g}"] = run
    finally:
        desktop.stop(host)
        desktop.stop(watcher)
    return found


FIGURES = {
    "lone_change": "a lone change: write -> the engine's change",
    "lone_change_to_view": "a lone change: the engine's change -> the tray's view",
    "lone_view": "a lone change: write -> the tray's view",
    "lone_notify": "a lone change: write -> Notify",
    "burst_first": "a burst: write -> its first Notify",
    "burst_last": "a burst: write -> its last Notify",
}


def latency_tables(latency: dict[str, Any]) -> str:
    """One table per figure: each run's p50 and p99, and its ratio to the first run's (the
    before, with the default window, when it ran)."""
    out = []
    runs = list(latency.items())
    for figure, title in FIGURES.items():
        base = runs[0][1][figure]
        rows = [
            (
                name,
                d[figure]["count"],
                f"{d[figure]['p50_ms']:.1f}",
                f"{d[figure]['p99_ms']:.1f}",
                f"{d[figure]['p50_ms'] / base['p50_ms']:.3f}" if base["p50_ms"] else "-",
                f"{d[figure]['p99_ms'] / base['p99_ms']:.3f}" if base["p99_ms"] else "-",
            )
            for name, d in runs
        ]
        out.append(f"{title} (ms; ratios to {runs[0][0]})")
        out.append(table(rows, ("run", "n", "p50", "p99", "p50 ratio", "p99 ratio")))
    rows = [(name, " ".join(f"{n:g}" for n in d["burst_notices"])) for name, d in runs]
    out.append("notices per burst")
    out.append(table(rows, ("run", "notices")))
    return "\n\n".join(out)


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
            try:
                wait_until("the icon", icon, 60)
            except TimeoutError:
                print(running.log.read_text(errors="replace")[-4000:], file=sys.stderr)
                raise
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


def idle_runs(desktop: Desktop, root: Path, args: argparse.Namespace) -> dict[str, Any]:
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
    return idle


PARTS = ("latency", "idle", "imports")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help="which parts, comma-separated")
    parser.add_argument("--changes", type=int, default=40, help="lone changes per run")
    parser.add_argument(
        "--gap", type=float, default=1.5, help="seconds after a notice (more than the window)"
    )
    parser.add_argument("--bursts", type=int, default=8, help="bursts per run")
    parser.add_argument("--burst", type=int, default=5, help="sessions in a burst")
    parser.add_argument("--before", default=BEFORE, help="the commit to compare ('': none)")
    parser.add_argument("--sessions", type=int, default=2000, help="on disk, for the idle run")
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "tray.json")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if parts - set(PARTS):
        parser.error(f"--parts: choose from {', '.join(PARTS)}")

    result: dict[str, Any] = {"machine": machine(), "args": vars(args) | {"json": str(args.json)}}
    with tempfile.TemporaryDirectory(prefix="agentbar-bench-tray-") as tmp:
        root = Path(tmp)
        (root / "desktop").mkdir()
        with running_desktop(root / "desktop") as desktop:
            if "latency" in parts:
                result["latency"] = latency(desktop, root, args)
            if "idle" in parts:
                result["idle"] = idle_runs(desktop, root, args)
    if "imports" in parts:
        result["imports"] = import_costs()
        with tempfile.TemporaryDirectory(prefix="agentbar-bench-tray-") as tmp:
            result["same_imports"] = same_imports_rss(Path(tmp))
    if "latency" in result:
        print(latency_tables(result["latency"]))
    if "idle" in result:
        rows = [
            (name, d["sessions"], f"{d['cpu_pct']:.2f}", f"{d['rss_mb']:.1f}", d["threads"])
            for name, d in result["idle"].items()
        ]
        if "same_imports" in result:
            same = result["same_imports"]
            rows.append(
                (f"bare python, the tray's {same['modules']} modules imported", 0, "",
                 f"{same['rss_mb']:.1f}", 1)
            )  # fmt: skip
        print(f"\nidle over {args.idle_seconds:g} s")
        print(table(rows, ("process", "sessions", "% of a core", "RSS MB", "threads")))
    if "imports" in result:
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
