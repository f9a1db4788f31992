"""Measure how long a launched agent takes to be bound to its session, on each binding path.

Each run is one ``TaskManager.launch`` of ``tests/fake_agent.py`` (a scripted agent on a real
PTY that runs agentbar's real hook program, writes a real registry and transcript, answers
``/status``) in a temporary HOME, with a live engine (``Service``: watchdog, ticker, the real
process table) where the path needs one. Timed from just before the spawn to the moment the
task knows its session for sure (``Binding.seconds``; for a pre-assigned id, when the agent
confirmed it: ``confirmed_seconds``). The paths, each forced by what the fake agent is told:

- ``session-id``: Claude, the id given with ``--session-id``, confirmed by its SessionStart hook
- ``hook``: Codex, its SessionStart hook (agentbar's per-launch layer)
- ``registry``: Claude without hooks, its ``sessions/<pid>.json``
- ``process``: Codex without hooks, run under the name ``codex`` so the engine's process table
  matches it to the rollout it writes (waits ``binding.PROCESS_AFTER`` for the faster paths)
- ``status``: Codex without hooks, ``/status`` typed into its PTY and read back (waits
  ``agents.codex.launch.PLAN.first_after`` for the others)

Baseline, measured in the same runs: the time to the fake agent's first output (its banner),
which every path waits for at least: Python's start-up and the spawn.

``--idle S`` then measures this process's CPU over S seconds with five bound, idle tasks (the
readers and the binder, what launched agents cost agentbar while nobody types).

``--real`` also times the real CLIs from the conformance cache (Claude's ``session-id`` and
Codex's ``hook`` and ``status`` paths) against the conformance suite's scripted model server.

    python bench/bench_launch.py [--runs 30] [--slow-runs 5] [--idle 20] [--real] [--json F]
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchlib import REPO, distribution, machine, real_cli_home, table, write_json

sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "conformance")]

from launch_rig import FAKE_AGENT, launch_rig  # noqa: E402

from agentbar.core.launch.manager import TaskManager  # noqa: E402
from agentbar.core.launch.options import LaunchOptions  # noqa: E402
from agentbar.core.launch.request import LaunchRequest  # noqa: E402
from agentbar.core.model import Agent  # noqa: E402

PATHS = {
    # path: (agent, fake agent knobs, needs an engine, the name it runs under)
    "session-id": (Agent("claude"), {}, False, None),
    "hook": (Agent("codex"), {}, False, None),
    "registry": (Agent("claude"), {"hooks": "0", "ignore_session_id": "1"}, False, None),
    "process": (Agent("codex"), {"hooks": "0"}, True, "codex"),
    "status": (Agent("codex"), {"hooks": "0"}, False, None),
}
SLOW = {"process", "status"}  # seconds by design: fewer runs


def seconds_of(info: Any) -> float:
    binding = info.binding
    return binding.confirmed_seconds if binding.confirmed_seconds is not None else binding.seconds


def bind_once(manager: TaskManager, agent: Agent, project: Path, want: str) -> tuple[float, float]:
    """(binding seconds, first-output seconds) of one launch, then stop it."""
    info = manager.launch(
        LaunchRequest(agent, str(project), prompt="hi" if want == "process" else None)
    )
    task = manager.task(info.task_id)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            now = manager.get(info.task_id)
            if now.binding is not None and now.binding.confirmed:
                if str(now.binding.path) != want:
                    raise RuntimeError(f"bound by {now.binding.path}, not {want}")
                first = (task.first_output_at or task.started_mono) - task.started_mono
                return seconds_of(now), first
            time.sleep(0.002)
        raise RuntimeError(f"{want}: not bound within 30 s")
    finally:
        manager.stop(info.task_id, graceful=False)
        manager.forget(info.task_id)


def measure_fake(path: str, runs: int) -> dict[str, Any]:
    agent, knobs, engine, name = PATHS[path]
    with tempfile.TemporaryDirectory(prefix=f"bench-launch-{path}-") as tmp:
        root = Path(tmp)
        with launch_rig(root, engine=engine, **knobs) as rig:
            options: dict[str, Any] = {}
            if name is not None:
                link = root / "bin" / name
                link.parent.mkdir()
                link.symlink_to(sys.executable)
                options["extra_env"] = {"PYTHONPATH": sysconfig.get_paths()["purelib"]}
            manager = rig.manager(engine=engine, **options)
            if name is not None:
                program = (str(root / "bin" / name), str(FAKE_AGENT), "--agent", str(agent))
                manager.options = replace(manager.options, programs={agent: program})
            binds, firsts = [], []
            for _ in range(runs):
                bound, first = bind_once(manager, agent, rig.project, path)
                binds.append(bound * 1000)
                firsts.append(first * 1000)
    return {"bind": distribution(binds), "first_output": distribution(firsts)}


def measure_real(runs: int) -> dict[str, Any]:
    """The real CLIs, as the conformance suite runs them."""
    from claude_rig import VERSIONS as CLAUDE_VERSIONS
    from cli_install import ensure_installed
    from codex_rig import VERSIONS as CODEX_VERSIONS

    from agentbar.core.config import Settings

    results: dict[str, Any] = {}
    plans = [
        ("claude session-id", Agent("claude"), "session-id", {}),
        ("codex hook", Agent("codex"), "hook", {"bypass_hook_trust": True}),
        ("codex status", Agent("codex"), "status", {"hooks": False}),
    ]
    claude_bin = ensure_installed(CLAUDE_VERSIONS[0].cli)
    codex_bin = ensure_installed(CODEX_VERSIONS[0].cli)
    for label, agent, path, options in plans:
        with real_cli_home("bench-launch-real-") as rig:
            server, project, env = rig.server, rig.project, rig.env
            programs = {Agent("claude"): (str(claude_bin),), Agent("codex"): (str(codex_bin),)}
            manager = TaskManager(
                Settings.from_env(env),
                options=LaunchOptions(programs=programs, **options),
                env=env,
            )
            manager.start()
            binds = []
            try:
                for _ in range(runs):
                    prompt_less = path != "hook"  # Codex starts its session at the first prompt
                    if not prompt_less:
                        from model_server import Reply

                        server.script.add(Reply.text("ok"))
                    request = LaunchRequest(
                        agent, str(project), prompt=None if prompt_less else "hi"
                    )
                    info = manager.launch(request)
                    deadline = time.monotonic() + 60
                    while time.monotonic() < deadline:
                        now = manager.get(info.task_id)
                        if now.binding is not None and now.binding.confirmed:
                            binds.append(seconds_of(now) * 1000)
                            break
                        time.sleep(0.005)
                    manager.stop(info.task_id, graceful=False)
                    manager.forget(info.task_id)
            finally:
                manager.shutdown(keep=False)
            results[label] = distribution(binds)
    return results


def measure_idle(tasks: int, seconds: float) -> dict[str, Any]:
    """CPU of this process (the task manager: readers, binder) with ``tasks`` idle, bound
    fake agents: what launched agents cost agentbar while nobody types."""
    import resource

    tmp = tempfile.TemporaryDirectory(prefix="bench-launch-idle-")
    with tmp, launch_rig(Path(tmp.name), engine=False) as rig:
        manager = rig.manager(engine=False)
        agents = [Agent("claude"), Agent("codex")] * tasks
        infos = [rig.launch(manager, agent) for agent in agents[:tasks]]
        for info in infos:
            rig.bound(manager, info.task_id)
        time.sleep(2.0)  # past the start-up output
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        time.sleep(seconds)
        after, ended = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"tasks": tasks, "seconds": round(ended - started, 1),
            "cpu_percent_of_one_core": round(100 * cpu / (ended - started), 3)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30, help="launches per fast path")
    parser.add_argument("--slow-runs", type=int, default=5, help="launches per slow path")
    parser.add_argument("--real", action="store_true", help="also the real CLIs (npm cache)")
    parser.add_argument("--real-runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of 5 idle tasks")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    started = time.monotonic()
    fake = {p: measure_fake(p, args.slow_runs if p in SLOW else args.runs) for p in PATHS}
    rows = [
        [path, r["bind"]["count"], f"{r['bind']['p50_ms']:.1f}", f"{r['bind']['p99_ms']:.1f}",
         f"{r['first_output']['p50_ms']:.1f}"]
        for path, r in fake.items()
    ]  # fmt: skip
    print("fake agent (tests/fake_agent.py) on a real PTY:")
    print(table(rows, ["path", "runs", "bind p50 ms", "bind p99 ms", "first output p50 ms"]))
    result: dict[str, Any] = {"machine": machine(), "fake": fake}
    if args.idle > 0:
        idle = measure_idle(5, args.idle)
        result["idle"] = idle
        print(f"\n5 idle launched tasks: {idle['cpu_percent_of_one_core']}% of one core "
              f"over {idle['seconds']} s (readers and binder)")  # fmt: skip
    if args.real:
        real = measure_real(args.real_runs)
        result["real"] = real
        print("\nreal CLIs:")
        print(table([[k, v["count"], f"{v['p50_ms']:.1f}", f"{v['p99_ms']:.1f}"]
                     for k, v in real.items()], ["path", "runs", "p50 ms", "p99 ms"]))  # fmt: skip
    result["seconds"] = round(time.monotonic() - started, 1)
    print(f"\n{result['seconds']} s; load {result['machine']['loadavg_1m']}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
