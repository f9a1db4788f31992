"""The task manager: launches agents in PTYs this process owns, binds them to their sessions,
types into them, answers their approval prompts and questions, stops them, and on quit keeps or
stops them (any thread calls it; each task has its reader thread, the binder has its own).

The long-lived agentbar process owns one: ``agentbar serve`` (``core/server/cli.py``) and the
tray. Tell it about the engine (``engine``) and launched sessions carry their ``task_id``, their
liveness is the PTY's child, and the task's screen is a signal (``TaskScreen``). Everything it
does is here as plain Python, and over HTTP in ``core/server/task_routes.py``:

    manager = TaskManager(settings, engine=service.engine)
    manager.start()
    info = manager.launch(LaunchRequest(Agent("claude"), "/src/api", prompt="fix the tests"))
    manager.approve(info.task_id)         # only when its own screen shows the prompt
    manager.shutdown(keep=True)           # on quit: the tasks run on without agentbar

Given the decision book (``decisions``), every dialog up on a task's screen is a request in it
(the TERMINAL route, ``terminal_route.py``), and an answer given there is typed in here.

Keys only ever go to a task's own PTY: there is no way here to type into a terminal agentbar
did not start.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psutil

from ..agents.base import LaunchProfile, TypedPrompt
from ..config import Settings, UnknownAgent
from ..decisions import Decision, DecisionBook, StaleRequest, Verdict
from ..engine_messages import Message, TaskBound, TaskExited, TaskScreen, TaskStarted
from ..errors import LaunchError
from ..hooks.spec import HookCommand, detect_version
from ..model import Agent, Process, SessionKey, SessionSnapshot
from . import keys as keys_mod
from . import pty_spawn
from . import terminal as terminal_mod
from .binding import Binder, Places
from .commands import child_env, command_line, session_vars
from .options import LaunchOptions
from .prompts import Prompt, PromptKind, choose
from .request import BadLaunch, LaunchRequest, Mode, Program
from .task import (
    Binding,
    BindPath,
    Status,
    Task,
    TaskInfo,
    new_task_id,
)
from .terminal_route import Shown, TerminalRoute, same_choices, same_dialog

log = logging.getLogger(__name__)

EXIT_WAIT_SECONDS = 4.0  # after the agent's own exit keys
TERM_WAIT_SECONDS = 3.0  # after SIGTERM, before SIGKILL
ANSWER_WAIT_SECONDS = 2.5  # for an answered prompt to go
ECHO_WAIT_SECONDS = 1.5  # for typed text to show before Enter
READY_WAIT_SECONDS = 60.0  # for a TUI to be ready for a typed first prompt
READY_SETTLE_SECONDS = 1.0  # ...and its screen to stop changing (the session drawn)
KEY_PAUSE_SECONDS = 0.15  # between the presses that choose a question's option


class EngineLink(Protocol):
    """What the manager needs from the engine (any thread)."""

    def post(self, message: Message) -> None: ...

    def sessions(self) -> list[SessionSnapshot]: ...


class NoSuchTask(LaunchError, LookupError):
    title = "No such launched agent"


class NotRunning(LaunchError, RuntimeError):
    title = "The agent is not running any more"


class AlreadyRunning(LaunchError, RuntimeError):
    """A resume of a session a launched task runs now: two agents would write one session."""

    title = "A launched agent runs this session"


class NotWaiting(LaunchError, RuntimeError):
    """The task's screen shows no approval prompt: nothing was typed."""

    title = "The agent is not asking for approval"


@dataclass(frozen=True, slots=True)
class Answer:
    task_id: str
    answer: str  # "approve" or "deny"
    question: str
    cleared: bool  # the prompt went away after the keys

    def to_json(self) -> dict[str, Any]:
        """As the API answers it (``POST /api/tasks/ID/approve``, and a host's over its channel)."""
        return {"answer": self.answer, "question": self.question, "cleared": self.cleared}


class TaskManager:
    def __init__(
        self,
        settings: Settings,
        *,
        engine: EngineLink | None = None,
        options: LaunchOptions | None = None,
        env: Mapping[str, str] | None = None,
        decisions: DecisionBook | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.options = options or LaunchOptions.from_env(
            os.environ if env is None else env, settings.kits
        )
        self._env = dict(os.environ if env is None else env)
        self._tasks: dict[str, Task] = {}
        self._lock = threading.RLock()
        self._listeners: list[Callable[[TaskInfo], None]] = []
        self._versions: dict[tuple[str, ...], str | None] = {}
        self._version_lock = threading.Lock()
        places = Places(
            events_dirs={agent: settings.events_dir(agent) for agent in settings.agents},
            profiles=self._profiles(),
            homes=settings.homes,
            sessions=None if engine is None else engine.sessions,
        )
        self.binder = Binder(places, self._bound, scrape=self.options.scrape_status)
        self._started = False
        self._told: dict[str, bool] = {}  # by task id: the engine was told of an approval up
        self.route = None if decisions is None else TerminalRoute(decisions, self._deliver)

    # -- life ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the binder; take back tasks an earlier agentbar kept running (``keeper``)."""
        if self._started:
            return
        self._started = True
        self.binder.start()
        if sys.platform != "win32":  # a Windows ConPTY never outlives its agentbar: no keeper
            from . import keeper  # noqa: PLC0415 - imports the manager back

            for task in keeper.reclaim(self.settings, self._make_adopted):
                self._register(task, offsets=self.binder.snapshot(task.request.agent))

    def subscribe(self, callback: Callable[[TaskInfo], None]) -> Callable[[], None]:
        """``callback(info)`` on any thread whenever a task changes (status, binding, prompt,
        attached clients). It must return quickly."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    # -- launching -----------------------------------------------------------------------------

    def _profiles(self) -> dict[Agent, LaunchProfile]:
        return {kit.agent: kit.launch for kit in self.settings.kits if kit.launch is not None}

    def profile(self, agent: Agent) -> LaunchProfile:
        """How ``agent`` is launched; ``BadLaunch`` when it is unknown or cannot be."""
        try:
            profile = self.settings.kit(agent).launch
        except UnknownAgent as exc:
            raise BadLaunch(str(exc)) from None
        if profile is None:
            raise BadLaunch(f"agentbar cannot launch {agent}")
        return profile

    def program(self, agent: Agent) -> Program:
        """How ``agent`` runs here, its version probed once (``--version``)."""
        argv = self.options.program(agent)
        with self._version_lock:
            if argv not in self._versions:
                self._versions[argv] = detect_version(agent, program=argv)
            return Program(argv=argv, version=self._versions[argv])

    def launch(self, request: LaunchRequest) -> TaskInfo:
        """Start ``request``'s agent in a new PTY; raises ``BadLaunch`` with the reason."""
        project = Path(request.project)
        if not project.is_absolute() or not project.is_dir():
            raise BadLaunch(f"{request.project} is not a folder")
        profile = self.profile(request.agent)
        program = self.program(request.agent)
        session_id = profile.preassigned_id(request, program)
        hooks = HookCommand.current(self.settings.data_dir) if self.options.hooks else None
        line = command_line(
            profile,
            request,
            program,
            hooks=hooks,
            session_id=session_id,
            bypass_hook_trust=self.options.bypass_hook_trust,
        )
        task_id = self._fresh_id()
        inherited = session_vars(self._profiles().values())
        env = child_env(self._env, task_id, self.options.extra_env, inherited=inherited)
        offsets = self.binder.snapshot(request.agent)
        started_mono, started_at = time.monotonic(), time.time()
        try:
            term = pty_spawn.spawn(
                line.argv,
                cwd=str(project),
                env=env,
                rows=self.options.rows,
                cols=self.options.cols,
            )
        except FileNotFoundError:
            raise BadLaunch(
                f"{line.argv[0]} is not installed here (not on PATH; "
                f"set {profile.program_env} to its path)"
            ) from None
        except OSError as exc:
            raise BadLaunch(f"cannot start {line.argv[0]}: {exc}") from None
        task = Task(
            task_id,
            request,
            term,
            rows=self.options.rows,
            cols=self.options.cols,
            on_change=self._changed,
            on_prompt=self._screen_changed,
            dialogs=profile,
            started_at=started_at,
            started_mono=started_mono,
            expects_hook=hooks is not None
            and profile.hooks_run_unreviewed(self.options.bypass_hook_trust),
        )
        log.info("task %s: %s in %s (pid %s)", task_id, request.agent, project, term.pid)
        known = None
        if request.mode is Mode.RESUME and request.source is not None:
            known = Binding(request.source, BindPath.RESUME, 0.0, confirmed=True)
        elif session_id is not None:
            known = Binding(session_id, BindPath.SESSION_ID, 0.0, confirmed=False)
        self._register(task, offsets=offsets, known=known, fresh=True)
        if request.prompt and isinstance(profile, TypedPrompt) and profile.types_prompt(request):
            threading.Thread(
                target=self._type_when_ready,
                args=(task, request.prompt, profile.ready_text),
                name=f"agentbar-prompt-{task_id}",
                daemon=True,
            ).start()
        return task.info()

    def _type_when_ready(self, task: Task, prompt: str, ready_text: str) -> None:
        """Type the first prompt of a launch whose agent leaves it unsent (``TypedPrompt``)
        once ``ready_text`` shows and the screen has stopped changing for a moment."""
        deadline = time.monotonic() + READY_WAIT_SECONDS
        last, since = "", time.monotonic()
        while time.monotonic() < deadline and task.status is Status.RUNNING:
            screen = task.screen_text()
            if screen != last:
                last, since = screen, time.monotonic()
            elif ready_text in screen and time.monotonic() - since >= READY_SETTLE_SECONDS:
                try:
                    self.send_text(task.task_id, prompt)
                except (LaunchError, OSError) as exc:
                    log.warning("task %s: its first prompt was not typed: %s", task.task_id, exc)
                return
            time.sleep(0.1)
        log.warning("task %s: not ready for its first prompt; it was not typed", task.task_id)

    def launch_from(
        self, session: SessionSnapshot, mode: Mode, *, prompt: str | None = None
    ) -> TaskInfo:
        """Resume or fork a discovered session, in the folder it ran in (a resume of a session a
        running task holds is refused: ``AlreadyRunning``)."""
        if mode is Mode.RESUME and (running := self.for_session(session.key)) is not None:
            raise AlreadyRunning(f"task {running.task_id} runs this session")
        if session.project is None:
            raise BadLaunch("the session's folder is not known")
        if not Path(session.project).is_dir():
            raise BadLaunch(f"the session's folder {session.project} is gone")
        request = LaunchRequest(
            session.key.agent, session.project, prompt=prompt, mode=mode,
            source=session.key.session_id,
        )  # fmt: skip
        return self.launch(request)

    def _register(
        self,
        task: Task,
        *,
        offsets: dict[str, int],
        known: Binding | None = None,
        fresh: bool = False,
    ) -> None:
        """``fresh``: launched now (not handed back by the keeper), so its agent runs a new
        session or the one ``known`` names, and the engine is told so before it can match it
        to another by folder."""
        with self._lock:
            self._tasks[task.task_id] = task
        if fresh and self.engine is not None:
            process = Process(pid=task.terminal.pid, create_time=task.terminal.create_time)
            self.engine.post(TaskStarted(task.task_id, process))
        task.start()
        self.binder.add(task, offsets, known)
        self._changed(task)

    def _fresh_id(self) -> str:
        with self._lock:
            while True:
                task_id = new_task_id()
                if task_id not in self._tasks:
                    return task_id

    def _make_adopted(
        self, record: Mapping[str, object], term: terminal_mod.Terminal, scrollback: bytes
    ) -> Task:
        """A task for an agent the keeper handed back (``keeper.reclaim``)."""

        def text(name: str) -> str | None:
            value = record.get(name)
            return value if isinstance(value, str) and value else None

        def number(name: str, default: float) -> float:
            value = record.get(name)
            return float(value) if isinstance(value, int | float) else default

        request = LaunchRequest(
            Agent(str(record["agent"])),
            str(record["project"]),
            prompt=text("prompt"),
            mode=Mode(text("mode") or "new"),
            source=text("source"),
        )
        task = Task(
            str(record["task_id"]),
            request,
            term,
            rows=int(number("rows", self.options.rows)),
            cols=int(number("cols", self.options.cols)),
            on_change=self._changed,
            on_prompt=self._screen_changed,
            dialogs=self.profile(request.agent),
            started_at=number("started_at", time.time()),
            adopted=True,
            scrollback=scrollback,
        )
        sid = text("session_id")
        if sid is not None:
            path = BindPath(text("path") or "resume")
            binding = Binding(sid, path, 0.0, confirmed=True)
            task.bind(binding)
            self._bound(task, binding)
        return task

    # -- callbacks from tasks and the binder (their threads) ------------------------------------

    def _bound(self, task: Task, binding: Binding) -> None:
        log.info(
            "task %s: session %s (%s, %.3f s)",
            task.task_id, binding.session_id, binding.path, binding.seconds,
        )  # fmt: skip
        if self.engine is not None:
            key = SessionKey(task.request.agent, binding.session_id)
            process = Process(pid=task.terminal.pid, create_time=task.terminal.create_time)
            self.engine.post(TaskBound(task.task_id, key, process))
        prompt, _since = task.prompt()
        if prompt is not None:
            self._screen_changed(task, prompt)

    def _screen_changed(self, task: Task, prompt: Prompt | None) -> None:
        if self.route is not None:
            binding = task.binding
            session_id = None if binding is None else binding.session_id
            shown = Shown(task.task_id, task.request.agent, session_id)
            alive = task.status in (Status.RUNNING, Status.STOPPING)
            self.route.shown(shown, prompt if alive else None, ended=not alive)
        if self.engine is None or task.binding is None:
            return
        if task.status is Status.EXITED:
            exit_status = task.info().exit
            detail = "exited" if exit_status is None else exit_status.describe()
            self.engine.post(TaskExited(task.task_id, time.time(), detail))
            return
        # The engine hears of approvals coming and going (a question's wait it reads from the
        # agent's own files): a question's redraws are no news to it.
        approval = prompt if prompt is not None and prompt.kind is PromptKind.APPROVAL else None
        with self._lock:
            told = self._told.get(task.task_id, False)
            self._told[task.task_id] = approval is not None
        if approval is None and not told:
            return
        question = "" if approval is None else approval.question
        self.engine.post(TaskScreen(task.task_id, approval is not None, question, time.time()))

    def _changed(self, task: Task) -> None:
        if not self._listeners:
            return
        info = task.info()
        for callback in list(self._listeners):
            try:
                callback(info)
            except Exception:
                log.exception("a task listener failed")

    # -- looking ---------------------------------------------------------------------------------

    def tasks(self) -> list[TaskInfo]:
        """Every task of this run, newest first."""
        with self._lock:
            found = [task.info() for task in self._tasks.values()]
        return sorted(found, key=lambda t: t.started_at, reverse=True)

    def running(self) -> list[TaskInfo]:
        return [t for t in self.tasks() if t.alive]

    def waiting(self) -> list[TaskInfo]:
        """Running tasks whose screen shows an approval prompt (for the menu's Approve/Deny)."""
        return [t for t in self.running() if t.waiting is not None]

    def task(self, task_id: str) -> Task:
        """The task named by its id or a unique start of it; ``NoSuchTask`` else."""
        with self._lock:
            found = self._tasks.get(task_id)
            if found is None and task_id:
                matches = [t for i, t in self._tasks.items() if i.startswith(task_id)]
                if len(matches) > 1:
                    raise NoSuchTask(f"{task_id!r} names {len(matches)} tasks: give more of it")
                found = matches[0] if matches else None
        if found is None:
            raise NoSuchTask(f"no task {task_id!r}")
        return found

    def get(self, task_id: str) -> TaskInfo:
        return self.task(task_id).info()

    def for_session(self, key: SessionKey) -> TaskInfo | None:
        """The running task bound to this session, if any."""
        for info in self.running():
            if info.agent == key.agent and info.session_id == key.session_id:
                return info
        return None

    # -- typing ----------------------------------------------------------------------------------

    def _live(self, task_id: str) -> Task:
        task = self.task(task_id)
        if task.status is not Status.RUNNING:
            raise NotRunning(f"task {task.task_id} is {task.status}")
        return task

    def send_text(self, task_id: str, text: str, *, enter: bool = True) -> TaskInfo:
        """Type ``text`` into the task (as a paste), then Enter unless ``enter`` is False.
        Blocks for the pause the TUIs need between the two (about a second)."""
        task = self._live(task_id)
        if text:
            task.write(keys_mod.typed(text, bracketed=task.bracketed_paste() and "\n" in text))
        if enter:
            if text:
                self._wait_echo(task, text)
                time.sleep(self.profile(task.request.agent).keys.enter_pause)
            task.write(keys_mod.KEYS["enter"])
        return task.info()

    def send_keys(self, task_id: str, names: Iterable[str]) -> TaskInfo:
        """Press named keys (``enter``, ``escape``, ``ctrl-c``, a single character, ...)."""
        task = self._live(task_id)
        try:
            data = b"".join(keys_mod.named(name) for name in names)
        except KeyError as exc:
            raise BadLaunch(f"no key named {exc.args[0]!r}") from None
        task.write(data)
        return task.info()

    def send_bytes(self, task_id: str, data: bytes) -> None:
        """What a terminal attached to the task typed, as it is."""
        self._live(task_id).write(data)

    def _wait_echo(self, task: Task, text: str) -> None:
        """Until the end of ``text`` shows on the task's screen (a long paste may show as a
        placeholder instead: then the wait simply runs out)."""
        tail = " ".join(text.split())[-20:]
        deadline = time.monotonic() + ECHO_WAIT_SECONDS
        while time.monotonic() < deadline:
            if tail and tail in " ".join(task.screen_text().split()):
                return
            time.sleep(0.03)

    def resize(self, task_id: str, rows: int, cols: int) -> TaskInfo:
        task = self.task(task_id)
        task.resize(rows, cols)
        return task.info()

    def attach(
        self, task_id: str, listener: Callable[[bytes], None]
    ) -> tuple[bytes, Callable[[], None]]:
        """The task's scrollback, then its output as it comes (``Task.attach``)."""
        return self.task(task_id).attach(listener)

    # -- answering ------------------------------------------------------------------------------

    def approve(self, task_id: str, *, origin: str = "tasks") -> Answer:
        return self._answer_here(task_id, approve=True, origin=origin)

    def deny(self, task_id: str, *, origin: str = "tasks") -> Answer:
        return self._answer_here(task_id, approve=False, origin=origin)

    def _answer_here(self, task_id: str, *, approve: bool, origin: str) -> Answer:
        """Approve or deny asked of the task itself (its API, its menu entry): its request in
        the book is answered there too, so every front end sees it closed as answered."""
        task = self._live(task_id)
        if self.route is not None and self.route.answering(task.task_id):
            # Its dialog was answered a moment ago (the book, another client): the keys are
            # being typed, and a second answer must not land on the same dialog.
            raise NotWaiting(f"task {task.task_id}: its prompt was just answered: nothing typed")
        current = task.refresh_prompt()
        if self.route is None or current is None or current.kind is not PromptKind.APPROVAL:
            return self._answer(task.task_id, approve=approve)
        request = self.route.take(task.task_id)
        answer: Answer | None = None
        try:
            if request is not None:
                verdict = Verdict.ALLOW if approve else Verdict.DENY
                with contextlib.suppress(StaleRequest):
                    self.route.book.decide(Decision(request.request_id, verdict, origin))
            answer = self._answer(task.task_id, approve=approve)
        finally:
            still_up = None if answer is None or answer.cleared else task.prompt()[0]
            self.route.answered(task.task_id, still_up)
        return answer

    def _answer(self, task_id: str, *, approve: bool, expect: Prompt | None = None) -> Answer:
        """Answer the approval prompt on the task's own screen, and only if there is one (and,
        given ``expect``, only if it is that dialog still)."""
        task = self._live(task_id)
        prompt = task.refresh_prompt()
        _, since = task.prompt()
        if prompt is None or since is None or prompt.kind is not PromptKind.APPROVAL:
            raise NotWaiting(f"task {task.task_id} shows no approval prompt")
        if expect is not None and not same_dialog(prompt, expect):
            raise NotWaiting(f"task {task.task_id} shows another prompt now: nothing was typed")
        size = task.size
        self._settle(since)
        prompt = self._redrawn(task, prompt, size)
        profile = self.profile(task.request.agent)
        data = profile.approve_keys(prompt.rows) if approve else profile.keys.deny
        cleared = False
        for attempt in range(2):
            current = task.refresh_prompt()
            if current is None or not same_dialog(current, prompt):
                cleared = attempt > 0  # another dialog is not this answer's to take
                break
            task.write(data, person=False)
            cleared = self._wait_prompt_gone(task, prompt)
            if cleared:
                break
        log.info("task %s: %s %r (cleared: %s)", task.task_id,
                 "approved" if approve else "denied", prompt.question, cleared)  # fmt: skip
        return Answer(task.task_id, "approve" if approve else "deny", prompt.question, cleared)

    @staticmethod
    def _redrawn(task: Task, prompt: Prompt, size: tuple[int, int]) -> Prompt:
        """The dialog as drawn now if the task's screen was resized while it settled (the
        window's waiting banner takes its terminal's rows as it appears): the program redraws
        the lines above it for the new size, and it is the same dialog if its question and
        choices are. Otherwise the dialog as it was read."""
        if task.size == size:
            return prompt
        now = task.refresh_prompt()
        return now if now is not None and same_choices(now, prompt) else prompt

    @staticmethod
    def _settle(since: float) -> None:
        settle = keys_mod.DIALOG_SETTLE_SECONDS - (time.monotonic() - since)
        if settle > 0:
            time.sleep(settle)  # the dialog would drop a key that comes this early

    def _wait_prompt_gone(self, task: Task, prompt: Prompt) -> bool:
        deadline = time.monotonic() + ANSWER_WAIT_SECONDS
        while time.monotonic() < deadline:
            current = task.refresh_prompt()
            if current is None or not same_dialog(current, prompt):
                return True
            time.sleep(0.03)
        return False

    def _deliver(self, task_id: str, prompt: Prompt, decision: Decision) -> Prompt | None:
        """Type an answer from the book into the task (the TERMINAL route's delivery thread);
        returns the dialog still up when the keys did not clear it."""
        try:
            task = self._live(task_id)
            if prompt.kind is PromptKind.QUESTION:
                return self._reply(task, prompt, decision)
            answer = self._answer(
                task_id, approve=decision.verdict is not Verdict.DENY, expect=prompt
            )
            if not answer.cleared:
                return task.prompt()[0]
            if decision.verdict is Verdict.DENY and decision.message:
                # "No, and tell it what to do differently": the input is the agent's again.
                self.send_text(task_id, decision.message)
        except (NotWaiting, NotRunning, NoSuchTask, OSError) as exc:
            log.info("task %s: the answer to %s was not typed: %s", task_id,
                     decision.request_id, exc)  # fmt: skip
        return None

    def _reply(self, task: Task, prompt: Prompt, decision: Decision) -> Prompt | None:
        """Answer the question dialog on the task's screen: an option, or text typed where the
        agent takes an answer of one's own; Deny: the agent's own refusal key."""
        current = task.refresh_prompt()
        _, since = task.prompt()
        if current is None or since is None or not same_dialog(current, prompt):
            raise NotWaiting(f"task {task.task_id} shows another dialog now: nothing was typed")
        profile = self.profile(task.request.agent)
        if decision.verdict is Verdict.DENY:
            presses, text = [profile.keys.deny], None
        else:
            try:
                option, text = choose(current, decision.replies[0])
            except ValueError as exc:
                log.warning("task %s: %s: asking again", task.task_id, exc)
                return current
            presses = profile.reply_keys(current, option, text)
        self._settle(since)
        for index, data in enumerate(presses):
            task.write(data, person=False)
            if index < len(presses) - 1:
                typed_next = text is not None and index == len(presses) - 2
                time.sleep(profile.keys.enter_pause if typed_next else KEY_PAUSE_SECONDS)
        cleared = self._wait_prompt_gone(task, current)
        log.info("task %s: replied %s to %r (cleared: %s)", task.task_id,
                 decision.verdict, prompt.question, cleared)  # fmt: skip
        return None if cleared else task.prompt()[0]

    # -- stopping -------------------------------------------------------------------------------

    def stop(self, task_id: str, *, graceful: bool = True) -> TaskInfo:
        """Stop the task: the agent's own exit keys, then SIGTERM, then SIGKILL, to its
        program and every process still in its terminal's session; reaped, all of them."""
        task = self.task(task_id)
        if task.status in (Status.EXITED, Status.DETACHED):
            return task.info()
        exit_keys = self.profile(task.request.agent).keys.exit_keys if graceful else ()
        stop_task(task, exit_keys=exit_keys)
        return task.info()

    def forget(self, task_id: str) -> None:
        """Drop an exited task from the list."""
        task = self.task(task_id)
        if task.status is Status.RUNNING or task.status is Status.STOPPING:
            raise NotRunning(f"task {task.task_id} still runs: stop it first")
        with self._lock:
            self._tasks.pop(task.task_id, None)
        self.binder.remove(task.task_id)

    def shutdown(self, *, keep: bool) -> list[TaskInfo]:
        """On quit. ``keep``: hand every running task to a keeper process, so it runs on
        without agentbar and a later agentbar takes it back; else stop them all. Returns the
        tasks it kept or stopped."""
        running = [self.task(info.task_id) for info in self.running()]
        done: list[TaskInfo] = []
        if keep and running:
            try:
                _keep(self.settings, running)
                done = [task.info() for task in running]
                running = []
            except OSError as exc:
                log.error("cannot keep the tasks running (%s): stopping them instead", exc)
        threads = [
            threading.Thread(target=stop_task, args=(task,), name="agentbar-stop", daemon=True)
            for task in running
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(EXIT_WAIT_SECONDS + 2 * TERM_WAIT_SECONDS + 2)
        done += [task.info() for task in running]
        self.binder.stop()
        if self.route is not None:
            self.route.close()  # a kept task's dialog is the next agentbar's to offer
        return done


def _keep(settings: Settings, tasks: list[Task]) -> None:
    """Hand ``tasks`` to a keeper process; ``OSError`` when that cannot be done."""
    if sys.platform == "win32":
        raise OSError("a Windows ConPTY cannot outlive agentbar")
    else:
        from . import keeper  # noqa: PLC0415 - imports the manager back

        keeper.keep(settings, tasks)


def session_family(pid: int) -> list[psutil.Process]:
    """The program and its descendants that are still in its terminal's session (a daemon it
    started and that left the session, such as Codex's shared app-server, is not the task's)."""
    try:
        root = psutil.Process(pid)
        found = [root, *root.children(recursive=True)]
    except (psutil.Error, OSError):
        return []
    family = []
    for proc in found:
        with contextlib.suppress(OSError, psutil.Error):
            if proc.pid == pid or _in_session(proc.pid, pid):
                family.append(proc)
    return family


def _in_session(pid: int, leader: int) -> bool:
    if sys.platform == "win32":
        return True  # no sessions there: every descendant is the task's
    else:
        return os.getsid(pid) == leader


def stop_task(task: Task, *, exit_keys: tuple[tuple[bytes, float], ...] = ()) -> None:
    """Stop one task and everything in its session; wait until its reader reaped it.
    ``exit_keys``: the agent's own way out, tried first (none: signals at once)."""
    task.mark_stopping()
    pid = task.terminal.pid
    family = session_family(pid)
    if exit_keys:
        with contextlib.suppress(OSError, ProcessLookupError):
            for data, pause in exit_keys:
                task.write(data, person=False)
                if task.exited.wait(pause):
                    break
        task.exited.wait(EXIT_WAIT_SECONDS)
    _signal_all(task, family, signal.SIGTERM)
    if not task.exited.wait(TERM_WAIT_SECONDS):
        _signal_all(task, family, terminal_mod.KILL_SIGNAL)
        task.exited.wait(TERM_WAIT_SECONDS)
    # The rest of the session: what survived its parent's SIGTERM.
    survivors = [p for p in family if p.pid != pid and still_running(p)]
    for proc in survivors:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _gone, alive = psutil.wait_procs(survivors, timeout=TERM_WAIT_SECONDS)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    task.join(2.0)


def _signal_all(task: Task, family: list[psutil.Process], signum: int) -> None:
    task.terminal.send_signal(signum)  # our child: by its Terminal, which knows when it is gone
    for proc in family:
        if proc.pid != task.terminal.pid and still_running(proc):
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signum)


def still_running(proc: psutil.Process) -> bool:
    """The process lives (the same one: psutil checks its start time) and is no zombie."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
