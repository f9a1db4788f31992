"""Odd requests over raw sockets (odd methods, paths, parameters, headers and bodies, a few
hundred of them, from a fixed seed) get a 4xx or a closed connection, never a 5xx, and the
server answers normally after them; its log holds no traceback."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_rig import V21, Home, make_home
from server_rig import Running, serving, write_page

from agentbar.core.launch.client import api_call
from agentbar.core.server.gate import Limits

SEED = int(os.environ.get("AGENTBAR_ODD_SEED", "20261201"))
COUNT = int(os.environ.get("AGENTBAR_ODD_COUNT", "400"))

METHODS = [
    "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT", "PROPFIND",
    "get", "GE T", "G\x00T", "", "M" * 300,
]  # fmt: skip
NUMBERS = [
    "", "-1", "0", "1e5", "0x10", "²", "١٢", "9" * 40, "18446744073709551616", "1.5", " 1",
    "%00", "NaN", "inf", "1_000",
]  # fmt: skip
TEXTS = [
    "", "\"", "*", "NEAR(", "a OR", "AND", "%00", "%ff%fe", "%C0%AF", "..%2F..%2Fetc", "x" * 9000,
    "é", "%F0%9F%92%A9", "\\", "'", "<script>", "{}", "[]", "%2e%2e", "a%0d%0aSet-Cookie:x=1",
]  # fmt: skip
IDS = [V21, V21[:8], "..", "%2e%2e", "a" * 200, "%ff", "-", "x.y", "%00", "claude", "é"]
PATHS = [
    "/", "/board", "/search", "/session/claude/{id}", "/session/codex/{id}", "/terminal/{id}",
    "/static/{id}", "/static/app.css", "/api/health", "/api/sessions", "/api/sessions/{id}",
    "/api/sessions/{id}/items", "/api/sessions/{id}/items/{n}/{n}", "/api/sessions/{id}/export",
    "/api/search", "/api/events", "/api/codes", "/api/window", "/api/window/{id}",
    "/api/window/open", "/api/tasks", "/api/tasks/{id}", "/api/tasks/{id}/input",
    "/api/tasks/{id}/resize", "/api/tasks/{id}/terminal", "/api/sessions/{id}/resume",
    "/api/sessions/{id}/handoff", "/api/projects", "/api/nowhere", "//", "/%ff", "*",
    "http://evil.example/", "/api/../api/health",
]  # fmt: skip
PARAMS = [
    "before", "after", "limit", "thread", "agent", "q", "session", "format", "thinking",
    "notes", "all", "code", "token",
]  # fmt: skip
BODIES = [
    b"", b"{", b"null", b"[]", b"\"x\"", b"1e400", b"NaN", b"{\"seconds\": 1e400}",
    b"{\"path\": 1, \"focused\": \"yes\"}", b"{\"path\": \"/\", \"focused\": true}",
    b"[" * 5000 + b"]" * 5000, b"{\"a\":" * 3000 + b"1" + b"}" * 3000, b"\xff\xfe\x00",
    b"{\"agent\": \"claude\", \"project\": \"/nonexistent\", \"prompt\": 5}",
    b"{\"agent\": \"nope\"}", b"{\"text\": \"" + b"x" * 70000 + b"\"}",
    b"{\"cols\": -1, \"rows\": 1e9}",
    b"{\"seconds\": 30}", b"{\"tasks\": \"maybe\"}",
]  # fmt: skip


def odd_requests(port: int, token: str, rng: random.Random) -> Iterator[bytes]:
    host = f"127.0.0.1:{port}"
    for _ in range(COUNT):
        method = rng.choice(METHODS[:6]) if rng.random() < 0.8 else rng.choice(METHODS)
        path = (
            rng.choice(PATHS).replace("{id}", rng.choice(IDS)).replace("{n}", rng.choice(NUMBERS))
        )
        if rng.random() < 0.7:
            pairs = [f"{rng.choice(PARAMS)}={rng.choice(NUMBERS + TEXTS)}"
                     for _ in range(rng.randint(1, 4))]  # fmt: skip
            path += "?" + "&".join(pairs)
        headers = [f"Host: {host}" if rng.random() < 0.9 else f"Host: {rng.choice(TEXTS)}"]
        if rng.random() < 0.85:
            headers.append(f"Authorization: Bearer {token}")
        if rng.random() < 0.7:
            headers.append(f"Origin: http://{host}")
        body = (
            rng.choice(BODIES) if method in ("POST", "PUT", "PATCH") or rng.random() < 0.1 else b""
        )
        extra = rng.random()
        if extra < 0.1:
            headers.append(f"Content-Length: {rng.choice(NUMBERS)}")
        elif extra < 0.2:
            headers.append("Transfer-Encoding: chunked")
            body = rng.choice([b"zz\r\nabc\r\n0\r\n\r\n", b"3\r\nabc\r\n", b"-1\r\n\r\n", body])
        elif extra < 0.25:
            headers.append("X-Big: " + "b" * rng.choice([100, 9000, 70000]))
        elif extra < 0.3:
            headers += [f"X-{i}: {i}" for i in range(rng.choice([50, 200, 2000]))]
        elif extra < 0.35:
            headers.append(f"Cookie: agentbar_{port}={rng.choice(TEXTS)}; agentbar_token={token}")
        elif extra < 0.4:
            headers.append("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13")
        elif extra < 0.45:
            headers.append(
                "Content-Type: " + rng.choice(["application/json", "text/plain", "\x01"])
            )
        elif extra < 0.5:
            headers.append(rng.choice(["NoColon", ": empty", "Bad Header: x", "X-Ü: ü"]))
        if body and "Content-Length" not in " ".join(headers) and extra >= 0.2:
            headers.append(f"Content-Length: {len(body)}")
        version = rng.choice(["HTTP/1.1"] * 8 + ["HTTP/1.0", "HTTP/2.0", "HTTP/9", ""])
        head = (
            f"{method} {path} {version}\r\n"
            + "\r\n".join(headers)
            + "\r\nConnection: close\r\n\r\n"
        )
        yield head.encode("utf-8", "surrogateescape") + body


def status_of(port: int, request: bytes) -> int | None:
    """The answer's status, or None for a connection closed without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        with contextlib.suppress(OSError):  # refused before all was read: the answer counts
            sock.sendall(request)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n" in answer:
                    break
        except ConnectionResetError:
            pass
    line = answer.split(b"\r\n", 1)[0].split()
    if len(line) < 2 or not line[1].isdigit():
        return None
    return int(line[1])


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path, claude=("v2.1",))


@pytest.fixture
def running(home: Home, tmp_path: Path) -> Iterator[Running]:
    """Every route live: tasks, search, a window opener (a valid request to open a window
    gets a 202, not the 409 of a server without a display), and short body and header
    timeouts for the requests that promise more than they send."""
    limits = Limits(header_seconds=2.0, body_seconds=1.0)
    web = write_page(tmp_path / "web")
    with serving(home, static=web, with_tasks=True, limits=limits) as running:
        opened: list[str] = []
        running.server.context.window.set_opener(opened.append)
        yield running


def test_odd_requests_get_4xx_never_5xx_and_the_server_answers_after(
    running: Running, caplog: pytest.LogCaptureFixture
):
    port, token = running.server.port, running.token
    rng = random.Random(SEED)
    faults: list[tuple[int | None, bytes]] = []
    statuses: dict[int | None, int] = {}
    with caplog.at_level(logging.WARNING):
        for request in odd_requests(port, token, rng):
            status = status_of(port, request)
            statuses[status] = statuses.get(status, 0) + 1
            if status is not None and status >= 500:
                faults.append((status, request[:300]))
            if status is not None and status < 400 and status not in (200, 201, 202, 204, 303):
                faults.append((status, request[:300]))
    assert not faults, faults[:10]
    assert sum(n for s, n in statuses.items() if s is not None and 400 <= s < 500) > COUNT // 2
    assert api_call(running.origin, token, "GET", "/api/health", timeout=10)[0] == 200
    assert not [r for r in caplog.records if r.exc_info], "a traceback in the log"
