"""The task routes and the terminal WebSocket as a client sees them: a real loopback server over
a live engine and a task manager running the fake agent in real PTYs (docs/api.md)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from launch_rig import LaunchRig, launch_rig
from polling import wait_for

pytestmark = pytest.mark.slow


class Served:
    def __init__(self, rig: LaunchRig, server: Any, quits: list[str]) -> None:
        self.rig = rig
        self.manager = server.tasks
        self.quits = quits
        self.server = server

    @property
    def base(self) -> str:
        return self.server.origin

    def headers(self, origin: bool = True) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.server.token}"}
        if origin:
            headers["Origin"] = self.server.origin
        return headers

    def run(self, test: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> None:
        async def main() -> None:
            async with aiohttp.ClientSession(headers=self.headers()) as client:
                await test(client)

        asyncio.run(main())


@pytest.fixture
def served(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        quits: list[str] = []
        with rig.serving(rig.manager(), quits) as server:
            yield Served(rig, server, quits)


async def call(
    client: aiohttp.ClientSession, method: str, url: str, body: Any = None, status: int = 200
) -> Any:
    async with client.request(method, url, json=body) as response:
        text = await response.text()
        assert response.status == status, text
        return orjson.loads(text)


async def until(check: Callable[[], Awaitable[Any]], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def test_launch_list_type_and_approve_over_http(served: Served):
    base, project = served.base, str(served.rig.project)

    async def test(client: aiohttp.ClientSession) -> None:
        async with aiohttp.ClientSession(headers=served.headers(origin=False)) as other:
            refused = await call(other, "POST", f"{base}/api/tasks",
                                 {"agent": "codex", "project": project}, 403)  # fmt: skip
            assert refused["error"]["code"] == "bad_origin"
        bad = await call(client, "POST", f"{base}/api/tasks", {"agent": "x"}, 400)
        assert bad["error"]["code"] == "bad_request"
        missing = await call(client, "POST", f"{base}/api/tasks",
                             {"agent": "codex", "project": "/no/such/dir"}, 400)  # fmt: skip
        assert missing["error"]["code"] == "no_such_folder"
        assert missing["error"]["message"] == "no such folder: /no/such/dir does not exist"
        body = {"agent": "codex", "project": project, "prompt": "hello"}
        made = await call(client, "POST", f"{base}/api/tasks", body, 201)
        task = made["task"]
        assert task["agent"] == "codex" and task["status"] == "running" and task["pid"] > 0
        task_id = task["task_id"]

        async def listed_with_session() -> Any:
            tasks = (await call(client, "GET", f"{base}/api/tasks"))["tasks"]
            mine = [t for t in tasks if t["task_id"] == task_id]
            return mine and mine[0]["session"] and mine[0]["session"]["state"] == "done" and mine[0]

        listed = await until(listed_with_session)
        assert (await call(client, "GET", f"{base}/api/projects"))["recent"] == [project]
        assert listed["session"]["task_id"] == task_id
        assert listed["binding"]["path"] == "hook"
        none = await call(client, "POST", f"{base}/api/tasks/{task_id}/approve", {}, 409)
        assert none["error"]["code"] == "not_waiting"
        await call(client, "POST", f"{base}/api/tasks/{task_id}/input",
                   {"text": "run: touch via-http.txt"})  # fmt: skip

        async def waiting() -> Any:
            one = (await call(client, "GET", f"{base}/api/tasks/{task_id}"))["task"]
            return one["waiting"]

        assert (await until(waiting))["for"] == "approval"
        answered = await call(client, "POST", f"{base}/api/tasks/{task_id}/approve", {})
        assert answered["answer"]["cleared"] is True
        await until(lambda: asyncio.sleep(0, (served.rig.project / "via-http.txt").exists()))
        stopped = await call(client, "POST", f"{base}/api/tasks/{task_id}/stop", {})
        assert stopped["task"]["status"] == "exited"
        await call(client, "DELETE", f"{base}/api/tasks/{task_id}")
        await call(client, "GET", f"{base}/api/tasks/{task_id}", status=404)

    served.run(test)


def test_the_terminal_websocket(served: Served):
    base, project = served.base, str(served.rig.project)

    async def test(client: aiohttp.ClientSession) -> None:
        made = await call(client, "POST", f"{base}/api/tasks",
                          {"agent": "claude", "project": project}, 201)  # fmt: skip
        task_id = made["task"]["task_id"]
        task = served.manager.task(task_id)
        wait_for(lambda: "for shortcuts" in task.screen_text(), 10, "the banner")
        async with aiohttp.ClientSession(headers=served.headers(origin=False)) as other:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await other.ws_connect(f"{base}/api/tasks/{task_id}/terminal")
            assert refused.value.status == 403  # a WebSocket from another origin
        async with client.ws_connect(f"{base}/api/tasks/{task_id}/terminal") as ws:
            first = await ws.receive(timeout=5)
            assert first.type is aiohttp.WSMsgType.BINARY and b"Fake Claude Code" in first.data
            assert served.manager.get(task_id).clients == 1
            # A browser terminal's own answer to a cursor query is not typed into the agent.
            await ws.send_str(orjson.dumps({"type": "input", "data": "\x1b[12;1Rab"}).decode())
            echoed = b""
            while b"ab" not in echoed:
                echoed += (await ws.receive(timeout=5)).data
            assert b"12;1R" not in echoed
            await ws.send_str(orjson.dumps({"type": "resize", "rows": 33, "cols": 99}).decode())
            wait_for(lambda: served.manager.get(task_id).cols == 99, 5, "the resize")
            await ws.send_str("not json")  # ignored
            await call(client, "POST", f"{base}/api/tasks/{task_id}/stop", {"graceful": False})
            closing = []
            async for message in ws:
                closing.append(message)
            final = [orjson.loads(m.data) for m in closing if m.type is aiohttp.WSMsgType.TEXT]
            assert final and final[-1]["type"] == "task"
            assert final[-1]["task"]["status"] == "exited"
        await until(lambda: asyncio.sleep(0, served.manager.get(task_id).clients == 0))

    served.run(test)


def test_resume_fork_and_hand_off_a_session(served: Served):
    base, project = served.base, str(served.rig.project)

    async def test(client: aiohttp.ClientSession) -> None:
        body = {"agent": "claude", "project": project, "prompt": "plan it"}
        made = await call(client, "POST", f"{base}/api/tasks", body, 201)
        task_id = made["task"]["task_id"]

        async def done() -> Any:  # (a new session is "done" before its first turn, too)
            one = (await call(client, "GET", f"{base}/api/tasks/{task_id}"))["task"]
            return one["session"] and one["session"]["detail"] == "You said: plan it" and one

        session_id = (await until(done))["session_id"]
        busy = await call(client, "POST", f"{base}/api/sessions/{session_id}/resume", {}, 409)
        assert busy["error"]["code"] == "already_running"
        answer = await call(client, "GET", f"{base}/api/sessions/{session_id}/handoff?what=answer")
        assert answer["text"] == "You said: plan it"
        brief = await call(client, "GET", f"{base}/api/sessions/{session_id}/handoff")
        assert brief["what"] == "brief" and "## Goal\n\nplan it" in brief["text"]
        # To a running task: typed into its PTY.
        other = await call(client, "POST", f"{base}/api/tasks",
                           {"agent": "codex", "project": project}, 201)  # fmt: skip
        other_id = other["task"]["task_id"]
        served.rig.bound(served.manager, other_id)
        sent = await call(client, "POST", f"{base}/api/sessions/{session_id}/handoff",
                          {"what": "answer", "to": {"task": other_id}})  # fmt: skip
        assert sent["chars"] == len("You said: plan it")

        async def answered() -> Any:
            one = (await call(client, "GET", f"{base}/api/tasks/{other_id}"))["task"]
            session = one["session"] or {}
            return session.get("detail") == "You said: You said: plan it"

        await until(answered)
        # To a new agent of the other kind, in the same folder.
        new = await call(client, "POST", f"{base}/api/sessions/{session_id}/handoff",
                         {"what": "brief", "to": {"agent": "codex"}}, 201)  # fmt: skip
        assert new["task"]["agent"] == "codex" and new["task"]["project"] == project
        assert new["task"]["prompt"].startswith("# Hand-off: ")
        await call(client, "POST", f"{base}/api/sessions/{session_id}/handoff",
                   {"to": {"agent": "x"}}, 400)  # fmt: skip
        # Stop the first, then resume and fork it.
        await call(client, "POST", f"{base}/api/tasks/{task_id}/stop", {})
        resumed = await call(client, "POST", f"{base}/api/sessions/{session_id}/resume",
                             {"prompt": "again"}, 201)  # fmt: skip
        assert resumed["task"]["mode"] == "resume" and resumed["task"]["session_id"] == session_id
        forked = await call(client, "POST", f"{base}/api/sessions/{session_id}/fork", {}, 201)
        assert forked["task"]["mode"] == "fork" and forked["task"]["source"] == session_id
        await call(client, "POST", f"{base}/api/sessions/no-such-session/fork", {}, 404)

    served.run(test)


def test_task_changes_reach_the_events_socket_and_quit_asks_the_process(served: Served):
    base, project = served.base, str(served.rig.project)

    async def test(client: aiohttp.ClientSession) -> None:
        async with client.ws_connect(f"{base}/api/events") as ws:
            hello = orjson.loads((await ws.receive(timeout=5)).data)
            assert hello["type"] == "sessions"
            await call(client, "POST", f"{base}/api/tasks",
                       {"agent": "codex", "project": project}, 201)  # fmt: skip
            while True:
                message = orjson.loads((await ws.receive(timeout=5)).data)
                if message["type"] == "task":
                    break
            assert message["task"]["agent"] == "codex"
        bad = await call(client, "POST", f"{base}/api/quit", {"tasks": "maybe"}, 400)
        assert bad["error"]["code"] == "bad_request"
        reply = await call(client, "POST", f"{base}/api/quit", {"tasks": "stop"})
        assert reply == {"quitting": True, "tasks": "stop", "running": 1}
        assert served.quits == ["stop"]

    served.run(test)


def test_a_launch_folder_may_start_with_tilde_for_the_users_own_home(tmp_path: Path):
    from agentbar.core.server.replies import Refused
    from agentbar.core.server.task_routes import launch_folder

    home = tmp_path / "me"
    (home / "proj").mkdir(parents=True)
    assert launch_folder("~/proj", home) == str(home / "proj")
    assert launch_folder(" ~ ", home) == str(home)
    assert launch_folder(str(home / "proj"), home) == str(home / "proj")
    for raw, code, words in (
        ("~/nope", "no_such_folder", f"~/nope ({home / 'nope'}) does not exist"),
        ("~root/x", "bad_request", "only ~ and ~/folder"),
        ("proj", "bad_request", "give an absolute folder"),
        ("", "bad_request", "project must be a folder"),
        (None, "bad_request", "project must be a folder"),
    ):
        with pytest.raises(Refused) as refused:
            launch_folder(raw, home)
        assert refused.value.code == code and words in str(refused.value), raw
