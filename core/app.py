"""The one application object every front end shares (the tray, ``agentbar serve``, ``agentbar
window``, ``status``, ``watch``, ``export``): it assembles the engine service, the launched
agents' task manager and the announced loopback server once, and hands out plain values (built,
started and closed on the front end's main thread; its parts run threads of their own).

A front end opens it, subscribes what it shows, serves it if it has a server, starts it and
closes it, saying what becomes of the launched agents still running::

    app = Agentbar.open(settings)
    try:
        with app.serving(quit=...) as server:
            app.start()
            ...
    finally:
        app.close(keep_tasks=True)

Its seams are keyword arguments (``service``, ``tasks``), so a test hands it an engine over a
fake process table or no task manager at all.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from .config import Settings
from .decisions import DecisionBook
from .engine import Engine
from .engine_messages import EngineStats, IndexProgress
from .errors import Fault
from .hook_route import HookRoute
from .limits import LimitWindow
from .model import SessionSnapshot, StateChange
from .remote import remotes as remote_config
from .remote.hosts import HostStatus
from .remote.hub import Everywhere, Hub
from .remote.remotes import Remote
from .server.runner import LoopbackServer, announced_server
from .service import Service

if TYPE_CHECKING:
    from .launch.manager import TaskManager
    from .launch.task import TaskInfo
    from .server.windows import WindowLink

log = logging.getLogger(__name__)

READY_SECONDS = 120.0
HOSTS_SECONDS = 30.0  # a one-shot command's wait for the remote hosts (ssh, their engines)


class Agentbar:
    def __init__(
        self,
        settings: Settings,
        service: Service,
        tasks: TaskManager | None = None,
        decisions: DecisionBook | None = None,
        remotes: tuple[Remote, ...] = (),
    ) -> None:
        self.settings = settings
        self.service = service
        self.tasks = tasks
        self.server: LoopbackServer | None = None  # while ``serving``
        # The approvals and questions waiting on the person, whatever holds them (a hook, a
        # launched task's screen: ``tasks`` is handed the same book), and the answers every
        # front end gives them.
        self.decisions = decisions if decisions is not None else DecisionBook()
        # The requests hooks hold are withdrawn once their session moves on without us.
        self.hook_route = HookRoute(self.decisions)
        self._unfollow_hooks = self.hook_route.follow(service.engine.subscribe)
        # The remotes of settings.toml: their sessions beside this machine's, their requests
        # in the same book (``core/remote``); none configured, no hub.
        self.hub = Hub(remotes, self.decisions) if remotes else None
        self.everywhere = Everywhere(service.engine, self.hub)

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        tasks: bool = True,
        service: Service | None = None,
        tick_seconds: float = 2.0,
        remotes: bool = True,
    ) -> Agentbar:
        """The engine over this user's sessions (``service``: one made already) and, with
        ``tasks``, the manager of the agents this process launches; with ``remotes``, the
        remote hosts ``settings.toml`` configures (followed once started)."""
        service = service or Service.open(settings, tick_seconds=tick_seconds)
        manager = None
        decisions = DecisionBook()
        if tasks:
            # Imported here: status, watch and export launch nothing, and start faster without.
            from .launch.manager import TaskManager  # noqa: PLC0415

            manager = TaskManager(settings, engine=service.engine, decisions=decisions)
        configured = remote_config.load(settings.options_path) if remotes else None
        for problem in configured.problems if configured is not None else ():
            log.warning("%s", problem)
        hosts = configured.remotes if configured is not None else ()
        return cls(settings, service, manager, decisions, remotes=hosts)

    @property
    def engine(self) -> Engine:
        return self.service.engine

    # -- running (the front end's main thread) -------------------------------------------------

    @contextlib.contextmanager
    def serving(
        self, *, port: int = 0, quit: Callable[[str], None] | None = None
    ) -> Iterator[LoopbackServer]:
        """The loopback server over this app, announced in ``server.json`` while it runs.
        ``quit(choice)`` is what ``POST /api/quit`` calls. Raises ``OSError`` when ``port`` is
        taken."""
        with announced_server(
            self.service,
            self.settings,
            port=port,
            tasks=self.tasks,
            quit=quit,
            decisions=self.decisions,
            sessions=self.everywhere,
            hub=self.hub,
        ) as server:
            self.server = server
            try:
                yield server
            finally:
                self.server = None

    def start(self) -> None:
        """Follow the sessions live (the engine catches up on its thread) and take back the
        launched agents an earlier agentbar kept running."""
        self.service.start()
        if self.tasks is not None:
            self.tasks.start()
        if self.hub is not None:
            self.hub.start()

    def catch_up(self, *, hosts_seconds: float = HOSTS_SECONDS) -> None:
        """Read everything once, on this thread, without following (status, export): the live
        sessions first, then the history, its progress published to ``subscribe_progress``;
        the remote hosts meanwhile, each waited for ``hosts_seconds`` at most."""
        if self.hub is not None:
            self.hub.start()
        self.engine.catch_up()
        if self.hub is not None:
            self.hub.wait_settled(hosts_seconds)

    def close(self, *, keep_tasks: bool = True) -> None:
        """Stop everything; the launched agents still running go on without agentbar (a keeper
        holds their terminals) unless ``keep_tasks`` is False."""
        try:
            if self.hub is not None:
                self.hub.stop()
            if self.tasks is not None:
                self.tasks.shutdown(keep=keep_tasks)
        finally:
            self._unfollow_hooks()
            self.service.close()

    # -- plain values (any thread) -------------------------------------------------------------

    def sessions(self) -> list[SessionSnapshot]:
        """This machine's sessions, then the remotes' (``key.host`` names theirs)."""
        return self.everywhere.sessions()

    def session_ids(self) -> list[tuple[str, str]]:
        """(agent, session id) of every session, for naming one by a prefix of its id."""
        return [(str(s.key.agent), s.key.session_id) for s in self.engine.sessions()]

    def hosts(self) -> tuple[HostStatus, ...]:
        """The configured remote hosts and how each is doing (none configured: empty); their
        sessions are in ``sessions()`` with ``key.host`` set to the remote's name."""
        return self.everywhere.hosts()

    def subscribe_hosts(self, callback: Callable[[HostStatus], None]) -> Callable[[], None]:
        """``callback`` hears a remote host's new status (on its link's thread: return
        quickly); nothing without remotes."""
        if self.hub is None:
            return lambda: None
        return self.hub.subscribe_hosts(callback)

    def limits(self) -> tuple[LimitWindow, ...]:
        """Every agent's usage windows as last observed (``core/limits.py``): this machine's,
        then each remote host's (``host`` names it; ``stale`` while it is not connected)."""
        return self.everywhere.limits()

    def limits_heard(self) -> frozenset[str]:
        return self.engine.limits_heard()

    def stats(self) -> EngineStats:
        return self.engine.stats()

    def wait_ready(self, timeout: float = READY_SECONDS) -> bool:
        """Wait until the first catch-up is done (everything on disk at start is read)."""
        return self.engine.ready.wait(timeout)

    def wait_live(self, timeout: float = READY_SECONDS) -> bool:
        """Wait until the live sessions are read and decided (the history may still be read:
        ``progress()`` says how far)."""
        return self.engine.live_ready.wait(timeout)

    def progress(self) -> IndexProgress:
        """How far the first reading of what is on disk has come."""
        return self.engine.progress()

    def subscribe_progress(self, callback: Callable[[IndexProgress], None]) -> Callable[[], None]:
        """``callback`` hears the first reading move on (on the engine thread: return quickly)."""
        return self.engine.subscribe_progress(callback)

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]:
        """``callback`` hears every state change, this machine's (on the engine thread) and the
        remotes' (on their links' threads): return quickly."""
        return self.everywhere.subscribe(callback)

    def subscribe_faults(self, callback: Callable[[Fault], None]) -> Callable[[], None]:
        """``callback`` hears every new runtime fault (on the engine thread: return quickly)."""
        return self.engine.subscribe_faults(callback)

    def problems(self) -> tuple[Fault, ...]:
        """The runtime faults so far: folders that cannot be watched, an index rebuilt."""
        return self.engine.faults()

    def running_tasks(self) -> list[TaskInfo]:
        return [] if self.tasks is None else self.tasks.running()

    @property
    def windows(self) -> WindowLink:
        """The windows open on this app's server (what they show, which is in front)."""
        if self.server is None:
            raise RuntimeError("not serving")
        link: WindowLink = self.server.context.window
        return link
