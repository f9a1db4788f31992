"""The hook route end to end: the real hook program (a subprocess, with the command line Claude's
kit installs for PermissionRequest) hands its payload to a real loopback server, which holds it
in the decision book until a person answers through the API; and everything that can go wrong
(no agentbar, agentbar killed while the hook waits, the hook killed, hostile payloads) ends in
no decision, quickly, with nothing approved."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from cli_runner import start_agentbar
from polling import end_process, wait_for
from replay_rig import Home, make_home
from server_rig import Running, serving
from test_cli import env  # noqa: F401 - env: a fixture

from agentbar.core.agents.claude.decide import DECISIONS
from agentbar.core.agents.claude.events import HOLD_CALLER
from agentbar.core.decisions import (
    BookChange,
    Decision,
    DecisionBook,
    PendingRequest,
    RequestKind,
    Route,
    Verdict,
)
from agentbar.core.hook_route import HookRoute
from agentbar.core.model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
    StateChange,
    WaitingFor,
)
from agentbar.core.records import Usage
from agentbar.core.server.gate import Limits
from agentbar.core.server.hook_routes import GONE
from agentbar.core.server.runner import write_server_file

REPO = Path(__file__).resolve().parents[1]
HOOK = REPO / "assets" / "hooks" / "agentbar_hook.py"
SID = "5d1e7c2a-9b3f-4e8d-a6c1-2f0e9d8c7b6a"
SUGGESTION = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
    "behavior": "allow",
    "destination": "localSettings",
}


def permission_request(**extra: Any) -> dict[str, Any]:
    return {
        "session_id": SID,
        "transcript_path": f"/home/u/.claude/projects/-work-api/{SID}.jsonl",
        "cwd": "/work/api",
        "permission_mode": "default",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test -- --watch=false", "description": "Run the tests"},
        "permission_suggestions": [SUGGESTION],
        **extra,
    }


def start_hook(
    data: Path, payload: Any, *, task_env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """The hook program as Claude runs it for PermissionRequest, its payload on stdin."""
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", str(HOOK), *HOLD_CALLER.args(), "--data-dir", str(data)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(data), **(task_env or {})},
    )
    assert proc.stdin is not None
    proc.stdin.write(payload if isinstance(payload, bytes) else json.dumps(payload).encode())
    proc.stdin.close()
    return proc


def finish(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> tuple[int, bytes, float]:
    """The hook's exit status, what it printed, and how long it took to end from now."""
    started = time.monotonic()
    assert proc.stdout is not None and proc.stderr is not None
    code = proc.wait(timeout)
    took = time.monotonic() - started
    out = proc.stdout.read()
    proc.stdout.close()
    proc.stderr.close()
    return code, out, took


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path, claude=())


@pytest.fixture
def book() -> DecisionBook:
    return DecisionBook()


@pytest.fixture
def running(home: Home, book: DecisionBook) -> Iterator[Running]:
    with serving(home, decisions=book) as running:
        home.settings.data_dir.mkdir(parents=True, exist_ok=True)
        write_server_file(home.settings.server_path, running.server.info())
        yield running


def held(book: DecisionBook, count: int = 1) -> tuple[PendingRequest, ...]:
    return wait_for(lambda: len(book.pending()) >= count and book.pending(), what="a held request")


def answer(running: Running, request_id: str, body: dict[str, Any]) -> tuple[int, Any]:
    async def main() -> tuple[int, Any]:
        headers = running.auth(Origin=running.origin)
        async with aiohttp.ClientSession(headers=headers) as client:
            url = f"{running.origin}/api/decisions/{request_id}"
            async with client.post(url, json=body) as response:
                return response.status, await response.json()

    return asyncio.run(main())


def post_hook(running: Running, body: Any, **headers: str) -> tuple[int, bytes]:
    """A POST to the hook endpoint as any local program could make it."""

    async def main() -> tuple[int, bytes]:
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        base = {"Origin": running.origin, "Content-Type": "application/json"}
        async with aiohttp.ClientSession() as client:
            url = f"{running.origin}/api/hook/requests"
            async with client.post(url, data=data, headers={**base, **headers}) as response:
                return response.status, await response.read()

    return asyncio.run(main())


# -- deciding ------------------------------------------------------------------------------------


def test_allow_always_reaches_the_hook_as_claudes_decision(
    running: Running, book: DecisionBook
) -> None:
    data = running.home.settings.data_dir
    hook = start_hook(data, permission_request())
    (request,) = held(book)
    assert (request.agent, request.session_id, request.route) == ("claude", SID, Route.HOOK)
    assert (request.kind, request.tool, request.summary) == (
        RequestKind.APPROVAL,
        "Bash",
        "npm test -- --watch=false",
    )
    assert request.always_rule == "Bash(npm test:*)"
    status, _ = answer(running, request.request_id, {"verdict": "allow_always", "origin": "cli"})
    assert status == 200
    code, out, _ = finish(hook)
    assert code == 0
    assert json.loads(out) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "allow",
                "updatedPermissions": [{**SUGGESTION, "destination": "session"}],
            },
        }
    }
    # The event line was written as always, before the hook asked.
    events = (data / "events" / "claude" / f"{SID}.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in events] == ["PermissionRequest"]


def test_a_denial_carries_its_message(running: Running, book: DecisionBook) -> None:
    hook = start_hook(running.home.settings.data_dir, permission_request())
    (request,) = held(book)
    body = {"verdict": "deny", "message": "not on main", "origin": "notification"}
    assert answer(running, request.request_id, body)[0] == 200
    _, out, _ = finish(hook)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "not on main"}


def test_a_question_is_answered_through_updated_input(running: Running, book: DecisionBook) -> None:
    questions = [
        {"question": "Which database?", "header": "DB", "multiSelect": False,
         "options": [{"label": "Postgres", "description": "x"}, {"label": "SQLite"}]},
    ]  # fmt: skip
    payload = permission_request(tool_name="AskUserQuestion", tool_input={"questions": questions})
    del payload["permission_suggestions"]
    hook = start_hook(running.home.settings.data_dir, payload)
    (request,) = held(book)
    assert request.kind is RequestKind.QUESTION
    assert request.questions[0].options == ("Postgres", "SQLite")
    body = {"verdict": "reply", "replies": ["SQLite"], "origin": "window"}
    assert answer(running, request.request_id, body)[0] == 200
    _, out, _ = finish(hook)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision == {
        "behavior": "allow",
        "updatedInput": {"questions": questions, "answers": {"Which database?": "SQLite"}},
    }


def test_a_withdrawn_request_lets_the_hook_go_with_no_decision(
    running: Running, book: DecisionBook
) -> None:
    hook = start_hook(running.home.settings.data_dir, permission_request())
    (request,) = held(book)
    book.withdraw(request.request_id, "answered in the terminal")
    code, out, took = finish(hook)
    assert (code, out) == (0, b"")
    assert took < 2.0


def test_the_hook_going_away_withdraws_its_request(running: Running, book: DecisionBook) -> None:
    closed: list[BookChange] = []
    book.subscribe(closed.append)
    hook = start_hook(running.home.settings.data_dir, permission_request())
    (request,) = held(book)
    hook.kill()  # Claude took the terminal's answer and ended its hook
    hook.wait()
    wait_for(lambda: not book.pending(), timeout=5, what="the withdrawal")
    (gone,) = [c for c in closed if not c.opened]
    assert (gone.request.request_id, gone.reason, gone.decision) == (request.request_id, GONE, None)
    status, body = answer(running, request.request_id, {"verdict": "allow"})
    assert status == 409 and body["error"]["code"] == "stale_request"


def test_a_newer_request_of_the_session_supersedes_the_older(
    running: Running, book: DecisionBook
) -> None:
    data = running.home.settings.data_dir
    first = start_hook(data, permission_request())
    (older,) = held(book)
    second = start_hook(data, permission_request(tool_input={"command": "make deploy"}))
    wait_for(lambda: [r.summary for r in book.pending()] == ["make deploy"], what="the newer")
    assert finish(first)[:2] == (0, b"")  # no decision: the terminal asks about it as usual
    assert book.wait(older.request_id, 0) is None
    (newer,) = book.pending()
    assert answer(running, newer.request_id, {"verdict": "allow"})[0] == 200
    assert b'"behavior":"allow"' in finish(second)[1]


def test_a_launched_task_holds_nothing(running: Running, book: DecisionBook) -> None:
    """Its prompts are the terminal route's: one request per prompt, never two."""
    hook = start_hook(
        running.home.settings.data_dir, permission_request(), task_env={"AGENTBAR_TASK_ID": "t1"}
    )
    assert finish(hook)[:2] == (0, b"")
    assert not book.pending()


def test_twenty_held_hooks_outlive_the_timeouts_and_leave_the_api_answering(
    home: Home, book: DecisionBook
) -> None:
    """Held requests are busy connections: the gate's header, body and idle timeouts (made
    short here) never cut them, and the window's and the CLI's requests still get through."""
    limits = Limits(header_seconds=0.5, idle_seconds=0.5, body_seconds=0.5)
    with serving(home, decisions=book, limits=limits) as running:
        data = home.settings.data_dir
        data.mkdir(parents=True, exist_ok=True)
        write_server_file(home.settings.server_path, running.server.info())
        hooks = [
            start_hook(data, permission_request(session_id=f"{SID[:-2]}{n:02d}")) for n in range(20)
        ]
        try:
            held(book, 20)
            time.sleep(2.0)  # four times every timeout; the janitor ran meanwhile

            async def health() -> int:
                async with (
                    aiohttp.ClientSession(headers=running.auth()) as client,
                    client.get(f"{running.origin}/api/health") as response,
                ):
                    return response.status

            assert asyncio.run(health()) == 200
            assert len(book.pending()) == 20
            assert all(hook.poll() is None for hook in hooks)
            (first, *_) = book.pending()
            assert answer(running, first.request_id, {"verdict": "allow"})[0] == 200
        finally:
            for request in book.pending():
                book.withdraw(request.request_id, "test over")
            outputs = [finish(hook)[1] for hook in hooks]
    assert sum(b'"behavior":"allow"' in out for out in outputs) == 1
    assert outputs.count(b"") == 19


def test_stopping_the_server_releases_held_hooks_at_once(home: Home, book: DecisionBook) -> None:
    with serving(home, decisions=book) as running:
        home.settings.data_dir.mkdir(parents=True, exist_ok=True)
        write_server_file(home.settings.server_path, running.server.info())
        hook = start_hook(home.settings.data_dir, permission_request())
        held(book)
        started = time.monotonic()
    assert time.monotonic() - started < 10  # not aiohttp's 60 s shutdown wait
    assert finish(hook)[:2] == (0, b"")
    assert not book.pending()


# -- no agentbar ---------------------------------------------------------------------------------


def test_without_agentbar_the_hook_is_a_fast_no_op(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    code, out, _ = finish(start_hook(data, permission_request()))
    assert (code, out) == (0, b"")
    assert (data / "events" / "claude" / f"{SID}.jsonl").exists()


def test_a_stale_server_file_is_a_fast_no_op(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    import socket

    with socket.socket() as sock:  # a port nobody listens on any more
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    write_server_file(data / "server.json", {"port": port, "token": "x" * 43, "pid": 1})
    code, out, took = finish(start_hook(data, permission_request()))
    assert (code, out) == (0, b"")
    assert took < 2.0


@pytest.mark.parametrize(
    "content",
    [b"", b"not json", b"[]", b'{"port": "80", "token": "x"}', b'{"port": 1, "token": "a b"}'],
)
def test_an_odd_server_file_is_a_no_op(tmp_path: Path, content: bytes) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "server.json").write_bytes(content)
    (data / "server.json").chmod(0o600)
    assert finish(start_hook(data, permission_request()))[:2] == (0, b"")


def test_a_server_file_others_can_read_is_not_trusted(running: Running, book: DecisionBook) -> None:
    path = running.home.settings.server_path
    path.chmod(0o644)
    hook = start_hook(running.home.settings.data_dir, permission_request())
    assert finish(hook)[:2] == (0, b"")
    assert not book.pending()


def test_agentbar_killed_while_the_hook_waits(env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    """A real ``agentbar serve`` holds the request; SIGKILLed, it leaves the hook nothing to
    wait for: it ends at once with no output."""
    serve = start_agentbar(env, "serve")
    data = tmp_path / "data"
    try:
        wait_for((data / "server.json").exists, timeout=60, what="server.json")
        info = orjson.loads((data / "server.json").read_bytes())
        hook = start_hook(data, permission_request())

        def pending() -> list[Any]:
            import urllib.request

            request = urllib.request.Request(
                f"http://127.0.0.1:{info['port']}/api/decisions",
                headers={"Authorization": f"Bearer {info['token']}"},
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                return list(json.loads(response.read())["requests"])

        (request,) = wait_for(pending, timeout=20, what="the request held by serve")
        assert request["route"] == "hook" and request["always_rule"] == "Bash(npm test:*)"
        os.kill(serve.pid, signal.SIGKILL)
        code, out, took = finish(hook)
        assert (code, out) == (0, b"")
        assert took < 2.0
    finally:
        end_process(serve)


# -- hostile requests ----------------------------------------------------------------------------


def test_the_endpoint_needs_the_token(running: Running, book: DecisionBook) -> None:
    body = {
        "agent": "claude",
        "event": "PermissionRequest",
        "pid": 1,
        "payload": permission_request(),
    }
    assert post_hook(running, body)[0] == 401
    assert post_hook(running, body, Authorization="Bearer wrong")[0] == 403
    assert not book.pending()


HOSTILE: list[Any] = [
    {"agent": "codex2", "event": "PermissionRequest", "payload": {}},
    {"agent": "claude", "event": "PermissionRequest", "payload": []},
    {"agent": "claude", "event": 7, "payload": {}},
    {"agent": "claude", "event": "PermissionRequest", "pid": "1", "payload": {}},
    {"agent": ["claude"], "event": "PermissionRequest", "payload": {}},
    [],
    b"{not json",
    b'{"agent": "claude", "event": "PermissionRequest", "payload": '
    + b"[" * 5000
    + b"]" * 5000
    + b"}",
]


@pytest.mark.parametrize("body", HOSTILE, ids=range(len(HOSTILE)))
def test_a_malformed_request_is_refused_and_changes_nothing(
    running: Running, book: DecisionBook, body: Any
) -> None:
    status, _ = post_hook(running, body, Authorization=f"Bearer {running.token}")
    assert status == 400
    assert not book.pending()


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": [value]}
    return value


ODD_PAYLOADS: list[dict[str, Any]] = [
    permission_request(session_id=None),
    permission_request(session_id="../../etc/passwd"),
    permission_request(session_id=7),
    permission_request(tool_name=None),
    permission_request(tool_name={"x": 1}),
    permission_request(tool_input="rm -rf /"),
    permission_request(tool_input=nested(100)),  # deep, but still an object: asked about
    permission_request(hook_event_name="PreToolUse"),
    permission_request(tool_name="AskUserQuestion", tool_input={"questions": "?"}),
    permission_request(tool_name="AskUserQuestion", tool_input={"questions": [{"question": 1}]}),
]


@pytest.mark.parametrize("payload", ODD_PAYLOADS, ids=range(len(ODD_PAYLOADS)))
def test_odd_payloads_hold_nothing_or_only_what_a_person_can_see(
    running: Running, book: DecisionBook, payload: dict[str, Any]
) -> None:
    """A payload agentbar cannot read holds nothing: the hook gets no decision at once. One it
    can read (a deep tool input) is asked about, and still never answered by itself."""
    body = {"agent": "claude", "event": "PermissionRequest", "pid": 1, "payload": payload}

    async def main() -> tuple[int, bytes, tuple[PendingRequest, ...]]:
        headers = running.auth(Origin=running.origin)
        async with aiohttp.ClientSession(headers=headers) as client:
            url = f"{running.origin}/api/hook/requests"
            task = asyncio.ensure_future(client.post(url, data=orjson.dumps(body)))
            seen: tuple[PendingRequest, ...] = ()
            for _ in range(50):
                await asyncio.sleep(0.02)
                seen = book.pending()
                if task.done() or seen:
                    break
            for request in seen:
                book.withdraw(request.request_id, "test over")
            async with await task as response:
                return response.status, await response.read(), seen

    status, out, seen = asyncio.run(main())
    assert (status, out) == (200, b"")  # no decision, whatever happened
    assert all(r.summary == "" and r.always_rule == "Bash(npm test:*)" for r in seen)
    if isinstance(payload.get("tool_input"), dict) and payload["tool_input"].get("a"):
        assert len(seen) == 1


def test_a_huge_payload_is_cut_to_fit_and_still_asked(running: Running, book: DecisionBook) -> None:
    content = "y" * 5_000_000
    payload = permission_request(
        tool_name="Write", tool_input={"file_path": "/w/big.txt", "content": content}
    )
    hook = start_hook(running.home.settings.data_dir, payload)
    (request,) = held(book)
    assert (request.tool, request.summary) == ("Write", "/w/big.txt")
    assert answer(running, request.request_id, {"verdict": "allow"})[0] == 200
    decision = json.loads(finish(hook)[1])["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow"}  # never an updatedInput made of the cut copy


def test_forged_answers_approve_nothing(running: Running, book: DecisionBook) -> None:
    hook = start_hook(
        running.home.settings.data_dir,
        permission_request(permission_suggestions=[{"type": "evil"}]),
    )
    (request,) = held(book)
    assert request.always_rule is None  # an update we cannot read is never echoed
    assert answer(running, "0" * 16, {"verdict": "allow"})[0] == 409
    assert answer(running, request.request_id + "x", {"verdict": "allow"})[0] == 409
    assert answer(running, request.request_id, {"verdict": "allow_always"})[0] == 400
    assert answer(running, request.request_id, {"verdict": "reply", "replies": ["y"]})[0] == 400
    assert book.get(request.request_id) is not None  # still waiting on the person
    book.withdraw(request.request_id, "test over")
    assert finish(hook)[:2] == (0, b"")


# -- withdrawn when the session moves on -----------------------------------------------------------


def snapshot(state: State, *, last_activity: float) -> SessionSnapshot:
    return SessionSnapshot(
        key=SessionKey(Agent("claude"), SID), project="api", title=None,
        state=SessionState(state=state, source=Source.HOOK, waiting_for=WaitingFor.APPROVAL
                           if state is State.INPUT_REQUIRED else None),
        state_since=last_activity, started_at=None, last_activity=last_activity, model=None,
        usage=Usage(), transcript=None, process=None,
    )  # fmt: skip


def test_the_session_moving_on_withdraws_its_hook_request(book: DecisionBook) -> None:
    route = HookRoute(book)
    opened = time.time()
    request = PendingRequest(
        request_id="a1", agent="claude", session_id=SID, kind=RequestKind.APPROVAL,
        route=Route.HOOK, tool="Bash", summary="ls", opened_at=opened,
    )  # fmt: skip
    book.open(request)
    waiting = SessionState(state=State.INPUT_REQUIRED, source=Source.HOOK)
    running_before = snapshot(State.RUNNING, last_activity=opened - 5)
    # A late change of what came before the prompt: still waiting.
    route.on_change(StateChange(ts=opened + 0.1, snapshot=running_before, prev=None))
    route.on_change(StateChange(ts=opened + 0.1, snapshot=snapshot(State.INPUT_REQUIRED,
                    last_activity=opened + 1), prev=None))  # fmt: skip
    assert book.get("a1") is not None
    # Out of the wait: the person answered in the terminal.
    route.on_change(StateChange(ts=opened + 2, snapshot=running_before, prev=waiting))
    assert book.get("a1") is None
    book.open(PendingRequest(**{**_fields(request), "request_id": "a2"}))
    route.on_change(StateChange(ts=opened + 3, snapshot=snapshot(State.DONE,
                    last_activity=opened + 3), prev=None))  # fmt: skip
    assert book.get("a2") is None
    book.open(PendingRequest(**{**_fields(request), "request_id": "a3"}))
    route.on_change(StateChange(ts=opened + 3, snapshot=snapshot(State.ENDED,
                    last_activity=opened - 9), prev=None))  # fmt: skip
    assert book.get("a3") is None


def _fields(request: PendingRequest) -> dict[str, Any]:
    return {name: getattr(request, name) for name in PendingRequest.__slots__}


def test_claudes_reply_is_empty_for_what_it_cannot_say() -> None:
    payload = permission_request(permission_suggestions=None)
    assert DECISIONS.reply(payload, Decision("r", Verdict.ALLOW_ALWAYS, "api")) == ""
    assert DECISIONS.reply(payload, Decision("r", Verdict.REPLY, "api", replies=("x",))) == ""
    denial = json.loads(DECISIONS.reply(payload, Decision("r", Verdict.DENY, "api")))
    assert denial["hookSpecificOutput"]["decision"]["message"]


# -- Claude's rules, as the button shows them --------------------------------------------------


@pytest.mark.parametrize(
    ("suggestions", "rule"),
    [
        ([SUGGESTION], "Bash(npm test:*)"),
        ([{**SUGGESTION, "rules": [{"toolName": "WebFetch"}]}], "WebFetch"),
        ([{**SUGGESTION, "type": "replaceRules"}], "Bash(npm test:*)"),
        ([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}],
         "mode: accept edits"),
        ([{"type": "addDirectories", "directories": ["/srv/app"], "destination": "session"},
          {"type": "setMode", "mode": "acceptEdits", "destination": "session"}],
         "directory /srv/app; mode: accept edits"),
        ([{**SUGGESTION, "behavior": "deny"}], None),  # never offered as an "allow"
        ([{"type": "setMode", "mode": "yolo"}], None),
        ([{"type": "removeRules", "rules": []}], None),
        ([SUGGESTION, "junk"], None),  # one entry we cannot read: nothing is echoed
        ([{**SUGGESTION, "rules": [{"toolName": "Bash", "ruleContent": "a\nb"}]}], None),
        ([], None),
        ({"type": "addRules"}, None),
        (None, None),
    ],
)  # fmt: skip
def test_the_always_rule_is_exactly_what_claude_offered(suggestions: Any, rule: str | None) -> None:
    request = DECISIONS.held_request(
        "PermissionRequest", permission_request(permission_suggestions=suggestions)
    )
    assert request is not None and request.always_rule == rule
    updates = json.loads(
        DECISIONS.reply(
            permission_request(permission_suggestions=suggestions),
            Decision("r", Verdict.ALLOW_ALWAYS, "api"),
        )
        or "null"
    )
    if rule is None:
        assert updates is None
    else:
        echoed = updates["hookSpecificOutput"]["decision"]["updatedPermissions"]
        assert echoed == [{**s, "destination": "session"} for s in suggestions]
