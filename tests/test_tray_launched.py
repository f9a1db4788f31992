"""The tray and the agents agentbar launches: the "Launch agent" and "Launched agents" entries,
Approve/Deny on a launched task's approval notice, and the quit that asks what becomes of the
agents. Pure parts against a fake task list; then the whole path for real: a live engine, the
task manager with the scripted fake agent in a real PTY, the tray's worker and its notifier."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from launch_rig import launch_rig, zombies_of_this_process
from polling import wait_for
from tray_values import LAUNCHABLE, NAMES

from agentbar.core.clock import SystemClock
from agentbar.core.errors import Fault
from agentbar.core.launch.manager import NotWaiting
from agentbar.core.launch.prompts import Prompt
from agentbar.core.launch.request import LaunchRequest
from agentbar.core.launch.task import Status, TaskInfo
from agentbar.core.model import Agent, SessionKey, State, WaitingFor
from agentbar.core.remote.host_tasks import STOP_SECONDS, HostTask, tasks_from_wire, tasks_to_wire
from agentbar.core.remote.link import CALL_SECONDS, RemoteError
from agentbar.core.remote.wire import WireError
from agentbar.tray import actions
from agentbar.tray.actions import Action
from agentbar.tray.launched import APPROVE, DENY, LAUNCH, STOP, TERMINAL, LaunchedAgents
from agentbar.tray.notices import Transition
from agentbar.tray.notify import FakeNotifier
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import Preferences, PreferencesFile, parse
from agentbar.tray.presenter import TrayState, present
from agentbar.tray.view import Entry, TrayView
from agentbar.tray.worker import TrayWorker

KEY = SessionKey(Agent("claude"), "aaaaaaaa-1111-4111-8111-111111111111")


def info(task_id: str, project: str, *, waiting: str | None = None, session: str | None = None,
         status: Status = Status.RUNNING) -> TaskInfo:  # fmt: skip
    from agentbar.core.launch.request import Mode
    from agentbar.core.launch.task import Binding, BindPath

    return TaskInfo(
        task_id=task_id, agent=Agent("claude"), project=project, mode=Mode.NEW, source=None,
        prompt=None, pid=1, create_time=0.0, started_at=100.0, status=status, exit=None,
        ended_at=None,
        binding=None if session is None else Binding(session, BindPath.SESSION_ID, 0.0, True),
        waiting=None if waiting is None else Prompt(waiting, (waiting,)),
        rows=24, cols=80, clients=0, adopted=False,
    )  # fmt: skip


@dataclass
class FakeTasks:
    listed: list[TaskInfo] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)

    def tasks(self) -> list[TaskInfo]:
        return list(self.listed)

    def running(self) -> list[TaskInfo]:
        return [t for t in self.listed if t.alive]

    def for_session(self, key: SessionKey) -> TaskInfo | None:
        return next((t for t in self.running() if t.session_id == key.session_id), None)

    def launch(self, request: LaunchRequest) -> TaskInfo:
        self.calls.append(("launch", f"{request.agent}:{request.project}"))
        return info("feed", request.project)

    def approve(self, task_id: str) -> object:
        self.calls.append(("approve", task_id))
        raise NotWaiting("no prompt")  # the tray logs it; nothing else happens

    def deny(self, task_id: str) -> object:
        self.calls.append(("deny", task_id))
        return None

    def stop(self, task_id: str, *, graceful: bool = True) -> TaskInfo:
        self.calls.append(("stop", task_id))
        return self.listed[0]


@dataclass
class FakeHosts:
    """The remote hosts' tasks as last told, and the calls made to them (``refusal``: what
    every call raises)."""

    told: tuple[HostTask, ...] = ()
    refusal: RemoteError | None = None
    calls: list[tuple[str, str, dict[str, str], float]] = field(default_factory=list)

    def tasks(self) -> tuple[HostTask, ...]:
        return self.told

    def call(self, host: str, op: str, args: dict[str, str], timeout: float) -> object:
        self.calls.append((host, op, args, timeout))
        if self.refusal is not None:
            raise self.refusal
        return {}


def host_task(task_id: str, host: str, project: str, waiting: str | None = None,
              session: str | None = None) -> HostTask:  # fmt: skip
    return HostTask(host=host, task_id=task_id, agent=Agent("claude"), project=project,
                    status="running", session_id=session, waiting=waiting)  # fmt: skip


def launched(tasks: FakeTasks, pinned: tuple[str, ...] = (), opened: list[str] | None = None,
             hosts: FakeHosts | None = None, told: list[Fault] | None = None):  # fmt: skip
    return LaunchedAgents(
        tasks,
        lambda: [],
        lambda: pinned,
        opened.append if opened is not None else None,
        in_background=lambda work: work(),
        names=NAMES,
        launchable=LAUNCHABLE,
        hosts=hosts,
        tell=told.append if told is not None else None,
    )


def labels(entries: tuple[Entry, ...]) -> list[str]:
    return [e.label for e in entries if not e.separator]


def test_the_menu_lists_launched_agents_with_approve_only_while_they_ask(tmp_path: Path) -> None:
    folder = str(tmp_path)
    tasks = FakeTasks([info("a1", folder, waiting="Do you want to proceed?"), info("b2", folder)])
    entries = launched(tasks).entries()
    assert labels(entries)[:3] == [
        "Launched agents (2)",
        f"Claude Code · {tmp_path.name} — waits for your approval",
        f"Claude Code · {tmp_path.name} — running",
    ]
    asking, plain = entries[1].submenu, entries[2].submenu
    assert [(e.label, e.action) for e in asking if not e.separator] == [
        ("Approve", Action(APPROVE, "a1")),
        ("Deny", Action(DENY, "a1")),
        ("Open terminal", Action(TERMINAL, "a1")),
        ("Stop", Action(STOP, "a1")),
    ]
    assert labels(plain) == ["Open terminal", "Stop"]


def test_launch_offers_pinned_folders_first_then_recent_ones_each_with_every_agent(
    tmp_path: Path,
) -> None:
    pinned, recent = tmp_path / "pinned", tmp_path / "recent"
    pinned.mkdir()
    recent.mkdir()
    tasks = FakeTasks([info("a1", str(recent), status=Status.EXITED)])  # an exited task's folder
    entries = launched(tasks, pinned=(str(pinned),)).entries()
    (launch,) = [e for e in entries if e.label == "Launch agent"]
    names = [e.label.split(" — ")[0] for e in launch.submenu]
    assert names == ["pinned (pinned)", "recent"]
    assert [(e.label, e.action) for e in launch.submenu[0].submenu] == [
        (NAMES[agent], Action(LAUNCH, f"{agent}:{pinned}")) for agent in LAUNCHABLE
    ]
    assert {"Claude Code", "Codex"} <= {e.label for e in launch.submenu[0].submenu}
    assert "Launched agents" not in " ".join(labels(entries))  # none runs
    assert labels(launched(FakeTasks()).entries()) == ["Launch agent: no project folder yet"]


def test_approve_and_deny_buttons_only_on_a_launched_sessions_approval_notice() -> None:
    tasks = FakeTasks([info("a1", "/w", session=KEY.session_id)])
    agents = launched(tasks)

    def transition(state: State, waiting: WaitingFor | None, key: SessionKey = KEY) -> Transition:
        return Transition(key, "/w", None, state, waiting, "Bash: make", 1.0)

    buttons = agents.buttons(transition(State.INPUT_REQUIRED, WaitingFor.APPROVAL))
    assert [(b.label, b.action) for b in buttons] == [
        ("Approve", Action(APPROVE, "a1")),
        ("Deny", Action(DENY, "a1")),
    ]
    assert agents.buttons(transition(State.INPUT_REQUIRED, WaitingFor.QUESTION)) == ()
    assert agents.buttons(transition(State.DONE, None)) == ()
    other = SessionKey(Agent("claude"), "bbbbbbbb-2222-4222-8222-222222222222")
    assert agents.buttons(transition(State.INPUT_REQUIRED, WaitingFor.APPROVAL, other)) == ()
    # A host's launched session: its task there, as the host told it (by agent, id and host).
    hosts = FakeHosts((host_task("c3", "devbox", "/srv/api", session=KEY.session_id),))
    there = replace(KEY, host="devbox")
    with_hosts = launched(FakeTasks(), hosts=hosts)
    buttons = with_hosts.buttons(transition(State.INPUT_REQUIRED, WaitingFor.APPROVAL, there))
    assert [(b.label, b.action) for b in buttons] == [
        ("Approve", Action(APPROVE, "c3@devbox")),
        ("Deny", Action(DENY, "c3@devbox")),
    ]
    for elsewhere in (replace(KEY, host="gpu"), replace(KEY, agent=Agent("codex")), KEY):
        notice = transition(State.INPUT_REQUIRED, WaitingFor.APPROVAL, elsewhere)
        assert with_hosts.buttons(notice) == ()
    assert hosts.calls == []  # the buttons are made from what the host told: no call


def test_the_handlers_launch_answer_stop_and_open_and_refuse_nonsense(tmp_path: Path) -> None:
    tasks = FakeTasks([info("a1", str(tmp_path))])
    opened: list[str] = []
    agents = launched(tasks, opened=opened)
    router = actions.ActionRouter()
    agents.register(router)
    assert router.run(Action(LAUNCH, f"codex:{tmp_path}"))
    assert router.run(Action(APPROVE, "a1"))  # NotWaiting is logged, not raised
    assert router.run(Action(DENY, "a1"))
    assert router.run(Action(STOP, "a1"))
    assert router.run(Action(TERMINAL, "a1"))
    assert router.run(Action(LAUNCH, "cursor:/nowhere"))  # an unknown agent: logged
    assert tasks.calls == [
        ("launch", f"codex:{tmp_path}"),
        ("approve", "a1"),
        ("deny", "a1"),
        ("stop", "a1"),
    ]
    assert opened == ["/terminal/feed", "/terminal/a1"]  # a launch opens its terminal


def test_each_hosts_tasks_follow_this_machines_named_by_their_host_with_the_same_choices(
    tmp_path: Path,
) -> None:
    hosts = FakeHosts((host_task("c3", "devbox", "/srv/api", waiting="Do you want to proceed?"),
                       host_task("d4", "gpu", "/srv/train")))  # fmt: skip
    entries = launched(FakeTasks([info("a1", str(tmp_path))]), hosts=hosts).entries()
    assert labels(entries)[:4] == [
        "Launched agents (3)",
        f"Claude Code · {tmp_path.name} — running",
        "Claude Code · api @ devbox — waits for your approval",
        "Claude Code · train @ gpu — running",
    ]
    assert [(e.label, e.action) for e in entries[2].submenu if not e.separator] == [
        ("Approve", Action(APPROVE, "c3@devbox")),
        ("Deny", Action(DENY, "c3@devbox")),
        ("Open terminal", Action(TERMINAL, "c3@devbox")),
        ("Stop", Action(STOP, "c3@devbox")),
    ]
    assert labels(entries[3].submenu) == ["Open terminal", "Stop"]
    assert hosts.calls == []  # the menu is built from what the hosts told: no call
    # Only a host's tasks (this machine runs none), and never more than the menu holds.
    many = FakeHosts(tuple(host_task(f"{n:02x}", "devbox", "/srv/api") for n in range(12)))
    entries = launched(FakeTasks(), hosts=many).entries()
    assert labels(entries)[0] == "Launched agents (12)"
    assert len([e for e in entries if e.label.startswith("Claude Code · api @ devbox")]) == 8


def test_a_hosts_task_is_answered_there_and_a_refusal_is_a_notice(tmp_path: Path) -> None:
    hosts, opened, told = FakeHosts(), [], []
    tasks = FakeTasks([info("a1", str(tmp_path))])
    router = actions.ActionRouter()
    launched(tasks, opened=opened, hosts=hosts, told=told).register(router)
    for kind in (APPROVE, DENY, STOP, TERMINAL):
        assert router.run(Action(kind, "c3@devbox"))
    assert hosts.calls == [
        ("devbox", "approve", {"task_id": "c3"}, CALL_SECONDS),
        ("devbox", "deny", {"task_id": "c3"}, CALL_SECONDS),
        ("devbox", "stop", {"task_id": "c3"}, STOP_SECONDS),
    ]
    assert opened == ["/terminal/c3?host=devbox"]  # as the board's task panel opens it
    assert tasks.calls == [] and told == []  # this machine's tasks are not touched

    hosts.refusal = RemoteError("devbox is unreachable", "unreachable")
    assert router.run(Action(STOP, "c3@devbox"))
    assert (told[-1].title, told[-1].message) == (
        "Stop did nothing on devbox", "Stop did nothing: devbox is unreachable.")  # fmt: skip
    hosts.refusal = RemoteError("unknown call 'approve'", "not_found")  # an older agentbar there
    assert router.run(Action(APPROVE, "c3@devbox"))
    assert told[-1].title == "Approve did nothing on devbox"
    assert "The agentbar on devbox is older than this one" in told[-1].message
    assert "upgrade agentbar there" in told[-1].message
    # Without remotes configured, a host's choice (a menu built before) only logs.
    bare = actions.ActionRouter()
    launched(tasks, told=told).register(bare)
    assert bare.run(Action(STOP, "c3@devbox")) and len(told) == 2 and tasks.calls == []


def test_a_hosts_tasks_cross_the_channel_as_the_tray_shows_them(tmp_path: Path) -> None:
    """The far side sends its running tasks' few fields; the near side reads them named by
    the host, leaving out one that does not read (never shown as something else)."""
    sent = tasks_to_wire([info("a1", "/srv/api", waiting="Do you want to proceed?",
                               session="s-1"),
                          info("b2", "/srv/web", status=Status.EXITED)])  # fmt: skip
    asks = {"for": "approval", "question": "Do you want to proceed?"}
    assert sent == [{"task_id": "a1", "agent": "claude", "project": "/srv/api",
                     "status": "running", "session_id": "s-1", "waiting": asks}]  # fmt: skip
    odd = [{**sent[0], "task_id": "../etc"}, {**sent[0], "status": "exited"},
           {**sent[0], "waiting": "yes"}, {**sent[0], "project": 3}, "nonsense"]  # fmt: skip
    assert tasks_from_wire([*sent, *odd], "devbox") == (
        HostTask(host="devbox", task_id="a1", agent=Agent("claude"), project="/srv/api",
                 status="running", session_id="s-1", waiting="Do you want to proceed?"),
    )  # fmt: skip
    with pytest.raises(WireError):
        tasks_from_wire({"tasks": sent}, "devbox")


def test_quit_asks_what_becomes_of_running_agents_only_when_there_are_some() -> None:
    def quit_entry(running: int) -> Entry:
        view = present([], now=0.0, prefs=Preferences(), tray=TrayState(tasks_running=running))
        return view.menu[-1]

    assert quit_entry(0) == Entry("Quit agentbar", Action(actions.QUIT))
    asked = quit_entry(2)
    assert asked.label == "Quit agentbar" and asked.action is None
    assert [(e.label, e.action) for e in asked.submenu] == [
        ("Quit, keep 2 launched agents running", Action(actions.QUIT, actions.KEEP_TASKS)),
        ("Quit and stop 2 launched agents", Action(actions.QUIT, actions.STOP_TASKS)),
    ]


def test_pinned_projects_come_from_settings_toml() -> None:
    prefs = parse('[launch]\npinned_projects = ["~/src/api", "/work/web/"]\n', home="/home/me")
    assert prefs.pinned_projects == ("/home/me/src/api", "/work/web")
    bad = parse("[launch]\npinned_projects = 3\n")
    assert bad.pinned_projects == () and "must be a list of folders" in bad.problems[0]


# -- for real: the fake agent in a real PTY, a live engine, the tray's worker ------------------


@pytest.mark.slow
def test_launched_from_the_menu_approved_from_its_notification(tmp_path: Path) -> None:
    with launch_rig(tmp_path) as rig:
        assert rig.service is not None
        manager = rig.manager()
        opened: list[str] = []
        notifier = FakeNotifier()
        shown: list[TrayView] = []
        agents = LaunchedAgents(
            manager,
            rig.service.engine.sessions,
            lambda: (str(rig.project),),
            opened.append,
            names=NAMES,
            launchable=LAUNCHABLE,
        )
        worker = TrayWorker(
            rig.service.engine,
            notifier,
            clock=SystemClock(),
            prefs=PreferencesFile(tmp_path / "config" / "settings.toml"),
            pauses=PauseStore(tmp_path / "paused.json"),
            show=shown.append,
            open_page=opened.append,
            extra_entries=agents.entries,
            buttons=agents.buttons,
            tasks_running=agents.tasks_running,
            names=NAMES,
        )
        agents.register(worker.router)
        notifier.on_action = worker.post
        worker.start()
        try:
            # The menu offers the pinned folder; choosing Claude Code there launches it.
            def launch_entry() -> Entry | None:
                view = worker.view
                found = [e for e in (view.entries() if view else []) if e.label == "Claude Code"]
                return found[0] if found else None

            entry = wait_for(launch_entry, 10, "the Launch agent entry")
            assert entry.action == Action(LAUNCH, f"claude:{rig.project}")
            worker.post(entry.action)
            task = wait_for(manager.running, 15, "the launched task")[0]
            wait_for(lambda: opened == [f"/terminal/{task.task_id}"], 10, "its terminal opened")
            bound = rig.bound(manager, task.task_id)
            # It asks for approval on its own screen: the notice has Approve and Deny.
            manager.send_text(task.task_id, "run: touch from-the-notification.txt")
            notice = wait_for(
                lambda: next((n for n in notifier.sent if n.urgent), None), 15, "the notice"
            )
            assert notice.title == f"Claude Code in {rig.project.name} needs your approval"
            assert [b.label for b in notice.buttons] == ["Open", "Approve", "Deny"]
            # The menu says so too, with Approve and Deny under the task.
            wait_for(
                lambda: any(e.label == "Approve" for e in (worker.view or shown[-1]).entries()),
                10,
                "Approve in the menu",
            )
            assert (worker.view or shown[-1]).menu[-1].submenu  # quitting would ask
            notifier.click(notifier.sent.index(notice), button="Approve")
            wait_for((rig.project / "from-the-notification.txt").exists, 15, "the command")
            rig.state(bound, lambda s: s.state.state is State.DONE)
            # (the prompt counts as gone once it stayed off the screen a moment)
            wait_for(lambda: manager.get(task.task_id).waiting is None, 5, "the prompt gone")
            wait_for(
                lambda: not any(e.label == "Approve" for e in (worker.view or shown[-1]).entries()),
                10,
                "Approve gone from the menu",
            )
        finally:
            worker.stop()
    wait_for(lambda: not zombies_of_this_process(), 5.0, "every child reaped")
