"""The loopback server refuses what it must: no token, a wrong one, a foreign Host (DNS
rebinding), a foreign Origin on the WebSocket and on anything but a read, paths in ids, a
transcript that links out of the agent root; and transcript text is only ever JSON data."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from claude_lines import ClaudeTranscript, write_lines
from replay_rig import V21, Home, make_home
from server_rig import serving, write_page
from yarl import URL

from agentbar.core.search import Searcher

EVIL = "81000000-0000-4000-8000-000000000008"
LINKED = "82000000-0000-4000-8000-000000000008"
SCRIPT = "<script>alert(document.cookie)</script>"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = make_home(tmp_path, claude=("v2.1",))
    t = ClaudeTranscript(EVIL, "/work/evil")
    write_lines(
        home.claude / "projects" / "-work-evil" / f"{EVIL}.jsonl",
        [t.prompt(SCRIPT), t.text(f'<img src=x onerror="alert(1)"> {SCRIPT}')],
    )
    # A transcript that is a symlink to a file outside every agent root.
    outside = tmp_path / "outside" / "secret.jsonl"
    u = ClaudeTranscript(LINKED, "/work/linked")
    write_lines(outside, [u.prompt("the secret prompt"), u.text("the secret answer")])
    linked = home.claude / "projects" / "-work-linked" / f"{LINKED}.jsonl"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(outside)
    return home


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())


async def status_of(
    session: aiohttp.ClientSession, method: str, url: str | URL, **kw: object
) -> tuple[int, str]:
    async with session.request(method, url, **kw) as response:  # type: ignore[arg-type]
        return response.status, await response.text()


def test_every_route_needs_the_right_token(home: Home, tmp_path: Path):
    with serving(home, static=write_page(tmp_path / "web")) as running:
        base = running.origin
        routes = [
            "/", "/board", "/static/app.css", "/api/health", "/api/sessions",
            f"/api/sessions/{V21}", f"/api/sessions/{V21}/items", "/api/search?q=x",
            f"/api/sessions/{V21}/export", "/api/events", "/api/nowhere",
        ]  # fmt: skip

        async def test() -> None:
            async with aiohttp.ClientSession() as anon:
                for route in routes:
                    status, body = await status_of(anon, "GET", base + route)
                    assert status == 401 and "no_token" in body, route
                    wrong = {"Authorization": "Bearer " + "x" * len(running.token)}
                    status, body = await status_of(anon, "GET", base + route, headers=wrong)
                    assert status == 403 and "bad_token" in body, route
                    status, _ = await status_of(
                        anon, "GET", base + route, headers={"X-Agentbar-Token": "nope"}
                    )
                    assert status == 403, route
                    status, _ = await status_of(
                        anon,
                        "GET",
                        f"{base}{route}".replace("?", "?token=nope&")
                        if "?" in route
                        else f"{base}{route}?token=nope",
                    )
                    assert status == 401, route  # a token in an address counts for nothing
                # Every way of giving the right one works; in an address it never does.
                for headers in (running.auth(), {"X-Agentbar-Token": running.token}):
                    assert (await status_of(anon, "GET", f"{base}/api/health", headers=headers))[
                        0
                    ] == 200
                for route in ("/api/health", "/"):
                    url = f"{base}{route}?token={running.token}"
                    assert (await status_of(anon, "GET", url, allow_redirects=False))[0] == 401

        run(test)


def test_a_page_load_with_a_code_sets_a_strict_port_bound_cookie_and_drops_the_code(
    home: Home, tmp_path: Path
):
    with serving(home, static=write_page(tmp_path / "web")) as running:
        port = running.server.port

        async def test() -> None:
            jar = aiohttp.CookieJar(unsafe=True)  # cookies for an IP address
            async with aiohttp.ClientSession(cookie_jar=jar) as browser:
                async with browser.get(running.server.open_url(), allow_redirects=False) as r:
                    assert r.status == 303 and r.headers["Location"] == "/"
                    cookie = r.headers["Set-Cookie"]
                    assert cookie.startswith(f"agentbar_{port}=")
                    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
                    assert "Path=/" in cookie
                    assert running.token not in cookie  # derived from it, not it
                async with browser.get(
                    running.server.open_url("/session/claude/x?a=1"), allow_redirects=False
                ) as r:
                    assert r.headers["Location"] == "/session/claude/x?a=1"
                # A spent code in a browser that holds the cookie just opens the page; without
                # the cookie it opens nothing.
                spent = running.server.open_url("/board")
                async with browser.get(spent, allow_redirects=False) as r:
                    assert r.status == 303
                async with browser.get(spent, allow_redirects=False) as r:
                    assert r.status == 303 and "Set-Cookie" not in r.headers
                    assert r.headers["Location"] == "/board"
                async with aiohttp.ClientSession() as stranger:
                    status, body = await status_of(stranger, "GET", spent, allow_redirects=False)
                    assert status == 403 and "bad_code" in body
                # From now on the cookie alone opens the page, its files and the API.
                for route in ("/", "/static/app.css", "/api/health", f"/api/sessions/{V21}"):
                    status, _ = await status_of(browser, "GET", running.origin + route)
                    assert status == 200, route
                async with browser.ws_connect(
                    f"{running.origin}/api/events", headers={"Origin": running.origin}
                ) as ws:
                    assert (await ws.receive_json(timeout=5))["type"] == "sessions"

        run(test)


def test_a_foreign_host_is_refused(home: Home):
    with serving(home) as running:
        port = running.server.port

        async def test() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                for host in (
                    "evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}",
                    f"127.0.0.1:{port + 1}", "127.0.0.1", f"[::1]:{port}", f"0.0.0.0:{port}",
                ):  # fmt: skip
                    status, body = await status_of(
                        client, "GET", f"{running.origin}/api/health", headers={"Host": host}
                    )
                    assert status == 403 and "bad_host" in body, host
                for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
                    status, _ = await status_of(
                        client, "GET", f"{running.origin}/api/health", headers={"Host": host}
                    )
                    assert status == 200, host

        run(test)


def test_a_foreign_origin_is_refused_on_the_websocket_and_on_writes(home: Home):
    with serving(home) as running:
        ws_url = f"{running.origin}/api/events"

        async def test() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                for origin in ("http://evil.example", "null", f"{running.origin}.evil", None):
                    headers = {} if origin is None else {"Origin": origin}
                    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                        await client.ws_connect(ws_url, headers=headers)
                    assert refused.value.status == 403, origin
                    for method in ("POST", "PUT", "DELETE", "PATCH"):
                        status, body = await status_of(
                            client, method, f"{running.origin}/api/sessions", headers=headers
                        )
                        assert status == 403 and "bad_origin" in body, (method, origin)
                # Our own origin passes the guard; the API is read-only all the same.
                own = {"Origin": running.origin}
                status, _ = await status_of(client, "POST", f"{running.origin}/api/sessions",
                                            headers=own)  # fmt: skip
                assert status == 405
                status, _ = await status_of(
                    client, "GET", f"{running.origin}/api/health",
                    headers={"Sec-Fetch-Site": "cross-site"},
                )  # fmt: skip
                assert status == 403

        run(test)


@pytest.mark.parametrize(
    "raw",
    [
        "/api/sessions/..%2F..%2Fetc%2Fpasswd",
        "/api/sessions/%2Fetc%2Fpasswd",
        "/api/sessions/..",
        "/api/sessions/.%2e",
        "/api/sessions/%2e%2e%2f%2e%2e%2fetc/items",
        f"/api/sessions/{V21}/items?thread=..%2F..%2Fsecret",
        f"/api/sessions/{V21}/items?thread=%2Fetc%2Fpasswd",
        f"/api/sessions/{V21}/items?thread=a4c2d9%2F..%2F..%2Fx",
        f"/api/sessions/{V21}/items?thread=inline:..%2F1",
        f"/api/sessions/{V21}/items/..%2F1/0",
        f"/api/sessions/{V21}/items/-1/0",
        f"/api/sessions/{V21}/items/0/..",
        f"/api/sessions/{V21}/export?format=..%2F..%2Fetc",
        "/api/search?q=x&session=..%2F..%2Fetc",
        "/static/..%2F..%2F..%2Fetc%2Fpasswd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/static//etc/passwd",
        "/static/../index.html",
        "/..%2F..%2Fetc%2Fpasswd",
        "//etc/passwd",
    ],
)
def test_paths_in_ids_are_refused(home: Home, tmp_path: Path, raw: str):
    with serving(home, static=write_page(tmp_path / "web")) as running:

        async def test() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                url = URL(running.origin + raw, encoded=True)
                status, body = await status_of(client, "GET", url)
                assert status in (400, 404), (status, body[:200])
                assert "root:" not in body

        run(test)


def test_raw_traversal_on_the_socket_is_refused(home: Home):
    """Requests no client library would send: the path as typed, byte for byte."""
    with serving(home) as running:
        port = running.server.port
        for path in ("/../../etc/passwd", "/static/../../../etc/passwd", "/api/sessions/../..",
                     f"/api/sessions/{V21}/items?thread=../../../etc"):  # fmt: skip
            request = (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {running.token}\r\nConnection: close\r\n\r\n"
            ).encode()
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(request)
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
            head = answer.split(b"\r\n", 1)[0]
            assert head.split()[1] in (b"400", b"404"), (path, head)
            assert b"root:" not in answer


def test_a_transcript_that_links_out_of_the_agent_root_is_not_read(home: Home):
    with serving(home) as running:

        async def test() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                base = f"{running.origin}/api/sessions/{LINKED}"
                for route in ("/items", "/items/0/0", "/export?format=json"):
                    status, body = await status_of(client, "GET", base + route)
                    if status == 404:
                        assert "secret" not in body
                        continue
                    raise AssertionError((route, status, body[:300]))
                # Search follows the same folder rule: the linked file's words are not found.
                for query in ("secret", f"secret&session={LINKED}"):
                    async with client.get(f"{running.origin}/api/search?q={query}") as r:
                        assert r.status == 200 and (await r.json())["hits"] == []

        run(test)

    # Without the rule the index does hold them (the test would pass for nothing otherwise).
    unfiltered = Searcher(home.settings.index_path)
    try:
        assert [h.key.session_id for h in unfiltered.search("secret")] == [LINKED, LINKED]
    finally:
        unfiltered.close()


def test_transcript_markup_is_served_as_json_data_only(home: Home):
    with serving(home) as running:

        async def test() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                base = f"{running.origin}/api/sessions/{EVIL}"
                async with client.get(f"{base}/items") as r:
                    assert r.headers["Content-Type"].startswith("application/json")
                    assert r.headers["X-Content-Type-Options"] == "nosniff"
                    page = await r.json()
                    raw = await r.text()
                assert page["items"][0]["text"] == SCRIPT  # data, as written
                assert "<script>" in raw  # inside JSON strings, never a document
                async with client.get(f"{base}/items/0/0") as r:
                    assert r.headers["Content-Type"].startswith("application/json")
                async with client.get(f"{running.origin}/api/search?q=alert") as r:
                    assert r.headers["Content-Type"].startswith("application/json")
                    hits = (await r.json())["hits"]
                    assert hits and all(
                        isinstance(s["text"], str) for h in hits for s in h["snippet"]
                    )
                async with client.get(f"{base}/export?format=html") as r:
                    assert "attachment" in r.headers["Content-Disposition"]
                    html = await r.text()
                assert "<script" not in html.lower() and "&lt;script&gt;" in html
                async with client.get(f"{base}/export?format=md") as r:
                    assert r.headers["Content-Type"].startswith("text/markdown")
                    assert "attachment" in r.headers["Content-Disposition"]

        run(test)


def test_the_server_listens_on_loopback_only(home: Home):
    with serving(home) as running:
        address = running.server._sock.getsockname()
        assert address[0] == "127.0.0.1"
        try:
            outside = socket.gethostbyname(socket.gethostname())
        except OSError:
            outside = None
        if outside and not outside.startswith("127."):
            with pytest.raises(OSError), socket.create_connection((outside, address[1]), 1):
                pass
