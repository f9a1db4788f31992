"""Remote hosts in the tray's view (pure): each section groups its sessions by host, a remote's
session names its host, an unreachable host is one line saying since when and why, a remote
request is matched to its own host's session, and a notification names the host."""

from __future__ import annotations

import dataclasses
import time

from tray_values import NAMES, T0, approval, change, snap

from agentbar.core.decisions import PendingRequest, RequestKind, Route
from agentbar.core.engine_messages import IndexProgress
from agentbar.core.model import Agent, SessionKey, State
from agentbar.core.remote.hosts import HostState, HostStatus
from agentbar.tray import actions
from agentbar.tray.notices import Transition, headline, single
from agentbar.tray.preferences import Preferences
from agentbar.tray.presenter import TrayState, present

NOW = T0 + 60


def on(host: str, s):  # type: ignore[no-untyped-def]
    return dataclasses.replace(s, key=SessionKey(s.key.agent, s.key.session_id, host))


def labels(tray: TrayState, snaps: list) -> list[str]:  # type: ignore[type-arg]
    view = present(snaps, now=NOW, prefs=Preferences(), tray=dataclasses.replace(tray, names=NAMES))
    return [e.label for e in view.menu if not e.separator]


def test_sections_group_sessions_by_host_and_name_the_remote() -> None:
    sessions = [
        on(
            "devbox",
            snap("r1", State.RUNNING, project="/srv/web", title="Remote work", since=T0 + 30),
        ),
        snap("l1", State.RUNNING, project="/work/api", title="Local work", since=T0 + 5),
        on("devbox", approval("r2", project="/srv/api", since=T0)),
        approval("l2", project="/work/db", since=T0 + 20),
    ]
    found = labels(TrayState(), sessions)
    assert found[:6] == [
        "Needs you (2)",
        "Claude Code · db — approve Bash: rm -rf build",  # this machine's first
        "Claude Code · api on devbox — approve Bash: rm -rf build",
        "Running (2)",
        "Claude Code · api — Local work",
        "Claude Code · web on devbox — Remote work",
    ]


def test_an_unreachable_host_is_a_line_saying_since_when_and_why() -> None:
    since = time.mktime((2026, 12, 2, 14, 2, 0, 0, 0, -1))
    hosts = (
        HostStatus(
            name="devbox", state=HostState.UNREACHABLE, since=since, detail="connection dropped"
        ),
        HostStatus(name="ok", state=HostState.CONNECTED, since=since),
    )
    found = labels(TrayState(hosts=hosts), [])
    assert "devbox: unreachable since 14:02 (connection dropped)" in found
    assert not any(label.startswith("ok:") for label in found)


def test_a_remote_request_belongs_to_its_hosts_session_not_a_local_one() -> None:
    request = PendingRequest(
        request_id="r", agent="claude", session_id="same", kind=RequestKind.APPROVAL,
        route=Route.HOOK, tool="Bash", summary="ls", opened_at=T0, host="devbox",
    )  # fmt: skip
    sessions = [on("devbox", approval("same")), snap("same", State.RUNNING)]
    view = present(sessions, now=NOW, prefs=Preferences(),
                   tray=TrayState(requests=(request,), names=NAMES))  # fmt: skip
    assert view.badge.needs == 1  # the remote's waiting session, not an "unseen" request too


def test_notices_name_the_host_and_open_its_replay_with_it() -> None:
    remote = on("devbox", approval("r2", project="/srv/api"))
    t = Transition.of(change(remote), NAMES)
    assert headline(t) == "Claude Code in api on devbox needs your approval"
    assert single(t).click == actions.open_session(remote.key)
    assert actions.session_path(remote.key) == "/session/claude/r2?host=devbox"
    local = approval("l2", project="/work/db")
    assert headline(Transition.of(change(local), NAMES)) == "Claude Code in db needs your approval"
    assert actions.session_path(local.key) == "/session/claude/l2"
    assert Agent("claude") == remote.key.agent


def test_a_host_s_first_reading_is_a_line_and_in_the_tooltip_while_it_goes_on() -> None:
    reading = IndexProgress(live_ready=True, done=False, files_done=3, files_total=9,
                            bytes_done=1_395_864_371, bytes_total=3_328_599_654)  # fmt: skip
    devbox = HostStatus(name="devbox", state=HostState.CONNECTED, since=NOW, progress=reading)
    view = present([], now=NOW, prefs=Preferences(), tray=TrayState(hosts=(devbox,)))
    assert view.menu[0].label == "devbox: Reading history: 41 % (1.3 of 3.1 GB)"
    assert view.tooltip == (
        "agentbar: nothing needs you; devbox: Reading history: 41 % (1.3 of 3.1 GB)"
    )
    # Done, not told (an older agentbar there), or gone with the connection: nothing.
    for status in (
        dataclasses.replace(devbox, progress=IndexProgress(live_ready=True, done=True)),
        dataclasses.replace(devbox, progress=None),
        dataclasses.replace(devbox, state=HostState.CONNECTING),
    ):
        view = present([], now=NOW, prefs=Preferences(), tray=TrayState(hosts=(status,)))
        assert not any("Reading" in e.label for e in view.menu)
        assert view.tooltip == "agentbar: nothing needs you"
