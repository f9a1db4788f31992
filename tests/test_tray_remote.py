"""The tray's worker over the real app with a remote host (the real far side over a channel):
a remote session that starts waiting raises the badge and one notice naming the host; the far
side killed, the menu says the host is unreachable since when, and once it is back nothing is
told again. The agents launched there are in "Launched agents", named by their host, and their
choices are answered there."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from polling import wait_for
from remote_far import end_far_agents, make_far, near_settings
from test_remote_channel import far_pids
from tray_values import LAUNCHABLE, NAMES

from agentbar.core.app import Agentbar
from agentbar.core.clock import SystemClock
from agentbar.core.config import Settings
from agentbar.core.errors import Fault
from agentbar.core.launch.task import TaskInfo
from agentbar.core.model import SessionKey
from agentbar.core.remote.hosts import HostState
from agentbar.tray.actions import Action
from agentbar.tray.launched import LaunchedAgents
from agentbar.tray.notify import FakeNotifier
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import PreferencesFile
from agentbar.tray.view import Entry, TrayView
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


class NoTasksHere:
    """This machine's task manager with nothing launched (the near app launches nothing)."""

    def tasks(self) -> list[TaskInfo]:
        return []

    def running(self) -> list[TaskInfo]:
        return []

    def for_session(self, key: SessionKey) -> TaskInfo | None:
        return None

    def launch(self, request: object) -> TaskInfo:
        raise AssertionError("nothing is launched here")

    approve = deny = stop = launch


def task_entry(views: list[TrayView], task_id: str) -> Entry | None:
    """The "Launched agents" entry of ``task_id`` in the last view (its submenu's actions
    name it)."""
    if not views:
        return None
    for entry in views[-1].menu:
        if any(choice.action and choice.action.arg.startswith(task_id) for choice in entry.submenu):
            return entry
    return None


def test_a_task_launched_on_a_host_is_in_launched_agents_and_answered_there(
    tmp_path: Path,
) -> None:
    """A task the far side's own manager runs shows in the tray's "Launched agents" named by
    its host (from the far side's ``tasks`` frames: the menu calls nobody), with its approval
    prompt's Approve typed there, its terminal opened as the board opens it, and its Stop
    answered by that host's manager; the host dropped, its tasks leave the menu at once and a
    choice still clicked is a notice, not a crash."""
    far = make_far(tmp_path / "far")
    settings = near_settings(tmp_path / "near", far)
    app = Agentbar.open(settings, tasks=False)
    assert app.hub is not None
    shown: list[TrayView] = []
    opened: list[str] = []
    told: list[Fault] = []
    launched = LaunchedAgents(NoTasksHere(), app.sessions, tuple, opened.append, names=NAMES,
                              launchable=LAUNCHABLE, tell=told.append, hosts=app.hub)  # fmt: skip
    worker = TrayWorker(app.everywhere, FakeNotifier(), clock=SystemClock(),
                        prefs=PreferencesFile(settings.config_dir / "settings.toml"),
                        pauses=PauseStore(tmp_path / "paused.json"), show=shown.append,
                        names=NAMES, decisions=app.decisions, hosts=app.hosts,
                        extra_entries=launched.entries)  # fmt: skip
    launched.register(worker.router)
    app.subscribe_hosts(lambda _status: worker.wake())  # as the tray does
    app.start()
    worker.start()
    project = far.root / "api"
    project.mkdir()
    try:
        wait_for(lambda: app.hosts()[0].state is HostState.CONNECTED, 60, "box")
        args = {"agent": "claude", "project": str(project)}
        first = app.hub.call("box", "launch", args)["task_id"]
        entry = wait_for(lambda: task_entry(shown, first), 30, "the host's task in the menu")
        assert entry.label == "Claude Code · api @ box — running"
        assert [(e.label, e.action) for e in entry.submenu if not e.separator] == [
            ("Open terminal", Action("terminal", f"{first}@box")),
            ("Stop", Action("stop-task", f"{first}@box")),
        ]
        assert any(e.label == "Launched agents (1)" for e in shown[-1].menu)

        # Its screen asks (typed once the agent reads, as its session shows: what is typed
        # before its terminal is set up is dropped): Approve there, as the terminal page does.
        bound = wait_for(lambda: app.hub.tasks()[0].session_id, 30, "the task bound")
        wait_for(lambda: any(s.key.session_id == bound for s in app.sessions()), 30, "its session")
        app.hub.call("box", "type", {"task_id": first, "text": "run: touch there.txt"})

        def asking() -> Entry | None:
            found = task_entry(shown, first)
            return found if found and found.label.endswith("waits for your approval") else None

        entry = wait_for(asking, 30, "the approval prompt in the menu")
        approve = next(e.action for e in entry.submenu if e.label == "Approve")
        assert approve == Action("approve", f"{first}@box")
        worker.post(approve)
        wait_for((project / "there.txt").exists, 30, "the approved command, there")

        worker.post(Action("terminal", f"{first}@box"))
        wait_for(lambda: opened, 10, "the terminal opened")
        assert opened == [f"/terminal/{first}?host=box"]

        worker.post(Action("stop-task", f"{first}@box"))
        wait_for(lambda: task_entry(shown, first) is None, 60, "the stopped task off the menu")
        ended = app.hub.call("box", "task", {"task_id": first})
        assert ended["status"] == "exited"
        assert not told

        # The host drops: its running task leaves the menu; a choice clicked is a notice.
        second = app.hub.call("box", "launch", args)["task_id"]
        wait_for(lambda: task_entry(shown, second), 30, "the second task in the menu")
        for proc in far_pids(far):
            proc.send_signal(signal.SIGKILL)
        wait_for(lambda: task_entry(shown, second) is None, 20, "the dropped host's task gone")
        assert app.hosts()[0].state is not HostState.CONNECTED
        assert not any(e.label.startswith("Launched agents") for e in shown[-1].menu)
        worker.post(Action("stop-task", f"{second}@box"))
        wait_for(lambda: told, 10, "the notice")
        assert told[0].title == "Stop did nothing on box"
        assert "box is unreachable" in told[0].message
    finally:
        worker.stop()
        app.close()
        end_far_agents(far)
