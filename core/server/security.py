"""The loopback server's guard: every request is checked before any handler runs (server
thread). The connection itself was let in by the gate (``gate.py``: this user's processes only).

- ``Host`` must name the loopback address and our port (``127.0.0.1:<port>`` or
  ``localhost:<port>``): a page on another site that rebinds its DNS name to 127.0.0.1 is refused.
- A credential is required on every request: the token (``Authorization: Bearer <token>`` or an
  ``X-Agentbar-Token`` header), or this server's cookie. The token is never taken from an
  address: addresses land in histories, logs and process lists.
- The cookie is bound to this server: its name carries the port (``agentbar_<port>``) and its
  value is derived from this start's token and the port, so it is no token anywhere else, and a
  listener on another port that a browser hands it to (browsers scope cookies by host, not
  port) holds nothing it can use (and the gate refuses another user outright).
- A page opens with a one-time code (``/?code=CODE``, ``codes.py``): the first load trades it
  for the cookie (HttpOnly, SameSite=Strict) and is redirected to the same address without it.
- WebSocket handshakes and every method that can change something (anything but GET, HEAD and
  OPTIONS) must come from our own origin (``Origin`` present and equal to it); a browser's
  ``Sec-Fetch-Site: cross-site`` is refused on every request.
- Every response carries a strict Content-Security-Policy (no inline script; inline styles only
  on the terminal page, for xterm.js), ``frame-ancestors 'none'``, ``nosniff``,
  ``no-referrer``, and ``no-store`` for the API.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web

from .codes import CodeBook

COOKIE_PREFIX = "agentbar_"
TOKEN_HEADER = "X-Agentbar-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TERMINAL_PAGE = "/terminal/"  # a launched task's live terminal (its own document)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


class Guard:
    """The checks for one server: its port, its token and its one-time codes."""

    def __init__(self, port: int, token: str, codes: CodeBook | None = None) -> None:
        self.port = port
        self.token = token
        self.codes = codes or CodeBook()
        self.cookie_name = cookie_name(port)
        self.cookie_value = cookie_value(token, port)
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
        self.origins = frozenset(f"http://{host}" for host in self.hosts)
        # When an authenticated request last came (``time.monotonic``): a background serve
        # does not end while a client has just spoken to it (``lifetime.py``).
        self.last_request = 0.0

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
        self.last_request = time.monotonic()
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
        if "code" in request.query and _is_page(request):
            return self._trade_code(request)
        given = self._token_of(request)
        if given is not None:
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return error(403, "bad_token", "wrong token")
        else:
            cookie = request.cookies.get(self.cookie_name)
            if cookie is None:
                return error(401, "no_token", "a token is required")
            if not hmac.compare_digest(cookie.encode(), self.cookie_value.encode()):
                return error(403, "bad_token", "wrong cookie")
        websocket = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        if (websocket or request.method not in SAFE_METHODS) and (
            request.headers.get(hdrs.ORIGIN) not in self.origins
        ):
            return error(403, "bad_origin", "only this server's own pages may do that")
        return None

    def _trade_code(self, request: web.Request) -> web.Response:
        """A page opened with a one-time code: the cookie for it, once, and the same address
        without the code."""
        target = request.rel_url.without_query_params("code")
        if not self.codes.redeem(request.query.get("code", "")):
            cookie = request.cookies.get(self.cookie_name, "")
            if hmac.compare_digest(cookie.encode(), self.cookie_value.encode()):
                # A spent code, but this browser holds the cookie already: just the page.
                return web.Response(status=303, headers={hdrs.LOCATION: str(target)})
            return error(
                403,
                "bad_code",
                "this link was used already or has expired: open agentbar again "
                "(agentbar window, or the tray's Open window)",
            )
        response = web.Response(status=303, headers={hdrs.LOCATION: str(target)})
        response.set_cookie(
            self.cookie_name, self.cookie_value, httponly=True, samesite="Strict", path="/"
        )
        return response

    def by_token(self, request: web.Request) -> bool:
        """Whether a request (past the guard) proved itself with the token, not the cookie."""
        return self._token_of(request) is not None

    def _token_of(self, request: web.Request) -> str | None:
        auth = request.headers.get(hdrs.AUTHORIZATION, "")
        if auth.lower().startswith("bearer "):
            return auth[len("bearer ") :].strip()
        return request.headers.get(TOKEN_HEADER) or None

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


def cookie_name(port: int) -> str:
    return f"{COOKIE_PREFIX}{port}"


def cookie_value(token: str, port: int) -> str:
    """What the cookie holds: bound to this start's token and to the port, and not the token
    itself (so it opens nothing as a header, and nothing on another server)."""
    return hmac.new(token.encode(), f"cookie:{port}".encode(), hashlib.sha256).hexdigest()


def _is_page(request: web.Request) -> bool:
    return request.method == "GET" and not request.path.startswith(("/api/", "/static/"))
