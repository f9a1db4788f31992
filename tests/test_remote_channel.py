"""Remote hosts end to end over a real channel: the far side is the real ``agentbar channel``
with its real engine over a temp HOME holding Claude sessions, reached by a local command as a
container's ``exec -i`` would be; the near side is the real hub (and the real ``Agentbar`` and
loopback server). Sessions appear with their host, change state once, replay and search through
the channel, a held approval is answered from here, and killing the far side reports nothing
twice after the reconnect while this machine's own sessions go on."""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import psutil
import pytest
from cli_runner import agentbar, start_agentbar
from polling import end_process, wait_for
from remote_far import (
    FarHome,
    end_far_agents,
    make_far,
    near_settings,
    older_far,
    settings_with_far_module,
)
from test_cli import write_claude, write_codex
from test_hook_route import finish, permission_request, start_hook

from agentbar.core.app import Agentbar
from agentbar.core.config import Settings
from agentbar.core.decisions import Decision, DecisionBook, StaleRequest, Verdict
from agentbar.core.model import State, StateChange
from agentbar.core.remote.hosts import HostState
from agentbar.core.remote.hub import Hub
from agentbar.core.remote.link import RemoteError
from agentbar.core.server.remote_routes import refused

A = "aaaaaaaa-0000-4000-8000-00000000000a"
B = "bbbbbbbb-0000-4000-8000-00000000000b"
LIVE = "cccccccc-0000-4000-8000-00000000000c"
LOCAL = "dddddddd-0000-4000-8000-00000000000d"
CODEX = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd6"
SLOW = 60.0  # a far side's first start imports and reads everything; generous on a busy box


class Heard:
    """Every change the hub reports, in order (its links' threads)."""

    def __init__(self) -> None:
        self.changes: list[StateChange] = []
        self._lock = threading.Lock()

    def __call__(self, change: StateChange) -> None:
        with self._lock:
            self.changes.append(change)

    def states(self, session_id: str) -> list[str]:
        with self._lock:
            return [str(c.snapshot.state.state) for c in self.changes
                    if c.snapshot.key.session_id == session_id]  # fmt: skip


@pytest.fixture
def far(tmp_path: Path) -> Iterator[FarHome]:
    far = make_far(tmp_path / "far")
    far.claude(A, "/srv/api", "remote hello world", start=time.time() - 600)
    far.claude(B, "/srv/web", "another remote prompt", start=time.time() - 300)
    write_codex(far.home / ".codex", CODEX, "/srv/parser", "a codex prompt there",
                start=time.time() - 200)  # fmt: skip
    yield far
    end_far_agents(far)  # a far task outlives its channel: a test that dropped the host leaves it


@pytest.fixture
def hub(far: FarHome) -> Iterator[Hub]:
    hub = Hub([far.remote("box")], DecisionBook())
    hub.start()
    try:
        yield hub
    finally:
        hub.stop()


def connected(hub: Hub, name: str = "box") -> bool:
    return hub.links[name].connected


def far_pids(far: FarHome) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["environ", "cmdline"]):
        try:
            environ = proc.info["environ"] or {}
            if environ.get("AGENTBAR_DATA_DIR") == str(far.data) and "channel" in (
                proc.info["cmdline"] or []
            ):
                found.append(proc)
        except (psutil.Error, TypeError):
            continue
    return found


def test_sessions_appear_with_their_host_and_replay_through_the_channel(hub: Hub) -> None:
    wait_for(lambda: connected(hub), SLOW, "the channel")
    sessions = {s.key.session_id: s for s in hub.sessions()}
    assert set(sessions) == {A, B, CODEX}
    assert {s.key.host for s in sessions.values()} == {"box"}
    assert (sessions[CODEX].key.agent, sessions[CODEX].project) == ("codex", "/srv/parser")
    assert sessions[A].title == "remote hello world"
    assert sessions[A].to_json()["host"] == "box"
    (status,) = hub.hosts()
    assert (status.name, status.state, status.sessions) == ("box", HostState.CONNECTED, 3)
    link = hub.links["box"]
    page = link.call("page", {"agent": "claude", "id": A})
    assert [item["text"] for item in page["items"] if item["kind"] == "user"] == [
        "remote hello world"
    ]
    first = page["items"][0]
    item = link.call("item", {"agent": "claude", "id": A, "offset": first["offset"],
                              "index": first["index"]})  # fmt: skip
    assert item["text"] == "remote hello world"
    hits = wait_for(lambda: link.call("search", {"q": "another"}), 20, "a search hit")
    assert [h["session_id"] for h in hits] == [B]
    text = "".join(link.stream("export", {"agent": "claude", "id": A, "format": "md"}))
    assert "remote hello world" in text
    with pytest.raises(RemoteError) as missing:
        link.call("page", {"agent": "claude", "id": "no-such"})
    assert missing.value.kind == "not_found"


def test_a_change_on_the_far_side_is_reported_once_and_never_again_after_a_reconnect(
    far: FarHome, hub: Hub
) -> None:
    heard = Heard()
    hub.subscribe(heard)
    wait_for(lambda: connected(hub), SLOW, "the channel")
    assert heard.changes == []  # what was there before is shown, not reported
    far.live(LIVE, "/srv/live", "make it so")
    wait_for(lambda: heard.states(LIVE) == ["running"], 20, "the running session")
    far.set_status(LIVE, "/srv/live", "waiting", waiting_for="permission prompt")
    wait_for(lambda: heard.states(LIVE) == ["running", "input_required"], 20, "the approval")
    change = heard.changes[-1]
    assert change.snapshot.key.host == "box" and change.prev is not None
    assert change.prev.state is State.RUNNING

    # The far side dies mid-stream: the host is unreachable, then back by itself.
    for proc in far_pids(far):
        proc.send_signal(signal.SIGKILL)
    wait_for(lambda: hub.hosts()[0].state is HostState.UNREACHABLE, 20, "unreachable")
    assert hub.hosts()[0].detail.startswith("connection dropped")
    assert {s.key.session_id for s in hub.sessions()} >= {A, B, CODEX, LIVE}  # kept as last seen
    wait_for(lambda: connected(hub), SLOW, "the reconnect")
    time.sleep(3.0)  # a full list, then updates: room for a duplicate to show up
    assert heard.states(LIVE) == ["running", "input_required"]

    # Meanwhile-changes are reported once: the approval was given in the terminal.
    for proc in far_pids(far):
        proc.send_signal(signal.SIGKILL)
    wait_for(lambda: not connected(hub), 20, "the drop")
    far.set_status(LIVE, "/srv/live", "busy")
    wait_for(lambda: connected(hub), SLOW, "the second reconnect")
    wait_for(lambda: len(heard.states(LIVE)) == 3, 20, "the change made meanwhile")
    time.sleep(3.0)
    assert heard.states(LIVE) == ["running", "input_required", "running"]


def test_a_held_approval_on_the_far_side_is_answered_from_here(far: FarHome) -> None:
    book = DecisionBook()
    hub = Hub([far.remote("box")], book)
    hub.start()
    try:
        wait_for(lambda: connected(hub), SLOW, "the channel")
        wait_for((far.data / "server.json").exists, 20, "the far side's server")
        hook = start_hook(far.data, permission_request())
        (request,) = wait_for(book.pending, 20, "the mirrored request")
        assert (request.host, request.tool, request.summary) == (
            "box",
            "Bash",
            "npm test -- --watch=false",
        )
        book.decide(Decision(request.request_id, Verdict.ALLOW, origin="test"))
        code, out, _ = finish(hook, 20)
        assert code == 0 and b'"behavior":"allow"' in out.replace(b" ", b"")
        # A second hook, withdrawn on the far side (it goes away): the copy here goes too,
        # and an answer to it is refused, not sent.
        hook = start_hook(far.data, permission_request())
        (second,) = wait_for(book.pending, 20, "the second request")
        hook.kill()
        hook.wait()
        wait_for(lambda: not book.pending(), 20, "the withdrawal")
        with pytest.raises(StaleRequest):
            book.decide(Decision(second.request_id, Verdict.ALLOW, origin="test"))
        # A host lost while a request waits: the copy here is withdrawn (an answer could not
        # reach it), never left to take an answer that goes nowhere.
        hook = start_hook(far.data, permission_request())
        (third,) = wait_for(book.pending, 20, "the third request")
        for proc in far_pids(far):
            proc.send_signal(signal.SIGKILL)
        wait_for(lambda: not book.pending(), 20, "the withdrawal of a lost host's request")
        with pytest.raises(StaleRequest):
            book.decide(Decision(third.request_id, Verdict.ALLOW, origin="test"))
        hook.kill()
        hook.wait()
    finally:
        hub.stop()


def test_a_host_that_is_not_there_is_unreachable_and_the_rest_goes_on(
    far: FarHome, tmp_path: Path
) -> None:
    # "env ... no-such-agentbar channel": exit 127, as a shell over ssh or docker exec says
    # of a program that is not installed.
    missing = type(far.remote())("gone", far.remote().command[:-2], "no-such-agentbar")
    down = far.remote("down")
    down = type(down)("down", ("sh", "-c", "echo 'ssh: connect to host x port 22: "
                               "Connection refused' >&2; exit 255", "--"), "agentbar")  # fmt: skip
    hub = Hub([missing, down, far.remote("box")], DecisionBook())
    hub.start()
    try:
        wait_for(lambda: connected(hub, "box"), SLOW, "the good host")
        states = wait_for(
            lambda: (
                (hosts := {h.name: h for h in hub.hosts()})
                and hosts["gone"].state is HostState.UNREACHABLE
                and hosts["down"].state is HostState.UNREACHABLE
                and hosts
            ),
            SLOW,
            "the bad hosts unreachable",
        )
        assert states["gone"].detail.startswith(
            "agentbar is not installed on gone: install it there with: pipx install agentbar"
        ), states["gone"].detail
        assert states["down"].detail.startswith("host down"), states["down"].detail
        assert {s.key.host for s in hub.sessions()} == {"box"}
    finally:
        hub.stop()


KEYS = "keys-typed-one-by-one-0123456789-abcdefghijklmnopqrstuvwxyz"


def test_the_app_and_its_server_show_every_host(far: FarHome, tmp_path: Path) -> None:
    near = tmp_path / "near"
    write_claude(near / "home" / ".claude", LOCAL, "/w/here", "a local one",
                 start=time.time() - 60)  # fmt: skip
    app = Agentbar.open(near_settings(near, far), tasks=False)
    try:
        with app.serving() as server:
            app.start()
            wait_for(lambda: {s.key.host for s in app.sessions()} == {"local", "box"}, SLOW,
                     "both hosts' sessions")  # fmt: skip
            assert [h.name for h in app.hosts()] == ["box"]
            hosts = get(server, "/api/hosts")
            assert hosts["hosts"][0]["name"] == "box"
            assert hosts["hosts"][0]["state"] == "connected"
            listed = get(server, "/api/sessions?all=1")
            assert {(s["session_id"], s["host"]) for s in listed["sessions"]} >= {
                (LOCAL, "local"),
                (A, "box"),
            }
            page = get(server, f"/api/sessions/{A}/items?host=box")
            assert page["host"] == "box"
            assert any(i.get("text") == "remote hello world" for i in page["items"])
            local = get(server, f"/api/sessions/{LOCAL}/items")
            assert local["host"] == "local"
            assert get(server, f"/api/sessions/{A}/items?host=elsewhere", status=404)
            # A launch on the host runs there (the far side's fake claude), never here.
            project = far.root / "project"
            project.mkdir()
            body = {"agent": "claude", "project": str(project), "prompt": "hi", "host": "box"}
            launched = post(server, "/api/tasks", body, status=201)["task"]
            assert launched["host"] == "box"
            task_id = launched["task_id"]
            hosts_of_task = lambda: {s.key.host for s in app.sessions() if s.task_id == task_id}  # noqa: E731
            wait_for(hosts_of_task, SLOW, "the launched session there")
            assert hosts_of_task() == {"box"}
            # Its terminal through the channel: the scrollback, typing, the end.
            # Typed a key at a time (as a person types), the keys reach it in their order.
            seen = terminal_session(server, task_id, "box", [*KEYS, "\r", "/exit\r"])
            assert "Fake Claude Code" in seen, seen[-500:]
            assert KEYS in seen, seen[-500:]
            missing = get(server, "/api/tasks/abc/terminal?host=box", status=404)
            assert missing["error"]["message"] == "no task 'abc'"
            unknown = post(server, "/api/tasks", {**body, "host": "elsewhere"}, status=404)
            assert unknown["error"]["code"] == "not_found"
            # A hand-off of a remote session is read there, never from a local file.
            handoff = get(server, f"/api/sessions/{A}/handoff?host=box&what=answer")
            assert handoff["text"] == "Done."
            # The board's stream says how the hosts are, and when one changes.
            stream = Stream(server)
            hello = stream.next()
            assert [h["name"] for h in hello["hosts"]] == ["box"]
            # The far side goes; this machine's sessions are served as before.
            for proc in far_pids(far):
                proc.send_signal(signal.SIGKILL)
            wait_for(lambda: app.hosts()[0].state is not HostState.CONNECTED, 20, "the drop")
            told = stream.until(lambda m: m.get("type") == "host")
            assert told["host"]["state"] in ("unreachable", "connecting")
            stream.close()
            refused = get(server, f"/api/sessions/{A}/items?host=box", status=503)
            assert refused["error"]["code"] == "host_unreachable"
            assert get(server, f"/api/sessions/{LOCAL}/items")["host"] == "local"
    finally:
        app.close()


RESUMED = "eeeeeeee-0000-4000-8000-00000000000e"


def test_a_far_session_is_resumed_forked_and_handed_off_there(far: FarHome, tmp_path: Path) -> None:
    """Resume and fork run on the session's own host through its channel (this machine
    launches nothing: its app has no task manager), their terminals reached as a remote
    launch's; a hand-off is read there; a refusal there keeps its status; a host gone is a
    503 at once."""
    project = far.root / "resumed"
    project.mkdir()
    far.claude(RESUMED, str(project), "the remote work", start=time.time() - 100)
    near = tmp_path / "near"
    write_claude(near / "home" / ".claude", LOCAL, "/w/here", "the local question",
                 start=time.time() - 60)  # fmt: skip
    app = Agentbar.open(near_settings(near, far), tasks=False)
    base = f"/api/sessions/{RESUMED}"
    try:
        with app.serving() as server:
            app.start()
            wait_for(lambda: any(s.key.session_id == RESUMED for s in app.sessions()), SLOW,
                     "the far session")  # fmt: skip
            assert app.hub is not None
            resumed = post(server, f"{base}/resume?host=box", {}, status=201)["task"]
            assert (resumed["host"], resumed["mode"], resumed["source"]) == (
                "box",
                "resume",
                RESUMED,
            )
            task_of = lambda task_id: [s for s in app.sessions() if s.task_id == task_id]  # noqa: E731
            bound = wait_for(lambda: task_of(resumed["task_id"]), SLOW, "the resumed task there")
            assert [(s.key.host, s.key.session_id) for s in bound] == [("box", RESUMED)]
            again = post(server, f"{base}/resume?host=box", {}, status=409)
            assert again["error"]["code"] == "already_running"
            # This machine's session handed to the task running there: typed into it there.
            registry = far.home / ".claude" / "sessions" / f"{resumed['pid']}.json"
            wait_for(registry.exists, SLOW, "the resumed agent ready for input there")
            body = {"what": "brief", "to": {"task": resumed["task_id"], "host": "box"}}
            typed = post(server, f"/api/sessions/{LOCAL}/handoff", body, status=200)
            assert typed["task"]["host"] == "box" and typed["chars"] > 0
            # (Its transcript there: Claude's folder name makes every "_" of the path a "-".)
            projects = far.home / ".claude" / "projects"
            told = lambda: any(  # noqa: E731
                "You said: # Hand-off" in t.read_text() for t in projects.glob(f"*/{RESUMED}.jsonl")
            )
            wait_for(told, SLOW, "the brief typed into the far agent and answered there")
            body["to"] = {"task": resumed["task_id"], "host": "elsewhere"}
            assert post(server, f"/api/sessions/{LOCAL}/handoff", body, status=404)
            seen = terminal_session(server, resumed["task_id"], "box", ["/exit\r"])
            assert "Fake Claude Code" in seen, seen[-500:]

            forked = post(server, f"{base}/fork?host=box", {"prompt": "go on"}, status=201)
            forked = forked["task"]
            assert (forked["host"], forked["mode"], forked["source"]) == ("box", "fork", RESUMED)
            bound = wait_for(lambda: task_of(forked["task_id"]), SLOW, "the forked task there")
            assert bound[0].key.host == "box" and bound[0].key.session_id != RESUMED
            terminal_session(server, forked["task_id"], "box", ["/exit\r"])

            # A hand-off to a new agent: launched where the session lives, in its folder.
            # Its last answer there is now the far agent's to the brief typed above.
            answer = get(server, f"{base}/handoff?host=box&what=answer")["text"]
            assert answer.startswith("You said: # Hand-off: the local question"), answer
            body = {"what": "answer", "to": {"agent": "claude"}}
            handed = post(server, f"{base}/handoff?host=box", body, status=201)
            assert handed["chars"] == len(answer)
            assert (handed["task"]["host"], handed["task"]["project"]) == ("box", str(project))
            assert handed["task"]["prompt"].startswith("You said: # Hand-off")
            terminal_session(server, handed["task"]["task_id"], "box", ["/exit\r"])

            # Refusals made there keep their meaning here.
            gone = post(server, f"/api/sessions/{A}/resume?host=box", {}, status=400)
            assert gone["error"]["code"] == "bad_launch", gone
            assert "/srv/api" in gone["error"]["message"]
            with pytest.raises(RemoteError) as unknown:
                app.hub.links["box"].call("relaunch", {"agent": "claude", "id": LOCAL,
                                                       "mode": "resume"})  # fmt: skip
            assert unknown.value.kind == "not_found"
            assert refused(unknown.value).status == 404
            with pytest.raises(RemoteError) as older:
                app.hub.links["box"].call("no-such-call", {})
            assert refused(older.value).status == 501

            # The host goes: a resume is refused at once, and says why.
            for proc in far_pids(far):
                proc.send_signal(signal.SIGKILL)
            wait_for(lambda: app.hosts()[0].state is not HostState.CONNECTED, 20, "the drop")
            down = post(server, f"{base}/fork?host=box", {}, status=503)
            assert down["error"]["code"] == "host_unreachable"
            down = get(server, f"{base}/handoff?host=box", status=503)
            assert down["error"]["code"] == "host_unreachable"
    finally:
        app.close()


@contextlib.contextmanager
def box_served(settings: Settings, **opened: Any) -> Iterator[tuple[Agentbar, Any]]:
    """The app over ``settings`` (``opened``: ``Agentbar.open``'s options) and its server,
    started, with its host ``box`` connected; closed after."""
    app = Agentbar.open(settings, **opened)
    try:
        with app.serving() as server:
            app.start()
            wait_for(lambda: app.hosts()[0].state is HostState.CONNECTED, SLOW, "the host")
            yield app, server
    finally:
        app.close()


def test_a_task_there_is_shown_and_stopped_from_here_and_its_terminal_says_when_the_host_goes(
    far: FarHome, tmp_path: Path
) -> None:
    """A task launched on a host is read (``GET /api/tasks/ID?host=``) and stopped (``POST
    .../stop?host=``) by that host's own task manager, as a local one is here: its attached
    terminal ends with the task as it ended; the far side's refusals keep their status; a
    terminal attached when the host drops is told so, and a stop is then refused at once."""
    with box_served(near_settings(tmp_path / "near", far), tasks=False) as (app, server):
        project = far.root / "project"
        project.mkdir()
        body = {"agent": "claude", "project": str(project), "prompt": "hi", "host": "box"}
        task_id = post(server, "/api/tasks", body, status=201)["task"]["task_id"]
        shown = get(server, f"/api/tasks/{task_id}?host=box")["task"]
        assert (shown["task_id"], shown["host"], shown["status"]) == (task_id, "box", "running")
        assert get(server, f"/api/tasks/{task_id}", status=503)["error"]["code"] == "no_tasks"
        # Its host's list (its own manager's there), each task naming the host.
        listed = get(server, "/api/tasks?host=box")["tasks"]
        assert [(t["task_id"], t["host"], t["status"]) for t in listed] == [
            (task_id, "box", "running")
        ]
        assert listed[0]["project"] == str(project) and listed[0]["prompt"] == "hi"
        assert get(server, "/api/tasks", status=503)["error"]["code"] == "no_tasks"  # here
        assert get(server, "/api/tasks?host=elsewhere", status=404)["error"]["code"] == (
            "not_found"
        )
        # Stopped from here while its terminal is attached: the terminal is told how it ended.
        seen, told = terminal_until_end(server, task_id, "box", stop=True)
        assert "Fake Claude Code" in seen, seen[-500:]
        assert told and told[-1]["type"] == "task", told
        assert (told[-1]["task"]["status"], told[-1]["task"]["host"]) == ("exited", "box")
        again = post(server, f"/api/tasks/{task_id}/stop?host=box", {}, status=200)["task"]
        assert (again["status"], again["host"]) == ("exited", "box")  # as a local one: done
        missing = post(server, "/api/tasks/abcdef12/stop?host=box", {}, status=404)
        assert missing["error"]["code"] == "not_found"
        assert post(server, f"/api/tasks/{task_id}/stop?host=elsewhere", {}, status=404)
        with pytest.raises(RemoteError) as not_there:
            app.hub.links["box"].call("stop", {"task_id": "abcdef12"})  # type: ignore[union-attr]
        assert not_there.value.kind == "not_found"

        # The host drops while a terminal is attached: the terminal says so, then closes.
        second = post(server, "/api/tasks", body, status=201)["task"]["task_id"]

        def kill_far() -> None:
            for proc in far_pids(far):
                proc.send_signal(signal.SIGKILL)

        _seen, told = terminal_until_end(server, second, "box", then=kill_far)
        assert told and told[-1]["type"] == "unreachable", told
        assert told[-1]["host"] == "box" and "box" in told[-1]["message"]
        wait_for(lambda: app.hosts()[0].state is not HostState.CONNECTED, 20, "the drop")
        down = post(server, f"/api/tasks/{second}/stop?host=box", {}, status=503)
        assert down["error"]["code"] == "host_unreachable"
        down = get(server, f"/api/tasks/{second}?host=box", status=503)
        assert down["error"]["code"] == "host_unreachable"
        down = get(server, "/api/tasks?host=box", status=503)
        assert down["error"]["code"] == "host_unreachable"


def test_a_task_there_waiting_for_approval_is_approved_from_here_by_its_own_manager(
    far: FarHome, tmp_path: Path
) -> None:
    """A task on a host whose screen shows an approval prompt: its attached terminal is told
    (a ``task`` message with ``waiting``, as the local page hears of it), ``POST
    .../approve?host=`` has its own manager there type the answer (the command runs there),
    and with no prompt waiting the refusal is the local one (409 ``not_waiting``)."""
    with box_served(near_settings(tmp_path / "near", far), tasks=False) as (_app, server):
        project = far.root / "project"
        project.mkdir()
        body = {"agent": "claude", "project": str(project), "host": "box"}
        task = post(server, "/api/tasks", body, status=201)["task"]
        task_id = task["task_id"]
        refused_first = post(server, f"/api/tasks/{task_id}/approve?host=box", {}, 409)
        assert refused_first["error"]["code"] == "not_waiting", refused_first
        told, answered = terminal_approving(server, task_id, "box", "run: touch there.txt")
        waiting = [m for m in told if m["type"] == "task" and m["task"]["waiting"]]
        assert waiting, told
        assert waiting[0]["task"]["host"] == "box"
        assert waiting[0]["task"]["waiting"]["for"] == "approval"
        assert answered["answer"]["answer"] == "approve", answered
        assert answered["answer"]["cleared"] is True, answered
        assert (answered["task"]["task_id"], answered["task"]["host"]) == (task_id, "box")
        wait_for((project / "there.txt").exists, SLOW, "the approved command, there")
        again = post(server, f"/api/tasks/{task_id}/deny?host=box", {}, 409)
        assert again["error"]["code"] == "not_waiting", again
        missing = post(server, "/api/tasks/abcdef12/approve?host=box", {}, 404)
        assert missing["error"]["code"] == "not_found"
        assert post(server, f"/api/tasks/{task_id}/approve?host=elsewhere", {}, 404)


# An agentbar that launches no agents (no task manager), as a channel's far side.
TASKLESS_FAR = """
import sys

from agentbar.core.app import Agentbar
from agentbar.tray.__main__ import main

_open = Agentbar.open.__func__


def _taskless(cls, settings, **kwargs):
    return _open(cls, settings, **{**kwargs, "tasks": False})


Agentbar.open = classmethod(_taskless)
sys.exit(main())
"""


def test_a_far_agentbar_without_the_stop_call_is_told_to_match_versions(
    far: FarHome, tmp_path: Path
) -> None:
    """A host running an agentbar from before ``stop``, ``task`` and ``tasks``: the routes
    answer 501, naming the fix, and its task is left running."""
    settings = settings_with_far_module(
        far, tmp_path, "older_far", older_far("stop", "task", "tasks", "approve", "deny")
    )
    with box_served(settings, tasks=False) as (_app, server):
        project = far.root / "project"
        project.mkdir()
        body = {"agent": "claude", "project": str(project), "host": "box"}
        task_id = post(server, "/api/tasks", body, status=201)["task"]["task_id"]
        older = post(server, f"/api/tasks/{task_id}/stop?host=box", {}, status=501)
        assert older["error"]["code"] == "not_supported"
        assert "install the same version on both" in older["error"]["message"]
        assert get(server, f"/api/tasks/{task_id}?host=box", status=501)
        assert post(server, f"/api/tasks/{task_id}/approve?host=box", {}, status=501)
        listed = get(server, "/api/tasks?host=box", status=501)["error"]
        assert listed["code"] == "not_supported", listed
        assert "install the same version on both" in listed["message"]
        seen = terminal_session(server, task_id, "box", ["/exit\r"])  # it ran on
        assert "Fake Claude Code" in seen, seen[-500:]


def test_a_far_agentbar_without_a_task_manager_refuses_its_task_list(
    far: FarHome, tmp_path: Path
) -> None:
    """A host whose agentbar launches no agents: its task list is refused there as its other
    task calls are (503 ``no_tasks``), not an empty list nor a 501."""
    settings = settings_with_far_module(far, tmp_path, "taskless_far", TASKLESS_FAR)
    with box_served(settings) as (_app, server):
        assert get(server, "/api/tasks")["tasks"] == []  # this machine's own: it launches
        refused_there = get(server, "/api/tasks?host=box", status=503)["error"]
        assert refused_there["code"] == "no_tasks", refused_there
        assert "launches no agents" in refused_there["message"]
        assert get(server, "/api/tasks/abcdef12?host=box", status=503)  # as its task call
        refused_answer = post(server, "/api/tasks/abcdef12/deny?host=box", {}, 503)["error"]
        assert refused_answer["code"] == "no_tasks", refused_answer


def get(server: Any, path: str, status: int = 200) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with (
            aiohttp.ClientSession(headers=headers) as client,
            client.get(f"{server.origin}{path}") as response,
        ):
            assert response.status == status, (path, response.status, await response.text())
            return await response.json()

    return asyncio.run(main())


def post(server: Any, path: str, body: dict[str, Any], status: int) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {server.token}", "Origin": server.origin}
        async with (
            aiohttp.ClientSession(headers=headers) as client,
            client.post(f"{server.origin}{path}", json=body) as response,
        ):
            assert response.status == status, (path, response.status, await response.text())
            return await response.json()

    return asyncio.run(main())


@dataclass
class Terminal:
    """What a terminal client of a task was shown (its output) and told (the text frames)."""

    shown: bytes = b""
    told: list[dict[str, Any]] = field(default_factory=list)
    acted: bool = False  # its ``act`` ran (it runs once, when the agent's prompt first shows)
    result: Any = None

    @property
    def text(self) -> str:
        return self.shown.decode("utf-8", "replace")


def remote_terminal(
    server: Any,
    task_id: str,
    host: str,
    act: Callable[[Terminal, Any, Any], Awaitable[None]],
    *,
    told: Callable[[Terminal, Any], Awaitable[bool]] | None = None,
    size: tuple[int, int] | None = None,
) -> Terminal:
    """A terminal client of a task on ``host`` through this server's socket, read until it
    closes: ``act(terminal, ws, client)`` once the agent's prompt shows; ``told(terminal,
    client)`` after each text frame, which ends the reading when it answers true."""

    async def main() -> Terminal:
        headers = {"Authorization": f"Bearer {server.token}", "Origin": server.origin}
        url = f"{server.origin}/api/tasks/{task_id}/terminal?host={host}"
        term = Terminal()
        async with (
            aiohttp.ClientSession(headers=headers) as client,
            client.ws_connect(url) as ws,
        ):
            if size is not None:
                resize = {"type": "resize", "rows": size[0], "cols": size[1]}
                await ws.send_str(orjson.dumps(resize).decode())
            deadline = time.monotonic() + SLOW
            while time.monotonic() < deadline:
                try:
                    message = await ws.receive(timeout=1)
                except TimeoutError:
                    continue
                if message.type == aiohttp.WSMsgType.BINARY:
                    term.shown += message.data
                elif message.type == aiohttp.WSMsgType.TEXT:
                    term.told.append(orjson.loads(message.data))
                    if told is not None and await told(term, client):
                        break
                else:
                    break
                if not term.acted and b"> " in term.shown:
                    term.acted = True
                    await act(term, ws, client)
        return term

    return asyncio.run(main())


async def type_in(ws: Any, *texts: str) -> None:
    for text in texts:
        await ws.send_str(orjson.dumps({"type": "input", "data": text}).decode())


def terminal_session(server: Any, task_id: str, host: str, typed: list[str]) -> str:
    """Types ``typed`` once the agent's prompt shows, then reads until the task ends; what it
    showed."""

    async def act(_term: Terminal, ws: Any, _client: Any) -> None:
        await type_in(ws, *typed)

    return remote_terminal(server, task_id, host, act, size=(30, 100)).text


def terminal_until_end(
    server: Any, task_id: str, host: str, *, stop: bool = False, then: Any = None
) -> tuple[str, list[dict[str, Any]]]:
    """Once the agent's prompt shows, stops the task through the API (``stop``) or calls
    ``then()``; reads until the socket closes. What it showed, and the text frames sent."""

    async def act(_term: Terminal, _ws: Any, client: Any) -> None:
        if stop:
            stopped = f"{server.origin}/api/tasks/{task_id}/stop?host={host}"
            async with client.post(stopped, json={}) as reply:
                assert reply.status == 200, await reply.text()
                assert (await reply.json())["task"]["status"] == "exited"
        if then is not None:
            await asyncio.get_running_loop().run_in_executor(None, then)

    term = remote_terminal(server, task_id, host, act)
    return term.text, term.told


def terminal_approving(
    server: Any, task_id: str, host: str, typed: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Types ``typed`` once the agent's prompt shows; once told the task waits for approval,
    approves it through the API. The text frames it was told, and the approve route's answer."""

    async def act(_term: Terminal, ws: Any, _client: Any) -> None:
        await type_in(ws, f"{typed}\r")

    async def told(term: Terminal, client: Any) -> bool:
        last = term.told[-1]
        if last["type"] != "task" or not last["task"]["waiting"]:
            return False
        approve = f"{server.origin}/api/tasks/{task_id}/approve?host={host}"
        async with client.post(approve, json={}) as reply:
            assert reply.status == 200, await reply.text()
            term.result = await reply.json()
        return True

    term = remote_terminal(server, task_id, host, act, told=told)
    if term.result is None:
        raise AssertionError(f"never told of the prompt: {term.told}, {term.shown[-500:]!r}")
    return term.told, term.result


class Stream:
    """``/api/events`` read on a thread of its own (its messages in a queue)."""

    def __init__(self, server: Any) -> None:
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._read(server),),
                                        daemon=True)  # fmt: skip
        self._thread.start()

    async def _read(self, server: Any) -> None:
        headers = {"Authorization": f"Bearer {server.token}", "Origin": server.origin}
        async with (
            aiohttp.ClientSession(headers=headers) as client,
            client.ws_connect(f"{server.origin}/api/events") as ws,
        ):
            while not self._stop.is_set():
                try:
                    message = await ws.receive(timeout=0.2)
                except TimeoutError:
                    continue
                if message.type != aiohttp.WSMsgType.TEXT:
                    return
                self.messages.put(orjson.loads(message.data))

    def next(self, timeout: float = 20) -> dict[str, Any]:
        return self.messages.get(timeout=timeout)

    def until(self, check: Any, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.next(max(0.1, deadline - time.monotonic()))
            if check(message):
                return message

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


def test_an_agentbar_serving_there_keeps_its_hooks(far: FarHome) -> None:
    env = {**os.environ, "HOME": str(far.home), "AGENTBAR_DATA_DIR": str(far.data),
           "AGENTBAR_CONFIG_DIR": str(far.config)}  # fmt: skip
    serve = start_agentbar(env, "serve")
    try:
        info = wait_for(lambda: _server_info(far), 60, "the far machine's own serve")
        assert info["pid"] == serve.pid
        hub = Hub([far.remote("box")], DecisionBook())
        hub.start()
        try:
            wait_for(lambda: connected(hub), SLOW, "the channel")
            assert {s.key.session_id for s in hub.sessions()} == {A, B, CODEX}
            page = hub.links["box"].call("page", {"agent": "claude", "id": A})
            assert page["items"]
            assert _server_info(far)["pid"] == serve.pid  # not taken over
        finally:
            hub.stop()
        assert _server_info(far)["pid"] == serve.pid  # nor removed
    finally:
        end_process(serve, 10)


def _server_info(far: FarHome) -> dict[str, Any] | None:
    try:
        doc = orjson.loads((far.data / "server.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def test_no_far_side_is_left_running(far: FarHome, hub: Hub) -> None:
    wait_for(lambda: connected(hub), SLOW, "the channel")
    assert far_pids(far)
    hub.stop()
    wait_for(lambda: not far_pids(far), 20, "the far side's end once its input closed")
    assert os.path.exists(far.data)


def far_env(far: FarHome) -> dict[str, str]:
    """The far side's own ``agentbar`` as a person there runs it (its HOME, data, config)."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))},
        "HOME": str(far.home),
        "AGENTBAR_DATA_DIR": str(far.data),
        "AGENTBAR_CONFIG_DIR": str(far.config),
    }


def near_env(near: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))},
        "HOME": str(near / "home"),
        "AGENTBAR_DATA_DIR": str(near / "data"),
        "AGENTBAR_CONFIG_DIR": str(near / "config"),
    }


def test_the_usage_call_answers_what_agentbar_usage_prints_there(far: FarHome) -> None:
    """``usage``: the far side's own report with the near side's options, as its ``agentbar
    usage --json`` prints it there; an option that does not read is refused."""
    there = far_env(far)
    everything = orjson.loads(agentbar(there, "usage", "--json", timeout=120, check=True).stdout)
    api = orjson.loads(
        agentbar(there, "usage", "--json", "--project", "/srv/api", timeout=120, check=True).stdout
    )
    assert len(everything["sessions"]) == 2 and len(api["sessions"]) == 1
    hub = Hub([far.remote("box")], DecisionBook())
    hub.start()
    try:
        wait_for(lambda: connected(hub), SLOW, "the channel")
        link = hub.links["box"]
        assert link.call("usage", {}) == everything
        assert link.call("usage", {"project": "/srv/api", "since": None}) == api
        with pytest.raises(RemoteError) as bad:
            link.call("usage", {"since": "yesterday"})
        assert bad.value.kind == "bad" and "not a date" in str(bad.value)
    finally:
        hub.stop()


def test_agentbar_usage_host_prints_the_host_s_report_with_the_same_printer(
    far: FarHome, tmp_path: Path
) -> None:
    """``agentbar usage --host box`` here prints what ``agentbar usage`` prints there, for each
    option; a host not configured is refused (1)."""
    near = tmp_path / "near"
    near_settings(near, far)
    for options in (
        (),
        ("--agent", "claude", "--since", "2001-01-01"),
        ("--json", "--project", "api"),
    ):
        there = agentbar(far_env(far), "usage", *options, timeout=120)
        here = agentbar(near_env(near), "usage", "--host", "box", *options, timeout=120)
        assert (here.returncode, there.returncode) == (0, 0), here.stderr
        assert here.stdout == there.stdout
    tables = agentbar(near_env(near), "usage", "--host", "box", timeout=120).stdout
    assert "AGENT" in tables and "/srv/web" in tables  # the tables, with the far sessions
    unknown = agentbar(near_env(near), "usage", "--host", "nowhere", timeout=60)
    assert unknown.returncode == 1
    assert "no remote named 'nowhere'" in unknown.stderr


def test_a_far_agentbar_without_the_usage_call_is_told_to_upgrade(
    far: FarHome, tmp_path: Path
) -> None:
    settings_with_far_module(far, tmp_path, "older_usage_far", older_far("usage"))
    near = tmp_path / "near"
    done = agentbar(near_env(near), "usage", "--host", "box", timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert "the agentbar on box is older than this one" in done.stderr
    assert "upgrade agentbar there" in done.stderr
