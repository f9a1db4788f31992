"""A private desktop for the tray's GUI tests: Xvfb, a session D-Bus of its own, dunst as the
notification server and trayer as the XEmbed system tray (the recipe of
``shared/reference/desktop-linux.md``, pitfalls included), plus what the tests read from it; and
a real StatusNotifier host to start and stop on it: ``status-notifier-watcher`` and
``gtk-sni-tray-standalone`` (a GTK bar that draws each item's pixmaps and pops its dbusmenu as a
GTK menu through libdbusmenu-gtk3).

- Xvfb picks a free display and names it on a pipe: read to the newline (it writes twice).
- dunst is D-Bus-activatable: readiness is ``NameHasOwner``, never ``dunstctl`` (which would
  activate a second one).
- Everything runs with a private ``TMPDIR`` and ``XDG_RUNTIME_DIR``, ``NO_AT_BRIDGE=1`` and
  ``GDK_BACKEND=x11``; every process is stopped by its pid at the end.

The environment is handed to the tests as a dict (for the processes they start); the test
process's own ``os.environ`` is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from polling import end_process, wait_for

TOOLS = ("Xvfb", "dbus-daemon", "dunst", "dunstctl", "trayer", "xdotool", "import", "xwininfo")
SNI_TOOLS = {
    "status-notifier-watcher": "haskell-status-notifier-item-utils",
    "gtk-sni-tray-standalone": "haskell-gtk-sni-tray-utils",
}
WATCHER = "org.kde.StatusNotifierWatcher"
TRAY_HEIGHT = 32
SNI_BAR = 32  # the StatusNotifier host's bar, along the bottom of the screen
SCREEN = (1280, 800)
FIELDS = ("summary", "body", "appname", "id")
GEOMETRY = ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height")

DUNSTRC = """\
[global]
    font = Monospace 9
    width = 420
    offset = 10x40
    origin = top-right
    idle_threshold = 0
    show_indicators = no
    format = "<b>%s</b>\\n%b"
    dmenu = {dmenu}
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
"""


def wait_until(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """``polling.wait_for`` with the desktop's argument order and a slower poll."""
    return wait_for(check, timeout, what, step=0.05)


@dataclass
class Desktop:
    root: Path
    env: dict[str, str]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    bus_pid: int | None = None
    seen_up_to: int = 0  # notifications with ids up to this one are old news (cleared)

    @property
    def display(self) -> str:
        return self.env["DISPLAY"]

    def run(self, *cmd: str, timeout: float = 20.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd, env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )

    # -- D-Bus and notifications -------------------------------------------------------------

    def name_has_owner(self, name: str) -> bool:
        done = self.run(
            "dbus-send",
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            f"string:{name}",
        )
        return done.returncode == 0 and "boolean true" in done.stdout

    @contextlib.contextmanager
    def monitor(self, rule: str) -> Iterator[Callable[[], str]]:
        """``dbus-monitor`` on the bus with ``rule``; yields what it printed so far."""
        out = (self.root / f"monitor-{time.monotonic_ns()}.txt").open("w+")
        proc = subprocess.Popen(
            ["dbus-monitor", "--session", rule], env=self.env, stdout=out, stderr=subprocess.DEVNULL
        )
        time.sleep(0.3)  # its match rule in place

        def seen() -> str:
            out.flush()
            return Path(out.name).read_text()

        try:
            yield seen
        finally:
            proc.terminate()
            proc.wait(5)
            out.close()

    def notifications(self) -> list[dict[str, str]]:
        """What dunst showed since the last ``clear_notifications``, oldest first: summary,
        body, appname and id of each. (It closes what is displayed: only closed notifications
        are in dunst's history.)"""
        shown = [n for n in self._dunst_history() if int(n["id"]) > self.seen_up_to]
        return sorted(shown, key=lambda n: int(n["id"]))

    def _dunst_history(self) -> list[dict[str, str]]:
        self.run("dunstctl", "close-all")
        done = self.run("dunstctl", "history")
        if done.returncode != 0:
            return []
        doc = json.loads(done.stdout)
        rows = doc.get("data", [[]])[0]
        return [
            {
                key: str(row.get(key, {}).get("data", ""))
                for key in ("summary", "body", "appname", "id")
            }
            for row in rows
        ]

    def clear_notifications(self) -> None:
        """Forget what was shown so far (dunst 1.9 cannot clear its history: remember where
        it ends)."""
        self.seen_up_to = max((int(n["id"]) for n in self._dunst_history()), default=0)

    def press(self, label: str, done: Callable[[], Any]) -> Any:
        """Press the button ``label`` of the notification on display (dunst's context menu,
        whose picker chooses it) and wait until ``done()`` (the picker runs after dunstctl
        returns); then the picker chooses "Open" again."""
        wanted = self.root / "pick-label"
        wanted.write_text(label)
        try:
            assert self.run("dunstctl", "context").returncode == 0
            return wait_until(f"the {label!r} button's effect", done)
        finally:
            wanted.unlink()

    def wait_notification(
        self, match: Callable[[dict[str, str]], bool], timeout: float = 30.0
    ) -> dict[str, str]:
        return wait_until(
            "a notification at dunst",
            lambda: next((n for n in self.notifications() if match(n)), None),
            timeout,
        )

    # -- X ---------------------------------------------------------------------------------

    def windows_of_class(self, name: str) -> list[str]:
        done = self.run("xdotool", "search", "--classname", name)
        return [w for w in done.stdout.split() if w.strip()]

    def windows_named(self, pattern: str) -> list[str]:
        done = self.run("xdotool", "search", "--name", pattern)
        return done.stdout.split()

    def geometry(self, window: str) -> tuple[int, int, int, int]:
        """x, y, width, height of ``window`` on the screen; all 0 once it is gone (windows
        come and go between a search and this)."""
        done = self.run("xwininfo", "-id", window)
        values: dict[str, int] = {}
        for line in done.stdout.splitlines():
            key, _, value = line.strip().partition(":")
            if key in GEOMETRY:
                values[key] = int(value.strip())
        return tuple(values.get(key, 0) for key in GEOMETRY)  # type: ignore[return-value]

    def parent_of(self, window: str) -> int | None:
        done = self.run("xwininfo", "-children", "-id", window)
        found = re.search(r"Parent window id: (0x[0-9a-f]+)", done.stdout)
        return int(found.group(1), 16) if found else None

    def root_window(self) -> int:
        done = self.run("xwininfo", "-root")
        found = re.search(r"Window id: (0x[0-9a-f]+)", done.stdout)
        if not found:
            raise RuntimeError("no root window")
        return int(found.group(1), 16)

    def name_of(self, window: str) -> str:
        return self.run("xdotool", "getwindowname", window).stdout.strip()

    def docked_icon(self, name: str) -> str | None:
        """The window of ``name``'s tray icon once the tray host has taken it in (reparented it
        away from the root window), or None."""
        root = self.root_window()
        for window in self.windows_of_class(name):
            parent = self.parent_of(window)
            if parent is not None and parent != root and self.geometry(window)[2] > 1:
                return window
        return None

    def screenshot(self, path: Path, window: str = "root") -> Path:
        done = self.run("import", "-window", window, str(path))
        if done.returncode != 0:
            raise RuntimeError(f"import failed: {done.stderr}")
        return path

    def start_trayer(self) -> subprocess.Popen[bytes]:
        """trayer, the XEmbed system tray (for a desktop started without one)."""
        _start_trayer(self)
        return self.procs[-1]

    # -- the StatusNotifier host --------------------------------------------------------------

    def start_sni_watcher(self) -> subprocess.Popen[bytes]:
        """``status-notifier-watcher``, once it owns its name on the bus."""
        _need_sni_tools()
        watcher = self._spawn("status-notifier-watcher", log="sni-watcher.log")
        wait_until("the StatusNotifierWatcher", lambda: self.name_has_owner(WATCHER))
        return watcher

    def start_sni_host(self) -> subprocess.Popen[bytes]:
        """``gtk-sni-tray-standalone``: a bar of SNI icons along the bottom, once it shows."""
        _need_sni_tools()
        host = self._spawn(
            "gtk-sni-tray-standalone", "--bottom", "--size", str(SNI_BAR), log="sni-host.log"
        )
        wait_until("the StatusNotifier host's bar", lambda: self.sni_bar(host.pid))
        return host

    def sni_bar(self, pid: int | None = None) -> str | None:
        """The host's bar window (of the host ``pid``, if given), once it is shown."""
        found = self.run("xdotool", "search", "--onlyvisible", "--classname", "gtk-sni-tray")
        for window in found.stdout.split():
            if pid is not None and self.run(
                "xdotool", "getwindowpid", window
            ).stdout.strip() != str(pid):
                continue
            _x, y, w, h = self.geometry(window)
            if (w, h) == (SCREEN[0], SNI_BAR) and y == SCREEN[1] - SNI_BAR:
                return window
        return None

    def sni_popup(self) -> str | None:
        """A menu the host popped up (a viewable window of the host other than its bar)."""
        found = self.run("xdotool", "search", "--onlyvisible", "--classname", "gtk-sni-tray")
        for window in found.stdout.split():
            _x, _y, w, h = self.geometry(window)
            if w > 60 and h > 30 and (w, h) != (SCREEN[0], SNI_BAR):
                return window
        return None

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        """End one process this desktop started (by its pid), and forget it."""
        end_process(proc)
        if proc in self.procs:
            self.procs.remove(proc)

    def _spawn(self, *cmd: str, log: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            cmd, env=self.env, stdout=subprocess.DEVNULL, stderr=(self.root / log).open("ab")
        )
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in reversed(self.procs):
            end_process(proc)
        if self.bus_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.bus_pid, 15)


def _need_sni_tools() -> None:
    missing = sorted({pkg for tool, pkg in SNI_TOOLS.items() if shutil.which(tool) is None})
    if missing:
        pytest.fail(f"the StatusNotifier tray tests need apt-get install {' '.join(missing)}")


def start_xvfb(size: tuple[int, int] = SCREEN) -> tuple[subprocess.Popen[bytes], str]:
    """A private X server on a free display; returns it and its ``DISPLAY`` (``:N``)."""
    read_end, write_end = os.pipe()
    xvfb = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write_end),
            "-screen",
            "0",
            f"{size[0]}x{size[1]}x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    raw = b""
    try:
        while not raw.endswith(b"\n"):  # two writes: read to the newline or Xvfb dies
            chunk = os.read(read_end, 16)
            if not chunk:
                raise RuntimeError(f"Xvfb exited ({xvfb.wait(5)}) before naming its display")
            raw += chunk
    finally:
        os.close(read_end)
    return xvfb, ":" + raw.decode().strip()


def _start_xvfb(desktop: Desktop) -> None:
    xvfb, display = start_xvfb()
    desktop.procs.append(xvfb)
    desktop.env["DISPLAY"] = display
    wait_until("Xvfb", lambda: desktop.run("xwininfo", "-root").returncode == 0)


def _start_bus(desktop: Desktop) -> None:
    done = subprocess.run(
        ["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
        env=desktop.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    )
    address, pid = done.stdout.split()
    desktop.env["DBUS_SESSION_BUS_ADDRESS"] = address
    desktop.bus_pid = int(pid)


def _start_dunst(desktop: Desktop) -> None:
    # "dunstctl context" pipes a notification's actions to this "menu", which picks "Open" (or
    # the label ``Desktop.press`` wrote): how a test presses a notification's button.
    picker = desktop.root / "pick-open.sh"
    wanted = desktop.root / "pick-label"
    picker.write_text(
        f"#!/bin/sh\nwant=$(cat '{wanted}' 2>/dev/null || echo Open)\ngrep -m1 -F \"#$want\"\n"
    )
    picker.chmod(0o755)
    config = desktop.root / "dunstrc"
    config.write_text(DUNSTRC.replace("{dmenu}", str(picker)))
    dunst = subprocess.Popen(
        ["dunst", "-config", str(config)],
        env=desktop.env,
        stdout=subprocess.DEVNULL,
        stderr=(desktop.root / "dunst.log").open("wb"),
    )
    desktop.procs.append(dunst)
    wait_until("dunst on the bus", lambda: desktop.name_has_owner("org.freedesktop.Notifications"))


def _start_trayer(desktop: Desktop) -> None:
    trayer = subprocess.Popen(
        [
            "trayer",
            "--edge",
            "top",
            "--align",
            "right",
            "--widthtype",
            "pixel",
            "--width",
            "240",
            "--heighttype",
            "pixel",
            "--height",
            str(TRAY_HEIGHT),
            "--SetDockType",
            "true",
            "--tint",
            "0x2b2b2b",
            "--transparent",
            "true",
            "--alpha",
            "0",
        ],
        env=desktop.env,
        stdout=subprocess.DEVNULL,
        stderr=(desktop.root / "trayer.log").open("wb"),
    )
    desktop.procs.append(trayer)

    def owned() -> bool:
        from Xlib import display as xdisplay

        conn = xdisplay.Display(desktop.display)
        try:
            atom = conn.intern_atom("_NET_SYSTEM_TRAY_S0")
            return bool(conn.get_selection_owner(atom))
        finally:
            conn.close()

    wait_until("trayer to own the system tray", owned)
    # It takes the selection before its panel is up; a dock request sent in between can be lost
    # (an icon that asks once would miss it). Wait for the panel to show.
    wait_until(
        "trayer's panel to show",
        lambda: "IsViewable" in desktop.run("xwininfo", "-name", "panel").stdout,
    )


@contextlib.contextmanager
def running_desktop(root: Path, *, trayer: bool = True) -> Iterator[Desktop]:
    """The desktop; without ``trayer`` it has no system tray at all until a test starts one."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(
            f"the tray's GUI tests need {', '.join(missing)} "
            "(apt-get install xvfb dbus-daemon dunst trayer xdotool imagemagick x11-utils)"
        )
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700)
    tmp = root / "tmp"
    tmp.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE_", "CODEX_", "XDG_", "WAYLAND_", "DBUS_", "AGENTBAR_"))
        and k not in ("DISPLAY", "TMPDIR")
    }
    env.update(
        XDG_RUNTIME_DIR=str(runtime),
        TMPDIR=str(tmp),
        NO_AT_BRIDGE="1",
        GDK_BACKEND="x11",
        PYWEBVIEW_GUI="gtk",
        WEBKIT_DISABLE_COMPOSITING_MODE="1",
    )
    desktop = Desktop(root=root, env=env)
    try:
        _start_xvfb(desktop)
        _start_bus(desktop)
        _start_dunst(desktop)
        if trayer:
            _start_trayer(desktop)
        yield desktop
    finally:
        desktop.close()


@pytest.fixture(scope="session")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    with running_desktop(tmp_path_factory.mktemp("desktop")) as running:
        yield running


@pytest.fixture
def bare_desktop(tmp_path: Path) -> Iterator[Desktop]:
    """A desktop of the test's own with no system tray (the test starts one when it wants)."""
    (tmp_path / "bare-desktop").mkdir()
    with running_desktop(tmp_path / "bare-desktop", trayer=False) as running:
        yield running


@pytest.fixture
def artifacts(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where a test keeps its screenshots: ``$AGENTBAR_TEST_ARTIFACTS/<test>`` if set, else its
    tmp dir."""
    base = os.environ.get("AGENTBAR_TEST_ARTIFACTS")
    if not base:
        return tmp_path
    folder = Path(base) / request.node.name
    folder.mkdir(parents=True, exist_ok=True)
    return folder
