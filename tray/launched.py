"""The tray's part in agents agentbar launches: the "Launch agent" and "Launched agents" menu
entries, Approve and Deny on a launched task's approval notification, and their handlers (the
entries and buttons are built on the tray's worker thread; the slow answers run on a thread of
their own, so the menu never waits for an agent, nor for a remote host).

"Launched agents" lists this machine's tasks, then each connected remote host's, named by it
("Claude Code · api @ devbox — running"), from what the hosts last told (``Hub.tasks``: never
a call while the menu is built). A host's task has the same choices, answered by that host's
own agentbar through its channel (its ``approve``, ``deny`` and ``stop`` calls, as the API's
``?host=`` routes); its terminal opens as the board's does (``/terminal/ID?host=NAME``). A host
that drops takes its tasks off the menu; a refusal (the host dropped since, an agentbar there
without the call) is a notice.

Approve and Deny only ever type into a terminal agentbar owns, and only while that task's own
screen shows an approval prompt: the task manager refuses otherwise (``NotWaiting``), and the
tray then says so in a notice instead of guessing. A launch that fails (a program that is not
installed, a folder that went away) is a notice too: the person clicked, something must show.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..core.errors import AgentbarError, Fault, FaultKind
from ..core.launch.projects import menu_projects, recent_projects
from ..core.launch.request import BadLaunch, LaunchRequest
from ..core.launch.task import TaskInfo
from ..core.model import LOCAL_HOST, Agent, SessionKey, SessionSnapshot, State, WaitingFor
from ..core.remote.host_tasks import STOP_SECONDS, HostTask
from ..core.remote.link import CALL_SECONDS, RemoteError, refused_there
from ..core.text import short_path
from .actions import Action, ActionRouter
from .notices import Button, Transition
from .presenter import AgentNames, agent_name, project_name
from .text import shorten
from .view import SEPARATOR, Entry

log = logging.getLogger(__name__)

LAUNCH = "launch"  # arg: "<agent>:<folder>"
# Their arg: the task id, ``ID@HOST`` for a remote host's (``task_arg``).
APPROVE = "approve"
DENY = "deny"
TERMINAL = "terminal"  # opens its live terminal in the window
STOP = "stop-task"
MAX_TASKS = 8
MAX_FOLDERS = 8


class Tasks(Protocol):
    """What the tray needs of ``core.launch.manager.TaskManager``."""

    def tasks(self) -> list[TaskInfo]: ...

    def running(self) -> list[TaskInfo]: ...

    def for_session(self, key: SessionKey) -> TaskInfo | None: ...

    def launch(self, request: LaunchRequest) -> TaskInfo: ...

    def approve(self, task_id: str) -> object: ...

    def deny(self, task_id: str) -> object: ...

    def stop(self, task_id: str, *, graceful: bool = True) -> TaskInfo: ...


class HostTasks(Protocol):
    """What the tray needs of the remote hosts (``core.remote.hub.Hub``): their tasks as last
    told (no waiting), and a call to one of them (``RemoteError`` when it cannot be had)."""

    def tasks(self) -> tuple[HostTask, ...]: ...

    def call(self, host: str, op: str, args: dict[str, Any], timeout: float) -> Any: ...


def launch_action(agent: Agent, folder: str) -> Action:
    return Action(LAUNCH, f"{agent}:{folder}")


def task_arg(task_id: str, host: str | None = None) -> str:
    """A task's action arg: its id, and its host's name for a remote one (a task id is hex
    and a host's name has no ``@``)."""
    return task_id if host is None else f"{task_id}@{host}"


def read_task_arg(arg: str) -> tuple[str, str | None]:
    task_id, at, host = arg.partition("@")
    return task_id, host if at else None


def terminal_path(task_id: str, host: str | None = None) -> str:
    return f"/terminal/{task_id}" + ("" if host is None else f"?host={host}")


class LaunchedAgents:
    """Menu entries, notification buttons and action handlers for launched agents."""

    def __init__(
        self,
        tasks: Tasks,
        sessions: Callable[[], list[SessionSnapshot]],
        pinned: Callable[[], Sequence[str]],
        open_page: Callable[[str], None] | None,
        *,
        in_background: Callable[[Callable[[], None]], None] | None = None,
        names: AgentNames,
        launchable: Sequence[Agent],
        tell: Callable[[Fault], None] | None = None,
        asking: Callable[[str], bool] | None = None,
        hosts: HostTasks | None = None,
    ) -> None:
        """``names``: what a person calls each agent; ``launchable``: the agents the "Launch
        agent" menu offers, in its order (the kits with a launch profile). ``tell`` shows the
        person what failed (the worker's ``report``, as a notice). ``asking(task_id)``: the
        decision book holds a request of that task (its "Needs you" entry and its own notice
        answer it then, so the task's own Approve/Deny step aside). ``hosts``: the remote
        hosts whose tasks are listed too (None: no remote configured)."""
        self.tasks = tasks
        self.names = names
        self.launchable = tuple(launchable)
        self.sessions = sessions
        self.pinned = pinned
        self.open_page = open_page
        self._in_background = in_background or _thread
        self._tell = tell or _log_only
        self._asking = asking or _never
        self.hosts = hosts

    # -- what the tray shows (worker thread) --------------------------------------------------

    def entries(self) -> tuple[Entry, ...]:
        """ "Launched agents" (each with Approve/Deny while it asks, its terminal, Stop; this
        machine's, then each connected host's), then "Launch agent" (pinned folders first, then
        recent ones; each with both agents)."""
        found: list[Entry] = []
        running = self.tasks.running()
        there = () if self.hosts is None else self.hosts.tasks()
        if running or there:
            found.append(Entry(f"Launched agents ({len(running) + len(there)})"))
            found += [self._task_entry(info) for info in running[:MAX_TASKS]]
            found += [self._host_task_entry(task) for task in there[: MAX_TASKS - len(running)]]
        folders = menu_projects(
            list(self.pinned()),
            recent_projects(self.sessions(), self.tasks.tasks(), limit=MAX_FOLDERS),
        )[:MAX_FOLDERS]
        if folders:
            submenu = tuple(self._folder(f, p) for f, p in folders)
            found.append(Entry("Launch agent", submenu=submenu))
        else:
            found.append(Entry("Launch agent: no project folder yet"))
        return (*found, SEPARATOR)

    def _task_entry(self, info: TaskInfo) -> Entry:
        where = project_name(info.project)
        return self._entry(info.agent, where, info.task_id, asks=info.waiting is not None)

    def _host_task_entry(self, task: HostTask) -> Entry:
        where = f"{project_name(task.project)} @ {task.host}"
        arg = task_arg(task.task_id, task.host)
        return self._entry(task.agent, where, arg, asks=task.waiting is not None)

    def _entry(self, agent: Agent, where: str, arg: str, *, asks: bool) -> Entry:
        # The command itself is in "Needs you" above (the session's own entry): short here.
        what = "waits for your approval" if asks else "running"
        label = shorten(f"{agent_name(self.names, agent)} · {where} — {what}")
        choices: list[Entry] = []
        if asks and not self._asking(read_task_arg(arg)[0]):
            choices += [
                Entry("Approve", Action(APPROVE, arg)),
                Entry("Deny", Action(DENY, arg)),
                SEPARATOR,
            ]
        choices += [Entry("Open terminal", Action(TERMINAL, arg)), Entry("Stop", Action(STOP, arg))]
        return Entry(label, submenu=tuple(choices))

    def buttons(self, t: Transition) -> tuple[Button, ...]:
        """Approve and Deny on the approval notice of a session agentbar launched, here or on
        a remote host (as that host last told its tasks)."""
        if t.state is not State.INPUT_REQUIRED or t.waiting_for is not WaitingFor.APPROVAL:
            return ()
        if t.key.host == LOCAL_HOST:
            info = self.tasks.for_session(t.key)
            arg = None if info is None else info.task_id
        else:
            task = self._host_task_of(t.key)
            arg = None if task is None else task_arg(task.task_id, task.host)
        if arg is None or self._asking(read_task_arg(arg)[0]):
            return ()
        return (Button("Approve", Action(APPROVE, arg)), Button("Deny", Action(DENY, arg)))

    def _host_task_of(self, key: SessionKey) -> HostTask | None:
        there = () if self.hosts is None else self.hosts.tasks()
        return next((task for task in there if (task.agent, task.session_id, task.host)
                     == (key.agent, key.session_id, key.host)), None)  # fmt: skip

    def tasks_running(self) -> int:
        return len(self.tasks.running())

    # -- what the tray does (worker thread; the agents' answers in the background) ------------

    def register(self, router: ActionRouter) -> None:
        router.register(LAUNCH, self._launch)
        router.register(APPROVE, lambda a: self._answer(a.arg, approve=True))
        router.register(DENY, lambda a: self._answer(a.arg, approve=False))
        router.register(TERMINAL, lambda a: self._open(terminal_path(*read_task_arg(a.arg))))
        router.register(STOP, lambda a: self._in_background(lambda: self._stop(a.arg)))

    def _launch(self, action: Action) -> None:
        name, _, folder = action.arg.partition(":")
        if name not in self.launchable:
            log.error("cannot launch %r: agentbar launches %s", action.arg, self.launchable)
            return
        try:
            request = LaunchRequest(Agent(name), folder)
        except (ValueError, BadLaunch) as exc:
            log.error("cannot launch %r: %s", action.arg, exc)
            self._tell(failed_launch(action.arg, exc))
            return

        def launch() -> None:
            try:
                info = self.tasks.launch(request)
            except (BadLaunch, OSError) as exc:
                log.error("launching %s in %s failed: %s", name, folder, exc)
                self._tell(
                    failed_launch(f"{agent_name(self.names, request.agent)} in {folder}", exc)
                )
                return
            self._open(terminal_path(info.task_id))

        self._in_background(launch)

    def _answer(self, arg: str, *, approve: bool) -> None:
        task_id, host = read_task_arg(arg)
        if host is not None:
            what = "Approve" if approve else "Deny"
            op = "approve" if approve else "deny"
            self._in_background(lambda: self._call_there(what, host, op, {"task_id": task_id}))
            return

        def answer() -> None:
            try:
                (self.tasks.approve if approve else self.tasks.deny)(task_id)
            except (LookupError, RuntimeError) as exc:  # no such task, not running, not asking
                log.warning("%s %s: %s", "approve" if approve else "deny", task_id, exc)
                self._tell(failed_answer("Approve" if approve else "Deny", exc))

        self._in_background(answer)

    def _stop(self, arg: str) -> None:
        task_id, host = read_task_arg(arg)
        if host is not None:
            self._call_there("Stop", host, "stop", {"task_id": task_id}, STOP_SECONDS)
            return
        try:
            self.tasks.stop(task_id)
        except LookupError as exc:
            log.warning("stop %s: %s", task_id, exc)
            self._tell(failed_answer("Stop", exc))

    def _call_there(
        self, what: str, host: str, op: str, args: dict[str, Any], timeout: float = CALL_SECONDS
    ) -> None:
        """A remote task's choice, answered by its host's own agentbar (a background thread:
        the host may be slow, or gone)."""
        if self.hosts is None:
            log.warning("%s %s on %s: no remote hosts here", op, args, host)
            return
        try:
            self.hosts.call(host, op, args, timeout)
        except RemoteError as exc:
            log.warning("%s %s on %s: %s", op, args, host, exc)
            self._tell(failed_on_host(what, host, exc))

    def _folder(self, folder: str, pinned: bool) -> Entry:
        # The folder's name first: a long path is cut at its end, the name stays.
        name = project_name(folder) + (" (pinned)" if pinned else "")
        label = shorten(f"{name} — {short_path(folder)}", 60)
        agents = tuple(
            Entry(agent_name(self.names, a), launch_action(a, folder)) for a in self.launchable
        )
        return Entry(label, submenu=agents)

    def _open(self, path: str) -> None:
        if self.open_page is None:
            log.warning("no display to open %s on", path)
            return
        self.open_page(path)


def failed_launch(what: str, exc: Exception) -> Fault:
    """What to tell of a launch from the menu that failed (``BadLaunch`` says why in words)."""
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    title = exc.title if isinstance(exc, AgentbarError) else "Cannot launch the agent"
    return Fault(FaultKind.ACTION, title, f"Launching {what} failed: {why}.")


def failed_answer(what: str, exc: Exception) -> Fault:
    if isinstance(exc, AgentbarError):
        return Fault(FaultKind.ACTION, exc.title, f"{what} did nothing: {exc.message}.")
    return Fault(FaultKind.ACTION, f"{what} failed", f"{what} did nothing: {exc}.")


def failed_on_host(what: str, host: str, exc: RemoteError) -> Fault:
    """What to tell of a remote task's choice its host refused or could not take (an older
    agentbar there: the ``--host`` commands' own words)."""
    if exc.older_far_side:
        said = refused_there(host, exc, f"cannot {what.lower()} its tasks from here")
        detail = f"{said[0].upper()}{said[1:]}."
    else:
        detail = f"{what} did nothing: {exc}."
    return Fault(FaultKind.ACTION, f"{what} did nothing on {host}", detail)


def _never(_task_id: str) -> bool:
    return False


def _log_only(fault: Fault) -> None:
    """Nobody to tell (the warning above is in the log)."""


def _thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="agentbar-tray-task", daemon=True).start()
