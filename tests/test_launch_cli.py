"""``agentbar launch``, ``tasks``, ``send``, ``approve``, ``stop``, ``handoff`` and ``quit`` as a
person runs them: real subprocesses against a real background ``agentbar serve`` that the first
``launch`` starts by itself, running the fake agent (``AGENTBAR_CLAUDE`` / ``AGENTBAR_CODEX``)."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import orjson
import psutil
import pytest
from cli_runner import agentbar, kill_left_behind, start_agentbar
from launch_rig import FAKE_AGENT
from polling import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def shell(tmp_path: Path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.pop("XDG_DATA_HOME", None)
    env.update(HOME=str(home), AGENTBAR_DATA_DIR=str(tmp_path / "data"))
    for agent in ("claude", "codex"):
        program = [sys.executable, str(FAKE_AGENT), "--agent", agent]
        env[f"AGENTBAR_{agent.upper()}"] = shlex.join(program)
    yield env, project
    kill_left_behind(tmp_path / "data", home)


def tasks(env: dict[str, str]) -> list[dict]:
    result = agentbar(env, "tasks", "--json")
    assert result.returncode == 0, result.stderr
    return orjson.loads(result.stdout)["tasks"]


def test_without_a_running_agentbar_only_launch_starts_one(shell):
    env, project = shell
    result = agentbar(env, "tasks")
    assert result.returncode == 3 and "no agentbar is running" in result.stderr
    result = agentbar(env, "launch", "codex", "--project", str(project), "--no-start")
    assert result.returncode == 3


def test_launch_send_approve_handoff_and_quit_from_the_shell(shell):
    env, project = shell
    launched = agentbar(env, "launch", "claude", "--project", str(project), "--prompt", "hi")
    assert launched.returncode == 0, launched.stderr
    first = launched.stdout.splitlines()[0]
    assert first.startswith("task ") and "claude in" in first and "session " in first
    task_id = first.split()[1].rstrip(":")
    info = orjson.loads((Path(env["AGENTBAR_DATA_DIR"]) / "server.json").read_bytes())
    server = psutil.Process(info["pid"])
    assert server.is_running() and os.getsid(server.pid) != os.getsid(0)  # detached
    assert "--on-exit" in server.cmdline()

    listed = wait_for(
        lambda: [t for t in tasks(env) if t["session"] and t["session"]["state"] == "done"],
        15,
        "the first turn",
    )
    assert listed[0]["task_id"] == task_id and listed[0]["session"]["detail"] == "You said: hi"
    table = agentbar(env, "tasks").stdout
    assert task_id in table and "done" in table and "hi" in table

    sent = agentbar(env, "send", task_id[:4], "--text", "run: touch from-shell.txt")
    assert sent.returncode == 0, sent.stderr
    wait_for(lambda: tasks(env)[0]["waiting"], 10, "the approval prompt")
    approved = agentbar(env, "approve", task_id)
    assert approved.returncode == 0
    # The prompt is a request in the decision book (the terminal route), answered there; a
    # prompt the route has not put in the book yet is answered through the task itself.
    assert approved.stdout.startswith(f"approved task {task_id}: Do you want") or (
        approved.stdout.startswith("approved claude ") and "touch from-shell.txt" in approved.stdout
    ), approved.stdout
    wait_for((project / "from-shell.txt").exists, 10, "the approved command")
    again = agentbar(env, "deny", task_id)
    # Refused: the prompt is gone, or its approval's keys are still being typed.
    assert again.returncode == 1, again.stdout
    assert "is not waiting for an approval" in again.stderr or "just answered" in again.stderr

    session_id = tasks(env)[0]["session_id"]
    printed = agentbar(env, "handoff", session_id[:8], "--what", "brief", "--print")
    assert printed.returncode == 0 and "## Goal\n\nhi" in printed.stdout
    handed = agentbar(env, "handoff", session_id, "--what", "answer", "--to-agent", "codex")
    assert handed.returncode == 0, handed.stderr
    assert "codex in" in handed.stdout
    assert {t["agent"] for t in tasks(env)} == {"claude", "codex"}
    pids = [t["pid"] for t in tasks(env)]

    quit_result = agentbar(env, "quit", "--stop")
    assert quit_result.returncode == 0 and "2 running agent(s) stopped" in quit_result.stdout
    wait_for(lambda: not server.is_running(), 20, "the server to exit")
    for pid in pids:
        assert not psutil.pid_exists(pid)
    assert not (Path(env["AGENTBAR_DATA_DIR"]) / "server.json").exists()


def test_reply_types_the_answer_to_a_launched_task_s_question(shell):
    """A launched task whose answer ends in a question, not in agentbar's book: ``agentbar
    reply TASK TEXT`` types the reply into it, as a person would; nothing else is typed."""
    env, project = shell
    launched = agentbar(env, "launch", "codex", "--project", str(project), "--prompt",
                        "tabs or spaces?", "--json")  # fmt: skip
    assert launched.returncode == 0, launched.stderr
    task_id = orjson.loads(launched.stdout)["task"]["task_id"]
    wait_for(
        lambda: [t for t in tasks(env) if (t["session"] or {}).get("waiting_for") == "question"],
        15,
        "the question",
    )
    replied = agentbar(env, "reply", task_id[:5], "tabs,", "please")
    assert replied.returncode == 0, replied.stderr
    assert replied.stdout == f"replied to task {task_id} (typed into it): tabs, please\n"
    wait_for(
        lambda: [
            t for t in tasks(env) if (t["session"] or {}).get("detail") == "You said: tabs, please"
        ],
        15,
        "the reply's turn",
    )
    again = agentbar(env, "reply", task_id, "more")
    assert again.returncode == 1 and "is not waiting for a question" in again.stderr
    assert agentbar(env, "quit", "--stop").returncode == 0


def test_quit_keeps_the_agents_and_the_next_launch_takes_them_back(shell):
    env, project = shell
    launched = agentbar(env, "launch", "codex", "--project", str(project), "--json")
    assert launched.returncode == 0, launched.stderr
    task = orjson.loads(launched.stdout)["task"]
    assert task["binding"]["path"] == "hook"
    assert agentbar(env, "quit").returncode == 0  # --keep is the default
    server_file = Path(env["AGENTBAR_DATA_DIR"]) / "server.json"
    wait_for(lambda: not server_file.exists(), 20, "the server to go")
    time.sleep(0.3)
    assert psutil.Process(task["pid"]).is_running()  # no agentbar now: the agent runs on
    # The next command that starts agentbar finds it again.
    other = agentbar(env, "launch", "claude", "--project", str(project))
    assert other.returncode == 0, other.stderr
    back = {t["task_id"]: t for t in tasks(env)}
    assert back[task["task_id"]]["adopted"] is True
    assert back[task["task_id"]]["session_id"] == task["session_id"]
    stop = agentbar(env, "stop", task["task_id"])
    assert stop.returncode == 0 and "exited" in stop.stdout
    assert agentbar(env, "quit", "--stop").returncode == 0
    wait_for(lambda: not psutil.pid_exists(task["pid"]), 10, "the kept agent to be gone")


def test_the_tray_takes_over_from_a_background_serve_and_its_agents(shell):
    """`agentbar launch` started a background serve; then the person starts the tray (here
    without a display: the same app, headless). The serve hands its agent to a keeper and
    quits; the tray owns the address and takes the agent back, terminal and session."""

    env, project = shell
    env = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    launched = agentbar(env, "launch", "claude", "--project", str(project), "--json")
    assert launched.returncode == 0, launched.stderr
    task = orjson.loads(launched.stdout)["task"]
    server_file = Path(env["AGENTBAR_DATA_DIR"]) / "server.json"
    serve_pid = orjson.loads(server_file.read_bytes())["pid"]
    tray = start_agentbar(env)
    try:
        assert tray.stderr is not None
        said = tray.stderr.readline()
        took_over = f"agentbar: took over from agentbar serve (pid {serve_pid}), with its 1"
        assert said == took_over + " launched agent\n", said
        assert not psutil.pid_exists(serve_pid) or psutil.Process(serve_pid).status() == "zombie"
        # Headless: says so and carries on (after a line about notifications when no session
        # bus is there).
        lines = [tray.stderr.readline()]
        if "no notification service" in lines[0]:
            lines.append(tray.stderr.readline())
        assert "running the engine" in lines[-1], lines
        assert orjson.loads(server_file.read_bytes())["pid"] == tray.pid
        back = {t["task_id"]: t for t in tasks(env)}
        assert back[task["task_id"]]["adopted"] is True
        assert back[task["task_id"]]["session_id"] == task["session_id"]
        assert psutil.Process(task["pid"]).is_running()
        stopped = agentbar(env, "quit", "--stop")
        assert stopped.returncode == 0, stopped.stderr
        assert tray.wait(30) == 0
        wait_for(lambda: not psutil.pid_exists(task["pid"]), 10, "the agent to be stopped")
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait(10)
