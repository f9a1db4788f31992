"""The real tray (``agentbar`` in a process of its own: engine, server, icon, desktop-notifier)
on the private desktop of ``desktop.py``, as the GUI tests drive it: a tmp HOME where this test's
own process plays the agents (real transcripts and registries, a ``sleep`` as each agent's
process), the tray's stderr read line by line as it runs, its server's API, its icon in trayer
(XEmbed) or in the StatusNotifier host, and its menu through the host or over dbusmenu."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest
import sni_client
from claude_lines import ClaudeTranscript, registry, write_lines
from desktop import SCREEN, SNI_BAR, Desktop, wait_until
from PIL import Image
from polling import TimedOut, end_process

A = "aaaaaaaa-1111-4111-8111-111111111111"
B = "bbbbbbbb-2222-4222-8222-222222222222"
START_SECONDS = 60
FAKE_AGENT = Path(__file__).resolve().parent / "fake_agent.py"


@dataclass
class Tray:
    desktop: Desktop
    root: Path
    env: dict[str, str]
    proc: subprocess.Popen[str] | None = None
    transcripts: dict[str, ClaudeTranscript] = field(default_factory=dict)
    agents: list[subprocess.Popen[bytes]] = field(default_factory=list)
    pids: dict[str, int] = field(default_factory=dict)
    started: dict[str, float] = field(default_factory=dict)
    said: list[str] = field(default_factory=list)  # the running tray's stderr, line by line
    _reader: threading.Thread | None = None

    @property
    def home(self) -> Path:
        return Path(self.env["HOME"])

    @property
    def data(self) -> Path:
        return Path(self.env["AGENTBAR_DATA_DIR"])

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "agentbar.tray", *args],
            env=env or self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run_tray(self, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """The tray, started; what it says on stderr is collected in ``said`` as it runs."""
        self.proc = proc = self.start(env=env)
        self.said = said = []

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                said.append(line.rstrip("\n"))

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        return proc

    def launch(self) -> None:
        """The tray, running: its engine caught up and its icon docked in trayer."""
        self.run_tray()
        self.wait_ready()
        self.icon()

    def wait_said(self, text: str, timeout: float = START_SECONDS) -> str:
        """The first line the tray said that contains ``text``."""
        return wait_until(
            f"the tray to say {text!r}",
            lambda: next((line for line in self.said if text in line), None),
            timeout,
        )

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """A change through the tray's server, as its own pages make it (token and Origin)."""
        info = self.server()
        origin = f"http://127.0.0.1:{info['port']}"
        request = urllib.request.Request(
            f"{origin}{path}",
            data=orjson.dumps(body),
            method="POST",
            headers={
                "Authorization": f"Bearer {info['token']}",
                "Origin": origin,
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return orjson.loads(response.read())

    def told_waiting(self, session_id: str, project: str) -> None:
        """``session_id`` starts waiting and its notification arrives (then it is old news)."""
        self.start_waiting(session_id, project)
        self.desktop.wait_notification(lambda n: project.rsplit("/", 1)[-1] in n["summary"])
        self.desktop.clear_notifications()

    def server(self) -> dict[str, Any]:
        def announced() -> dict[str, Any] | None:
            try:
                return orjson.loads((self.data / "server.json").read_bytes())
            except (OSError, orjson.JSONDecodeError):
                return None

        return wait_until("server.json", announced, START_SECONDS)

    def api(self, path: str) -> Any:
        info = self.server()
        request = urllib.request.Request(
            f"http://127.0.0.1:{info['port']}{path}",
            headers={"Authorization": f"Bearer {info['token']}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return orjson.loads(response.read())

    def wait_ready(self) -> None:
        wait_until("the engine", lambda: self.api("/api/health")["ready"], START_SECONDS)

    def icon(self) -> str:
        return wait_until(
            "the icon to dock in trayer",
            lambda: self.desktop.docked_icon("agentbar"),
            START_SECONDS,
        )

    def icon_image(self, path: Path) -> Image.Image:
        return Image.open(self.desktop.screenshot(path, self.icon())).convert("RGB")

    def wait_for_title(self, text: str) -> None:
        wait_until(f"the icon's title {text!r}", lambda: self.desktop.name_of(self.icon()) == text)

    def start_waiting(self, session_id: str, project: str, command: str = "rm -rf build") -> None:
        """A live Claude session that asks for approval; a ``sleep`` plays its agent process
        (the registry names its pid, the engine checks that it runs). Again for the same
        session: the approval is given (it runs), then it asks for the next command."""
        path = (
            self.home / ".claude" / "projects" / project.replace("/", "-") / f"{session_id}.jsonl"
        )
        if session_id in self.transcripts:
            t = self.transcripts[session_id]
            self._registry(session_id, project, "busy")
            wait_until("it to run", lambda: self.state(session_id) == "running")
            call = f"toolu_{len(self.agents)}{time.monotonic_ns()}"
            write_lines(path, [t.tool_result(), t.bash(command, call_id=call)])
            # The transcript and the registry are watched apart (one watchdog thread each): on
            # a loaded machine the registry's "waiting" could be read first, with the approved
            # call still the last one seen. Claude itself writes the call long after the
            # result, so wait here until the engine has the new call, as it would.
            wait_until(
                "the new call read",
                lambda: (self.session(session_id) or {}).get("detail") == f"Bash: {command}",
            )
        else:
            t = self.transcripts[session_id] = ClaudeTranscript(
                session_id, project, start=time.time()
            )
            self.pids[session_id] = self._agent()
            self.started[session_id] = time.time()
            write_lines(path, [t.prompt("Clean the build"), t.bash(command)])
        self._registry(session_id, project, "waiting")

    def start_running(self, session_id: str, project: str) -> None:
        """A live Claude session at work (its registry says busy)."""
        path = (
            self.home / ".claude" / "projects" / project.replace("/", "-") / f"{session_id}.jsonl"
        )
        t = self.transcripts[session_id] = ClaudeTranscript(session_id, project, start=time.time())
        self.pids[session_id] = self._agent()
        self.started[session_id] = time.time()
        write_lines(path, [t.prompt("Write the docs")])
        self._registry(session_id, project, "busy")

    def finish_turn(self, session_id: str, project: str) -> None:
        """The session's turn ends: its answer, the turn's end, and its registry says idle."""
        path = (
            self.home / ".claude" / "projects" / project.replace("/", "-") / f"{session_id}.jsonl"
        )
        t = self.transcripts[session_id]
        write_lines(path, [t.text("Done."), t.turn_duration()])
        self._registry(session_id, project, "idle")

    def _agent(self) -> int:
        agent = subprocess.Popen(["sleep", "600"])
        self.agents.append(agent)
        return agent.pid

    def _registry(self, session_id: str, project: str, status: str) -> None:
        pid = self.pids[session_id]
        entry = registry(
            pid,
            session_id,
            status=status,
            waiting_for="permission prompt" if status == "waiting" else None,
            cwd=project,
            started_at=self.started[session_id],
            updated_at=time.time(),
        )
        (self.home / ".claude" / "sessions" / f"{pid}.json").write_bytes(orjson.dumps(entry))

    def session(self, session_id: str) -> dict[str, Any] | None:
        found = [s for s in self.api("/api/sessions")["sessions"] if s["session_id"] == session_id]
        return found[0] if found else None

    def state(self, session_id: str) -> str | None:
        found = self.session(session_id)
        return found["state"] if found else None

    def windows(self) -> list[dict[str, Any]]:
        return self.api("/api/window")["windows"]

    def wait_window_on(self, path: str) -> dict[str, Any]:
        try:
            return wait_until(
                f"a window showing {path}",
                lambda: next((w for w in self.windows() if w["path"] == path), None),
                START_SECONDS,
            )
        except TimedOut:
            raise AssertionError(f"the windows show {self.windows()}") from None

    def tasks(self) -> list[dict[str, Any]]:
        return self.api("/api/tasks")["tasks"]

    # -- the StatusNotifier item, as the host and a D-Bus client see it ---------------------

    @property
    def bus(self) -> str:
        return self.desktop.env["DBUS_SESSION_BUS_ADDRESS"]

    def sni_service(self, timeout: float = START_SECONDS) -> str:
        """The item as the watcher lists it, once the tray registered it."""
        return wait_until(
            "the icon to register with the StatusNotifierWatcher",
            lambda: next(iter(sni_client.registered_items(self.bus)), None),
            timeout,
        )

    def sni_props(self) -> dict[str, Any]:
        return sni_client.item_properties(self.bus, self.sni_service())

    def menu(self) -> sni_client.MenuNode:
        service = self.sni_service()
        return sni_client.layout(self.bus, service, self.sni_props()["Menu"])[1]

    def click_entry(self, *path: str) -> None:
        """Choose an entry the way a host does (``Event`` "clicked"): by its labels, down
        through submenus."""
        node = self.menu()
        for label in path:
            node = next(
                (child for child in node.children if child.label == label),
                None,
            ) or pytest.fail(f"no entry {label!r} in {[c.label for c in node.children]}")
        service = self.sni_service()
        sni_client.click(self.bus, service, self.sni_props()["Menu"], node.id)

    def sni_icon_box(self) -> tuple[int, int, int, int]:
        """Where the host drew the icon on the screen: the bounding box of its bar's non-black
        pixels, once there are some (left, top, right, bottom)."""
        bar = wait_until("the host's bar", self.desktop.sni_bar)

        def drawn() -> tuple[int, int, int, int] | None:
            shot = self.desktop.screenshot(self.root / "sni-bar.png", bar)
            return Image.open(shot).convert("RGB").getbbox()

        left, top, right, bottom = wait_until("the icon in the host's bar", drawn)
        y0 = SCREEN[1] - SNI_BAR
        return left, y0 + top, right, y0 + bottom

    def sni_icon_image(self, path: Path) -> Image.Image:
        bar = wait_until("the host's bar", self.desktop.sni_bar)
        return Image.open(self.desktop.screenshot(path, bar)).convert("RGB")

    def click_sni_icon(self, button: int) -> None:
        left, top, right, bottom = self.sni_icon_box()
        done = self.desktop.run(
            "xdotool", "mousemove", str((left + right) // 2), str((top + bottom) // 2),
            "click", str(button),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def open_host_menu(self) -> None:
        """Right-click the icon in the host: the host pops its dbusmenu up as a GTK menu."""
        self.click_sni_icon(3)
        wait_until("the host's menu to open", self.desktop.sni_popup)
        time.sleep(0.3)  # its first paint

    def choose_in_host_menu(self, *keys: str) -> None:
        """Keys in the host's open menu (GTK skips the disabled headings), then Return."""
        for key in (*keys, "Return"):
            assert self.desktop.run("xdotool", "key", key).returncode == 0
            time.sleep(0.1)
        wait_until("the host's menu to close", lambda: self.desktop.sni_popup() is None)

    # -- the XEmbed icon in trayer -----------------------------------------------------------

    def click_icon(self) -> None:
        x, y, w, h = self.desktop.geometry(self.icon())
        done = self.desktop.run(
            "xdotool", "mousemove", str(x + w // 2), str(y + h // 2), "click", "1"
        )
        assert done.returncode == 0, done.stderr

    def stop(self) -> tuple[int, str]:
        """End the tray (SIGTERM): its exit status and all it said."""
        assert self.proc is not None
        end_process(self.proc, grace=30)
        return self.wait_exit()

    def wait_exit(self, timeout: float = 30) -> tuple[int, str]:
        """The tray's exit status once it ends by itself, and all it said."""
        assert self.proc is not None
        status = self.proc.wait(timeout)
        if self._reader is not None:
            self._reader.join(10)
        return status, "\n".join(self.said)


@contextlib.contextmanager
def tray_on(desktop: Desktop, tmp_path: Path) -> Iterator[Tray]:
    """A tray to start on ``desktop`` over a fresh HOME; launched agents are ``fake_agent.py``
    (``AGENTBAR_CLAUDE``); ``tmp_path/project`` is a pinned folder, so "Launch agent" offers it."""
    home = tmp_path / "home"
    for folder in (".claude/projects", ".claude/sessions", ".codex/sessions"):
        (home / folder).mkdir(parents=True)
    env = dict(
        desktop.env,
        HOME=str(home),
        AGENTBAR_DATA_DIR=str(tmp_path / "data"),
        AGENTBAR_CONFIG_DIR=str(tmp_path / "config"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        AGENTBAR_CLAUDE=f"{sys.executable} {FAKE_AGENT} --agent claude",
        FAKE_AGENT_DIALOG_GUARD="0",
    )
    (tmp_path / "project").mkdir()
    # Private, as agentbar would leave them: the tests that read its stderr expect no line
    # about tightening (tests/test_private_files.py covers that).
    (tmp_path / "config").mkdir(mode=0o700)
    settings = tmp_path / "config" / "settings.toml"
    settings.write_text(f'[launch]\npinned_projects = ["{tmp_path / "project"}"]\n')
    settings.chmod(0o600)
    # Not agentbar's first start here (tests/test_tray_welcome.py has that): no welcome notice
    # among the notices these tests count.
    (tmp_path / "data").mkdir(mode=0o700)
    (tmp_path / "data" / "welcomed").touch(mode=0o600)
    desktop.clear_notifications()
    t = Tray(desktop=desktop, root=tmp_path, env=env)
    try:
        yield t
    finally:
        if t.proc is not None and t.proc.poll() is None:
            t.stop()
        _kill_left_behind(env["AGENTBAR_DATA_DIR"])
        for agent in t.agents:
            agent.kill()
            agent.wait(5)


def _kill_left_behind(data_dir: str) -> None:
    """Launched agents (and the keeper that holds them after a quit that kept them) of this
    test's tray: every process whose environment names its data folder."""
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.pid != os.getpid() and proc.environ().get("AGENTBAR_DATA_DIR") == data_dir:
                proc.kill()


@pytest.fixture
def tray(desktop: Desktop, tmp_path: Path) -> Iterator[Tray]:
    with tray_on(desktop, tmp_path) as t:
        yield t


def colour_count(image: Image.Image, colour: tuple[int, ...], tolerance: int = 24) -> int:
    r0, g0, b0 = colour[:3]
    data = image.convert("RGB").tobytes()
    return sum(
        1
        for i in range(0, len(data), 3)
        if abs(data[i] - r0) <= tolerance
        and abs(data[i + 1] - g0) <= tolerance
        and abs(data[i + 2] - b0) <= tolerance
    )
