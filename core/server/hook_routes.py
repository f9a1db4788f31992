"""The hook route's door in the loopback server: an agent's hook program hands agentbar a
request it holds (a ``PermissionRequest``) and waits on the response for the person's answer
(server thread: the asyncio loop; the book's calls are quick and never block).

``POST /api/hook/requests`` ``{agent, event, pid, payload}`` (the token required, not the
cookie: only a program that read ``server.json`` may open requests). The agent's kit reads the
payload (``HookDecisions.held_request``); a payload that holds nothing agentbar may answer gets
an empty answer at once. Otherwise a HOOK request is opened in the decision book, and the
response is held until the request closes: answered (the body is the kit's ``reply``, which the
hook prints verbatim) or withdrawn (an empty body: no decision). The hook going away (the agent
took the terminal's answer and ended it, or it timed out) withdraws the request. A later request
of the same session and thread supersedes an earlier one. Nothing here ever answers on its own:
an empty body is always "no decision", and the terminal's own prompt stays in charge.

The connection gate never cuts a held request (it is busy), and one hook is one client, so
held hooks do not crowd the window's or the CLI's connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from aiohttp import web

from ..agents.base import HeldRequest, HookDecisions
from ..decisions import (
    BookChange,
    Decision,
    DecisionBook,
    PendingRequest,
    Route,
    new_request_id,
)
from ..model import Agent
from .context import Context
from .replies import BadRequest, Refused, guarded, read_object

log = logging.getLogger("agentbar.decisions.hook")

PATH = "/api/hook/requests"
MAX_HELD = 64  # open hook requests at once; past this a hook gets no decision at once
DISCONNECT_POLL_SECONDS = 0.2  # how often a held response checks that its hook is still there
MAX_EVENT_CHARS = 64
GONE = "the hook went away (answered in the terminal, or it timed out)"
SUPERSEDED = "a newer request of the same session took its place"
STOPPING = "agentbar is stopping"


@dataclass(frozen=True, slots=True)
class _Asked:
    """A hook's request, as its body says."""

    agent: Agent
    event: str
    pid: int | None
    payload: Mapping[str, object]


def routes(ctx_of: Callable[[web.Request], Context]) -> list[web.RouteDef]:
    async def hold(request: web.Request) -> web.StreamResponse:
        ctx = ctx_of(request)
        if not ctx.guard.by_token(request):
            raise Refused(403, "token_required", "only a hook holding the token may ask")
        book = ctx.decisions
        if book is None:
            raise Refused(404, "no_decisions", "this server holds no decisions")
        asked = _asked(await read_object(request), ctx.deciders)
        kit = ctx.deciders[asked.agent]
        held = _held(kit, asked)
        if held is None or len(book.pending()) >= MAX_HELD:
            return _answer("")
        pending = _open(book, asked, held)
        decision = await _wait(book, pending, request)
        if decision is None:
            return _answer("")
        try:
            text = kit.reply(asked.payload, decision)
        except Exception:  # a kit's bug must not become a decision
            log.exception("could not put the answer to request %s in %s's words",
                          pending.request_id, asked.agent)  # fmt: skip
            text = ""
        if _gone(request):  # answered in the moment the hook left: it never reaches the agent
            log.warning("request %s: the answer %s was not delivered: %s's hook had gone",
                        pending.request_id, decision.verdict, asked.agent)  # fmt: skip
        else:
            log.info("request %s: %s sent to %s's hook (pid %s, session %s)",
                     pending.request_id, decision.verdict if text else "no decision",
                     asked.agent, asked.pid, pending.session_id)  # fmt: skip
        return _answer(text)

    return [web.post(PATH, guarded(hold))]


def install(app: web.Application, book: DecisionBook | None) -> None:
    """Withdraw the held hook requests when the server stops, so their responses end (empty)
    at once instead of holding the shutdown."""

    async def withdraw_all(_: web.Application) -> None:
        if book is None:
            return
        for pending in book.pending():
            if pending.route is Route.HOOK:
                book.withdraw(pending.request_id, STOPPING)

    app.on_shutdown.append(withdraw_all)


def _asked(body: Mapping[str, object], deciders: Mapping[Agent, HookDecisions]) -> _Asked:
    agent, event = body.get("agent"), body.get("event")
    pid, payload = body.get("pid"), body.get("payload")
    if not isinstance(agent, str) or Agent(agent) not in deciders:
        raise BadRequest("agent must be an agent whose hooks can hold a request")
    if not isinstance(event, str) or not 0 < len(event) <= MAX_EVENT_CHARS:
        raise BadRequest("event must be a hook event's name")
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0):
        raise BadRequest("pid must be a process id or null")
    if not isinstance(payload, dict):
        raise BadRequest("payload must be the hook's JSON object")
    return _Asked(Agent(agent), event, pid, payload)


def _held(kit: HookDecisions, asked: _Asked) -> HeldRequest | None:
    try:
        return kit.held_request(asked.event, asked.payload)
    except Exception:  # a kit must never raise here; if it does, no request
        log.exception("%s's kit failed on a %s payload", asked.agent, asked.event)
        return None


def _open(book: DecisionBook, asked: _Asked, held: HeldRequest) -> PendingRequest:
    for older in book.for_session(held.session_id):
        if older.route is Route.HOOK and older.agent == asked.agent:
            book.withdraw(older.request_id, SUPERSEDED)
    pending = PendingRequest(
        request_id=new_request_id(),
        agent=str(asked.agent),
        session_id=held.session_id,
        kind=held.kind,
        route=Route.HOOK,
        tool=held.tool,
        summary=held.summary,
        opened_at=time.time(),
        always_rule=held.always_rule,
        questions=held.questions,
    )
    book.open(pending)
    log.info("request %s held by %s's hook (pid %s) for session %s: %s %s", pending.request_id,
             asked.agent, asked.pid, held.session_id, held.tool, held.summary)  # fmt: skip
    return pending


async def _wait(
    book: DecisionBook, pending: PendingRequest, request: web.Request
) -> Decision | None:
    """The answer to ``pending`` once it closes; None when it was withdrawn, or the hook went
    away first (then it is withdrawn here)."""
    loop = asyncio.get_running_loop()
    closed: asyncio.Future[Decision | None] = loop.create_future()

    def heard(change: BookChange) -> None:  # any thread
        if change.request.request_id == pending.request_id and not change.opened:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(_settle, closed, change.decision)

    unsubscribe = book.subscribe(heard)
    try:
        if book.get(pending.request_id) is None:  # closed before we listened
            return book.wait(pending.request_id, 0)
        while not closed.done():
            await asyncio.wait({closed}, timeout=DISCONNECT_POLL_SECONDS)
            if not closed.done() and _gone(request):
                book.withdraw(pending.request_id, GONE)
                return None
        return closed.result()
    except asyncio.CancelledError:
        book.withdraw(pending.request_id, GONE)
        raise
    finally:
        unsubscribe()


def _settle(future: asyncio.Future[Decision | None], decision: Decision | None) -> None:
    if not future.done():
        future.set_result(decision)


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _answer(text: str) -> web.Response:
    """What the hook prints, verbatim (empty: no decision)."""
    return web.Response(body=text.encode(), content_type="text/plain", charset="utf-8")
