"""Notifications delivered for real: desktop-notifier and plyer against dunst on the private
desktop's session bus; a click and the "Open" button come back as the notice's actions; a bus
with no notification server makes desktop-notifier hand the notice to its fallback."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest
from desktop import Desktop, wait_until

from agentbar.tray import actions
from agentbar.tray.actions import Action
from agentbar.tray.notices import Button, Notice
from agentbar.tray.notify import DesktopNotifier, FakeNotifier, PlyerNotifier, icon_path

OPEN_A = Action(actions.OPEN, "/session/claude/aaaa")
NOTICE = Notice(
    title="Claude Code in api needs your approval",
    body="Bash: rm -rf build",
    click=OPEN_A,
    buttons=(Button("Open", OPEN_A),),
    urgent=True,
)


@pytest.fixture
def on_bus(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> Desktop:
    """This process talks to the private desktop's bus (and its notify-send to its dunst)."""
    for key in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(key, desktop.env[key])
    desktop.clear_notifications()
    return desktop


class Clicks:
    def __init__(self) -> None:
        self.seen: list[Action] = []
        self.event = threading.Event()

    def __call__(self, action: Action) -> None:
        self.seen.append(action)
        self.event.set()

    def wait(self, timeout: float = 10.0) -> list[Action]:
        assert self.event.wait(timeout), "no action came back"
        self.event.clear()
        return self.seen


def test_desktop_notifier_reaches_dunst_and_a_click_opens_the_session(on_bus: Desktop) -> None:
    clicks = Clicks()
    notifier = DesktopNotifier(clicks, icon=icon_path(), fallback=FakeNotifier())
    try:
        notifier.send(NOTICE)
        shown = on_bus.wait_notification(lambda n: n["summary"] == NOTICE.title)
        assert shown["body"] == "Bash: rm -rf build"
        assert shown["appname"] == "agentbar"
        assert isinstance(notifier.fallback, FakeNotifier) and notifier.fallback.sent == []
        # dunstctl history closed it; send a new one and click it where it is displayed.
        on_bus.clear_notifications()
        notifier.send(NOTICE)
        wait_until(
            "it to be displayed",
            lambda: on_bus.run("dunstctl", "count", "displayed").stdout.strip() == "1",
        )
        assert on_bus.run("dunstctl", "action", "0").returncode == 0
        assert clicks.wait() == [OPEN_A]
    finally:
        notifier.close()


def test_desktop_notifier_connects_before_its_first_notice(on_bus: Desktop) -> None:
    """The bus, the server's introspection and its capabilities are asked at start, so the
    first notice does not wait for them (they took up to 5.5 s on a busy machine)."""
    with on_bus.monitor("type='method_call',member='GetCapabilities'") as seen:
        notifier = DesktopNotifier(Clicks(), icon=icon_path(), fallback=FakeNotifier())
        try:
            wait_until("the capabilities asked", lambda: "member=GetCapabilities" in seen())
            notifier.send(NOTICE)
            on_bus.wait_notification(lambda n: n["summary"] == NOTICE.title)
            assert seen().count("member=GetCapabilities") == 1  # asked once, then cached
            assert isinstance(notifier.fallback, FakeNotifier) and notifier.fallback.sent == []
        finally:
            notifier.close()


def test_the_open_button_runs_its_action(on_bus: Desktop) -> None:
    clicks = Clicks()
    button = Action(actions.OPEN, "/session/codex/bbbb")
    notice = Notice(
        title="Codex in web finished",
        body="Done.",
        click=actions.BOARD,
        buttons=(Button("Open", button),),
    )
    notifier = DesktopNotifier(clicks, icon=None)
    try:
        notifier.send(notice)
        wait_until(
            "it to be displayed",
            lambda: on_bus.run("dunstctl", "count", "displayed").stdout.strip() == "1",
        )
        # dunst's context menu lists the buttons; the desktop's picker chooses "Open".
        assert on_bus.run("dunstctl", "context").returncode == 0
        assert clicks.wait() == [button]
    finally:
        notifier.close()


def test_without_a_notification_server_the_fallback_gets_the_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bus of its own with no services to activate (dunst would be D-Bus-activated otherwise).
    config = tmp_path / "bus.conf"
    config.write_text(
        "<busconfig><type>session</type><listen>unix:tmpdir=" + str(tmp_path) + "</listen>"
        "<auth>EXTERNAL</auth><policy context='default'><allow send_destination='*'/>"
        "<allow eavesdrop='true'/><allow own='*'/></policy></busconfig>"
    )
    done = subprocess.run(
        ["dbus-daemon", f"--config-file={config}", "--fork", "--print-address=1", "--print-pid=1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    )
    address, pid = done.stdout.split()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    fallback = FakeNotifier()
    notifier = DesktopNotifier(lambda _: None, fallback=fallback)
    try:
        notifier.send(NOTICE)
        wait_until("the fallback", lambda: fallback.sent, timeout=20)
        assert fallback.sent == [NOTICE]
        # For a while after a failure the fallback gets notices straight away.
        started = time.monotonic()
        notifier.send(NOTICE)
        assert fallback.sent == [NOTICE, NOTICE] and time.monotonic() - started < 0.5
    finally:
        notifier.close()
        subprocess.run(["kill", pid], check=False)


def test_plyer_reaches_dunst_too(on_bus: Desktop) -> None:
    notifier = PlyerNotifier(icon_path())
    try:
        notifier.send(NOTICE)
        shown = on_bus.wait_notification(lambda n: n["summary"] == NOTICE.title)
        assert shown["body"] == "Bash: rm -rf build"
    finally:
        notifier.close()
