"""The real tray (``agentbar`` in a process of its own: engine, server, pystray's appindicator
backend, desktop-notifier) on the private desktop: it docks in trayer, its icon changes when a
session starts waiting (a real transcript and registry in a tmp HOME, this test's own process
playing the agent), a real notification reaches dunst with the right text, clicking it and the
menu's entries do what they say, a second ``agentbar`` hands over to the first, and without a
display it says so and keeps serving. Screenshots of the docked icon and the open menu are
kept as artefacts (``$AGENTBAR_TEST_ARTIFACTS`` or the test's tmp dir)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import ClaudeTranscript, registry, write_lines
from desktop import Desktop, wait_until
from PIL import Image
from polling import TimedOut

from agentbar.tray import badge

pytestmark = pytest.mark.slow

A = "aaaaaaaa-1111-4111-8111-111111111111"
B = "bbbbbbbb-2222-4222-8222-222222222222"
START_SECONDS = 60


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

    def launch(self) -> None:
        """The tray, running: its engine caught up and its icon docked."""
        self.proc = self.start()
        self.wait_ready()
        self.icon()

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
        else:
            t = self.transcripts[session_id] = ClaudeTranscript(
                session_id, project, start=time.time()
            )
            self.pids[session_id] = self._agent()
            self.started[session_id] = time.time()
            write_lines(path, [t.prompt("Clean the build"), t.bash(command)])
        self._registry(session_id, project, "waiting")

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

    def state(self, session_id: str) -> str | None:
        found = [s for s in self.api("/api/sessions")["sessions"] if s["session_id"] == session_id]
        return found[0]["state"] if found else None

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

    def open_menu(self) -> None:
        x, y, w, h = self.desktop.geometry(self.icon())
        done = self.desktop.run(
            "xdotool", "mousemove", str(x + w // 2), str(y + h // 2), "click", "1"
        )
        assert done.returncode == 0, done.stderr
        wait_until("the menu to open", self._menu_window)
        time.sleep(0.3)  # its first paint

    def _menu_window(self) -> str | None:
        for window in self.desktop.windows_of_class("agentbar"):
            if (
                self.desktop.name_of(window) == "agentbar"
                and self.desktop.geometry(window)[2] > 100
            ):
                state = self.desktop.run("xwininfo", "-id", window).stdout
                if "IsViewable" in state:
                    return window
        return None

    def choose(self, *keys: str) -> None:
        """Keys in the open menu (GTK skips the headings), then Return."""
        for key in (*keys, "Return"):
            assert self.desktop.run("xdotool", "key", key).returncode == 0
            time.sleep(0.1)
        wait_until("the menu to close", lambda: self._menu_window() is None)

    def stop(self) -> tuple[int, str]:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            _out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _out, err = self.proc.communicate(timeout=10)
        return self.proc.returncode, err


@contextlib.contextmanager
def tray_on(desktop: Desktop, tmp_path: Path) -> Iterator[Tray]:
    home = tmp_path / "home"
    for folder in (".claude/projects", ".claude/sessions", ".codex/sessions"):
        (home / folder).mkdir(parents=True)
    env = dict(
        desktop.env,
        HOME=str(home),
        AGENTBAR_DATA_DIR=str(tmp_path / "data"),
        AGENTBAR_CONFIG_DIR=str(tmp_path / "config"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
    )
    desktop.clear_notifications()
    t = Tray(desktop=desktop, root=tmp_path, env=env)
    try:
        yield t
    finally:
        if t.proc is not None and t.proc.poll() is None:
            t.stop()
        for agent in t.agents:
            agent.kill()
            agent.wait(5)


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


def test_the_tray_docks_and_its_icon_changes_when_a_session_starts_waiting(
    tray: Tray, artifacts: Path
) -> None:
    tray.proc = tray.start()
    tray.wait_ready()
    tray.wait_for_title("agentbar: nothing needs you")
    calm = tray.icon_image(artifacts / "docked-icon-calm.png")
    assert colour_count(calm, badge.CALM) > 20 and colour_count(calm, badge.NEEDS) == 0
    tray.start_waiting(A, "/work/live")
    tray.wait_for_title("agentbar: 1 needs you")
    needs = wait_until(
        "the badge to be drawn",
        lambda: (
            image
            if colour_count(
                image := tray.icon_image(artifacts / "docked-icon-needs.png"), badge.NEEDS
            )
            > 100
            else None
        ),
    )
    assert colour_count(needs, badge.INK, tolerance=8) > 10  # the digit
    shown = tray.desktop.wait_notification(lambda n: "live" in n["summary"])
    assert shown["summary"] == "Claude Code in live needs your approval"
    assert shown["body"] == "Bash: rm -rf build"
    assert shown["appname"] == "agentbar"
    time.sleep(3)  # ticks and polls: still that one notification
    assert [n["summary"] for n in tray.desktop.notifications()] == [shown["summary"]]
    status, err = tray.stop()
    assert status == 0, err
    assert not (tray.data / "server.json").exists()


def test_a_notification_click_and_the_menu_entries_do_what_they_say(
    tray: Tray, artifacts: Path
) -> None:
    tray.launch()
    tray.told_waiting(A, "/work/live")
    # The notification was closed to read it; raise a new one: a second session waits.
    tray.start_waiting(B, "/work/other")
    wait_until(
        "the second notification to show",
        lambda: tray.desktop.run("dunstctl", "count", "displayed").stdout.strip() == "1",
    )
    assert tray.desktop.run("dunstctl", "action", "0").returncode == 0
    first = tray.wait_window_on(f"/session/claude/{B}")  # its replay, at what needs the user
    # The menu: its screenshot, then each entry by keyboard.
    tray.wait_for_title("agentbar: 2 need you")
    tray.open_menu()
    tray.desktop.screenshot(artifacts / "open-menu.png")
    tray.choose("Down")  # the first session that needs you (A has waited longest)
    assert tray.wait_window_on(f"/session/claude/{A}")["window"] == first["window"]  # same window
    tray.open_menu()
    tray.choose("Down", "Down", "Down")  # Open window
    tray.wait_window_on("/")
    tray.open_menu()
    tray.choose("Down", "Down", "Down", "Down", "Right")  # Pause notifications > For 1 hour
    wait_until("the pause", (tray.data / "notifications-paused.json").exists)
    tray.open_menu()
    tray.choose("Down", "Down", "Down", "Down", "Down")  # Start at login
    autostart = tray.root / "xdg-config" / "autostart" / "agentbar.desktop"
    wait_until("the autostart entry", autostart.exists)
    assert "Exec=" in autostart.read_text()
    tray.open_menu()
    tray.choose("Up")  # Quit agentbar, the last entry
    assert tray.proc.wait(30) == 0
    assert not (tray.data / "server.json").exists()


def test_a_second_agentbar_hands_over_to_the_first(tray: Tray) -> None:
    tray.launch()
    second = tray.start()
    _out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    pid = tray.server()["pid"]
    assert err.strip().splitlines()[-1] == (
        f"agentbar: agentbar already runs (pid {pid}); opened its window"
    )
    tray.wait_window_on("/")
    assert tray.proc.poll() is None


def test_without_a_display_it_says_so_and_keeps_serving_and_notifying(tray: Tray) -> None:
    headless = {k: v for k, v in tray.env.items() if k != "DISPLAY"}
    tray.proc = tray.start(env=headless)
    tray.wait_ready()
    assert tray.proc.stderr is not None
    line = tray.proc.stderr.readline()
    assert line.startswith(
        "agentbar: no display (DISPLAY and WAYLAND_DISPLAY are unset), so no tray icon; "
        "running the engine, notifications and the server at http://127.0.0.1:"
    )
    assert "token=" not in line  # stderr is no terminal here: a log may keep it
    assert tray.api("/api/health")["ok"] is True
    tray.start_waiting(A, "/work/headless")
    shown = tray.desktop.wait_notification(lambda n: "headless" in n["summary"])
    assert shown["body"] == "Bash: rm -rf build"
    # A second one cannot open a window there: it says where the pages are instead.
    second = tray.start(env=headless)
    _out, err = second.communicate(timeout=60)
    assert second.returncode == 0
    assert "without a display; open http://127.0.0.1:" in err
    assert "/?code=" in err and "token" not in err  # a one-time address, never the token
    status, _err = tray.stop()
    assert status == 0


def test_no_notification_for_the_session_whose_window_is_in_front(tray: Tray) -> None:
    tray.launch()
    tray.told_waiting(A, "/work/front")
    tray.open_menu()
    tray.choose("Down")  # A's replay: the window opens in front
    shown = tray.wait_window_on(f"/session/claude/{A}")
    # The user clicks into it (there is no window manager to give it the focus).
    window = wait_until("the window", lambda: tray.desktop.windows_named(" — agentbar$"))[0]
    assert tray.desktop.run("xdotool", "windowfocus", "--sync", window).returncode == 0
    wait_until("the window to have the focus", lambda: tray.windows()[0]["focused"])
    assert shown["path"] == f"/session/claude/{A}"
    tray.start_waiting(A, "/work/front", "ls -la")  # approved, then the next approval
    wait_until("the badge", lambda: tray.desktop.name_of(tray.icon()) == "agentbar: 1 needs you")
    tray.start_waiting(B, "/work/behind")  # another session: told
    tray.desktop.wait_notification(lambda n: "behind" in n["summary"])
    assert [n["summary"] for n in tray.desktop.notifications()] == [
        "Claude Code in behind needs your approval"
    ]
    # The window loses the focus (the tray icon takes it): A is told again.
    tray.desktop.clear_notifications()
    assert tray.desktop.run("xdotool", "windowfocus", "--sync", tray.icon()).returncode == 0
    wait_until("the window to lose the focus", lambda: not tray.windows()[0]["focused"])
    tray.start_waiting(A, "/work/front", "git push")
    shown_a = tray.desktop.wait_notification(lambda n: "front" in n["summary"])
    assert shown_a["body"] == "Bash: git push"


def test_the_xorg_backend_shows_the_badge_without_a_menu(tray: Tray, artifacts: Path) -> None:
    # pystray's fallback on X11 without GTK: no menu, but the badge docks and follows. Its dock
    # request is sent once; trayer missed it about 1 start in 10 here (a pystray-xorg
    # limitation, see the README), so one more start is allowed, and only one.
    for attempt in (1, 2):
        tray.proc = tray.start(env={**tray.env, "PYSTRAY_BACKEND": "xorg"})
        tray.wait_ready()
        try:
            wait_until("the icon to dock", lambda: tray.desktop.docked_icon("agentbar"), 15)
            break
        except TimedOut:
            if attempt == 2:
                raise
            assert tray.stop()[0] == 0
    tray.start_waiting(A, "/work/xorg")
    tray.desktop.wait_notification(lambda n: "xorg" in n["summary"])
    wait_until(
        "the badge",
        lambda: colour_count(tray.icon_image(artifacts / "xorg-icon.png"), badge.NEEDS) > 100,
    )
    status, err = tray.stop()
    assert status == 0, err
    assert "agentbar: the xorg tray backend has no menu" in err
