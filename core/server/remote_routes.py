"""The routes' side of remote hosts: ``GET /api/hosts``, and a remote session's replay, search
and export asked through its channel, page by page (server thread; each call waits in a worker
thread).

Only a session the hub lists is ever asked about, by its host's name and its id: no request
names a host's command, and nothing in a request reaches the far side but ids, offsets and the
words of a search.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from aiohttp import web

from ..model import LOCAL_HOST, SessionSnapshot
from ..remote.link import RemoteError
from .context import Context, context_of
from .replies import Refused, guarded, json_reply

T = TypeVar("T")

# A failed call's kind (the far side's, or the link's own) as the API's status and code.
_REFUSALS = {
    "not_found": (404, "not_found"),
    "unreachable": (503, "host_unreachable"),
    "timeout": (504, "host_timeout"),
    "bad": (400, "bad"),
    "stale": (409, "stale"),
    "already_running": (409, "already_running"),
    "not_running": (409, "not_running"),
    "not_waiting": (409, "not_waiting"),
    "bad_launch": (400, "bad_launch"),
    "nothing_to_hand_off": (409, "nothing_to_hand_off"),
    "no_tasks": (503, "no_tasks"),
    "unsupported": (501, "not_supported"),
}


def routes() -> list[web.RouteDef]:
    return [web.get("/api/hosts", hosts)]


@guarded
async def hosts(request: web.Request) -> web.Response:
    hub = context_of(request).hub
    found = () if hub is None else hub.hosts()
    return json_reply({"hosts": [status.to_json() for status in found]})


def is_remote(snap: SessionSnapshot) -> bool:
    return snap.key.host != LOCAL_HOST


def refused(exc: RemoteError) -> Refused:
    """A failed call as the API's error (a host down is a 503, not a 500)."""
    if exc.older_far_side:
        return Refused(501, "not_supported", f"{exc}: the agentbar there is older than this "
                       "one; install the same version on both")  # fmt: skip
    status, code = _REFUSALS.get(exc.kind, (502, "host_failed"))
    return Refused(status, code, str(exc))


async def call(ctx: Context, snap: SessionSnapshot, op: str, args: dict[str, Any]) -> Any:
    """``op`` asked of ``snap``'s host about ``snap`` (``args`` beside its ids)."""
    if ctx.hub is None:
        raise Refused(404, "not_found", "no such session")
    link = ctx.hub.link(snap.key.host)
    full = {"agent": str(snap.key.agent), "id": snap.key.session_id, **args}
    return await _in_thread(lambda: _called(lambda: link.call(op, full)))


async def search(ctx: Context, text: str, limit: int, agent: str | None) -> list[dict[str, Any]]:
    """Every connected host's hits for ``text`` (each naming its host); a host that cannot
    answer is left out."""
    if ctx.hub is None:
        return []
    args: dict[str, Any] = {"q": text, "limit": limit, "agent": agent}
    found: list[dict[str, Any]] = []
    for link in ctx.hub.links.values():
        if not link.connected:
            continue
        try:
            hits = await _in_thread(functools.partial(link.call, "search", args))
        except RemoteError:
            continue
        for hit in hits if isinstance(hits, list) else ():
            if isinstance(hit, dict):
                found.append({**hit, "host": link.name})
    return found


def export_chunks(ctx: Context, snap: SessionSnapshot, args: dict[str, Any]) -> Iterator[str]:
    """An export made on the far side, in chunks as they come (read in a worker thread)."""
    if ctx.hub is None:
        raise Refused(404, "not_found", "no such session")
    link = ctx.hub.link(snap.key.host)
    full = {"agent": str(snap.key.agent), "id": snap.key.session_id, **args}
    try:
        yield from link.stream("export", full)
    except RemoteError as exc:
        raise refused(exc) from None


def _called(func: Callable[[], T]) -> T:
    try:
        return func()
    except RemoteError as exc:
        raise refused(exc) from None


async def _in_thread(func: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(None, func)
