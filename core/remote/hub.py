"""All the configured remotes together: their links, their sessions merged with this machine's,
their pending requests mirrored into this machine's decision book (any thread; each link runs
its own, and its listeners here are called on it).

``Everywhere`` is the view the front ends read: the local engine's sessions and the remotes',
one subscription for the changes of both. A remote request is opened in the local book under an
id of the book's own; the person's answer is forwarded through the channel to the far side's
book, which refuses one no longer open there (and its withdrawal withdraws the copy here).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..decisions import BookChange, DecisionBook, new_request_id
from ..limits import LimitWindow
from ..model import SessionSnapshot, StateChange
from .host_tasks import HostTask
from .hosts import HostState, HostStatus
from .link import CALL_SECONDS, Link, RemoteError, Spawn, spawn
from .remotes import Remote
from .wire import WireError, request_from_wire

if TYPE_CHECKING:
    from ..engine import Engine
    from ..engine_messages import EngineStats, IndexProgress
    from ..errors import Fault

log = logging.getLogger(__name__)


class Hub:
    def __init__(
        self, remotes: Sequence[Remote], decisions: DecisionBook, *, spawner: Spawn = spawn
    ) -> None:
        self.links = {remote.name: Link(remote, self, spawner=spawner) for remote in remotes}
        self.mirror = DecisionMirror(decisions, self)
        self._lock = threading.Lock()
        self._listeners: list[Callable[[StateChange], None]] = []
        self._host_listeners: list[Callable[[HostStatus], None]] = []
        self._started = False

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        for link in self.links.values():
            link.start()

    def wait_settled(self, timeout: float) -> None:
        """Wait until every host is connected with its list read, or found unreachable once
        (or ``timeout`` passed): what a one-shot command shows."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
            link.status().state is HostState.CONNECTING for link in self.links.values()
        ):
            time.sleep(0.05)

    def stop(self) -> None:
        for link in self.links.values():
            link.stop()
        self.mirror.close()

    # -- values ------------------------------------------------------------------------------

    def sessions(self) -> list[SessionSnapshot]:
        return [snap for link in self.links.values() for snap in link.sessions()]

    def hosts(self) -> tuple[HostStatus, ...]:
        found = []
        for link in self.links.values():
            status = link.status()
            count = len(link.sessions())
            if status.sessions != count:
                status = replace(status, sessions=count)
            found.append(status)
        return tuple(found)

    def limits(self) -> tuple[LimitWindow, ...]:
        """Each host's usage windows as last sent, host by host (a host not connected now:
        ``stale``, its last known). Never merged with this machine's or each other's."""
        found: list[LimitWindow] = []
        for link in self.links.values():
            stale = not link.connected
            found += (replace(w, stale=True) if stale else w for w in link.limits())
        return tuple(found)

    def tasks(self) -> tuple[HostTask, ...]:
        """The tasks each connected host's agentbar runs, as last sent, host by host (a host
        not connected: none)."""
        return tuple(task for link in self.links.values() for task in link.tasks())

    def call(self, host: str, op: str, args: dict[str, Any], timeout: float = CALL_SECONDS) -> Any:
        """The far side's answer to one call on ``host`` (``RemoteError`` when it cannot be
        had: no such host, not connected, refused there, too slow)."""
        return self.link(host).call(op, args, timeout)

    def link(self, host: str) -> Link:
        found = self.links.get(host)
        if found is None:
            raise RemoteError(f"no remote named {host!r}", "not_found")
        return found

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]:
        return _add(self._lock, self._listeners, callback)

    def subscribe_hosts(self, callback: Callable[[HostStatus], None]) -> Callable[[], None]:
        """``callback`` hears a host's status change (on its link's thread)."""
        return _add(self._lock, self._host_listeners, callback)

    # -- the links' listener (their threads) -------------------------------------------------

    def changed(self, change: StateChange) -> None:
        _tell(self._lock, self._listeners, change)

    def status(self, status: HostStatus) -> None:
        if status.state is HostState.UNREACHABLE:
            self.mirror.lost(status.name)
        _tell(self._lock, self._host_listeners, status)

    def decisions(self, host: str, requests: list[dict[str, Any]]) -> None:
        self.mirror.listed(host, requests)

    def decision(self, host: str, frame: dict[str, Any]) -> None:
        self.mirror.changed(host, frame)


class DecisionMirror:
    """The far sides' open requests, each open in the local book too while it is open there."""

    def __init__(self, book: DecisionBook, hub: Hub) -> None:
        self._book = book
        self._hub = hub
        self._lock = threading.Lock()
        self._local: dict[str, tuple[str, str]] = {}  # local id -> (host, far id)
        self._far: dict[tuple[str, str], str] = {}  # (host, far id) -> local id
        self._unsubscribe = book.subscribe(self._on_book)

    def close(self) -> None:
        self._unsubscribe()

    def listed(self, host: str, requests: list[dict[str, Any]]) -> None:
        """The far side's open requests after a (re)connect: the ones still open stay as they
        are (not opened twice), the ones gone are withdrawn, the new ones opened."""
        open_there = {str(doc.get("request_id")): doc for doc in requests if isinstance(doc, dict)}
        # (After a reconnect to the same far side, its requests kept open here stay as they are.)
        with self._lock:
            ours = {far: local for (h, far), local in self._far.items() if h == host}
        for far, local in ours.items():
            if far not in open_there:
                self._book.withdraw(local, f"no longer waiting on {host}")
        for far, doc in open_there.items():
            if far not in ours:
                self._open(host, doc)

    def lost(self, host: str) -> None:
        """``host`` is unreachable: an answer could not reach it, so its requests are withdrawn
        here (one still waiting there is opened again once it is back)."""
        with self._lock:
            ours = [local for (h, _far), local in self._far.items() if h == host]
        for local in ours:
            self._book.withdraw(local, f"{host} is unreachable")

    def changed(self, host: str, frame: dict[str, Any]) -> None:
        doc = frame.get("request")
        if not isinstance(doc, dict):
            return
        far = str(doc.get("request_id"))
        if frame.get("opened"):
            self._open(host, doc)
            return
        with self._lock:
            local = self._far.get((host, far))
        if local is not None:
            how = frame.get("reason") or f"answered on {host}"
            self._book.withdraw(local, str(how))

    def _open(self, host: str, doc: dict[str, Any]) -> None:
        far = str(doc.get("request_id"))
        local = new_request_id()
        try:
            request = request_from_wire(doc, host, local)
        except WireError as exc:
            log.warning("remote %s: %s", host, exc)
            return
        with self._lock:
            if (host, far) in self._far:
                return
            self._far[(host, far)] = local
            self._local[local] = (host, far)
        self._book.open(request)

    def _on_book(self, change: BookChange) -> None:
        """A mirrored request closed here: forward the person's answer to its host."""
        if change.opened:
            return
        with self._lock:
            where = self._local.pop(change.request.request_id, None)
            if where is not None:
                self._far.pop(where, None)
        decision = change.decision
        if where is None or decision is None:
            return
        host, far = where
        args = {"request_id": far, "verdict": str(decision.verdict), "origin": decision.origin,
                "message": decision.message, "replies": list(decision.replies)}  # fmt: skip
        threading.Thread(target=self._forward, args=(host, args), daemon=True,
                         name="agentbar-remote-answer").start()  # fmt: skip

    def _forward(self, host: str, args: dict[str, Any]) -> None:
        try:
            self._hub.link(host).call("decide", args)
            log.info("answer to %s's request %s delivered", host, args["request_id"])
        except RemoteError as exc:
            log.warning("answer to %s's request %s not delivered: %s", host,
                        args["request_id"], exc)  # fmt: skip


class Everywhere:
    """This machine's engine and the remotes as one source of sessions (what the tray, the
    server and the CLI read)."""

    def __init__(self, engine: Engine, hub: Hub | None) -> None:
        self.engine = engine
        self.hub = hub
        self.ready = engine.ready
        self.live_ready = engine.live_ready

    def sessions(self) -> list[SessionSnapshot]:
        local = self.engine.sessions()
        return local if self.hub is None else local + self.hub.sessions()

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]:
        local = self.engine.subscribe(callback)
        if self.hub is None:
            return local
        remote = self.hub.subscribe(callback)

        def unsubscribe() -> None:
            local()
            remote()

        return unsubscribe

    def hosts(self) -> tuple[HostStatus, ...]:
        return () if self.hub is None else self.hub.hosts()

    def stats(self) -> EngineStats:
        return self.engine.stats()

    def limits(self) -> tuple[LimitWindow, ...]:
        """This machine's windows, then each remote host's (``host`` names it)."""
        local = self.engine.limits()
        return local if self.hub is None else local + self.hub.limits()

    def limits_heard(self) -> frozenset[str]:
        return self.engine.limits_heard()

    def faults(self) -> tuple[Fault, ...]:
        return self.engine.faults()

    def progress(self) -> IndexProgress:
        return self.engine.progress()

    def subscribe_progress(self, callback: Callable[[IndexProgress], None]) -> Callable[[], None]:
        return self.engine.subscribe_progress(callback)


def _add(lock: threading.Lock, listeners: list[Any], callback: Any) -> Callable[[], None]:
    with lock:
        listeners.append(callback)

    def unsubscribe() -> None:
        with lock, contextlib.suppress(ValueError):
            listeners.remove(callback)

    return unsubscribe


def _tell(lock: threading.Lock, listeners: list[Any], value: object) -> None:
    with lock:
        targets = list(listeners)
    for listener in targets:
        try:
            listener(value)
        except Exception:
            log.exception("a remote listener failed")
