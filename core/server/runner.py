"""Run the loopback server on an asyncio loop in a thread of its own ("server thread"), fed by
the engine's state changes (any thread starts and stops it).

The engine calls its subscribers on the engine thread; the server's subscriber only hands each
change to the loop with ``call_soon_threadsafe`` and returns, so a slow browser never holds the
engine up. The socket is bound to 127.0.0.1 alone (port 0: a free one). ``server.json`` in the
data folder (mode 0600) tells other programs (``agentbar window``, scripts) where the server is
and its token; it is removed when the server stops.

aiohttp takes about half a second to import (its connector builds an SSL context), so this
module imports it, and the modules built on it, only when a server is made: every ``agentbar``
command imports this one, and only ``serve`` and ``window`` run a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ... import assets
from ..agents.base import AgentKit, replay_adapters, tool_vocabularies
from ..config import Settings
from ..decisions import BookChange, DecisionBook
from ..engine_messages import IndexProgress
from ..model import StateChange
from ..privacy import write_private
from ..replay.files import AgentRoots
from ..replay.pages import Replay
from ..search import Searcher
from ..service import Service
from . import peers as peer_owners
from .codes import DEFAULT_SECONDS, with_code

if TYPE_CHECKING:
    from ..launch.manager import TaskManager
    from ..launch.task import TaskInfo
    from ..remote.hosts import HostStatus
    from ..remote.hub import Hub
    from .context import Sessions
    from .gate import Limits
    from .peers import PeerOwners

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
SERVER_FILE = "server.json"
WANTED_FILES = 8192  # open files the server asks for: its connection caps need headroom


def _app_module() -> types.ModuleType:
    """The aiohttp application module, imported on first use (see the module docstring)."""
    from . import app  # noqa: PLC0415 - deferred on purpose

    return app


def web_dir() -> Path:
    """The web UI's files, installed with the package (``assets/web``)."""
    return Path(assets.__file__).resolve().parent / "web"


class LoopbackServer:
    def __init__(
        self,
        engine: Sessions,
        roots: AgentRoots,
        *,
        kits: Sequence[AgentKit],
        searcher: Searcher | None = None,
        port: int = 0,
        static: Path | None = None,
        tasks: TaskManager | None = None,
        quit: Callable[[str], None] | None = None,
        peers: PeerOwners | None = None,
        limits: Limits | None = None,
        decisions: DecisionBook | None = None,
        hub: Hub | None = None,
    ) -> None:
        self.engine = engine
        self.decisions = decisions
        self.hub = hub
        self.tasks = tasks
        self.roots = roots
        self.searcher = searcher
        self.token = secrets.token_urlsafe(32)  # new at every start, never read back
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((HOST, port))  # raises OSError when the port is taken
        self.port: int = self._sock.getsockname()[1]
        self._app = _app_module()
        self.guard = self._app.Guard(self.port, self.token)
        self.gate = self._app.Gate(peers or peer_owners.for_platform(), limits)
        self.context = self._app.Context(
            engine=engine,
            replay=Replay(roots, replay_adapters(kits)),
            agents=tuple(self._app.AgentEntry.of(kit) for kit in kits),
            tools=tool_vocabularies(kits),
            searcher=searcher,
            guard=self.guard,
            web_dir=static or web_dir(),
            tasks=tasks,
            quit=quit,
            decisions=decisions,
            deciders={kit.agent: kit.decisions for kit in kits if kit.decisions is not None},
            hub=hub,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._stopped: asyncio.Event | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._unsubscribe_progress: Callable[[], None] | None = None
        self._unsubscribe_tasks: Callable[[], None] | None = None
        self._unsubscribe_decisions: Callable[[], None] | None = None
        self._unsubscribe_hosts: Callable[[], None] | None = None

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """The server's address (no secret in it: ``open_url`` makes one that opens)."""
        return f"{self.origin}/"

    def open_url(self, path: str = "/", *, seconds: float = DEFAULT_SECONDS) -> str:
        """An address that opens ``path`` once, within ``seconds``: a one-time code the first
        page load trades for the cookie."""
        return with_code(self.origin, path, self.guard.codes.issue(seconds))

    def info(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "port": self.port,
            "token": self.token,
            "pid": os.getpid(),
            "tasks": self.tasks is not None,  # this process launches agents (/api/tasks)
        }

    def start(self, timeout: float = 10.0) -> str:
        raise_file_limit(WANTED_FILES)
        self._app.quiet_library_logs()
        self._thread = threading.Thread(target=self._run, name="agentbar-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("the server did not start in time")
        if self._failed is not None:
            raise RuntimeError(f"the server failed to start: {self._failed}")
        self._unsubscribe = self.engine.subscribe(self._on_change)
        self._unsubscribe_progress = self.engine.subscribe_progress(self._on_progress)
        if self.tasks is not None:
            self._unsubscribe_tasks = self.tasks.subscribe(self._on_task)
        if self.decisions is not None:
            self._unsubscribe_decisions = self.decisions.subscribe(self._on_decision)
        if self.hub is not None:
            self._unsubscribe_hosts = self.hub.subscribe_hosts(self._on_host)
        return self.url

    def stop(self, timeout: float = 5.0) -> None:
        for unsubscribe in (
            self._unsubscribe,
            self._unsubscribe_progress,
            self._unsubscribe_tasks,
            self._unsubscribe_decisions,
            self._unsubscribe_hosts,
        ):
            if unsubscribe is not None:
                with contextlib.suppress(ValueError):
                    unsubscribe()
        self._unsubscribe = self._unsubscribe_progress = self._unsubscribe_tasks = None
        self._unsubscribe_decisions = self._unsubscribe_hosts = None
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopped.set)
        if self._thread is not None:
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self._sock.close()
        self.gate.peers.close()

    def _on_change(self, change: StateChange) -> None:
        """On the engine thread: hand the change to the server's loop, nothing more."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._app.broadcast, self.context, change)

    def _on_progress(self, progress: IndexProgress) -> None:
        """On the engine thread: hand a step of the first reading to the server's loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._app.broadcast_progress, self.context, progress)

    def _on_task(self, info: TaskInfo) -> None:
        """On a task's thread: hand the task's change to the server's loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._app.broadcast_task, self.context, info)

    def _on_decision(self, change: BookChange) -> None:
        """On whichever thread changed the decision book: hand the change to the loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._app.broadcast_decision, self.context, change)

    def _on_host(self, status: HostStatus) -> None:
        """On a remote link's thread: hand a host's new status to the server's loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._app.broadcast_host, self.context, status)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to start(), or logged once running
            self._failed = exc
            if self._ready.is_set():
                log.exception("the server stopped on an error")
        finally:
            self._ready.set()
            with contextlib.suppress(Exception):
                _cancel_the_rest(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _serve(self) -> None:
        self._stopped = asyncio.Event()
        web = self._app.web
        runner = web.AppRunner(
            self._app.build_app(self.context, self.gate),
            access_log=None,
            keepalive_timeout=self.gate.limits.idle_seconds,
        )
        await runner.setup()
        site = self._app.GatedSite(runner, self._sock, self.gate)
        await site.start()
        janitor = asyncio.create_task(self.gate.janitor())
        self._ready.set()
        try:
            await self._stopped.wait()
        finally:
            janitor.cancel()
            await runner.cleanup()


def _cancel_the_rest(loop: asyncio.AbstractEventLoop) -> None:
    """End the tasks still pending (connections the gate cut, a request that outlived the
    shutdown) before the loop closes, rather than have each destroyed with a warning."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


@contextlib.contextmanager
def announced_server(
    service: Service,
    settings: Settings,
    *,
    port: int = 0,
    tasks: TaskManager | None = None,
    quit: Callable[[str], None] | None = None,
    decisions: DecisionBook | None = None,
    sessions: Sessions | None = None,
    hub: Hub | None = None,
) -> Iterator[LoopbackServer]:
    """A started server over ``service``'s engine (and ``tasks``, the launched agents of this
    process), announced in ``server.json`` while it runs, stopped and unannounced after.
    ``quit(choice)`` is what ``POST /api/quit`` calls. Raises ``OSError`` when ``port`` is
    taken."""
    roots = AgentRoots(settings.agent_roots)
    server = LoopbackServer(
        sessions or service.engine,
        roots,
        kits=settings.kits,
        searcher=Searcher(settings.index_path, roots=roots),
        port=port,
        tasks=tasks,
        quit=quit,
        decisions=decisions,
        hub=hub,
    )
    try:
        server.start()
        write_server_file(settings.server_path, server.info())
        yield server
    finally:
        remove_server_file(settings.server_path)
        server.stop()
        if server.searcher is not None:
            server.searcher.close()


if sys.platform == "win32":

    def raise_file_limit(wanted: int) -> None:
        """Windows has no such limit on sockets."""

else:

    def raise_file_limit(wanted: int) -> None:
        """Let this process hold ``wanted`` open files if the hard limit allows (the server's
        caps count on it; a default soft limit of 1,024 is less than its connection cap)."""
        import resource  # noqa: PLC0415 - not on Windows

        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            if soft != resource.RLIM_INFINITY and soft < target:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            log.info("cannot raise the open-file limit")


def write_server_file(path: Path, info: dict[str, Any]) -> None:
    """Write ``info`` to ``path`` readable by this user alone (0600 from creation on)."""
    write_private(path, orjson.dumps(info, option=orjson.OPT_INDENT_2) + b"\n")


def remove_server_file(path: Path, pid: int | None = None) -> None:
    """Remove ``path`` if it is ours (names ``pid``, by default this process)."""
    pid = os.getpid() if pid is None else pid
    try:
        info = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return
    if isinstance(info, dict) and info.get("pid") == pid:
        with contextlib.suppress(OSError):
            path.unlink()
