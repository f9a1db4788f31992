"""The tray's worker over the real app with a remote host (the real far side over a channel):
a remote session that starts waiting raises the badge and one notice naming the host; the far
side killed, the menu says the host is unreachable since when, and once it is back nothing is
told again."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from polling import wait_for
from remote_far import make_far
from test_remote_channel import far_pids
from tray_values import NAMES

from agentbar.core.app import Agentbar
from agentbar.core.clock import SystemClock
from agentbar.core.config import Settings
from agentbar.core.remote.hosts import HostState
from agentbar.tray.notify import FakeNotifier
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import PreferencesFile
from agentbar.tray.view import TrayView
from agentbar.tray.worker import TrayWorker

LIVE = "cccccccc-0000-4000-8000-0000000000c1"


def test_a_remote_session_notifies_once_naming_its_host(tmp_path: Path) -> None:
    far = make_far(tmp_path / "far")
    remote = far.remote("box")
    config = tmp_path / "near" / "config"
    config.mkdir(parents=True)
    command = ", ".join(f'"{part}"' for part in remote.command)
    (config / "settings.toml").write_text(
        f'[[remotes]]\nname = "box"\ncommand = [{command}]\nagentbar = "{remote.program}"\n'
    )
    (tmp_path / "near" / "home").mkdir()
    settings = Settings.from_env(
        {
            "HOME": str(tmp_path / "near" / "home"),
            "AGENTBAR_DATA_DIR": str(tmp_path / "near" / "data"),
            "AGENTBAR_CONFIG_DIR": str(config),
        }
    )
    app = Agentbar.open(settings, tasks=False)
    shown: list[TrayView] = []
    notifier = FakeNotifier()
    worker = TrayWorker(
        app.everywhere,
        notifier,
        clock=SystemClock(),
        prefs=PreferencesFile(config / "settings.toml"),
        pauses=PauseStore(tmp_path / "paused.json"),
        show=shown.append,
        names=NAMES,
        decisions=app.decisions,
        hosts=app.hosts,
    )
    app.subscribe_hosts(lambda _status: worker.wake())  # as the tray does
    app.start()
    worker.start()
    try:
        wait_for(lambda: app.hosts() and app.hosts()[0].state is HostState.CONNECTED, 60, "box")
        far.live(LIVE, "/srv/live", "go")
        far.set_status(LIVE, "/srv/live", "waiting", waiting_for="permission prompt")
        wait_for(lambda: notifier.sent, 30, "the notice")
        assert [n.title for n in notifier.sent] == [
            "Claude Code in live on box needs your approval"
        ]
        wait_for(lambda: shown and shown[-1].badge.needs == 1, 10, "the badge")

        for proc in far_pids(far):
            proc.send_signal(signal.SIGKILL)

        def unreachable_line(views: list[TrayView]) -> str | None:
            labels = [e.label for view in views for e in view.menu]
            return next((x for x in labels if x.startswith("box: unreachable since ")), None)

        line = wait_for(lambda: unreachable_line(shown), 20, "the unreachable line")
        assert line.endswith(")") and "connection dropped" in line
        assert shown[-1].badge.needs == 1  # its sessions as last seen
        wait_for(lambda: app.hosts()[0].state is HostState.CONNECTED, 60, "box back")
        wait_for(lambda: unreachable_line(shown[-1:]) is None, 10, "the line gone")
        time.sleep(3.0)
        assert len(notifier.sent) == 1, [n.title for n in notifier.sent]
    finally:
        worker.stop()
        app.close()
