"""The loopback server's routes: a small JSON API, a WebSocket of state changes and the web UI's
static files (server thread; file reads and searches run in worker threads).

The API contract is ``docs/api.md``. Sessions are named by id, threads by the ids the API itself
hands out, items by the byte offset of their line: no request ever names a path. Every id is
checked against a strict pattern before it is looked up, and every file is read through
``AgentRoots`` (inside an agent's own folder, symlinks resolved).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson
from aiohttp import WSMsgType, web

from .. import jsonsafe, limits_text
from ..decisions import BookChange, change_json, request_json
from ..engine_messages import IndexProgress
from ..launch.task import TaskInfo
from ..listing import (
    SessionFilter,
    diagnostics,
    first_rows,
    listing,
    parse_since,
    parse_states,
    select,
)
from ..model import SessionKey, StateChange
from ..progress_text import progress_json
from ..remote.hosts import HostStatus, hosts_heard
from ..replay.export import MEDIA_TYPES, Format, Options, export, filename
from ..replay.model import MAIN_THREAD
from ..replay.pages import PAGE_ITEMS, NotFound
from ..search import DEFAULT_LIMIT, hits_json
from ..text import home_folder
from . import decision_routes, hook_routes, remote_routes, task_routes, window_routes
from .codes import DEFAULT_SECONDS, MAX_SECONDS
from .context import (
    CONTEXT,
    ID,
    AgentEntry,
    Context,
    Sessions,
    agent_param,
    context_of,
    find_session,
    json_array,
    session_json,
)
from .faults import quiet_library_logs
from .gate import Gate, GatedSite
from .replies import BadRequest, Refused, guarded, json_reply, read_object
from .search_params import search_filters
from .security import Guard, error

__all__ = [
    "CONTEXT", "AgentEntry", "Context", "Gate", "GatedSite", "Guard", "Sessions", "broadcast",
    "broadcast_decision", "broadcast_host", "broadcast_progress", "broadcast_task", "build_app",
    "quiet_library_logs", "web",
]  # fmt: skip

log = logging.getLogger(__name__)

API_VERSION = 1
_INLINE = re.compile(r"^inline:[0-9]{1,15}$")
MAX_OFFSET = 1 << 50
WS_QUEUE = 256  # messages waiting for one slow client before it is dropped
# The board's first message: the sessions that need you or run, and this many of the newest
# others (a page of its first sections, whatever the filters); the rest comes next.
BOARD_FIRST_ROWS = 300
EXPORT_CHUNK_BYTES = 256 * 1024
SPA_ROUTES = ("/", "/session/{tail:.*}", "/search", "/board")

T = TypeVar("T")


def build_app(ctx: Context, gate: Gate | None = None) -> web.Application:
    middlewares = [ctx.guard.middleware]
    if gate is not None:  # counted before the guard; bodies read once the guard let them in
        middlewares = [gate.middleware, ctx.guard.middleware, gate.read_body]
    app = web.Application(middlewares=middlewares, client_max_size=64 * 1024)
    app[CONTEXT] = ctx
    app.on_response_prepare.append(ctx.guard.on_response_prepare)
    app.on_shutdown.append(_close_clients)
    routes = [
        web.get("/api/health", health),
        web.get("/api/agents", agents),
        web.get("/api/limits", limits),
        web.get("/api/sessions", sessions),
        web.get("/api/sessions/{session_id}", session),
        web.get("/api/sessions/{session_id}/items", items),
        web.get("/api/sessions/{session_id}/items/{offset}/{index}", item),
        web.get("/api/sessions/{session_id}/export", download),
        web.get("/api/search", search),
        web.get("/api/events", events),
        web.post("/api/codes", new_code),
    ]
    routes += task_routes.routes(context_of)
    routes += decision_routes.routes(context_of)
    routes += hook_routes.routes(context_of)
    routes += remote_routes.routes()
    routes.append(web.get("/terminal/{task_id}", terminal_page))
    routes += [web.get(route, page) for route in SPA_ROUTES]
    app.add_routes(routes)
    window_routes.install(app, ctx.window)
    hook_routes.install(app, ctx.decisions)
    static = ctx.web_dir / "static"
    if static.is_dir():
        app.router.add_static("/static/", static, follow_symlinks=False)
    return app


async def _in_thread(func: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(None, func)


# -- parameters --------------------------------------------------------------------------------


def _digits(text: str) -> int | None:
    """``text`` as a number if it is up to 16 ASCII digits (``str.isdigit`` also takes "²"
    and "١", which ``int`` refuses or reads)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 16:
        return None
    return int(text)


def _int_param(request: web.Request, name: str, default: int | None = None) -> int | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    value = _digits(raw)
    if value is None or value > MAX_OFFSET:
        raise BadRequest(f"{name} must be a non-negative integer")
    return value


def _thread_param(request: web.Request) -> str:
    thread = request.query.get("thread") or MAIN_THREAD
    if thread == MAIN_THREAD or _INLINE.match(thread) or ID.match(thread):
        return thread
    raise BadRequest("no such thread")


async def _counts(ctx: Context) -> dict[SessionKey, dict[str, int]] | None:
    if ctx.searcher is None:
        return None
    searcher = ctx.searcher
    return await _in_thread(searcher.counts)


# -- handlers ----------------------------------------------------------------------------------


@guarded
async def agents(request: web.Request) -> web.Response:
    return json_reply({"agents": [entry.to_json() for entry in context_of(request).agents]})


@guarded
async def limits(request: web.Request) -> web.Response:
    ctx = context_of(request)
    windows, heard = ctx.engine.limits(), ctx.engine.limits_heard()
    hosts = () if ctx.hub is None else hosts_heard(ctx.hub.hosts())
    return json_reply(limits_text.to_json(windows, heard=heard, hosts=hosts))


@guarded
async def health(request: web.Request) -> web.Response:
    ctx = context_of(request)
    return json_reply(
        {
            "ok": True,
            "api": API_VERSION,
            "pid": os.getpid(),
            "ready": ctx.engine.ready.is_set(),
            "sessions": len(ctx.engine.sessions()),
            "home": home_folder() or None,  # pages write paths in it as ``~`` (``text.py``)
            "search": ctx.searcher is not None,
            "problems": [fault.to_json() for fault in ctx.engine.faults()],
            "progress": progress_json(ctx.engine.progress()),
        }
    )


@guarded
async def new_code(request: web.Request) -> web.Response:
    """A one-time code to open a page with (``/?code=CODE``): for clients that hold the token
    (the tray, ``agentbar window``, the CLI), not for pages (they have the cookie already)."""
    if not context_of(request).guard.by_token(request):
        raise Refused(403, "token_required", "only a client holding the token may ask for codes")
    body = await read_object(request)
    seconds = body.get("seconds", DEFAULT_SECONDS)
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not 1 <= seconds <= MAX_SECONDS
    ):
        raise BadRequest(f"seconds must be a number from 1 to {int(MAX_SECONDS)}")
    code = context_of(request).guard.codes.issue(float(seconds))
    return json_reply({"code": code, "seconds": seconds}, status=201)


@guarded
async def sessions(request: web.Request) -> web.Response:
    """The session list, filtered and paged like ``agentbar status`` (``listing``); ``total``
    counts the matches before ``limit`` and ``offset``."""
    ctx = context_of(request)
    now = time.time()
    show_all = request.query.get("all") in ("1", "true", "yes")
    where = _session_filter(request, now)
    limit = _int_param(request, "limit")
    if limit == 0:
        raise BadRequest("limit must be 1 or more")
    offset = _int_param(request, "offset", 0) or 0
    shown = listing(
        ctx.engine.sessions(), now=now, show_all=show_all, where=where, limit=limit, offset=offset
    )
    counts = await _counts(ctx)
    return json_reply(
        {
            "sessions": [session_json(s, counts) for s in shown.rows],
            "total": shown.total,
            "diagnostics": diagnostics(ctx.engine.stats()),
        }
    )


def _session_filter(request: web.Request, now: float) -> SessionFilter:
    """``?project=&agent=&state=a,b&since=&host=`` as a filter; a bad value is a 400 that
    says what is accepted."""
    query = request.query
    try:
        states = parse_states(query["state"]) if query.get("state") else None
        since = parse_since(query["since"], now=now) if query.get("since") else None
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    agent = agent_param(request)
    return SessionFilter(
        project=query.get("project") or None,
        agent=None if agent is None else str(agent),
        states=states,
        since=since,
        host=query.get("host") or None,
    )


@guarded
async def session(request: web.Request) -> web.Response:
    ctx = context_of(request)
    snap = find_session(request)
    doc = session_json(snap, await _counts(ctx))
    if remote_routes.is_remote(snap):
        doc["counts"] = None  # the far side's index counts its own
        infos: list[dict[str, Any]] = await remote_routes.call(ctx, snap, "threads", {})
    else:
        threads = await _in_thread(lambda: ctx.replay.threads(snap))
        infos = [t.to_json() for t in threads]
    # The CLI's own helpers (the compaction summary, cache warm-ups) are no sub-agents.
    doc["thread_info"] = [t for t in infos if not t.get("helper")]
    doc["helper_threads"] = [t for t in infos if t.get("helper")]
    return json_reply({"session": doc})


@guarded
async def items(request: web.Request) -> web.Response:
    ctx = context_of(request)
    snap = find_session(request)
    thread = _thread_param(request)
    before = _int_param(request, "before")
    after = _int_param(request, "after")
    if before is not None and after is not None:
        raise BadRequest("give before or after, not both")
    limit = _int_param(request, "limit", PAGE_ITEMS) or PAGE_ITEMS
    if remote_routes.is_remote(snap):
        args = {"thread": thread, "before": before, "after": after, "limit": limit}
        doc = await remote_routes.call(ctx, snap, "page", args)
    else:
        page = await _in_thread(
            lambda: ctx.replay.page(snap, thread, before=before, after=after, limit=limit)
        )
        doc = page.to_json()
    doc["agent"], doc["session_id"] = str(snap.key.agent), snap.key.session_id
    doc["host"] = snap.key.host
    return json_reply(doc)


@guarded
async def item(request: web.Request) -> web.Response:
    ctx = context_of(request)
    snap = find_session(request)
    thread = _thread_param(request)
    offset = _digits(request.match_info["offset"])
    index = _digits(request.match_info["index"])
    if offset is None or index is None:
        raise NotFound("no such item")
    if remote_routes.is_remote(snap):
        args = {"thread": thread, "offset": offset, "index": index}
        doc = await remote_routes.call(ctx, snap, "item", args)
        return json_reply({"thread": thread, "item": doc})
    found = await _in_thread(lambda: ctx.replay.item(snap, thread, offset, index))
    return json_reply({"thread": thread, "item": found.to_json()})


@guarded
async def search(request: web.Request) -> web.Response:
    ctx = context_of(request)
    if ctx.searcher is None:
        return error(503, "no_search", "search is not available (no index)")
    text = request.query.get("q", "")
    limit = _int_param(request, "limit", DEFAULT_LIMIT) or DEFAULT_LIMIT
    agent = agent_param(request)
    session_id = request.query.get("session") or None
    if session_id is not None and not ID.match(session_id):
        raise BadRequest("no such session")
    snapshots = ctx.engine.sessions()
    filters = search_filters(request.query, snapshots, now=time.time())
    searcher = ctx.searcher
    hits = await _in_thread(
        lambda: searcher.search(
            text,
            limit=limit,
            agent=agent,
            session_id=session_id,
            since=filters.since,
            sessions=filters.sessions,
        )
    )
    results = hits_json(hits, snapshots)
    if session_id is None and request.query.get("host") != "local":  # and the remotes' hits
        results += await remote_routes.search(ctx, text, limit, agent)
    return json_reply({"query": text, "hits": results})


@guarded
async def download(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    snap = find_session(request)
    try:
        fmt = Format(request.query.get("format", "md"))
    except ValueError:
        raise BadRequest("format must be md, json or html") from None
    options = Options(
        thinking=request.query.get("thinking", "1") not in ("0", "false", "no"),
        notes=request.query.get("notes", "0") in ("1", "true", "yes"),
    )
    if remote_routes.is_remote(snap):
        args = {"format": str(fmt), "thinking": options.thinking, "notes": options.notes}
        chunks = remote_routes.export_chunks(ctx, snap, args)
    else:
        chunks = export(ctx.replay, snap, fmt, options)
    first = await _in_thread(lambda: _take(chunks))  # fails here, before headers, if unreadable
    response = web.StreamResponse(
        headers={
            "Content-Type": MEDIA_TYPES[fmt],
            "Content-Disposition": f'attachment; filename="{filename(snap, fmt)}"',
        }
    )
    await response.prepare(request)
    while first:
        await response.write(first)
        first = await _in_thread(lambda: _take(chunks))
    await response.write_eof()
    return response


def _take(chunks: Iterator[str]) -> bytes:
    """The next ~256 KB of an export (empty at its end)."""
    parts: list[str] = []
    size = 0
    for chunk in chunks:
        parts.append(chunk)
        size += len(chunk)
        if size >= EXPORT_CHUNK_BYTES:
            break
    return "".join(parts).encode()


async def page(request: web.Request) -> web.StreamResponse:
    return _html(context_of(request).web_dir / "index.html")


async def terminal_page(request: web.Request) -> web.StreamResponse:
    """A launched task's live terminal: a document of its own (its CSP differs)."""
    return _html(context_of(request).web_dir / "terminal.html")


def _html(path: Path) -> web.StreamResponse:
    if not path.is_file():
        return error(404, "not_found", "the web UI is not installed")
    return web.FileResponse(path, headers={"Content-Type": "text/html; charset=utf-8"})


# -- the WebSocket -----------------------------------------------------------------------------


async def events(request: web.Request) -> web.StreamResponse:
    """Sends the sessions (and how far the first reading has come) on connect, then every
    state change and every step of that reading as it happens."""
    ctx = context_of(request)
    # Not compressed: over loopback deflating the first message (megabytes at 10,000 sessions)
    # costs both ends more than sending it.
    ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=64 * 1024, compress=False)
    await ws.prepare(request)
    queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=WS_QUEUE)
    ctx.clients.add(queue)
    try:
        rows = select(ctx.engine.sessions(), now=time.time(), show_all=True)
        board = request.query.get("view") == "board"
        encoded = (ctx.encoded_board if board else ctx.encoded).rows_of(rows)
        # The board's first message holds what it draws first; the rest follows at once.
        first, rest = first_rows(rows, BOARD_FIRST_ROWS) if board else (rows, [])
        others: dict[str, Any] = {"rest": True} if rest else {}
        others |= {
            "progress": progress_json(ctx.engine.progress()),
            "decisions": []
            if ctx.decisions is None
            else [request_json(r) for r in ctx.decisions.pending()],
            "hosts": [] if ctx.hub is None else [h.to_json() for h in ctx.hub.hosts()],
        }
        hello = b'{"type":"sessions","sessions":' + json_array(encoded, first) + b","
        await ws.send_str((hello + jsonsafe.dumps(others)[1:]).decode())
        if rest:
            tail = b'{"type":"sessions_rest","sessions":' + json_array(encoded, rest) + b"}"
            await ws.send_str(tail.decode())
        sender = asyncio.create_task(_send_all(ws, queue))
        async for message in ws:
            if message.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                break  # the client's messages are not commands: they are ignored
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender
    finally:
        ctx.clients.discard(queue)
    return ws


async def _send_all(ws: web.WebSocketResponse, queue: asyncio.Queue[bytes | None]) -> None:
    while True:
        message = await queue.get()
        if message is None:
            await ws.close()
            return
        await ws.send_str(message.decode())


def broadcast(ctx: Context, change: StateChange) -> None:
    """On the server's loop: queue one state change for every client."""
    message = jsonsafe.dumps(
        {
            "type": "change",
            "change": change.to_json(),
            "session": session_json(change.snapshot, None),
        }
    )
    _fan_out(ctx, message)


def broadcast_progress(ctx: Context, progress: IndexProgress) -> None:
    """On the server's loop: queue a step of the first reading for every client (the engine
    publishes a few a second at most)."""
    _fan_out(ctx, orjson.dumps({"type": "progress", "progress": progress_json(progress)}))


def broadcast_decision(ctx: Context, change: BookChange) -> None:
    """On the server's loop: queue a request opened or closed in the decision book."""
    _fan_out(ctx, jsonsafe.dumps(change_json(change)))


def broadcast_host(ctx: Context, status: HostStatus) -> None:
    """On the server's loop: queue a remote host's new status (connected, unreachable)."""
    _fan_out(ctx, orjson.dumps({"type": "host", "host": status.to_json()}))


def broadcast_task(ctx: Context, info: TaskInfo) -> None:
    """On the server's loop: queue a launched task's change for every client."""
    sessions = {s.key: s for s in ctx.engine.sessions()}
    message = orjson.dumps({"type": "task", "task": task_routes.task_json(info, sessions)})
    _fan_out(ctx, message)


def _fan_out(ctx: Context, message: bytes) -> None:
    """A client too slow to keep up is disconnected rather than buffered without end."""
    for queue in list(ctx.clients):
        try:
            queue.put_nowait(message)
        except asyncio.QueueFull:
            ctx.clients.discard(queue)
            with contextlib.suppress(asyncio.QueueEmpty):
                while True:
                    queue.get_nowait()
            queue.put_nowait(None)


async def _close_clients(app: web.Application) -> None:
    for queue in list(app[CONTEXT].clients):
        with contextlib.suppress(asyncio.QueueFull):
            queue.put_nowait(None)
