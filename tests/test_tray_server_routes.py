"""The server's window routes over a real loopback server: windows report the page they show
(and whether it is in front) for the tray's notification policy; a second ``agentbar`` asks the
running one to open its window; the guard applies to both; stale reports expire."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest
from replay_rig import make_home
from server_rig import Running, serving

from agentbar.core.launch.client import Client
from agentbar.core.server.windows import STALE_SECONDS, WindowLink
from agentbar.tray import window


def call(
    running: Running,
    method: str,
    path: str,
    body: Any = None,
    *,
    origin: str | None = "own",
    token: str | None = None,
) -> tuple[int, Any]:
    headers = {
        "Authorization": f"Bearer {token or running.token}",
        "Content-Type": "application/json",
    }
    if origin is not None:
        headers["Origin"] = running.origin if origin == "own" else origin
    request = urllib.request.Request(
        running.origin + path,
        data=None if body is None else (body if isinstance(body, bytes) else orjson.dumps(body)),
        method=method,
        headers=headers,
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, orjson.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, orjson.loads(exc.read())


@pytest.fixture
def running(tmp_path: Path):
    with serving(make_home(tmp_path, claude=("v2.1",))) as r:
        yield r


def test_windows_report_what_they_show(running: Running) -> None:
    link = running.server.context.window
    assert call(running, "GET", "/api/window") == (200, {"windows": [], "can_open": False})
    assert (
        call(running, "PUT", "/api/window/w1", {"path": "/session/claude/abc", "focused": True})[0]
        == 200
    )
    assert call(running, "PUT", "/api/window/w2", {"path": "/", "focused": False})[0] == 200
    status, doc = call(running, "GET", "/api/window")
    assert status == 200
    assert doc["windows"] == [
        {"window": "w1", "path": "/session/claude/abc", "focused": True},
        {"window": "w2", "path": "/", "focused": False},
    ]
    assert link.in_front() == frozenset({"/session/claude/abc"})
    assert call(running, "PUT", "/api/window/w1", {"path": None, "focused": False})[0] == 200
    assert link.in_front() == frozenset()
    assert [s.window for s in link.shown()] == ["w2"]


def test_bad_reports_are_refused(running: Running) -> None:
    bad = [
        ("/api/window/w1", {"path": "https://evil.example/", "focused": True}),
        ("/api/window/w1", {"path": "/session/claude/../../etc", "focused": True}),
        ("/api/window/w1", {"path": "/", "focused": "yes"}),
        ("/api/window/w1", [1, 2]),
        ("/api/window/w1", b"{not json"),
        ("/api/window/no%20spaces", {"path": "/", "focused": True}),
    ]
    for path, body in bad:
        status, doc = call(running, "PUT", path, body)
        assert (status, doc["error"]["code"]) == (400, "bad_request"), (path, body)
    assert running.server.context.window.shown() == []


def test_the_guard_applies(running: Running) -> None:
    body = {"path": "/", "focused": True}
    assert call(running, "PUT", "/api/window/w1", body, origin=None)[0] == 403
    assert call(running, "PUT", "/api/window/w1", body, origin="http://evil.example")[0] == 403
    assert call(running, "PUT", "/api/window/w1", body, token="wrong")[0] == 403
    assert call(running, "POST", "/api/window/open", {"path": "/"}, origin=None)[0] == 403
    assert running.server.context.window.shown() == []


def test_open_goes_to_the_opener_or_says_there_is_none(running: Running) -> None:
    link = running.server.context.window
    status, doc = call(running, "POST", "/api/window/open", {"path": "/"})
    assert (status, doc["error"]["code"]) == (409, "no_window")
    opened: list[str] = []
    link.set_opener(opened.append)
    assert call(running, "GET", "/api/window")[1]["can_open"] is True
    assert call(running, "POST", "/api/window/open", {"path": "/session/codex/x-1"}) == (
        202,
        {"ok": True, "path": "/session/codex/x-1"},
    )
    assert call(running, "POST", "/api/window/open", {"path": "file:///etc/passwd"})[0] == 400
    assert call(running, "POST", "/api/window/open", {"path": 3})[0] == 400
    assert opened == ["/session/codex/x-1"]
    # What a second agentbar sends:
    info = running.server.info()
    second = Client(origin=running.server.origin, token=info["token"], pid=info["pid"], tasks=False)
    assert window.ask_to_open(second, "/") == 202
    assert opened == ["/session/codex/x-1", "/"]


def test_a_window_that_stops_reporting_no_longer_counts() -> None:
    now = [100.0]
    link = WindowLink(clock=lambda: now[0])
    link.report("w1", "/session/claude/abc", True)
    now[0] += STALE_SECONDS - 1
    assert link.in_front() == frozenset({"/session/claude/abc"})
    now[0] += 2
    assert link.in_front() == frozenset() and link.shown() == []
    with pytest.raises(ValueError):
        link.open("/etc/passwd")
    assert link.open("/") is False


def test_without_an_opener_the_page_goes_to_the_window_that_reported_last(
    running: Running,
) -> None:
    # A headless server (``agentbar serve``): the windows opened on it are asked instead, on
    # their next report, once; a window that closed or went stale is not.
    assert call(running, "PUT", "/api/window/w1", {"path": "/", "focused": False})[0] == 200
    assert call(running, "PUT", "/api/window/w2", {"path": "/search", "focused": True})[0] == 200
    assert call(running, "GET", "/api/window")[1]["can_open"] is True
    assert call(running, "POST", "/api/window/open", {"path": "/session/codex/x-1"})[0] == 202
    assert call(running, "PUT", "/api/window/w1", {"path": "/", "focused": False}) == (
        200,
        {"ok": True},
    )
    assert call(running, "PUT", "/api/window/w2", {"path": "/search", "focused": True}) == (
        200,
        {"ok": True, "open": "/session/codex/x-1"},
    )
    assert call(running, "PUT", "/api/window/w2", {"path": "/search", "focused": True}) == (
        200,
        {"ok": True},
    )
    for shown in ("w1", "w2"):
        assert call(running, "PUT", f"/api/window/{shown}", {"path": None, "focused": False})[0]
    status, doc = call(running, "POST", "/api/window/open", {"path": "/"})
    assert (status, doc["error"]["code"]) == (409, "no_window")


def test_a_page_asked_of_a_window_that_went_stale_is_dropped() -> None:
    now = [100.0]
    link = WindowLink(clock=lambda: now[0])
    link.report("w1", "/", False)
    assert link.open("/search") is True
    now[0] += STALE_SECONDS + 1
    assert link.open("/search") is False
    assert link.report("w1", "/", False) is None  # back, but the old ask is gone


def test_an_opener_whose_window_is_gone_says_so() -> None:
    link = WindowLink()
    link.set_opener(lambda path: False)  # the window of ``agentbar window`` found no backend
    assert link.open("/") is False
    shown: list[str] = []
    link.set_opener(shown.append)  # the tray's: it queues, and says nothing
    assert link.open("/search") is True and shown == ["/search"]
