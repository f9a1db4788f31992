"""The tray's worker: turns engine changes into the tray's view and into notifications, and runs
every action (menu choices, notification clicks, hand-overs); the one consumer of its inbox, on
its own thread ("agentbar-tray"), or driven by a test through ``step``.

The decision book's requests come here too: each one opened is offered to the notification
policy (a notice of its own, with the buttons that answer it) and shown in the menu; each one
closed (answered anywhere, withdrawn) leaves the menu and has its notice withdrawn at once.

The engine's subscriber and every toolkit callback only post a message here and return. One
consumer means the presenter, the policy and the pause need no locks, and a test can drive it
deterministically with a fake clock.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..core.clock import Clock
from ..core.decisions import BookChange, DecisionBook
from ..core.engine_messages import IndexProgress
from ..core.errors import Fault
from ..core.limits import LimitWindow
from ..core.model import Agent, SessionKey, SessionSnapshot, StateChange
from ..core.remote.hosts import HostStatus
from . import actions, pause
from .actions import Action, ActionRouter
from .limit_alerts import LimitAlerts
from .notices import Transition, problem_notice
from .notify import Notifier
from .pause import PauseStore
from .policy import Buttons, Policy
from .preferences import PreferencesFile
from .presenter import AgentNames, TrayState, present
from .reading import ReadingShown
from .view import Entry, TrayView

log = logging.getLogger(__name__)

# The view is recomputed at least this often: "recently finished" ages out, a pause ends, the
# settings file is re-read. (Changes themselves update it at once.)
REFRESH_SECONDS = 2.0


class Engine(Protocol):
    ready: threading.Event

    def sessions(self) -> list[SessionSnapshot]: ...

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]: ...

    def progress(self) -> IndexProgress: ...

    def limits(self) -> tuple[LimitWindow, ...]: ...

    def limits_heard(self) -> frozenset[str]: ...

    def subscribe_progress(
        self, callback: Callable[[IndexProgress], None]
    ) -> Callable[[], None]: ...


class Autostart(Protocol):
    def status(self) -> bool | None:
        """Whether agentbar starts at login; None where this platform cannot."""
        ...

    def enable(self) -> None: ...

    def disable(self) -> None: ...


@dataclass(frozen=True, slots=True)
class _Changed:
    change: StateChange


@dataclass(frozen=True, slots=True)
class _Reading:
    progress: IndexProgress


@dataclass(frozen=True, slots=True)
class _Do:
    action: Action


class _Wake:
    """Look at the view again: something it shows changed outside the engine."""


@dataclass(frozen=True, slots=True)
class _Problem:
    fault: Fault
    lasting: bool  # a condition that stays (a folder not watched), not a one-off failure


@dataclass(frozen=True, slots=True)
class _Book:
    change: BookChange


class _Stop:
    pass


Message = _Changed | _Reading | _Do | _Wake | _Problem | _Book | _Stop


class TrayWorker:
    def __init__(
        self,
        engine: Engine,
        notifier: Notifier,
        *,
        clock: Clock,
        prefs: PreferencesFile,
        pauses: PauseStore,
        show: Callable[[TrayView], None],
        in_front: Callable[[], frozenset[str]] = frozenset,
        open_page: Callable[[str], None] | None = None,
        autostart: Autostart | None = None,
        quit: Callable[[str], None] = lambda choice: None,
        extra_entries: Callable[[], tuple[Entry, ...]] = tuple,
        buttons: Buttons | None = None,
        tasks_running: Callable[[], int] = lambda: 0,
        names: AgentNames | None = None,
        decisions: DecisionBook | None = None,
        hosts: Callable[[], tuple[HostStatus, ...]] = tuple,
    ) -> None:
        """``extra_entries`` and ``buttons`` are where other features add to the menu (above
        "Open window") and to a session's notification; they register the handlers of their
        actions' kinds on ``router``. ``tasks_running`` counts the launched agents a quit must
        decide about; ``quit(choice)`` gets ``actions.KEEP_TASKS`` or ``STOP_TASKS``. ``names``:
        what a person calls each agent (``Settings.display_names()``); ``decisions``: the
        book of requests waiting on the person (``Agentbar.decisions``); ``hosts``: the remote
        hosts' statuses (``Agentbar.hosts``), an unreachable one a line in the menu."""
        self.engine = engine
        self.notifier = notifier
        self.limit_alerts = LimitAlerts()  # a usage window past settings' limit_percent
        self.clock = clock
        self.prefs = prefs
        self.pauses = pauses
        self.show = show
        self.in_front = in_front
        self.open_page = open_page
        self.autostart = autostart
        self.quit = quit
        self.extra_entries = extra_entries
        self.tasks_running = tasks_running
        self.hosts = hosts
        self.names: AgentNames = dict(names or {})
        self.policy = Policy(clock, prefs.current, pause=pauses.load())
        if buttons is not None:
            self.policy.buttons = buttons
        self.router = ActionRouter()
        self.router.register(actions.OPEN, self._open)
        self.router.register(actions.PAUSE, self._pause)
        self.router.register(actions.AUTOSTART, self._autostart)
        self.router.register(actions.QUIT, lambda a: self.quit(a.arg or actions.KEEP_TASKS))
        self.view: TrayView | None = None
        self.problems: tuple[Fault, ...] = ()  # the lasting ones, shown in the menu
        self._autostart_on = autostart.status() if autostart is not None else None
        self._inbox: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self._next_refresh = 0.0
        self._thread: threading.Thread | None = None
        self._stopping = False
        # The first reading of the history: a line in the menu and words in the tooltip while
        # it goes on, changed once a second at most.
        self.reading = ReadingShown(clock.monotonic())
        self.reading.offer(engine.progress(), clock.monotonic())
        self.decisions = decisions
        # The notices shown that tell of open requests: withdrawn once all of theirs closed.
        self._request_notices: dict[str, set[str]] = {}
        self._unsubscribe = engine.subscribe(self._on_change)
        self._unsubscribe_progress = engine.subscribe_progress(self._on_progress)
        self._unsubscribe_book = (
            decisions.subscribe(self._on_book) if decisions is not None else _nothing
        )
        if decisions is not None:  # the ones open already are news to this tray too
            for request in decisions.pending():
                self._inbox.put(_Book(BookChange(request, opened=True)))

    # -- any thread ------------------------------------------------------------------------

    def post(self, action: Action) -> None:
        """Run ``action`` on the worker thread (menu choices, notification clicks)."""
        self._inbox.put(_Do(action))

    def wake(self) -> None:
        """Recompute the view now (a launched task started, asked or exited): any thread."""
        self._inbox.put(_Wake())

    def report(self, fault: Fault, *, lasting: bool = True) -> None:
        """Tell the person of ``fault`` (any thread): a notice, and while it is ``lasting``
        (the engine's faults) a line in the menu, until the same fault comes ``over``. The same
        problem is told once."""
        self._inbox.put(_Problem(fault, lasting))

    def _on_change(self, change: StateChange) -> None:
        """The engine's subscriber, on the engine thread: hand it over and return."""
        self._inbox.put(_Changed(change))

    def _on_progress(self, progress: IndexProgress) -> None:
        """The engine's progress subscriber, on the engine thread: hand it over and return."""
        self._inbox.put(_Reading(progress))

    def _on_book(self, change: BookChange) -> None:
        """The decision book's subscriber, on the thread that changed it: hand it over."""
        self._inbox.put(_Book(change))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agentbar-tray", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._unsubscribe()
        self._unsubscribe_progress()
        self._unsubscribe_book()
        self._inbox.put(_Stop())
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    # -- the worker thread -----------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping:
            try:
                self.step(timeout=self._timeout())
            except Exception:
                log.exception("the tray worker failed on a batch; continuing")

    def _timeout(self) -> float:
        now = self.clock.monotonic()
        wake = self._next_refresh
        for deadline in (self.policy.deadline(), self.reading.deadline()):
            if deadline is not None:
                wake = min(wake, deadline)
        return max(0.0, wake - now)

    def step(self, timeout: float | None = 0.0) -> None:
        """Handle what arrived (waiting up to ``timeout`` for the first), then show the view
        if it changed and notify what is due."""
        batch: list[Message] = []
        try:
            batch.append(self._inbox.get(timeout=timeout) if timeout else self._inbox.get_nowait())
            while True:
                batch.append(self._inbox.get_nowait())
        except queue.Empty:
            pass
        now = self.clock.monotonic()
        if now >= self._next_refresh:
            self._next_refresh = now + REFRESH_SECONDS
            if self.prefs.refresh():
                self.policy.prefs = self.prefs.current
        for message in batch:
            match message:
                case _Changed(change=change):
                    self.policy.offer(Transition.of(change, self.names))
                case _Reading(progress=progress):
                    self.reading.offer(progress, now)
                case _Do(action=action):
                    self.router.run(action)
                case _Wake():
                    pass  # the view is recomputed below, after every batch
                case _Problem(fault=fault, lasting=lasting):
                    self._problem(fault, lasting=lasting)
                case _Book(change=change):
                    self._book(change)
                case _Stop():
                    self._stopping = True
        # The view first: by the time a notice pops up, the badge and menu already show what
        # it says (the engine published the state before it told of the change).
        self.refresh_view()
        fronts = self.in_front()
        for notice in self.policy.due(lambda key: actions.session_path(key) in fronts):
            if notice.tag and notice.requests:
                self._request_notices[notice.tag] = set(notice.requests)
            self.notifier.send(notice)

    def _book(self, change: BookChange) -> None:
        request = change.request
        key = SessionKey(Agent(request.agent), request.session_id, request.host)
        if change.opened:
            snap = next((s for s in self.engine.sessions() if s.key == key), None)
            self.policy.offer(Transition.of_request(request, snap, self.names))
            return
        self.policy.close_request(key, request.request_id)
        for tag, open_ones in list(self._request_notices.items()):
            open_ones.discard(request.request_id)
            if not open_ones:
                del self._request_notices[tag]
                self.notifier.withdraw(tag)

    def refresh_view(self) -> None:
        self.reading.settle(self.clock.monotonic())  # a step held back may be due by now
        now = self.clock.time()
        windows = self.engine.limits()
        prefs = self.prefs.current
        if prefs.enabled and not self.policy.pause.describe(now):
            for notice in self.limit_alerts.check(windows, prefs.limit_percent, now):
                self.notifier.send(notice)
        view = present(
            self.engine.sessions(),
            now=now,
            prefs=prefs,
            tray=TrayState(
                pause=self.policy.pause,
                autostart=self._autostart_on,
                extra=self.extra_entries(),
                tasks_running=self.tasks_running(),
                problems=tuple(p.title for p in self.problems),
                names=self.names,
                reading=self.reading.shown,
                requests=self.decisions.pending() if self.decisions is not None else (),
                limits=windows,
                limits_heard=self.engine.limits_heard(),
                hosts=self.hosts(),
            ),
        )
        if view != self.view:
            self.view = view
            self.show(view)

    def _problem(self, fault: Fault, *, lasting: bool) -> None:
        if fault.over:  # the folder is watched after all: its line goes, nothing is said
            self.problems = tuple(p for p in self.problems if p.key != fault.key)
            return
        if lasting:
            if any(p.key == fault.key for p in self.problems):
                return
            told = any(p.title == fault.title for p in self.problems)
            self.problems = (*self.problems, fault)
            if told:
                return  # the same problem in another folder: the menu line counts it
        self.notifier.send(problem_notice(fault))

    # -- actions -----------------------------------------------------------------------------

    def _open(self, action: Action) -> None:
        if self.open_page is None:
            log.warning("no display to open a window on (asked for %s)", action.arg)
            return
        self.open_page(action.arg or "/")

    def _pause(self, action: Action) -> None:
        chosen = pause.choose(action.arg, self.clock.time(), self.prefs.current.tomorrow_at)
        self.policy.pause = chosen
        self.pauses.save(chosen)

    def _autostart(self, action: Action) -> None:
        if self.autostart is None:
            return
        if action.arg == "enable":
            self.autostart.enable()
        else:
            self.autostart.disable()
        self._autostart_on = self.autostart.status()


def _nothing() -> None:
    pass
