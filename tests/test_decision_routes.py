"""The decision book over the real loopback server: the requests waiting on the person are
listed and streamed, an answer needs the token and names its request, a stale or odd answer
is refused and changes nothing (docs/api.md, "Decisions")."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest
from replay_rig import Home, make_home
from server_rig import serving

from agentbar.core.decisions import (
    Decision,
    DecisionBook,
    PendingRequest,
    RequestKind,
    Route,
    Verdict,
    new_request_id,
)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def approval(always: str | None = None) -> PendingRequest:
    return PendingRequest(
        request_id=new_request_id(), agent="claude", session_id="71000000-aaaa",
        kind=RequestKind.APPROVAL, route=Route.HOOK, tool="Bash", summary="npm test",
        opened_at=time.time(), always_rule=always,
    )  # fmt: skip


def test_requests_are_listed_streamed_and_answered_once(home: Home) -> None:
    book = DecisionBook()
    first = approval(always="Bash(npm test:*)")
    book.open(first)
    with serving(home, decisions=book) as running:

        async def main() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                async with client.get(f"{running.origin}/api/decisions") as response:
                    listed = (await response.json())["requests"]
                assert [r["request_id"] for r in listed] == [first.request_id]
                assert listed[0]["verdicts"] == ["allow", "allow_always", "deny"]
                assert listed[0]["always_rule"] == "Bash(npm test:*)"
                async with client.ws_connect(
                    f"{running.origin}/api/events", headers={"Origin": running.origin}
                ) as ws:
                    hello = await ws.receive_json(timeout=5)
                    assert [r["request_id"] for r in hello["decisions"]] == [first.request_id]
                    post = {"Origin": running.origin}
                    url = f"{running.origin}/api/decisions/{first.request_id}"
                    body = {"verdict": "allow_always", "origin": "window"}
                    async with client.post(url, json=body, headers=post) as response:
                        assert response.status == 200, await response.text()
                    closed = await ws.receive_json(timeout=5)
                    assert closed["type"] == "decision" and not closed["opened"]
                    assert closed["verdict"] == "allow_always" and closed["origin"] == "window"
                    async with client.post(url, json=body, headers=post) as response:
                        assert response.status == 409  # answered already: stale
                        assert (await response.json())["error"]["code"] == "stale_request"
                    second = approval()
                    book.open(second)
                    opened = await ws.receive_json(timeout=5)
                    assert opened["opened"] and opened["request"]["request_id"] == second.request_id

        asyncio.run(main())
    assert book.wait(first.request_id, 0) == Decision(
        first.request_id, Verdict.ALLOW_ALWAYS, "window"
    )


def test_answers_need_the_token_and_odd_ones_change_nothing(home: Home) -> None:
    book = DecisionBook()
    request = approval()
    book.open(request)
    with serving(home, decisions=book) as running:
        url = f"{running.origin}/api/decisions/{request.request_id}"

        async def main() -> None:
            post = {"Origin": running.origin}
            async with (
                aiohttp.ClientSession() as stranger,
                stranger.post(url, json={"verdict": "allow"}, headers=post) as response,
            ):
                assert response.status in (401, 403)
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                odd: list[object] = [
                    {"verdict": "yes"},
                    {"verdict": "allow_always"},  # not offered for this request
                    {"verdict": "reply", "replies": ["x"]},  # an approval takes no reply
                    {"verdict": "deny", "message": 5},
                    {"verdict": "deny", "replies": "x"},
                    {"verdict": "allow", "origin": "nowhere"},
                    ["allow"],
                ]
                for body in odd:
                    async with client.post(url, json=body, headers=post) as response:
                        assert response.status == 400, (body, await response.text())
                bad_id = f"{running.origin}/api/decisions/..%2f..%2fx"
                async with client.post(bad_id, json={"verdict": "allow"}, headers=post) as r:
                    assert r.status in (400, 404)

        asyncio.run(main())
        assert book.pending() == (request,)  # nothing was answered
