"""Notifications on a machine with no session bus: the real tray process (headless: no display
either) says so in one line, never a traceback, keeps its engine and server going through state
changes, and notifies once a bus appears at ``$XDG_RUNTIME_DIR/bus`` (as a systemd user bus
would); plus the bus lookup itself."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from claude_lines import ClaudeTranscript, registry, write_lines
from desktop import Desktop, wait_until

from agentbar.core.config import Settings
from agentbar.core.launch.client import Client, NoServer
from agentbar.tray import actions
from agentbar.tray.bus_address import session_bus_address
from agentbar.tray.notices import Notice
from agentbar.tray.notify import NO_BUS, AwaitingBus, FakeNotifier

A = "aaaaaaaa-1111-4111-8111-111111111111"
B = "bbbbbbbb-2222-4222-8222-222222222222"
START_SECONDS = 60


def test_the_bus_is_the_named_one_else_the_runtime_socket(tmp_path: Path) -> None:
    named = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "XDG_RUNTIME_DIR": "/x"}
    assert session_bus_address(named) == "unix:path=/run/user/1000/bus"
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    assert session_bus_address(env) is None
    (runtime / "bus").write_text("a file, not a socket")
    assert session_bus_address(env) is None
    assert session_bus_address({}) is None


def test_awaiting_a_bus_drops_notices_until_one_appears(tmp_path: Path) -> None:
    import socket

    runtime = tmp_path / "r"
    runtime.mkdir()
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    told: list[str] = []
    real = FakeNotifier()
    made: list[int] = []

    def make() -> FakeNotifier:
        made.append(1)
        return real

    notifier = AwaitingBus(make, env, told.append)
    notice = Notice(title="t", body="b", click=actions.BOARD)
    notifier.send(notice)
    notifier.send(notice)
    assert (real.sent, made, told) == ([], [], [])
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(runtime / "bus"))
        notifier.send(notice)
    assert real.sent == [notice]
    assert made == [1]
    assert env["DBUS_SESSION_BUS_ADDRESS"] == f"unix:path={runtime / 'bus'}"
    assert told == [
        f"a session bus is there now (unix:path={runtime / 'bus'}): notifications are on"
    ]


class Stderr:
    """A process's stderr, read as it runs (on a thread of its own)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(proc.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.append(line.rstrip("\n"))

    def wait_said(self, start: str) -> str:
        return wait_until(
            f"a line starting {start!r}",
            lambda: next((line for line in self.lines if line.startswith(start)), None),
            START_SECONDS,
        )

    def text(self) -> str:
        self._thread.join(10)
        return "\n".join(self.lines)


@pytest.fixture
def agents() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for agent in started:
        agent.kill()
        agent.wait(5)


def waits(home: Path, session_id: str, project: str, agents: list[subprocess.Popen[bytes]]) -> None:
    """A live Claude session that asks for approval; a ``sleep`` plays its agent process."""
    agent = subprocess.Popen(["sleep", "600"])
    agents.append(agent)
    now = time.time()
    t = ClaudeTranscript(session_id, project, start=now)
    path = home / ".claude" / "projects" / project.replace("/", "-") / f"{session_id}.jsonl"
    write_lines(path, [t.prompt("Clean the build"), t.bash("rm -rf build")])
    entry = registry(
        agent.pid,
        session_id,
        status="waiting",
        waiting_for="permission prompt",
        cwd=project,
        started_at=now,
        updated_at=now,
    )
    (home / ".claude" / "sessions" / f"{agent.pid}.json").write_bytes(orjson.dumps(entry))


def state(client: Client, session_id: str) -> str | None:
    sessions = client.request("GET", "/api/sessions")["sessions"]
    found = [s["state"] for s in sessions if s["session_id"] == session_id]
    return found[0] if found else None


@pytest.mark.slow
def test_no_bus_one_line_then_notifications_once_a_bus_appears(
    desktop: Desktop, tmp_path: Path, agents: list[subprocess.Popen[bytes]]
) -> None:
    home = tmp_path / "home"
    for folder in (".claude/projects", ".claude/sessions", ".codex/sessions"):
        (home / folder).mkdir(parents=True)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    # The desktop's environment less its display and its bus: a console login, say.
    env = {k: v for k, v in desktop.env.items() if k not in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    env.update(
        HOME=str(home),
        XDG_RUNTIME_DIR=str(runtime),
        AGENTBAR_DATA_DIR=str(tmp_path / "data"),
        AGENTBAR_CONFIG_DIR=str(tmp_path / "config"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
    )
    desktop.clear_notifications()
    tray = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = Stderr(tray)
    try:
        said = stderr.wait_said("agentbar: no notification service")
        assert said == f"agentbar: {NO_BUS}; notifications start when one appears"
        headless = stderr.wait_said("agentbar: no display")
        assert "; running the engine and the server at http://127.0.0.1:" in headless

        def answering() -> Client | None:
            try:
                return Client.find(Settings.from_env(env), timeout=2)
            except NoServer:
                return None

        client = wait_until("the server", answering, START_SECONDS)
        # State changes with no bus: the engine follows them, nothing is said again.
        waits(home, A, "/work/nobus", agents)
        wait_until("A to wait", lambda: state(client, A) == "input_required", START_SECONDS)
        log = tmp_path / "data" / "agentbar.log"
        wait_until(
            "A's notice to be dropped",
            lambda: "not shown, no session bus: Claude Code in nobus" in log.read_text(),
            START_SECONDS,
        )
        # A bus appears where systemd would put the user's: the next change is told.
        bus = desktop.env["DBUS_SESSION_BUS_ADDRESS"].split(",")[0].removeprefix("unix:path=")
        (runtime / "bus").symlink_to(bus)
        waits(home, B, "/work/later", agents)
        shown = desktop.wait_notification(lambda n: "later" in n["summary"], timeout=START_SECONDS)
        assert shown["summary"] == "Claude Code in later needs your approval"
        assert state(client, A) == "input_required"
        stderr.wait_said("agentbar: a session bus is there now (unix:path=")
        assert all("nobus" not in n["summary"] for n in desktop.notifications())
    finally:
        tray.terminate()
        tray.wait(30)
    text = stderr.text()
    assert tray.returncode == 0, text
    assert "Traceback" not in text
    assert "Cannot autolaunch" not in text
    assert text.count("no notification service") == 1
    log = (tmp_path / "data" / "agentbar.log").read_text()
    assert "Traceback" not in log
    assert log.count("no notification service") == 1
