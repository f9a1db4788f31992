"""Measure the hook route: what holding costs the agent, and how fast an answer from agentbar
reaches it.

1. **The hook's cost with no agentbar running**, for Claude's ``PermissionRequest`` (the one
   event that holds): the command agentbar installs now (``--hold PermissionRequest``) with no
   ``server.json`` in the data dir, and with a stale one (a port nobody listens on: the
   connection is refused), against the same event with the command installed before the hook
   route (no ``--hold``) and the floor of any Python hook (``python -I -S -c pass``). All four
   interleaved, so they see the same load. Target: under 100 ms, and no more than before.
2. **Answer to the hook, in process**: a real loopback server and decision book, the real hook
   program spawned as Claude runs it; from the spawn to the request held in the book, and from
   ``POST /api/decisions/ID`` sent to the hook's exit with the answer printed.
3. ``--real N``: **answer to Claude continuing**, the real Claude CLIs (the conformance cache)
   against the conformance suite's scripted model, hooks installed by ``agentbar hooks
   install``, a real ``agentbar serve``: one session runs N commands that each need approval;
   for each, from ``POST /api/decisions/ID`` to Claude's next request at the model server (the
   tool's result going back to the model).

    python bench/bench_decide.py [--runs 100] [--rounds 50] [--real 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchlib import REPO, distribution, machine, real_cli_home, table, write_json

sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "conformance")]

from agentbar.core.agents.claude.events import CALLER, HOLD_CALLER  # noqa: E402
from agentbar.core.hooks.spec import HookCommand  # noqa: E402

HOOK = REPO / "assets" / "hooks" / "agentbar_hook.py"
SESSION = "aaaaaaaa-0000-4000-8000-00000000dec1"
TARGET_NO_AGENTBAR_MS = 100.0


def payload(command: str = "npm test -- --watch=false") -> bytes:
    suggestion = {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
        "behavior": "allow",
        "destination": "localSettings",
    }
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": f"/home/u/.claude/projects/-w/{SESSION}.jsonl",
            "cwd": "/w",
            "permission_mode": "default",
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Run the tests"},
            "permission_suggestions": [suggestion],
        }
    ).encode()


def timed(cmd: list[str], stdin: bytes) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    return (time.perf_counter() - start) * 1000.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure_cost(runs: int) -> dict[str, Any]:
    from agentbar.core.server.runner import write_server_file

    with tempfile.TemporaryDirectory(prefix="bench-decide-") as tmp:
        absent, stale = Path(tmp) / "absent", Path(tmp) / "stale"
        absent.mkdir()
        stale.mkdir()
        write_server_file(stale / "server.json", {"port": free_port(), "token": "t" * 43})
        python = sys.executable
        variants = {
            "hold, no server.json": HookCommand(python, str(HOOK), str(absent)).argv(HOLD_CALLER),
            "hold, stale server.json (refused)": HookCommand(python, str(HOOK), str(stale)).argv(
                HOLD_CALLER
            ),
            "before the hook route (no --hold)": HookCommand(python, str(HOOK), str(absent)).argv(
                CALLER
            ),
            "python -I -S -c pass (floor)": [python, "-I", "-S", "-c", "pass"],
        }
        times: dict[str, list[float]] = {name: [] for name in variants}
        body = payload()
        for _ in range(runs):
            for name, cmd in variants.items():
                times[name].append(timed(cmd, body))
    return {name: distribution(values) for name, values in times.items()}


def measure_in_process(rounds: int) -> dict[str, Any]:
    from replay_rig import make_home
    from server_rig import serving

    from agentbar.core.decisions import DecisionBook
    from agentbar.core.server.runner import write_server_file

    held_ms: list[float] = []
    answered_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-decide-") as tmp:
        home = make_home(Path(tmp), claude=())
        book = DecisionBook()
        with serving(home, decisions=book) as running:
            data = home.settings.data_dir
            data.mkdir(parents=True, exist_ok=True)
            write_server_file(home.settings.server_path, running.server.info())
            cmd = HookCommand(sys.executable, str(HOOK), str(data)).argv(HOLD_CALLER)
            for n in range(rounds):
                spawned = time.perf_counter()
                proc = subprocess.Popen(
                    cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
                )
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(payload(f"make step-{n}"))
                proc.stdin.close()
                while not book.pending():
                    time.sleep(0.0005)
                held_ms.append((time.perf_counter() - spawned) * 1000)
                (request,) = book.pending()
                sent = time.perf_counter()
                post(running.origin, running.token, request.request_id, {"verdict": "allow"})
                out = proc.stdout.read()
                proc.wait()
                answered_ms.append((time.perf_counter() - sent) * 1000)
                assert b'"behavior":"allow"' in out, out
                proc.stdout.close()
    return {
        "spawn -> request held": distribution(held_ms),
        "POST /api/decisions -> hook exited with the answer": distribution(answered_ms),
    }


def post(origin: str, token: str, request_id: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(
        f"{origin}/api/decisions/{request_id}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Origin": origin,
                 "Content-Type": "application/json"},
        method="POST",
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def measure_real(rounds: int) -> dict[str, Any]:
    """One Claude session per version running ``rounds`` commands, each approved from
    agentbar."""
    from claude_rig import VERSIONS, bash
    from cli_install import ensure_installed
    from cli_runner import agentbar
    from model_server import Reply

    from agentbar.core.hooks.spec import parse_version

    results: dict[str, Any] = {}
    for version in VERSIONS:
        if (parse_version(version.version) or ()) < (2, 0, 45):
            continue
        binary = ensure_installed(version.cli)
        with real_cli_home("bench-decide-real-", path_first=[binary.parent]) as rig:
            root, project, data, server, env = rig.root, rig.project, rig.data, rig.server, rig.env
            done = agentbar(env, "hooks", "install", "--agent", "claude", "--yes")
            assert done.returncode == 0, done.stderr
            serve = subprocess.Popen(
                [sys.executable, "-m", "agentbar.tray", "serve"], env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            term = None
            try:
                while not (data / "server.json").exists():
                    time.sleep(0.05)
                info = json.loads((data / "server.json").read_text())
                origin, token = f"http://127.0.0.1:{info['port']}", info["token"]
                for n in range(rounds):
                    server.script.add(bash(f"touch made-{n}.txt", "Make a file"))
                server.script.add(Reply.text("All made."))
                from agent_terminal import AgentTerminal

                term = AgentTerminal([str(binary)], env=env, cwd=project,
                                     log_path=root / "claude.pty.log")  # fmt: skip
                term.wait_for("? for shortcuts", timeout=90)
                time.sleep(0.5)
                term.type("make the files")
                time.sleep(0.8)
                term.press("enter")
                delays = []
                answered: set[str] = set()
                for _ in range(rounds):
                    request = wait_request(origin, token, answered)
                    before = len(server.main_requests())
                    sent = time.perf_counter()
                    post(origin, token, request, {"verdict": "allow", "origin": "cli"})
                    answered.add(request)
                    continued = server.wait_main_requests(before + 1)[before]
                    delays.append((continued.at - sent) * 1000)
                term.wait_for("All made.", timeout=60)
                results[f"claude {version.version}"] = distribution(delays)
            finally:
                if term is not None:
                    term.close()
                serve.terminate()
                serve.wait(20)
    return results


def wait_request(origin: str, token: str, answered: set[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        request = urllib.request.Request(
            f"{origin}/api/decisions", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            found = [r["request_id"] for r in json.loads(response.read())["requests"]]
        fresh = [r for r in found if r not in answered]
        if fresh:
            return fresh[0]
        time.sleep(0.01)
    raise TimeoutError("no request held")


def rows(results: dict[str, dict[str, Any]]) -> list[list[str]]:
    return [
        [
            name,
            *(f"{d[k]:.1f} ms" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")),
            str(d["count"]),
        ]
        for name, d in results.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--real", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": machine()}
    header = ["figure", "p50", "p90", "p99", "max", "n"]
    result["cost"] = measure_cost(args.runs)
    print(table(rows(result["cost"]), header))
    worst = result["cost"]["hold, no server.json"]["p99_ms"]
    print(f"target: hook without agentbar p99 < {TARGET_NO_AGENTBAR_MS:.0f} ms: "
          f"{'met' if worst < TARGET_NO_AGENTBAR_MS else 'NOT met'}\n")  # fmt: skip
    result["in_process"] = measure_in_process(args.rounds)
    print(table(rows(result["in_process"]), header))
    if args.real:
        result["real"] = measure_real(args.real)
        print()
        print(table(rows(result["real"]), header))
    print(f"\nload average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    write_json(args.json, result)


if __name__ == "__main__":
    main()
