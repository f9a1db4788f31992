"""A second local user against agentbar's server (real: ``runuser``, Debian's Python, real
sockets, real Chromium): holding the token, the cookie or a fresh one-time code it still gets
403 before any route; a listener it runs on another port, which the browser hands agentbar's
cookie to, gets nothing it can use; and 2,000 idle connections of its own leave the owner
answered."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from other_user import OtherUser
from peer_scripts import ASK, FLOOD, LISTEN
from polling import wait_for
from replay_rig import Home, make_home
from server_rig import Running, serving, write_page

from agentbar.core.launch.client import ApiError, api_call
from agentbar.core.server.peers import ProcNetPeers, PsutilPeers


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path, claude=("v2.1",))


@pytest.fixture
def running(home: Home, tmp_path: Path) -> Iterator[Running]:
    with serving(home, static=write_page(tmp_path / "web")) as running:
        yield running


def ask_as(user: OtherUser, port: int, *requests: str) -> list[str]:
    """Each request ("PATH<TAB>HEADER...") sent by the other user; the status lines."""
    done = user.run(
        "/usr/bin/python3", "-I", "-c", ASK, str(port), input="\n".join(requests) + "\n"
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def health(running: Running) -> int:
    return api_call(running.origin, running.token, "GET", "/api/health", timeout=10)[0]


def test_the_other_user_gets_403_with_the_token_the_cookie_or_a_code(
    other_user: OtherUser, running: Running
):
    guard, port = running.server.guard, running.server.port
    cookie = f"Cookie: {guard.cookie_name}={guard.cookie_value}"
    answers = ask_as(
        other_user,
        port,
        f"/api/health\tAuthorization: Bearer {running.token}",
        f"/api/health\tX-Agentbar-Token: {running.token}",
        f"/api/sessions\t{cookie}",
        f"/\t{cookie}",
        f"/?code={guard.codes.issue()}",
        "/api/health",
    )
    assert answers == ["HTTP/1.1 403 Forbidden"] * 6, answers
    assert running.server.gate.refused["foreign"] == 6
    assert health(running) == 200  # the owner, meanwhile


def test_every_way_of_looking_up_a_peer_names_the_other_user_as_a_stranger(
    other_user: OtherUser,
):
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        holder = other_user.start(FLOOD, str(server.getsockname()[1]), "1")
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().split()[:2] == ["ready", "1"]
            conn, peer = server.accept()
            with conn:
                local = conn.getsockname()
                lookups = [ProcNetPeers(), ProcNetPeers(diag=False), PsutilPeers("win32"),
                           PsutilPeers("darwin")]  # fmt: skip
                owners = [lookup.owner(peer, local, want_pid=True) for lookup in lookups]
        finally:
            holder.kill()
            holder.wait(10)
    assert [o.same_user for o in owners] == [False] * 4
    assert owners[0].uid == owners[1].uid == other_user.uid
    assert owners[2].pid is not None  # Windows' table names the process (not ours)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Chromium for this module alone: the session's ``browser`` fixture keeps Playwright's
    event loop running in the main thread until the end, and the server tests after this
    module use ``asyncio.run``."""
    from web_harness import launched_chromium

    with launched_chromium() as b:
        yield b


def test_a_listener_on_another_port_gets_no_usable_secret(
    other_user: OtherUser, running: Running, chromium: Any
):
    listener = other_user.start(LISTEN)
    try:
        assert listener.stdout is not None
        listener_port = int(listener.stdout.readline())
        context = chromium.new_context()
        try:
            page = context.new_page()
            page.goto(running.server.open_url())
            assert page.title() == "test page"
            # A page (any page) sends the browser to the other user's port on the same host.
            page.goto(f"http://127.0.0.1:{listener_port}/")
            assert "nothing here" in page.content()
        finally:
            context.close()
        received = json.loads(listener.stdout.readline())
    finally:
        listener.kill()
        listener.wait(10)
    guard, port = running.server.guard, running.server.port
    cookies = dict(
        part.strip().split("=", 1) for part in received["headers"].get("cookie", "").split(";")
        if "=" in part
    )  # fmt: skip
    # Browsers scope cookies by host, not port: the listener did receive agentbar's cookie...
    assert cookies == {guard.cookie_name: guard.cookie_value}
    assert guard.cookie_name == f"agentbar_{port}"
    stolen = cookies[guard.cookie_name]
    assert running.token not in json.dumps(received)  # ...but never the token
    # 1. Its owner cannot use it: the gate refuses the other user whatever it holds.
    answers = ask_as(other_user, port, f"/api/sessions\tCookie: {guard.cookie_name}={stolen}")
    assert answers == ["HTTP/1.1 403 Forbidden"]
    # 2. It is bound to this server: not a token, and nothing under another name or port.
    for headers, status in (
        ({"Authorization": f"Bearer {stolen}"}, 403),
        ({"X-Agentbar-Token": stolen}, 403),
        ({"Cookie": f"agentbar_{listener_port}={stolen}"}, 401),
        ({"Cookie": f"agentbar_token={stolen}"}, 401),
    ):
        assert status_of(running, headers) == status, headers
    assert status_of(running, {"Cookie": f"{guard.cookie_name}={stolen}"}) == 200  # the real one
    with serving(running.home) as next_start:  # a new start: a new name and a new value
        assert next_start.server.guard.cookie_value != stolen
        renamed = {"Cookie": f"{next_start.server.guard.cookie_name}={stolen}"}
        assert status_of(next_start, renamed) == 403


def status_of(running: Running, headers: dict[str, str]) -> int:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(running.origin + "/api/health", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_two_thousand_idle_connections_of_the_other_user_leave_the_owner_answered(
    other_user: OtherUser, running: Running
):
    flood = other_user.start(FLOOD, str(running.server.port), "2000")
    try:
        assert flood.stdout is not None
        ready = flood.stdout.readline().split()
        assert ready and ready[0] == "ready", (ready, flood.stderr)
        for _ in range(50):
            assert health(running) == 200
        gate = running.server.gate
        wait_for(lambda: gate.refused["foreign"] >= int(ready[1]), 60, "every one refused")
        assert gate.stats()["open"] <= 1  # none of them was let in
        with pytest.raises(ApiError) as refused:
            api_call(running.origin, "not-the-token", "GET", "/api/health", timeout=10)
        assert refused.value.status == 403  # the owner's server still checks as before
    finally:
        flood.kill()
        flood.wait(10)
