"""Faults and failed clicks reach the person through the tray: a notice at the private
desktop's real notification server (dunst) and, for faults that last, a line in the menu. The
real tray in a user namespace whose inotify watch limit is spent; in-process, the real engine
over a damaged index, and the real task manager asked to launch a program that is not there."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from desktop import Desktop
from launch_rig import launch_rig
from polling import end_process, wait_for
from tray_rig import Tray
from user_namespace import need_user_namespaces, with_watch_limit

from agentbar.core.app import Agentbar
from agentbar.core.clock import SystemClock
from agentbar.core.config import Settings
from agentbar.core.launch.manager import TaskManager
from agentbar.core.launch.options import LaunchOptions
from agentbar.core.model import Agent
from agentbar.tray.actions import Action
from agentbar.tray.launched import APPROVE, LAUNCH, LaunchedAgents
from agentbar.tray.notify import DesktopNotifier, FakeNotifier, icon_path
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import PreferencesFile
from agentbar.tray.view import TrayView
from agentbar.tray.worker import TrayWorker

AGENTS = (Agent("claude"), Agent("codex"))
INDEX_TITLE = "The session index was damaged and is rebuilt"


@pytest.fixture
def on_bus(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> Desktop:
    """This process talks to the private desktop's bus and its dunst."""
    for key in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(key, desktop.env[key])
    desktop.clear_notifications()
    return desktop


def make_worker(
    engine: object, tmp_path: Path, shown: list[TrayView], **kwargs: object
) -> TrayWorker:
    notifier = DesktopNotifier(lambda action: None, icon=icon_path(), fallback=FakeNotifier())
    return TrayWorker(
        engine,  # type: ignore[arg-type]
        notifier,
        clock=SystemClock(),
        prefs=PreferencesFile(tmp_path / "config" / "settings.toml"),
        pauses=PauseStore(tmp_path / "paused.json"),
        show=shown.append,
        **kwargs,  # type: ignore[arg-type]
    )


def test_the_real_tray_tells_the_watch_limit_with_the_sysctl(tray: Tray) -> None:
    need_user_namespaces()
    argv = with_watch_limit([sys.executable, "-m", "agentbar.tray"], watches=1)
    proc = subprocess.Popen(
        argv, env=tray.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True)
    reader.start()
    try:
        shown = tray.desktop.wait_notification(
            lambda n: n["summary"] == "File watch limit reached", timeout=60
        )
        assert "sudo sysctl fs.inotify.max_user_watches=" in shown["body"]
        # Told once, though every folder after the first one failed.
        assert sum(n["summary"] == shown["summary"] for n in tray.desktop.notifications()) == 1
    finally:
        end_process(proc)
        reader.join(5)
    assert proc.returncode == 0, said


def test_a_damaged_index_is_a_notice_and_a_menu_line(on_bus: Desktop, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(tmp_path / "data")})
    settings.index_path.parent.mkdir(parents=True)
    settings.index_path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 4096)
    app = Agentbar.open(settings, tasks=False, tick_seconds=0.2)
    shown: list[TrayView] = []
    worker = make_worker(app.engine, tmp_path, shown)
    app.subscribe_faults(worker.report)
    try:
        app.start()
        worker.start()
        notice = on_bus.wait_notification(lambda n: n["summary"] == INDEX_TITLE)
        assert "rebuilds it from the agents' own files" in notice["body"]
        wait_for(
            lambda: (
                any(e.label == f"Problem: {INDEX_TITLE}" for e in shown[-1].menu) if shown else None
            ),
            10,
            "the problem in the menu",
        )
    finally:
        worker.stop()
        worker.notifier.close()
        app.close()


def test_a_launch_of_a_missing_program_and_a_failed_approve_are_notices(
    on_bus: Desktop, tmp_path: Path
) -> None:
    with launch_rig(tmp_path) as rig:
        assert rig.service is not None
        missing = str(tmp_path / "no-such-agent")
        manager = TaskManager(
            rig.settings,
            engine=rig.service.engine,
            options=LaunchOptions(programs={agent: (missing,) for agent in AGENTS}),
            env=rig.env,
        )
        manager.start()
        rig.managers.append(manager)
        shown: list[TrayView] = []
        launched = LaunchedAgents(
            manager,
            rig.service.engine.sessions,
            lambda: (str(rig.project),),
            None,
            names=rig.settings.display_names(),
            launchable=AGENTS,
            tell=lambda fault: worker.report(fault, lasting=False),
        )
        worker = make_worker(rig.service.engine, tmp_path, shown, extra_entries=launched.entries)
        launched.register(worker.router)
        worker.start()
        try:
            worker.post(Action(LAUNCH, f"claude:{rig.project}"))
            notice = on_bus.wait_notification(lambda n: n["summary"] == "Cannot launch the agent")
            assert f"Launching Claude Code in {rig.project} failed" in notice["body"]
            assert f"{missing} is not installed here" in notice["body"]
            assert manager.tasks() == []
            worker.post(Action(APPROVE, "t-nosuch"))
            notice = on_bus.wait_notification(lambda n: n["summary"] == "No such launched agent")
            assert notice["body"].startswith("Approve did nothing: ")
            # A one-off failure: told, not kept in the menu.
            assert not any(e.label.startswith("Problem:") for e in worker.view.menu)  # type: ignore[union-attr]
        finally:
            worker.stop()
            worker.notifier.close()
