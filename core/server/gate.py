"""The server's door: every connection is checked once, when it opens, before any byte of it
reaches a route; then it is counted and timed (server thread: the asyncio loop).

- **Only this user.** The peer's socket must belong to a process of the user the server runs
  as (``peers.py``); anyone else gets a short ``403`` and the connection is closed.
- **Caps.** One process holds at most ``per_client`` connections: past that a connection gets
  a short ``429`` and is closed at once. Which process holds a socket is looked up only once
  the server is crowded (``per_client`` connections open) and from a map rebuilt at most
  a few times a second (``peers.py``), so a socket too new for the map counts for its user
  alone. All clients together hold at most ``total``: a connection past it takes the place of
  the oldest one that has not sent a request yet (a client that connects to do something
  gets answered, one that only holds sockets open loses them); when every connection is busy
  the newcomer gets the ``429``. So a process flooding the server with idle connections
  locks neither the tray, the window nor the CLI out.
- **Timeouts.** A connection that has not finished its first request's headers within
  ``header_seconds`` is closed, and so is one idle for ``idle_seconds`` between requests.
  A request's body must arrive within ``body_seconds`` (``read_body``: a 408 else). A request
  in progress (a WebSocket, a download) is never cut.

The gate is an asyncio protocol in front of aiohttp's own: it forwards everything once the
connection is let in, and sees it close. Its middleware marks the requests a connection is
serving, so the janitor knows which connections are idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .faults import FaultLog
from .peers import Address, Peer, PeerOwners
from .security import error

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

LINGER_SECONDS = 0.5  # a refused peer has this long to read its answer before the close
MAX_LINGERING = 64  # past this many refused connections waiting, close at once
JANITOR_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class Limits:
    header_seconds: float = 5.0
    idle_seconds: float = 30.0
    body_seconds: float = 10.0
    per_client: int = 64
    total: int = 512


def refusal(status: int, reason: str, code: str, message: str) -> bytes:
    body = f'{{"error": {{"code": "{code}", "message": "{message}"}}}}'.encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
    ).encode()
    return head + body


FOREIGN = refusal(403, "Forbidden", "not_your_server", "this server answers its own user only")
TOO_MANY = refusal(429, "Too Many Requests", "too_many_connections", "too many connections")


@dataclass(slots=True)
class Open:
    """One admitted connection."""

    transport: asyncio.Transport
    client: str
    opened: float
    busy: int = 0
    requests: int = 0
    last: float = field(default=0.0)


@dataclass(frozen=True, slots=True)
class Verdict:
    admitted: bool
    client: str = ""
    answer: bytes = b""
    kind: str = ""


class Gate:
    def __init__(
        self,
        peers: PeerOwners,
        limits: Limits | None = None,
        *,
        faults: FaultLog | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.peers = peers
        self.limits = limits or Limits()
        self.faults = faults or FaultLog(log)
        self.clock = clock
        self.open: dict[asyncio.BaseTransport, Open] = {}
        self.per_client: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()  # by kind, since the start
        self._lingering = 0

    # -- the decision (pure but for the peer lookup) ---------------------------------------------

    def judge(self, peer: Address, local: Address) -> Verdict:
        limits = self.limits
        crowded = len(self.open) >= limits.per_client
        try:
            owner: Peer = self.peers.owner(peer, local, want_pid=crowded)
        except Exception as exc:  # a table we could not read: nobody we know
            self.faults.note("peer_lookup", f"cannot tell who owns {peer}: {exc!r}")
            owner = Peer(same_user=False)
        if not owner.same_user:
            return Verdict(False, answer=FOREIGN, kind="foreign")
        client = owner.client
        if owner.pid is not None and self.per_client[client] >= limits.per_client:
            return Verdict(False, client, TOO_MANY, "client_cap")
        if len(self.open) >= limits.total and self.oldest_unused() is None:
            return Verdict(False, client, TOO_MANY, "total_cap")
        return Verdict(True, client)

    def oldest_unused(self) -> Open | None:
        """The connection that has waited longest without sending a request (dicts keep
        their order: the first found is the oldest)."""
        for record in self.open.values():
            if record.requests == 0 and not record.busy:
                return record
        return None

    # -- the protocol ----------------------------------------------------------------------------

    def factory(self, inner: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        return lambda: _Gated(self, inner)

    def admit(self, transport: asyncio.Transport) -> Verdict:
        peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        if not (isinstance(peer, tuple) and isinstance(local, tuple)):
            verdict = Verdict(False, answer=FOREIGN, kind="foreign")
        else:
            verdict = self.judge((str(peer[0]), int(peer[1])), (str(local[0]), int(local[1])))
        if verdict.admitted:
            if len(self.open) >= self.limits.total:
                self._evict()
            now = self.clock()
            self.open[transport] = Open(transport, verdict.client, opened=now, last=now)
            self.per_client[verdict.client] += 1
        else:
            self.refused[verdict.kind] += 1
            self.faults.note(
                f"refused_{verdict.kind}", f"refused a connection from {peer}: {verdict.kind}"
            )
        return verdict

    def _evict(self) -> None:
        victim = self.oldest_unused()
        if victim is not None:
            self.refused["evicted"] += 1
            self.faults.note("evicted", "too many connections: closed the oldest unused one")
            victim.transport.abort()
            self.closed(victim.transport)

    def closed(self, transport: asyncio.BaseTransport) -> None:
        record = self.open.pop(transport, None)
        if record is not None:
            self.per_client[record.client] -= 1
            if self.per_client[record.client] <= 0:
                del self.per_client[record.client]

    def refuse(self, transport: asyncio.Transport, answer: bytes) -> bool:
        """Write ``answer`` and close; True when the connection lingers to let the peer read
        it (its further bytes are dropped)."""
        with contextlib.suppress(Exception):
            transport.write(answer)
        if self._lingering >= MAX_LINGERING:
            transport.close()
            return False
        self._lingering += 1
        with contextlib.suppress(Exception):
            transport.write_eof()
        asyncio.get_running_loop().call_later(LINGER_SECONDS, self._end_linger, transport)
        return True

    def _end_linger(self, transport: asyncio.Transport) -> None:
        self._lingering -= 1
        transport.close()

    # -- requests and the janitor ----------------------------------------------------------------

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        record = self.open.get(request.transport) if request.transport is not None else None
        if record is None:
            return await handler(request)
        record.busy += 1
        record.requests += 1
        try:
            return await handler(request)
        finally:
            record.busy -= 1
            record.last = self.clock()

    @web.middleware
    async def read_body(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The body read before the route runs (aiohttp keeps it for the route's own read),
        within ``body_seconds``: a client that promises more than it sends is answered."""
        if request.body_exists:
            try:
                await asyncio.wait_for(request.read(), self.limits.body_seconds)
            except TimeoutError:
                self.refused["body_timeout"] += 1
                return error(408, "body_timeout", "the request's body did not arrive in time")
        return await handler(request)

    def stale(self) -> list[Open]:
        """The connections past their header or idle time."""
        now, limits = self.clock(), self.limits
        found = []
        for record in self.open.values():
            if record.busy:
                continue
            waited = now - (record.last if record.requests else record.opened)
            if waited > (limits.idle_seconds if record.requests else limits.header_seconds):
                found.append(record)
        return found

    async def janitor(self) -> None:
        while True:
            await asyncio.sleep(JANITOR_SECONDS)
            for record in self.stale():
                kind = "header_timeout" if record.requests == 0 else "idle_timeout"
                self.refused[kind] += 1
                record.transport.abort()
                self.closed(record.transport)

    def stats(self) -> dict[str, Any]:
        return {"open": len(self.open), "clients": len(self.per_client), **self.refused}


class _Gated(asyncio.Protocol):
    """aiohttp's protocol behind the gate: made only for a connection let in."""

    def __init__(self, gate: Gate, inner: Callable[[], asyncio.Protocol]) -> None:
        self.gate = gate
        self.make_inner = inner
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        verdict = self.gate.admit(transport)
        if not verdict.admitted:
            self.gate.refuse(transport, verdict.answer)
            return
        self.inner = self.make_inner()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.inner is not None:
            return self.inner.eof_received()
        if self.transport is not None:
            self.transport.close()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.gate.closed(self.transport)
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()


class GatedSite(web.BaseSite):
    """aiohttp's ``SockSite`` with the gate in front of every connection."""

    __slots__ = ("_gate", "_sock")

    def __init__(self, runner: web.BaseRunner, sock: Any, gate: Gate) -> None:
        super().__init__(runner, backlog=1024)
        self._sock = sock
        self._gate = gate

    @property
    def name(self) -> str:
        host, port = self._sock.getsockname()[:2]
        return f"http://{host}:{port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._gate.factory(server), sock=self._sock, backlog=self._backlog
        )
