"""An agent is one package and one line in the composition list: a toy agent that only the tests
know (``tests/toy_agent``: its own file format, its own kit), added to ``registry.KITS`` and
nothing else, joins the real engine (real watchdog, real process table), ``agentbar status``,
replay, ``agentbar hooks`` (installed into its own settings file, run through agentbar's real
hook program, which names no agent, into the engine), the launcher's list and the server's agent
list."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import toy_agent
from polling import wait_for
from toy_agent.files import AGENT as TOY
from toy_agent.files import MARKER
from toy_agent.hooks import CALLER, EVENTS, PID_ENV, POLL, SESSION_ENV, STOP_REPLY

from agentbar.core import cli
from agentbar.core.agents import registry
from agentbar.core.config import Settings, UnknownAgent
from agentbar.core.hooks import installer
from agentbar.core.hooks.errors import HooksFileError
from agentbar.core.launch.manager import TaskManager
from agentbar.core.launch.request import BadLaunch
from agentbar.core.model import SessionKey, SessionSnapshot, Source, State, WaitingFor
from agentbar.core.replay.files import AgentRoots
from agentbar.core.replay.model import ItemKind
from agentbar.core.replay.pages import Replay
from agentbar.core.server.app import AgentEntry
from agentbar.core.service import Service

SID = "toy-0001"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The user's environment, with the toy agent's one line added to the composition list."""
    monkeypatch.setattr(registry, "KITS", (*registry.KITS, toy_agent.KIT))
    values = {
        "HOME": str(tmp_path / "home"),
        "AGENTBAR_DATA_DIR": str(tmp_path / "data"),
        "AGENTBAR_CONFIG_DIR": str(tmp_path / "config"),
        toy_agent.HOME_ENV: str(tmp_path / "toy"),
    }
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "api"
    folder.mkdir(parents=True)
    return folder


def chat(env: dict[str, str]) -> Path:
    return Path(env[toy_agent.HOME_ENV]) / "chats" / f"{SID}.jsonl"


def write(path: Path, *lines: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as f:
        for line in lines:
            f.write(orjson.dumps({"t": time.time(), **line}) + b"\n")


@pytest.fixture
def toy_process(project: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The toy agent's client process: the tests' Python, in the project, naming its session."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", MARKER, "--session", SID],
        cwd=project,
    )
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def toy_session(service: Service) -> SessionSnapshot | None:
    return next((s for s in service.engine.sessions() if s.key == SessionKey(TOY, SID)), None)


def test_settings_from_the_composition_list_know_the_toy_agent(env: dict[str, str]) -> None:
    settings = Settings.from_env(env)
    assert settings.agents == (*(kit.agent for kit in registry.KITS[:-1]), TOY)
    assert settings.homes_of(TOY) == (Path(env[toy_agent.HOME_ENV]),)
    assert settings.kit("toy") is toy_agent.KIT
    assert "python" in settings.process_names()
    assert [s.agent for s in settings.sources()].count(TOY) == 2  # its chats, its hook events
    with pytest.raises(UnknownAgent, match="unknown agent 'cursor'"):
        settings.kit("cursor")
    with pytest.raises(ValueError, match="two agent kits for Agent\\('toy'\\)"):
        Settings(
            homes=settings.homes, data_dir=settings.data_dir, kits=(*settings.kits, toy_agent.KIT)
        )


def test_the_toy_agent_lives_in_the_real_engine(
    env: dict[str, str], project: Path, toy_process: subprocess.Popen[bytes]
) -> None:
    service = Service.open(Settings.from_env(env), tick_seconds=0.5)
    service.start()
    try:
        write(chat(env), {"cwd": str(project)}, {"user": "fix the flaky test"})
        running = wait_for(
            lambda: (
                (s := toy_session(service)) is not None and s.state.state is State.RUNNING and s
            ),
            timeout=15,
            what="the toy session running",
        )
        assert running.project == str(project) and running.title == "fix the flaky test"
        bound = wait_for(
            lambda: (s := toy_session(service)) and s.process is not None and s,
            timeout=15,
            what="the toy process bound",
        )
        assert bound.process is not None and bound.process.pid == toy_process.pid

        write(chat(env), {"asks": "Which database?"})
        asking = wait_for(
            lambda: (s := toy_session(service)) and s.state.state is State.INPUT_REQUIRED and s,
            timeout=15,
            what="the question",
        )
        assert asking.state.waiting_for is WaitingFor.QUESTION
        assert asking.state.detail == "Which database?"

        write(chat(env), {"answer": "Postgres"}, {"says": "Switched to Postgres.", "final": True})
        write(chat(env), {"done": True})
        done = wait_for(
            lambda: (s := toy_session(service)) and s.state.state is State.DONE and s,
            timeout=15,
            what="the turn done",
        )
        assert "Switched to Postgres." in done.state.detail

        toy_process.kill()
        toy_process.wait()
        wait_for(
            lambda: (s := toy_session(service)) and s.state.state is State.ENDED,
            timeout=20,
            what="the session ended with its process",
        )
    finally:
        service.close()


def test_status_and_replay_show_the_toy_session(env: dict[str, str], project: Path) -> None:
    write(
        chat(env),
        {"cwd": str(project)},
        {"user": "add a login page"},
        {"says": "Added it.", "final": True},
        {"done": True},
    )
    out = io.StringIO()
    assert cli.run(cli.build_parser().parse_args(["status", "--all", "--json"]), out) == 0
    rows = [r for r in json.loads(out.getvalue())["sessions"] if r["agent"] == "toy"]
    assert [(r["session_id"], r["project"], r["title"]) for r in rows] == [
        (SID, str(project), "add a login page")
    ]
    assert rows[0]["transcript"] == str(chat(env))

    settings = Settings.from_env(env)
    service = Service.open(settings)
    try:
        service.engine.catch_up()
        snap = toy_session(service)
    finally:
        service.close()
    assert snap is not None
    page = Replay(AgentRoots(settings.agent_roots), settings.replay_adapters()).page(snap)
    assert [(i.kind, i.text) for i in page.items] == [
        (ItemKind.USER, "add a login page"),
        (ItemKind.ASSISTANT, "Added it."),
        (ItemKind.NOTE, "turn ended"),
    ]


def hooks_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = cli.run(cli.build_parser().parse_args(["hooks", *args]), out)
    return code, out.getvalue()


def run_toy_hook(command: str, payload: dict[str, object], env: dict[str, str]) -> bytes:
    """One hook run as the toy runs it: the command through the shell, the event on stdin."""
    result = subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={"PATH": os.environ["PATH"], **env},
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, b"")
    return result.stdout


def test_the_toy_agents_hooks_install_run_and_reach_the_engine(
    env: dict[str, str], project: Path, toy_process: subprocess.Popen[bytes]
) -> None:
    # Its kit's hook target is all it takes: `agentbar hooks` offers it, writes its file...
    assert hooks_cli("install", "--agent", "toy", "--yes")[0] == 0
    hooks_file = Path(env[toy_agent.HOME_ENV]) / "hooks.json"
    installed = json.loads(hooks_file.read_text())["hooks"]
    assert list(installed) == list(EVENTS)
    (command,) = {c for commands in installed.values() for c in commands}
    assert f"--pid-env {PID_ENV}" in command and "--agent toy" in command
    code, out = hooks_cli("status", "--agent", "toy")
    assert code == 0 and out.startswith("toy     installed  ") and "(4 events)" in out, out
    assert len(out.splitlines()) == 1, out  # no note: nothing outdated, broken or missing

    # ...and agentbar's hook program, which names no agent, takes the toy's events as its
    # command line says: its pid variable, its session variable, its reply on Stop.
    settings = Settings.from_env(env)
    service = Service.open(settings, tick_seconds=0.5)
    service.start()
    try:
        write(chat(env), {"cwd": str(project)}, {"user": "drop the old tables"})
        wait_for(lambda: toy_session(service), timeout=15, what="the toy session")
        toy_env = {
            "AGENTBAR_DATA_DIR": env["AGENTBAR_DATA_DIR"],
            PID_ENV: str(toy_process.pid),
            SESSION_ENV: SID,
        }
        # The toy's own event names and fields; its translator makes them agentbar's.
        ask = {"hook_event_name": "ask", "cwd": str(project), "tool": "sql",
               "what": "DROP TABLE users"}  # fmt: skip
        assert run_toy_hook(command, ask, toy_env) == b""
        asking = wait_for(
            lambda: (s := toy_session(service)) and s.state.state is State.INPUT_REQUIRED and s,
            timeout=15,
            what="the approval from the toy's hook",
        )
        assert asking.state.waiting_for is WaitingFor.APPROVAL
        assert asking.state.source is Source.HOOK
        assert asking.state.detail == "sql: DROP TABLE users"
        # Its question tool, declared by its kit alone, makes an ask a question to answer.
        poll = {"hook_event_name": "ask", "cwd": str(project), "tool": POLL,
                "what": "Which backup should stay?"}  # fmt: skip
        assert run_toy_hook(command, poll, toy_env) == b""
        polling = wait_for(
            lambda: (s := toy_session(service)) and s.state.detail.startswith("Which") and s,
            timeout=15,
            what="the question from the toy's poll",
        )
        assert polling.state.state is State.INPUT_REQUIRED
        assert polling.state.source is Source.HOOK
        assert polling.state.detail == "Which backup should stay?"
        done = {"hook_event_name": "done", "session_id": SID, "answer": "Dropped it."}
        assert run_toy_hook(command, done, toy_env) == f"{STOP_REPLY}\n".encode()
        finished = wait_for(
            lambda: (s := toy_session(service)) and s.state.state is State.DONE and s,
            timeout=15,
            what="the turn done by the toy's hook",
        )
        assert finished.state.source is Source.HOOK
        assert finished.state.detail == "Dropped it."
    finally:
        service.close()
    events = settings.data_dir / "events" / "toy" / f"{SID}.jsonl"
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [(e["agent"], e["event"], e["pid"], e.get("tool_name")) for e in lines] == [
        ("toy", "PermissionRequest", toy_process.pid, "sql"),
        ("toy", "PermissionRequest", toy_process.pid, POLL),
        ("toy", "Stop", toy_process.pid, None),
    ]

    assert hooks_cli("uninstall", "--agent", "toy", "--yes")[0] == 0
    assert not hooks_file.exists()  # agentbar created it: the exact undo deletes it


def test_the_toy_callers_command_line_is_what_its_hooks_need() -> None:
    translator = Path(toy_agent.__file__).resolve().with_name("hook_payload.py")
    assert CALLER.args() == [
        "--agent", "toy", "--pid-env", PID_ENV, "--session-env", SESSION_ENV,
        "--reply", f"done={STOP_REPLY}", "--translate", str(translator),
    ]  # fmt: skip


def test_what_the_toy_kit_leaves_out_is_refused_plainly(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hookless = dataclasses.replace(toy_agent.KIT, hooks=None)
    monkeypatch.setattr(registry, "KITS", (*registry.KITS[:-1], hookless))
    settings = Settings.from_env(env)
    assert TOY not in installer.hooked_agents(settings)  # it has no hook target
    with pytest.raises(HooksFileError, match="no hooks for toy"):
        installer.plan_install(TOY, settings)
    with pytest.raises(BadLaunch, match="cannot launch toy"):
        TaskManager(settings, env=env).profile(TOY)
    entries = [AgentEntry.of(kit).to_json() for kit in settings.kits]
    assert entries[-1] == {"agent": "toy", "name": "Toy Agent", "launch": False, "replay": True}
