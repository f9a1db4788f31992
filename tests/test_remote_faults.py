"""What a channel's far end can do wrong, each through a real child process: a login banner
before the hello (skipped), a line that is not JSON or is longer than a frame after it, a far
side of another protocol, one that says nothing: each host is unreachable with its reason in
one line while the other hosts go on."""

from __future__ import annotations

import time
from pathlib import Path

from polling import wait_for
from remote_far import make_far
from test_cli import write_claude

from agentbar.core.decisions import DecisionBook
from agentbar.core.remote import link as link_module
from agentbar.core.remote.hosts import HostState
from agentbar.core.remote.hub import Hub
from agentbar.core.remote.remotes import Remote

A = "aaaaaaaa-0000-4000-8000-0000000000f1"
HELLO = '{"t":"hello","protocol":1,"version":"x","boot":"b"}'
LIST = '{"t":"sessions","sessions":[],"last":true}'


def scripted(name: str, script: str) -> Remote:
    """A far end that runs ``script`` (its ``agentbar channel`` words are ``$1 $2``)."""
    return Remote(name, ("sh", "-c", script, "sh"), "agentbar")


def test_a_banner_before_the_hello_is_skipped(tmp_path: Path) -> None:
    far = make_far(tmp_path / "far")
    write_claude(far.home / ".claude", A, "/srv/a", "behind a banner", start=time.time() - 60)
    plain = far.remote("motd")
    banner = 'printf "Welcome to box\\nLast login: Tue from 10.0.0.1\\n{not json}\\n"; exec "$@"'
    remote = Remote("motd", ("sh", "-c", banner, "sh", *plain.command), plain.program)
    hub = Hub([remote], DecisionBook())
    hub.start()
    try:
        wait_for(lambda: hub.links["motd"].connected, 60, "the channel past the banner")
        assert [s.title for s in hub.sessions()] == ["behind a banner"]
    finally:
        hub.stop()


def test_faulty_far_ends_are_unreachable_each_with_its_reason(tmp_path: Path) -> None:
    far = make_far(tmp_path / "far")
    write_claude(far.home / ".claude", A, "/srv/a", "the good one", start=time.time() - 60)
    remotes = [
        scripted("garbage", f"echo '{HELLO}'; echo '{LIST}'; echo 'oops'; sleep 30"),
        scripted("huge", f"echo '{HELLO}'; head -c 1100000 /dev/zero | tr '\\0' a; sleep 30"),
        scripted("other", """echo '{"t":"hello","protocol":99}'; sleep 30"""),
        scripted("crash", f"echo '{HELLO}'; echo '{LIST}'; exit 3"),
        scripted("cut", f"echo '{HELLO}'; echo '{LIST}'; printf '{{\"t\":\"chan'; exit 0"),
        far.remote("good"),
    ]
    hub = Hub(remotes, DecisionBook())
    hub.start()
    try:
        wait_for(lambda: hub.links["good"].connected, 60, "the good host")

        def settled() -> dict[str, str] | None:
            found = {h.name: h.detail for h in hub.hosts() if h.state is HostState.UNREACHABLE}
            return found if len(found) == 5 else None

        details = wait_for(settled, 30, "the five faulty hosts unreachable")
        assert details["garbage"].startswith("the far side is not a matching agentbar (not JSON")
        assert "longer than 1048576 bytes" in details["huge"]
        assert "protocol 99" in details["other"]
        assert details["crash"].startswith("connection dropped")
        assert details["cut"].startswith("connection dropped")  # mid-frame
        assert hub.links["good"].connected
        assert [s.title for s in hub.sessions()] == ["the good one"]
    finally:
        hub.stop()


def test_frames_that_do_not_read_are_skipped_and_the_link_stays(tmp_path: Path) -> None:
    odd = [
        '{"t":"sessions","sessions":"x","last":true,"seq":"zz"}',
        '{"t":"change","seq":"y","session":5}',
        '{"t":"update","session":{"agent":"claude"}}',
        '{"t":"decision","opened":true,"request":{"request_id":"r"}}',
        '{"t":"reply","id":"nope"}',
    ]
    lines = "; ".join(f"echo '{line}'" for line in odd)
    script = f"echo '{HELLO}'; echo '{LIST}'; {lines}; echo '{LIST}'; echo '{HELLO}'; sleep 30"
    book = DecisionBook()
    hub = Hub([scripted("odd", script)], book)
    hub.start()
    try:
        wait_for(lambda: hub.links["odd"].connected, 20, "the link")
        time.sleep(1.0)
        status = hub.hosts()[0]
        assert status.state is HostState.CONNECTED, status
        assert hub.sessions() == [] and book.pending() == ()
    finally:
        hub.stop()


def test_a_far_end_slow_to_answer_is_a_timeout_not_a_hang(tmp_path: Path) -> None:
    hub = Hub([scripted("slow", f"echo '{HELLO}'; echo '{LIST}'; sleep 30")], DecisionBook())
    hub.start()
    try:
        link = hub.links["slow"]
        wait_for(lambda: link.connected, 20, "the link")
        started = time.monotonic()
        try:
            link.call("page", {"agent": "claude", "id": "x"}, timeout=1.0)
        except link_module.RemoteError as exc:
            assert exc.kind == "timeout"
        else:
            raise AssertionError("a call nobody answers returned")
        assert time.monotonic() - started < 5
        assert link.connected  # slow is not down
    finally:
        hub.stop()


def test_a_far_end_that_says_nothing_times_out(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(link_module, "HELLO_SECONDS", 1.0)
    hub = Hub([scripted("mute", "sleep 30")], DecisionBook())
    hub.start()
    try:
        status = wait_for(
            lambda: (h := hub.hosts()[0]).state is HostState.UNREACHABLE and h, 20, "the timeout"
        )
        assert status.detail.startswith("timed out")
    finally:
        hub.stop()
