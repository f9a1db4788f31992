"""A remote host's usage windows and first reading's progress over a real channel: the far side
is the real ``agentbar channel`` over a temp HOME whose Codex rollout names its windows; the
near side is the real ``Agentbar`` with its loopback server. The host's windows come named by
the host, apart from this machine's (another account may be signed in there), follow the far
files, stay as last known while the host is away; its progress is in its status. A far side that
sends neither (an agentbar from before) is shown without them, and nothing fails."""

from __future__ import annotations

import os
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import write_lines
from cli_runner import agentbar
from codex_lines import CodexRollout
from polling import wait_for
from remote_far import FarHome, make_far, near_settings
from test_limits import codex_limits, window
from test_remote_channel import SLOW, far_pids

from agentbar.core import limits_text
from agentbar.core.app import Agentbar
from agentbar.core.decisions import DecisionBook
from agentbar.core.limits_claude import NOT_KNOWN, NOT_SENT, record_path
from agentbar.core.remote.hosts import HostState, hosts_heard
from agentbar.core.remote.hub import Hub
from agentbar.core.remote.remotes import Remote

FAR_CODEX = "019a2d7a-41c4-78b1-b7cc-a45d62a89c01"
NEAR_CODEX = "019a2d7a-41c4-78b1-b7cc-a45d62a89c02"


def codex_rollout(codex_home: Path, session_id: str, used: float, *, at: float) -> Path:
    """A Codex rollout whose last ``token_count`` says ``used`` % of the 5 h window and 7 %
    of the week are used, observed at ``at``."""
    r = CodexRollout(session_id, "/srv/limits", start=at - 60)
    token_count = r.tokens(100, 0, 10)
    token_count["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(at))
    token_count["payload"]["rate_limits"] = codex_limits(
        window(used, 300, at + 3600), window(7.0, 10080, at + 86400)
    )
    path = codex_home / "sessions" / "2026" / "12" / "02"
    path = path / f"rollout-2026-12-02T10-00-00-{session_id}.jsonl"
    write_lines(path, [r.meta(), r.started(), r.prompt("hi"), token_count])
    return path


def get(server: Any, path: str) -> Any:
    """A GET of the near server's API with its token (plain urllib: a browser test's event
    loop may be running in this thread)."""
    request = urllib.request.Request(
        server.origin + path, headers={"Authorization": f"Bearer {server.token}"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=30) as response:
        return orjson.loads(response.read())


def drop(far: FarHome) -> Path:
    """The far side ends and cannot start again (its data dir is a file now) until ``back``:
    the host stays away as long as a test looks at it."""
    away = far.data.with_name("data.away")
    far.data.rename(away)
    far.data.write_text("not a folder")
    for proc in far_pids(far):
        proc.send_signal(signal.SIGKILL)
    return away


def back(far: FarHome, away: Path) -> None:
    far.data.unlink()
    away.rename(far.data)


@pytest.fixture
def far(tmp_path: Path) -> FarHome:
    far = make_far(tmp_path / "far")
    codex_rollout(far.home / ".codex", FAR_CODEX, 38.0, at=time.time() - 30)
    return far


def by_host(limits: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(w["host"], w["window"]): w for w in limits if w["agent"] == "codex"}


def test_a_host_s_windows_and_progress_come_named_and_apart_from_this_machine_s(
    far: FarHome, tmp_path: Path
) -> None:
    near = tmp_path / "near"
    codex_rollout(near / "home" / ".codex", NEAR_CODEX, 10.0, at=time.time() - 30)
    app = Agentbar.open(near_settings(near, far), tasks=False)
    try:
        with app.serving() as server:
            app.start()
            wait_for(lambda: any(w.host == "box" for w in app.limits()), SLOW, "box's windows")
            got = get(server, "/api/limits")
            windows = by_host(got["limits"])
            assert set(windows) == {
                ("local", "5h"), ("local", "weekly"), ("box", "5h"), ("box", "weekly"),
            }  # fmt: skip
            # Never merged: each host's own percent, its own words.
            assert windows[("local", "5h")]["used_percent"] == 10.0
            assert windows[("box", "5h")]["used_percent"] == 38.0
            assert windows[("local", "5h")]["text"].startswith("Codex: 90 % of 5 h left")
            assert windows[("box", "5h")]["text"].startswith("Codex on box: 62 % of 5 h left")
            assert not windows[("box", "5h")]["stale"]
            # This machine's note, then box's own, in the same words, named by it.
            assert got["notes"] == [NOT_KNOWN, f"box: {NOT_KNOWN}"]

            # Its first reading: done, in its status (the API's hosts), named by host.
            (host,) = wait_for(lambda: _done(get(server, "/api/hosts")["hosts"]), SLOW, "done")
            assert host["progress"]["host"] == "box" and host["progress"]["fraction"] == 1.0

            # A new observation there moves the window here.
            codex_rollout(far.home / ".codex", FAR_CODEX, 55.0, at=time.time())
            wait_for(lambda: _used(app, "box") == 55.0, 30, "box's new percent")
            assert _used(app, "local") == 10.0

            # The host goes: its windows stay as last known, saying so; its progress goes.
            pids = far_pids(far)
            away = drop(far)
            wait_for(lambda: app.hosts()[0].state is HostState.UNREACHABLE, 20, "the drop")
            wait_for(lambda: not any(p.is_running() for p in pids), 20, "the far side's end")
            assert app.hosts()[0].progress is None
            windows = by_host(get(server, "/api/limits")["limits"])
            assert windows[("box", "5h")]["stale"] is True
            assert windows[("box", "5h")]["used_percent"] == 55.0
            assert "box not connected" in windows[("box", "5h")]["text"]
            assert not windows[("local", "5h")]["stale"]
            # Its notes stay too, as last known.
            notes = get(server, "/api/limits")["notes"]
            assert notes == [NOT_KNOWN, f"box: {NOT_KNOWN} (last known, box not connected)"]
            back(far, away)
            wait_for(lambda: app.hosts()[0].state is HostState.CONNECTED, SLOW, "the reconnect")
            wait_for(lambda: not any(w.stale for w in app.limits()), 20, "fresh again")
    finally:
        app.close()


def _done(hosts: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    return hosts if hosts[0]["progress"] and hosts[0]["progress"]["done"] else None


def _used(app: Agentbar, host: str) -> float | None:
    return next((w.used_percent for w in app.limits() if (w.host, w.window) == (host, "5h")), None)


def older_hub(far: FarHome, tmp_path: Path, patch: str) -> Hub:
    """A hub here over the real channel to an older far side: a module run in agentbar's place
    that applies ``patch`` (Python, with ``far`` the far side's module), then runs agentbar."""
    older = tmp_path / "older"
    older.mkdir()
    (older / "older_agentbar.py").write_text(
        "import runpy\n"
        "from agentbar.core.remote import far\n"
        f"{patch}"
        "runpy.run_module('agentbar.tray', run_name='__main__', alter_sys=True)\n"
    )
    remote = far.remote("box")
    command = (remote.command[0], f"PYTHONPATH={older}", *remote.command[1:])
    hub = Hub([Remote("box", command, "older_agentbar")], DecisionBook())
    hub.start()
    return hub


def test_a_far_side_that_sends_neither_is_shown_without_them(far: FarHome, tmp_path: Path) -> None:
    """An agentbar from before the ``limits`` and ``progress`` frames: the real channel with
    them taken out (a module run in its place that stubs the sender, then runs agentbar)."""
    hub = older_hub(far, tmp_path, "far.FarSide.send_gauges = lambda self, **_: None\n")
    try:
        wait_for(lambda: hub.links["box"].connected, SLOW, "the older far side")
        assert {s.key.session_id for s in hub.sessions()} == {FAR_CODEX}
        time.sleep(3.0)  # a round of updates: room for any limits or progress to show up
        assert hub.limits() == ()
        (status,) = hub.hosts()
        assert status.state is HostState.CONNECTED and status.progress is None
        assert status.to_json()["progress"] is None
        assert hub.links["box"].call("ping", {})["at"] > 0  # the channel still answers
    finally:
        hub.stop()


def test_a_far_side_that_does_not_say_what_it_heard_has_windows_and_no_notes(
    far: FarHome, tmp_path: Path
) -> None:
    """An agentbar from before ``heard``: the real channel whose limits frame goes without it
    (a module run in its place drops it on the way out). Its windows still show; of its notes
    nothing is said (whether its sources spoke is not known here)."""
    hub = older_hub(
        far,
        tmp_path,
        "send = far.FarSide._send\n"
        "def _send(self, frame):\n"
        "    send(self, {k: v for k, v in frame.items() if k != 'heard'})\n"
        "far.FarSide._send = _send\n",
    )
    try:
        wait_for(lambda: len(hub.limits()) == 2, SLOW, "the older far side's windows")
        (status,) = hub.hosts()
        assert status.state is HostState.CONNECTED and status.heard is None
        assert limits_text.notes(hub.limits()) == [NOT_KNOWN]  # this machine's alone
        assert limits_text.host_notes(hub.limits(), hosts_heard(hub.hosts())) == []
    finally:
        hub.stop()


def test_a_host_s_notes_come_from_what_its_sources_heard(far: FarHome, tmp_path: Path) -> None:
    """The same far side, told: box's note from its ``heard``, and with it the windows' frame;
    then box's Claude status line speaks: its note changes to say so."""
    hub = Hub([far.remote("box")], DecisionBook())
    hub.start()
    try:
        wait_for(lambda: hub.hosts()[0].heard is not None, SLOW, "box's heard")
        assert limits_text.host_notes(hub.limits(), hosts_heard(hub.hosts())) == [
            f"box: {NOT_KNOWN}"
        ]
        record = record_path(far.data)
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_bytes(orjson.dumps({"model": {"id": "claude-sonnet-4-5"}}))
        wait_for(lambda: hub.hosts()[0].heard == {"claude"}, 30, "box's Claude heard")
        assert limits_text.host_notes(hub.limits(), hosts_heard(hub.hosts())) == [
            f"box: {NOT_SENT}"
        ]
    finally:
        hub.stop()


def test_status_shows_the_host_s_windows_apart_and_in_its_json(
    far: FarHome, tmp_path: Path
) -> None:
    near = tmp_path / "near"
    codex_rollout(near / "home" / ".codex", NEAR_CODEX, 10.0, at=time.time() - 30)
    near_settings(near, far)  # settings.toml with the far side as ``box``
    # box's Claude status line spoke without windows (an API-key login there): box's note.
    record = record_path(far.data)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_bytes(orjson.dumps({"model": {"id": "claude-sonnet-4-5"}}))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))},
        "HOME": str(near / "home"),
        "AGENTBAR_DATA_DIR": str(near / "data"),
        "AGENTBAR_CONFIG_DIR": str(near / "config"),
    }
    done = agentbar(env, "status", timeout=120)
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("Limits: Codex: 90 % of 5 h left, resets ")
    # This machine's, its note, then the host's, named.
    assert f"; {NOT_KNOWN}; Codex on box: 62 % of 5 h left, resets " in last
    assert last.endswith(f"; box: {NOT_SENT}")  # box's own note, after its windows
    document = orjson.loads(agentbar(env, "status", "--json", timeout=120).stdout)
    seen = [(w["host"], w["window"], w["used_percent"]) for w in document["limits"]["limits"]]
    assert seen == [("local", "5h", 10.0), ("local", "weekly", 7.0),
                    ("box", "5h", 38.0), ("box", "weekly", 7.0)]  # fmt: skip
    assert document["limits"]["notes"] == [NOT_KNOWN, f"box: {NOT_SENT}"]
    assert document["progress"]["host"] == "local"
    (host,) = document["hosts"]
    assert host["name"] == "box" and host["progress"]["host"] == "box"
