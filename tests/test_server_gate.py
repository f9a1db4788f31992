"""The server's door and its one-time codes: the gate's decisions and timers (a fake peer table
and clock), the real /proc lookup, and a real server that lets its own user in, closes slow and
idle connections, keeps answering its owner under 2,000 idle connections from another process,
trades a code for its cookie once and only in time, logs a fault kind once, and starts with a
new token every time."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from peer_scripts import FLOOD
from polling import wait_for
from replay_rig import Home, make_home
from server_rig import serving, write_page

from agentbar.core.launch.client import ApiError, api_call
from agentbar.core.server.codes import CodeBook, with_code
from agentbar.core.server.faults import FaultLog
from agentbar.core.server.gate import Gate, Limits
from agentbar.core.server.peers import (
    FakePeers,
    Peer,
    ProcNetPeers,
    PsutilPeers,
    find_in_table,
    proc_hex,
    proc_hex_mapped,
)
from agentbar.core.server.runner import LoopbackServer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


ME = Peer(same_user=True, uid=1000)
LOCAL = ("127.0.0.1", 8123)


class FakeTransport:
    """Just enough of a transport for the gate's books."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.aborted = False

    def get_extra_info(self, name: str) -> object:
        return {"peername": ("127.0.0.1", self.port), "sockname": LOCAL}.get(name)

    def abort(self) -> None:
        self.aborted = True


# -- the decisions -------------------------------------------------------------------------------


def test_only_this_users_peers_get_in():
    peers = FakePeers({40001: ME, 40002: Peer(same_user=False, uid=1001)})
    gate = Gate(peers)
    assert gate.judge(("127.0.0.1", 40001), LOCAL).admitted
    refused = gate.judge(("127.0.0.1", 40002), LOCAL)
    assert not refused.admitted and refused.kind == "foreign"
    assert refused.answer.startswith(b"HTTP/1.1 403 ")
    unknown = gate.judge(("127.0.0.1", 40003), LOCAL)  # closed already: nobody we know
    assert not unknown.admitted and unknown.kind == "foreign"


def test_a_peer_table_that_fails_refuses_and_says_so_once(caplog: pytest.LogCaptureFixture):
    class Broken:
        def owner(self, peer, local, *, want_pid=False):
            raise OSError("no /proc")

        def close(self):
            pass

    gate = Gate(Broken(), faults=FaultLog(logging.getLogger("test.gate")))
    with caplog.at_level(logging.WARNING, logger="test.gate"):
        for _ in range(50):
            assert not gate.judge(("127.0.0.1", 1), LOCAL).admitted
    assert len(caplog.records) == 1 and "no /proc" in caplog.records[0].getMessage()


def test_a_process_is_capped_and_past_the_total_the_oldest_unused_connection_gives_way():
    flooder = {port: Peer(same_user=True, uid=1000, pid=7) for port in range(41000, 42000)}
    unknown = {port: Peer(same_user=True, uid=1000) for port in range(42000, 42100)}
    owner = {port: Peer(same_user=True, uid=1000, pid=8) for port in range(43000, 43010)}
    gate = Gate(FakePeers({**flooder, **unknown, **owner}), Limits(per_client=10, total=40))
    transports: dict[int, FakeTransport] = {}

    def connect(port: int) -> bool:
        transports[port] = FakeTransport(port)
        return gate.admit(transports[port]).admitted  # type: ignore[arg-type]

    assert sum(connect(p) for p in range(41000, 41100)) == 10  # one process: its cap
    assert gate.refused["client_cap"] == 90
    # Sockets too new to be placed count for their user alone: only the total holds them,
    # and past it the oldest unused connection gives way.
    assert all(connect(p) for p in range(42000, 42100))
    assert len(gate.open) == 40 and gate.refused["evicted"] == 70
    assert all(transports[p].aborted for p in range(41000, 41010))
    # The owner connects and asks: it gets in, and its busy connection is never the one to go.
    assert connect(43000)
    gate.open[transports[43000]].requests = 1  # type: ignore[index]
    gate.open[transports[43000]].busy = 1  # type: ignore[index]
    assert all(connect(p) for p in range(43001, 43010))
    assert not transports[43000].aborted
    # When every connection is busy, a newcomer is refused.
    for record in gate.open.values():
        record.requests = record.busy = 1
    assert not connect(41500)
    assert gate.refused["total_cap"] == 1


def test_slow_headers_and_idle_keep_alive_are_timed_out_but_busy_requests_are_not():
    clock = Clock()
    gate = Gate(FakePeers({1: ME, 2: ME, 3: ME}),
                Limits(header_seconds=5, idle_seconds=30), clock=clock)  # fmt: skip
    silent, idle, busy = (FakeTransport(p) for p in (1, 2, 3))
    for t in (silent, idle, busy):
        assert gate.admit(t).admitted  # type: ignore[arg-type]
    gate.open[idle].requests, gate.open[idle].last = 1, clock.now  # type: ignore[index]
    gate.open[busy].requests, gate.open[busy].busy = 1, 1  # type: ignore[index]
    clock.now += 4
    assert gate.stale() == []
    clock.now += 2
    assert [r.transport for r in gate.stale()] == [silent]
    clock.now += 25
    assert {r.transport for r in gate.stale()} == {silent, idle}
    clock.now += 3600
    assert busy not in {r.transport for r in gate.stale()}  # a WebSocket, a download


# -- the /proc table -----------------------------------------------------------------------------


def test_proc_addresses_are_written_as_the_kernel_writes_them():
    assert proc_hex(("127.0.0.1", 8080)) == ("0100007F:1F90", False)
    assert proc_hex(("::1", 22)) == ("00000000000000000000000001000000:0016", True)
    assert proc_hex_mapped(("127.0.0.1", 80)) == "0000000000000000FFFF00000100007F:0050"
    table = (
        b"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        b"timeout inode\n"
        b"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000 "
        b"       0 111 1 0000000000000000 100 0 0 10 0\n"
        b"   1: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001 "
        b"       0 222 1 0000000000000000 20 4 30 10 -1\n"
    )
    found = find_in_table(table, "0100007F:A1B2", "0100007F:1F90")
    assert found is not None and (found.uid, found.inode) == (1001, 222)
    assert find_in_table(table, "0100007F:1F90", "0100007F:A1B2") is None  # the other way round


@pytest.mark.parametrize("diag", [True, False], ids=["sock_diag", "proc_net_tcp"])
def test_the_real_table_names_this_process_for_its_own_connection(diag: bool):
    import os

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            conn, peer = server.accept()
            with conn:
                local = conn.getsockname()
                peers = ProcNetPeers(diag=diag)
                entry = peers.entry(peer, local)
                assert entry is not None and entry.inode == os.fstat(client.fileno()).st_ino
                owner = peers.owner(peer, local, want_pid=True)
                assert owner == Peer(same_user=True, uid=os.getuid(), pid=os.getpid())
                as_someone_else = ProcNetPeers(uid=os.getuid() + 12345, diag=diag)
                assert not as_someone_else.owner(peer, local).same_user
                assert not peers.owner(("127.0.0.1", 1), local).same_user
                # Both ways read the same table.
                assert ProcNetPeers(diag=not diag).entry(peer, local) == entry


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_the_psutil_lookups_of_macos_and_windows_name_this_process(platform: str):
    """The branches for macOS (this user's processes asked for their sockets) and Windows (the
    system's TCP table), run here through psutil's Linux side: same answers."""
    import os

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()):
            conn, peer = server.accept()
            with conn:
                peers = PsutilPeers(platform)
                local = conn.getsockname()
                assert peers.owner(peer, local) == Peer(same_user=True, pid=os.getpid())
                assert peers.owner(peer, local) == Peer(same_user=True, pid=os.getpid())  # again
                assert not peers.owner(("127.0.0.1", 1), local).same_user


# -- codes ---------------------------------------------------------------------------------------


def test_a_code_works_once_and_only_in_time():
    clock = Clock()
    book = CodeBook(clock)
    code = book.issue(60)
    assert book.redeem(code) and not book.redeem(code)
    late = book.issue(60)
    clock.now += 60.5
    assert not book.redeem(late)
    assert not book.redeem("") and not book.redeem("x" * 10_000) and not book.redeem("é")
    assert with_code("http://h:1", "/a?b=1", "c d") == "http://h:1/a?b=1&code=c+d"


# -- a real server -------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path, claude=("v2.1",))


def raw_get(port: int, path: str, *headers: str) -> int:
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "".join(h + "\r\n" for h in headers) + "Connection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def health(origin: str, token: str) -> int:
    return api_call(origin, token, "GET", "/api/health", timeout=10)[0]


def test_its_own_user_gets_in_and_anyone_the_gate_does_not_know_gets_403(home: Home):
    with serving(home) as running:
        assert health(running.origin, running.token) == 200
    with serving(home, peers=FakePeers()) as running:  # nobody is ours
        assert raw_get(running.server.port, "/api/health", f"X-Agentbar-Token: {running.token}") \
            == 403  # fmt: skip
        assert running.server.gate.refused["foreign"] == 1


def test_a_client_that_does_not_finish_its_headers_is_closed(home: Home):
    limits = Limits(header_seconds=1.0, idle_seconds=2.0)
    with serving(home, limits=limits) as running:
        port = running.server.port
        with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
            slow.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1")  # and nothing more
            try:
                got = slow.recv(1024)
            except ConnectionResetError:
                got = b""  # cut: as closed as a FIN
            assert got == b""  # closed by the server (recv would time out else)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as idle:
            idle.sendall(
                f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"X-Agentbar-Token: {running.token}\r\n\r\n".encode()
            )
            answer = idle.recv(65536)
            assert answer.startswith(b"HTTP/1.1 200")
            while chunk := idle.recv(65536):  # kept alive, then closed when idle too long
                answer += chunk
        assert running.server.gate.refused["header_timeout"] == 1
        assert running.server.gate.stats()["open"] == 0
        assert health(running.origin, running.token) == 200


def test_two_thousand_idle_connections_from_another_process_leave_the_owner_answered(
    home: Home,
):
    with serving(home) as running:
        flood = subprocess.Popen(
            [sys.executable, "-I", "-c", FLOOD, str(running.server.port), "2000"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert flood.stdout is not None
            ready = flood.stdout.readline().split()
            assert ready[0] == "ready", ready
            gate = running.server.gate
            for _ in range(50):
                assert health(running.origin, running.token) == 200
            stats = gate.stats()
            assert stats["open"] <= gate.limits.total
            assert stats.get("client_cap", 0) + stats.get("evicted", 0) >= 2000 - 512
        finally:
            flood.kill()
            flood.wait(10)
        wait_for(lambda: gate.stats()["open"] == 0, 20, "the flood's connections closed")


def test_the_code_route_gives_codes_to_token_holders_only(home: Home, tmp_path: Path):
    with serving(home, static=write_page(tmp_path / "web")) as running:
        origin, token = running.origin, running.token
        status, doc = api_call(origin, token, "POST", "/api/codes", {"seconds": 5})
        assert status == 201 and doc["seconds"] == 5
        for bad in ({"seconds": 0}, {"seconds": 10_000}, {"seconds": "60"}, {"seconds": True}):
            with pytest.raises(ApiError) as refused:
                api_call(origin, token, "POST", "/api/codes", bad)
            assert refused.value.status == 400
        url = with_code(origin, "/", doc["code"])
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as first:
            opener.open(url, timeout=10)
        assert first.value.code == 303
        cookie = first.value.headers["Set-Cookie"].split(";")[0]
        with pytest.raises(urllib.error.HTTPError) as again:
            opener.open(url, timeout=10)
        assert again.value.code == 403  # spent
        # The cookie opens pages and reads the API, but asks for no codes.
        request = urllib.request.Request(
            origin + "/api/codes", data=b"{}", method="POST",
            headers={"Cookie": cookie, "Origin": origin, "Content-Type": "application/json"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as cookie_only:
            urllib.request.urlopen(request, timeout=10)
        assert cookie_only.value.code == 403
        # A code past its time is refused too.
        late = running.server.open_url(seconds=1)
        time.sleep(1.3)
        with pytest.raises(urllib.error.HTTPError) as expired:
            opener.open(late, timeout=10)
        assert expired.value.code == 403


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_every_start_has_a_new_token_and_a_new_cookie(home: Home):
    import inspect

    assert "token" not in inspect.signature(LoopbackServer).parameters  # none handed in
    with serving(home) as first, serving(home) as second:
        assert first.token != second.token
        assert first.server.guard.cookie_value != second.server.guard.cookie_value
        assert first.server.guard.cookie_name != second.server.guard.cookie_name


def test_a_flood_of_refusals_logs_one_line(home: Home, caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.INFO), serving(home, peers=FakePeers()) as running:
        for _ in range(300):
            with socket.create_connection(("127.0.0.1", running.server.port), timeout=5) as s:
                s.recv(1024)
        lines = [r for r in caplog.records if "refused a connection" in r.getMessage()]
        assert running.server.gate.refused["foreign"] == 300
    assert len(lines) == 1
    assert all(r.exc_info is None for r in caplog.records)
