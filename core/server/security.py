"""The loopback server's guard: every request is checked before any handler runs (server
thread).

- ``Host`` must name the loopback address and our port (``127.0.0.1:<port>`` or
  ``localhost:<port>``): a page on another site that rebinds its DNS name to 127.0.0.1 is refused.
- A token is required on every request: ``Authorization: Bearer <token>``, an
  ``X-Agentbar-Token`` header, the ``agentbar_token`` cookie, or ``?token=`` in the URL. A page
  load with ``?token=`` sets the cookie (HttpOnly, SameSite=Strict) and is redirected to the same
  address without the token, so the page's own scripts, styles and API calls carry it unseen.
- WebSocket handshakes and every method that can change something (anything but GET, HEAD and
  OPTIONS) must come from our own origin (``Origin`` present and equal to it); a browser's
  ``Sec-Fetch-Site: cross-site`` is refused on every request.
- Every response carries a strict Content-Security-Policy (no inline script; inline styles only
  on the terminal page, for xterm.js), ``frame-ancestors 'none'``, ``nosniff``,
  ``no-referrer``, and ``no-store`` for the API.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web

TOKEN_COOKIE = "agentbar_token"
TOKEN_HEADER = "X-Agentbar-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TERMINAL_PAGE = "/terminal/"  # a launched task's live terminal (its own document)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


class Guard:
    """The checks for one server: its port and its token."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.token = token
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
        self.origins = frozenset(f"http://{host}" for host in self.hosts)

    def csp(self, *, inline_styles: bool = False) -> str:
        """The policy; ``inline_styles`` for the terminal page alone: xterm.js sizes and colours
        its rows with ``<style>`` elements it writes itself (scripts stay ``'self'`` only, and
        that page puts no transcript HTML anywhere: the terminal draws text)."""
        sockets = " ".join(f"ws://{host}" for host in sorted(self.hosts))
        styles = "'self' 'unsafe-inline'" if inline_styles else "'self'"
        return (
            f"default-src 'self'; script-src 'self'; style-src {styles}; img-src 'self' data:; "
            f"font-src 'self'; connect-src 'self' {sockets}; object-src 'none'; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = self._check(request)
        if refusal is not None:
            return refusal
        if "token" in request.query and _is_page(request):
            # A page opened with its token: keep the token in a cookie, out of the address bar.
            target = request.rel_url.without_query_params("token")
            response = web.Response(status=303, headers={hdrs.LOCATION: str(target)})
            response.set_cookie(
                TOKEN_COOKIE, self.token, httponly=True, samesite="Strict", path="/"
            )
            return response
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return error(exc.status, exc.reason.lower().replace(" ", "_"), exc.reason)

    def _check(self, request: web.Request) -> web.Response | None:
        host = request.headers.get(hdrs.HOST, "")
        if host not in self.hosts:
            return error(403, "bad_host", "Host must be the loopback address of this server")
        if request.headers.get("Sec-Fetch-Site") == "cross-site":
            return error(403, "cross_site", "cross-site requests are refused")
        given = self._token_of(request)
        if given is None:
            return error(401, "no_token", "a token is required")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return error(403, "bad_token", "wrong token")
        websocket = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        if (websocket or request.method not in SAFE_METHODS) and (
            request.headers.get(hdrs.ORIGIN) not in self.origins
        ):
            return error(403, "bad_origin", "only this server's own pages may do that")
        return None

    def _token_of(self, request: web.Request) -> str | None:
        auth = request.headers.get(hdrs.AUTHORIZATION, "")
        if auth.lower().startswith("bearer "):
            return auth[len("bearer ") :].strip()
        for value in (
            request.headers.get(TOKEN_HEADER),
            request.query.get("token"),
            request.cookies.get(TOKEN_COOKIE),
        ):
            if value:
                return value
        return None

    async def on_response_prepare(self, request: web.Request, response: web.StreamResponse) -> None:
        """The same hardening headers on every response, streamed ones included."""
        headers = response.headers
        headers["Content-Security-Policy"] = self.csp(
            inline_styles=request.path.startswith(TERMINAL_PAGE)
        )
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Referrer-Policy"] = "no-referrer"
        headers["X-Frame-Options"] = "DENY"
        headers["Cross-Origin-Opener-Policy"] = "same-origin"
        headers["Cross-Origin-Resource-Policy"] = "same-origin"
        if not request.path.startswith("/static/"):
            headers["Cache-Control"] = "no-store"


def _is_page(request: web.Request) -> bool:
    return request.method == "GET" and not request.path.startswith(("/api/", "/static/"))
