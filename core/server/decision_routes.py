"""The loopback server's routes for the decision book: the requests waiting on the person, and
the answers to them (server thread; the book's calls are quick and never block).

Every answer that approves anything comes through here (or through the tray's own menu and
notifications, in process): the guard (``security.py``) has required the token and, for a POST,
our own ``Origin``. An answer names the request's own id, so it can never land on another.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from ..decisions import (
    Decision,
    DecisionBook,
    StaleRequest,
    Verdict,
    WrongAnswer,
    request_json,
)
from .context import Context
from .replies import BadRequest, Refused, guarded, json_reply, read_object

MAX_MESSAGE_CHARS = 10_000
MAX_REPLIES = 16
ORIGINS = frozenset({"notification", "menu", "window", "cli", "api"})


def routes(ctx_of: Callable[[web.Request], Context]) -> list[web.RouteDef]:
    def book_of(request: web.Request) -> DecisionBook:
        book = ctx_of(request).decisions
        if book is None:
            raise Refused(404, "no_decisions", "this server holds no decisions")
        return book

    async def pending(request: web.Request) -> web.StreamResponse:
        return json_reply({"requests": [request_json(r) for r in book_of(request).pending()]})

    async def decide(request: web.Request) -> web.StreamResponse:
        book = book_of(request)
        decision = _decision(request.match_info["request_id"], await read_object(request))
        try:
            answered = book.decide(decision)
        except StaleRequest as exc:
            raise Refused(409, "stale_request", str(exc)) from exc
        except WrongAnswer as exc:
            raise BadRequest(str(exc)) from exc
        return json_reply({"request": request_json(answered), "verdict": str(decision.verdict)})

    return [
        web.get("/api/decisions", guarded(pending)),
        web.post("/api/decisions/{request_id}", guarded(decide)),
    ]


def _decision(request_id: str, body: dict[str, object]) -> Decision:
    """The answer a request body gives; ``BadRequest`` for anything odd."""
    if not (0 < len(request_id) <= 64 and request_id.isascii() and request_id.isalnum()):
        raise BadRequest("no such request id")
    try:
        verdict = Verdict(str(body.get("verdict")))
    except ValueError:
        raise BadRequest("verdict must be one of " + ", ".join(Verdict)) from None
    origin = body.get("origin", "api")
    if origin not in ORIGINS:
        raise BadRequest("origin must be one of " + ", ".join(sorted(ORIGINS)))
    message = body.get("message")
    if message is not None and (not isinstance(message, str) or len(message) > MAX_MESSAGE_CHARS):
        raise BadRequest(f"message must be text of at most {MAX_MESSAGE_CHARS} characters")
    replies = body.get("replies", [])
    if (
        not isinstance(replies, list)
        or len(replies) > MAX_REPLIES
        or not all(isinstance(r, str) and len(r) <= MAX_MESSAGE_CHARS for r in replies)
    ):
        raise BadRequest(f"replies must be a list of at most {MAX_REPLIES} texts")
    return Decision(request_id, verdict, str(origin), message or None, tuple(replies))
