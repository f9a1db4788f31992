"""Issue 13's figures: a line written on a remote host -> its state in the local app (p50,
p99), against the same write on this machine's own engine; and the channel's idle cost (bytes a
minute, CPU seconds a minute of the far side and of this process).

Two transports, the same measures: the real ``agentbar channel`` under its own HOME reached by
a local command (as ``docker exec -i`` would reach a container), and with ``--ssh`` the same
over a real OpenSSH server on 127.0.0.1 (tests/remote_rig.py: Debian's sshd started here, a far
user with its own HOME and agentbar installed there, needs root). Over ssh the idle cost is
also counted on the wire (the kernel's byte counts of the connection, encrypted, each way: ssh's
own keep-alives included) and the CPU split into the far agentbar, the far sshd and the ssh
client. Run: ``python bench/bench_remote.py [--writes 40] [--idle 60] [--ssh]``.

``--relaunch`` (over the OpenSSH rig, alone): a far session resumed from here (``POST
/api/sessions/ID/resume?host=rig`` to the real loopback server) against a remote launch
(``POST /api/tasks`` with ``host``) in the same run, alternated, ``--runs`` of each: the time to
the reply (the far side's task manager has started the agent: the launch tests' scripted
``claude`` of the far user) and to the far session shown here bound to the task.

``--stop`` (alone): a task launched on a remote host (the real ``agentbar channel`` reached by a
local command) stopped from here (``POST /api/tasks/ID/stop?host=bench``: the far side's
manager stops it, exit keys first, and answers once it is gone) against a task of this
machine's own manager stopped by the same route without ``host``, in the same run, alternated,
``--runs`` of each, graceful (the Stop button's: the agent's exit keys first) and forced
(``graceful: false``: signals at once, where the channel's share shows); both run the launch
tests' scripted ``claude``. The time to the reply.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Protocol

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from benchlib import distribution, machine, write_json  # noqa: E402
from claude_lines import ClaudeTranscript  # noqa: E402
from launch_rig import FAKE_AGENT  # noqa: E402
from remote_far import make_far  # noqa: E402
from remote_rig import (  # noqa: E402
    FarClaude,
    SshRig,
    prepare_machine,
    rig_running,
    rig_unavailable,
)

from agentbar.core.app import Agentbar  # noqa: E402
from agentbar.core.config import Settings  # noqa: E402
from agentbar.core.decisions import DecisionBook  # noqa: E402
from agentbar.core.model import StateChange  # noqa: E402
from agentbar.core.remote.hub import Hub  # noqa: E402
from agentbar.core.remote.remotes import Remote  # noqa: E402

FAKE_CLAUDE = f"{sys.executable} {FAKE_AGENT} --agent claude"  # this machine's tasks (--stop)
SID = "eeeeeeee-0000-4000-8000-00000000000e"


class Latch:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.want = ""
        self.at = 0.0
        self.hops: list[float] = []  # ms from the engine's change (its ts) to this subscriber

    def __call__(self, change: StateChange) -> None:
        if change.snapshot.key.session_id == SID and str(change.snapshot.state.state) == self.want:
            self.at = time.perf_counter()
            self.hops.append((time.time() - change.ts) * 1000)
            self.event.set()


class StatusWriter(Protocol):
    """Where a session's registry is written (a far HOME of this user's, or the rig's)."""

    def set_status(self, session_id: str, cwd: str, status: str, **extra: str) -> None: ...


class RigSession:
    """The rig's far Claude session as a ``StatusWriter``."""

    def __init__(self, claude: FarClaude) -> None:
        self.claude = claude

    def set_status(self, session_id: str, cwd: str, status: str, **extra: str) -> None:
        self.claude.say(status)


def cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for proc in procs:
        with contextlib.suppress(psutil.Error):  # one that ended counts no more
            total += sum(proc.cpu_times()[:2])
    return total


def latencies(samples: list[tuple[str, float]]) -> dict[str, Any]:
    """All the writes' latencies, and by the state each one reached (waiting for an approval
    is told by the registry, which the engine confirms before it reports)."""
    return {
        "latency_ms": distribution([ms for _, ms in samples]),
        "samples": len(samples),
        "by_state_ms": {
            state: distribution([ms for reached, ms in samples if reached == state])
            for state in ("running", "input_required")
        },
    }


def toggle_writes(far: StatusWriter, latch: Latch, writes: int) -> list[tuple[str, float]]:
    """Each write flips the live session between running and waiting for an approval: the
    state each one was to reach, and its latency in ms."""
    samples: list[tuple[str, float]] = []
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
            samples.append((latch.want, (latch.at - started) * 1000))
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
            **latencies(samples),
            "hop_ms": distribution(latch.hops),
            "idle_bytes_per_minute": (link.bytes_read - before_bytes) * per_minute,
            "idle_far_cpu_s_per_minute": (
                sum(sum(p.cpu_times()[:2]) for p in far_procs) - before_far
            )
            * per_minute,
            "idle_near_cpu_s_per_minute": (sum(me.cpu_times()[:2]) - before_me) * per_minute,
        }
    finally:
        hub.stop()


def ssh_latency(root: Path, writes: int, idle: float) -> dict[str, Any]:
    """The same over the OpenSSH rig: ``ssh -F CONFIG rig`` to a far user of this machine."""
    machine_ = prepare_machine(root / "keys")
    with rig_running(machine_, root / "rig") as rig:
        claude = FarClaude(rig.far, SID, "/srv/bench")
        try:
            claude.write(claude.transcript.prompt("bench"))
            claude.say("busy")
            return _over_ssh(rig, RigSession(claude), writes, idle)
        finally:
            claude.end()


def _over_ssh(rig: SshRig, session: RigSession, writes: int, idle: float) -> dict[str, Any]:
    hub = Hub([Remote("rig", tuple(rig.command), rig.agentbar)], DecisionBook())
    latch = Latch()
    hub.subscribe(latch)
    connect_started = time.perf_counter()
    hub.start()
    try:
        link = hub.links["rig"]
        deadline = time.monotonic() + 120
        while not link.connected and time.monotonic() < deadline:
            time.sleep(0.01)
        connect_s = time.perf_counter() - connect_started
        time.sleep(2.0)
        samples = toggle_writes(session, latch, writes)
        time.sleep(5.0)  # past the last write's updates
        process = link._process  # the ssh client, for its CPU
        client = [psutil.Process(process.pid)] if process is not None else []
        sshd = rig.serving_processes()
        far = [
            p
            for p in rig.far.processes()
            if p.pid not in {s.pid for s in sshd} and p.name() != "sleep"
        ]
        me = psutil.Process()
        groups = {"far_agentbar": far, "far_sshd": sshd, "ssh_client": client, "near": [me]}
        cpu_before = {name: cpu_seconds(procs) for name, procs in groups.items()}
        bytes_before = link.bytes_read
        wire_before = rig.wire_bytes()
        time.sleep(idle)
        per_minute = 60.0 / idle
        wire_after = rig.wire_bytes()
        return {
            "connect_s": connect_s,
            **latencies(samples),
            "idle_bytes_per_minute": (link.bytes_read - bytes_before) * per_minute,
            "idle_wire_far_to_near_bytes_per_minute": (wire_after[0] - wire_before[0]) * per_minute,
            "idle_wire_near_to_far_bytes_per_minute": (wire_after[1] - wire_before[1]) * per_minute,
            "idle_cpu_s_per_minute": {
                name: (cpu_seconds(procs) - cpu_before[name]) * per_minute
                for name, procs in groups.items()
            },
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
        return {**latencies(samples), "hop_ms": distribution(latch.hops)}
    finally:
        app.close()


def relaunch_latency(root: Path, runs: int) -> dict[str, Any]:
    """A far session resumed over the OpenSSH rig against a remote launch, alternated."""
    machine_ = prepare_machine(root / "keys")
    with rig_running(machine_, root / "rig") as rig:
        project = rig.far.home / "work"
        project.mkdir()
        rig.far.give(project)
        t = ClaudeTranscript(SID, str(project), start=time.time() - 60)
        folder = rig.far.home / ".claude" / "projects" / str(project).replace("/", "-")
        rig.far.write_lines(folder / f"{SID}.jsonl", [t.prompt("bench"), t.text("Done.")])
        config = root / "near" / "config"
        config.mkdir(parents=True)
        command = ", ".join(f'"{part}"' for part in rig.command)
        (config / "settings.toml").write_text(
            f'[[remotes]]\nname = "rig"\ncommand = [{command}]\n'
            f'agentbar = "{rig.with_fake_agents()}"\n'
        )
        settings = Settings.from_env({"HOME": str(root / "near" / "home"),
                                      "AGENTBAR_DATA_DIR": str(root / "near" / "data"),
                                      "AGENTBAR_CONFIG_DIR": str(config)})  # fmt: skip
        app = Agentbar.open(settings, tasks=False)
        try:
            with app.serving() as server:
                app.start()
                _until(lambda: any(s.key.session_id == SID for s in app.sessions()), 120)
                post = _poster(server.origin, server.token)
                launch = {"agent": "claude", "project": str(project), "host": "rig"}
                resume_path = f"/api/sessions/{SID}/resume?host=rig"
                timed: dict[str, dict[str, list[float]]] = {
                    "launch": {"reply": [], "bound": []},
                    "resume": {"reply": [], "bound": []},
                }
                for _ in range(runs):
                    for kind, path, body in (("launch", "/api/tasks", launch),
                                             ("resume", resume_path, {})):  # fmt: skip
                        for _attempt in range(300):
                            started = time.perf_counter()
                            task = post(path, body)
                            replied = time.perf_counter()
                            if task:
                                break
                            time.sleep(0.2)  # still running there: refused (409), untimed
                        else:
                            raise TimeoutError("the resumed session's last task did not end")
                        _until(functools.partial(_bound, app, task["task_id"]), 60)
                        bound = time.perf_counter()
                        timed[kind]["reply"].append((replied - started) * 1000)
                        timed[kind]["bound"].append((bound - started) * 1000)
                        _end_far_task(task)
        finally:
            app.close()
    return {
        kind: {name: distribution(values) for name, values in figures.items()}
        for kind, figures in timed.items()
    }


def stop_latency(root: Path, runs: int) -> dict[str, Any]:
    """A remote task's stop through the channel against a local task's, alternated."""
    far = make_far(root / "far")
    project = far.root / "proj"
    project.mkdir()
    remote = far.remote("bench")
    config = root / "near" / "config"
    config.mkdir(parents=True)
    command = ", ".join(f'"{part}"' for part in remote.command)
    (config / "settings.toml").write_text(
        f'[[remotes]]\nname = "bench"\ncommand = [{command}]\nagentbar = "{remote.program}"\n'
    )
    settings = Settings.from_env({"HOME": str(root / "near" / "home"),
                                  "AGENTBAR_DATA_DIR": str(root / "near" / "data"),
                                  "AGENTBAR_CONFIG_DIR": str(config),
                                  })  # fmt: skip
    os.environ["AGENTBAR_CLAUDE"] = FAKE_CLAUDE  # this process's tasks read it at launch
    app = Agentbar.open(settings)
    timed: dict[str, list[float]] = {
        f"{where} {how}": [] for where in ("local", "remote") for how in ("graceful", "forced")
    }
    try:
        with app.serving() as server:
            app.start()
            assert app.hub is not None
            _until(lambda: app.hub is not None and app.hub.links["bench"].connected, 120)
            post, get = _poster(server.origin, server.token), _getter(server.origin, server.token)
            for run in range(runs):
                order = ("local", "remote") if run % 2 == 0 else ("remote", "local")
                for kind, how in itertools.product(order, ("graceful", "forced")):
                    query = "?host=bench" if kind == "remote" else ""
                    body: dict[str, Any] = {"agent": "claude", "project": str(project)}
                    if kind == "remote":
                        body["host"] = "bench"
                    task_id = post("/api/tasks", body)["task_id"]
                    # Ready: the agent told its session (it reads its keys by then).
                    _until(functools.partial(_known, get, f"/api/tasks/{task_id}{query}"), 60)
                    started = time.perf_counter()
                    stop = {"graceful": how == "graceful"}
                    stopped = post(f"/api/tasks/{task_id}/stop{query}", stop)
                    timed[f"{kind} {how}"].append((time.perf_counter() - started) * 1000)
                    assert stopped["status"] == "exited", stopped
    finally:
        app.close()
    return {kind: distribution(values) for kind, values in timed.items()}


def _known(get: Any, path: str) -> bool:
    return bool(get(path)["session_id"])


def _getter(origin: str, token: str) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def get(path: str) -> dict[str, Any]:
        request = urllib.request.Request(
            origin + path, headers={"Authorization": f"Bearer {token}"}
        )
        with opener.open(request, timeout=60) as response:
            task: dict[str, Any] = json.loads(response.read())["task"]
            return task

    return get


def _bound(app: Agentbar, task_id: str) -> bool:
    return any(s.task_id == task_id for s in app.sessions())


def _until(check: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the rig did not get there")
        time.sleep(0.002)


def _poster(origin: str, token: str) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            origin + path,
            data=json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {token}",
                "Origin": origin,
                "Content-Type": "application/json",
            },
            method="POST",
        )
        try:
            with opener.open(request, timeout=60) as response:
                task: dict[str, Any] = json.loads(response.read())["task"]
                return task
        except urllib.error.HTTPError as exc:
            if exc.code == 409:  # the resumed session's last task has not ended yet there
                return {}
            raise

    return post


def _end_far_task(task: dict[str, Any]) -> None:
    """The far agent ended (SIGTERM to its process: the far user's, on this machine) and
    waited for; a resume is refused while its task runs there, so one refused is asked again,
    untimed, until the far side's manager has seen it go."""
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(task["pid"])
        process.terminate()
        process.wait(20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--ssh", action="store_true", help="also over the OpenSSH rig (root)")
    parser.add_argument("--relaunch", action="store_true",
                        help="only: resume against launch over the OpenSSH rig (root)")  # fmt: skip
    parser.add_argument("--stop", action="store_true",
                        help="only: a remote task's stop against a local one's")  # fmt: skip
    parser.add_argument("--runs", type=int, default=7,
                        help="resumes and launches (--relaunch), stops (--stop)")  # fmt: skip
    args = parser.parse_args()
    if args.stop:
        return _stop_main(args.runs, args.json)
    if (args.ssh or args.relaunch) and (reason := rig_unavailable()) is not None:
        parser.error(f"--ssh / --relaunch: {reason}")
    if args.relaunch:
        return _relaunch_main(args.runs, args.json)
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
        root = Path(tmp)
        local = local_latency(root, args.writes)
        remote = remote_latency(root, args.writes, args.idle)
        ssh = ssh_latency(root / "ssh", args.writes, args.idle) if args.ssh else None
    result = {"machine": machine(), "local": local, "remote": remote, "ssh": ssh}
    write_json(args.json, result)
    print(f"local engine   write -> change: p50 {local['latency_ms']['p50_ms']:.1f} ms, "
          f"p99 {local['latency_ms']['p99_ms']:.1f} ms ({local['samples']} writes)")  # fmt: skip
    print(f"remote channel write -> change: p50 {remote['latency_ms']['p50_ms']:.1f} ms, "
          f"p99 {remote['latency_ms']['p99_ms']:.1f} ms ({remote['samples']} writes)")  # fmt: skip
    print(f"engine's change -> subscriber: local p50 {local['hop_ms']['p50_ms']:.2f} ms, "
          f"through the channel p50 {remote['hop_ms']['p50_ms']:.2f} ms, "
          f"p99 {remote['hop_ms']['p99_ms']:.2f} ms")  # fmt: skip
    print(f"idle: {remote['idle_bytes_per_minute']:.0f} bytes/min on the channel, far side "
          f"{remote['idle_far_cpu_s_per_minute']:.3f} CPU s/min, near side "
          f"{remote['idle_near_cpu_s_per_minute']:.3f} CPU s/min")  # fmt: skip
    if ssh is not None:
        cpu = ssh["idle_cpu_s_per_minute"]
        print(f"ssh channel    write -> change: p50 {ssh['latency_ms']['p50_ms']:.1f} ms, "
              f"p99 {ssh['latency_ms']['p99_ms']:.1f} ms ({ssh['samples']} writes); "
              f"connected in {ssh['connect_s']:.1f} s")  # fmt: skip
        print(f"ssh idle: {ssh['idle_bytes_per_minute']:.0f} bytes/min of frames; on the wire "
              f"{ssh['idle_wire_far_to_near_bytes_per_minute']:.0f} bytes/min far->near, "
              f"{ssh['idle_wire_near_to_far_bytes_per_minute']:.0f} near->far; CPU s/min: "
              + ", ".join(f"{name} {value:.3f}" for name, value in cpu.items()))  # fmt: skip
    for name, figures in (("local", local), ("remote", remote), ("ssh", ssh)):
        if figures is not None:
            by = figures["by_state_ms"]
            print(f"{name:<6} by state: " + "; ".join(
                f"{state} p50 {d['p50_ms']:.1f} ms p99 {d['p99_ms']:.1f} ms"
                for state, d in by.items()))  # fmt: skip
    print(f"load average {os.getloadavg()}")
    return 0


def _stop_main(runs: int, json_path: Path | None) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-stop-") as tmp:
        figures = stop_latency(Path(tmp), runs)
    write_json(json_path, {"machine": machine(), "stop": figures})
    for kind, d in figures.items():
        print(f"{kind:<15} stop: reply p50 {d['p50_ms']:.0f} ms, p99 {d['p99_ms']:.0f} ms, "
              f"max {d['max_ms']:.0f} ms ({d['count']} stops)")  # fmt: skip
    for how in ("graceful", "forced"):
        ratio = figures[f"remote {how}"]["p50_ms"] / figures[f"local {how}"]["p50_ms"]
        print(f"remote / local {how} stop reply p50: {ratio:.2f}x")
    print(f"load average {os.getloadavg()}")
    return 0


def _relaunch_main(runs: int, json_path: Path | None) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-relaunch-") as tmp:
        figures = relaunch_latency(Path(tmp), runs)
    write_json(json_path, {"machine": machine(), "relaunch": figures})
    for kind, by in figures.items():
        print(f"{kind:<6} over ssh: reply p50 {by['reply']['p50_ms']:.0f} ms "
              f"(max {by['reply']['max_ms']:.0f}), session bound here p50 "
              f"{by['bound']['p50_ms']:.0f} ms (max {by['bound']['max_ms']:.0f}), "
              f"{by['reply']['count']} runs")  # fmt: skip
    ratio = figures["resume"]["reply"]["p50_ms"] / figures["launch"]["reply"]["p50_ms"]
    print(f"resume / launch reply p50: {ratio:.2f}x; load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
