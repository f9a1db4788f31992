"""How every API route answers: JSON replies, and refusals as exceptions the routes raise and
one wrapper turns into the API's JSON errors (server thread).

A handler raises ``Refused(status, code, message)`` (``BadRequest`` for a 400, the replay's
``NotFound`` for a 404) wherever it finds the request wanting, however deep; ``guarded`` answers
``{"error": {"code", "message"}}`` with that status (docs/api.md, "Errors").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from .. import jsonsafe
from ..errors import ServerError
from ..replay.pages import NotFound
from .security import error

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Refused(ServerError):
    """A request the server refuses (``status`` and ``code`` go into the reply)."""

    title = "agentbar refused the request"

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class BadRequest(Refused):
    def __init__(self, message: str) -> None:
        super().__init__(400, "bad_request", message)


def json_reply(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=jsonsafe.dumps(data), status=status, content_type="application/json", charset="utf-8"
    )


def guarded(handler: Handler) -> Handler:
    async def run(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except NotFound as exc:
            return error(404, "not_found", str(exc) or "not found")
        except Refused as exc:
            return error(exc.status, exc.code, str(exc))

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


async def read_object(request: web.Request) -> dict[str, Any]:
    """The request's JSON object body (``{}`` without a body); ``BadRequest`` for anything
    else."""
    if not request.body_exists:
        return {}
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        raise BadRequest("the body must be JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body
