"""The server's window routes: windows report what they show, and a second ``agentbar`` asks
the running one to open its window (server thread; the opener only queues the request).

- ``GET /api/window``: ``{"windows": [{"window", "path", "focused"}], "can_open": bool}``
- ``PUT /api/window/{window}`` with ``{"path": "/session/claude/ID" | null, "focused": bool}``:
  ``{"ok": true}``, with ``"open": "/..."`` when the window is asked to show that page
- ``POST /api/window/open`` with ``{"path": "/"}``: 202 when a window will open or show it (the
  opener, else the window that reported last), 409 when there is neither.

Both writes pass the guard like every other request (token, Host, and our own ``Origin``).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from .security import error
from .windows import WindowLink

LINK = web.AppKey("window_link", WindowLink)


def install(app: web.Application, link: WindowLink) -> None:
    app[LINK] = link
    app.add_routes(
        [
            web.get("/api/window", shown),
            web.post("/api/window/open", open_window),
            web.put("/api/window/{window}", report),
        ]
    )


async def _body(request: web.Request) -> dict[str, Any] | None:
    try:
        doc = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


async def shown(request: web.Request) -> web.Response:
    link = request.app[LINK]
    windows = [{"window": s.window, "path": s.path, "focused": s.focused} for s in link.shown()]
    return web.json_response({"windows": windows, "can_open": link.can_open})


async def report(request: web.Request) -> web.Response:
    doc = await _body(request)
    path, focused = (None, None) if doc is None else (doc.get("path"), doc.get("focused"))
    if doc is None or not (path is None or isinstance(path, str)) or not isinstance(focused, bool):
        return error(400, "bad_request", 'send {"path": "/..." or null, "focused": true|false}')
    try:
        asked = request.app[LINK].report(request.match_info["window"], path, focused)
    except ValueError as exc:
        return error(400, "bad_request", str(exc))
    return web.json_response({"ok": True} if asked is None else {"ok": True, "open": asked})


async def open_window(request: web.Request) -> web.Response:
    doc = await _body(request)
    path = "/" if doc is None else doc.get("path", "/")
    if not isinstance(path, str):
        return error(400, "bad_request", 'send {"path": "/..."}')
    try:
        opened = request.app[LINK].open(path)
    except ValueError as exc:
        return error(400, "bad_request", str(exc))
    if not opened:
        return error(409, "no_window", "this agentbar has no display to open a window on")
    return web.json_response({"ok": True, "path": path}, status=202)
