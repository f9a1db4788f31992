"""The loopback API as a client sees it: a real server on 127.0.0.1 over a real engine, an
aiohttp client (docs/api.md is the contract these check)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from claude_lines import ClaudeTranscript, registry, write_lines
from replay_rig import V10, V20, V21, Home, make_home
from server_rig import Running, serving, write_page

from agentbar.core.engine import PathTouched, Tick
from agentbar.core.server import app
from agentbar.core.server.context import BOARD_FIELDS
from agentbar.core.server.runner import remove_server_file, write_server_file
from agentbar.core.sources.base import ProcessInfo


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def call(running: Running, test: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> None:
    async def main() -> None:
        async with aiohttp.ClientSession(headers=running.auth()) as client:
            await test(client)

    asyncio.run(main())


async def get_json(client: aiohttp.ClientSession, url: str, status: int = 200) -> Any:
    async with client.get(url) as response:
        assert response.status == status, await response.text()
        assert response.headers["Content-Type"].startswith("application/json")
        return await response.json()


def test_the_compaction_helper_is_no_sub_agent_of_the_session(home: Home):
    folder = home.claude / "projects" / "-work-new" / V21 / "subagents"
    helper = ClaudeTranscript(V21, "/work/new", sidechain=True, agent_id="acompact-77aa")
    write_lines(folder / "agent-acompact-77aa.jsonl", [helper.prompt("Summarise the chat.")])
    with serving(home) as running:
        base = running.origin

        async def test(client: aiohttp.ClientSession) -> None:
            one = (await get_json(client, f"{base}/api/sessions/{V21}"))["session"]
            assert [t["thread"] for t in one["thread_info"]] == ["a4c2d9"]
            (kept,) = one["helper_threads"]
            assert (kept["thread"], kept["helper"]) == ("acompact-77aa", "compaction")
            page = await get_json(client, f"{base}/api/sessions/{V21}/items?thread=acompact-77aa")
            assert page["items"]  # still readable: left out of the list, not of the session

        call(running, test)


def test_health_sessions_and_one_session(home: Home):
    with serving(home) as running:
        base = running.origin

        async def test(client: aiohttp.ClientSession) -> None:
            health = await get_json(client, f"{base}/api/health")
            assert health["ok"] is True and health["api"] == 1 and health["search"] is True
            assert health["pid"] == os.getpid() and health["sessions"] == 3 and health["ready"]
            assert health["problems"] == []
            listing = await get_json(client, f"{base}/api/sessions?all=1")
            sessions = {s["session_id"]: s for s in listing["sessions"]}
            assert set(sessions) == {V10, V20, V21}
            assert set(listing["diagnostics"]) == {
                "malformed_lines", "oversized_lines", "unknown_records", "unreadable_files",
                "unrepresentable_timestamps", "clamped_numbers", "ignored_files",
            }  # fmt: skip
            assert listing["total"] == 3
            v21 = sessions[V21]
            assert v21["threads"] == ["a4c2d9"] and v21["title"] == "Slow build investigation"
            assert v21["counts"] == {"prompt": 2, "answer": 2, "tool": 2}
            for key in ("agent", "state", "waiting_for", "detail", "last_activity", "usage"):
                assert key in v21
            # Without all=1: what `agentbar status` shows (ended and older than a day: hidden).
            recent = (await get_json(client, f"{base}/api/sessions"))["sessions"]
            assert {s["session_id"] for s in recent} <= {V10, V20, V21}
            one = (await get_json(client, f"{base}/api/sessions/{V21}"))["session"]
            assert one["session_id"] == V21
            (info,) = one["thread_info"]
            assert info["thread"] == "a4c2d9" and info["call_id"] == "toolu_agent"
            assert info["description"] == "Profile the build" and info["helper"] is None
            assert one["helper_threads"] == []
            await get_json(client, f"{base}/api/sessions/{V21[:8]}", 404)  # ids, not prefixes
            await get_json(client, f"{base}/api/sessions/{V21}?agent=codex", 404)
            await get_json(
                client, f"{base}/api/sessions/{V21}?agent=nosuchagent", 400
            )  # an agent no kit names

        call(running, test)


def test_items_pages_cursors_and_whole_items(home: Home):
    t = ClaudeTranscript("61000000-0000-4000-8000-000000000001", "/work/long")
    lines = []
    for n in range(120):
        lines += [t.prompt(f"prompt {n}"), t.text(f"answer {n}")]
    lines.append(t.tool_result("toolu_big", "z" * 30_000))
    path = home.claude / "projects" / "-work-long" / "61000000-0000-4000-8000-000000000001.jsonl"
    write_lines(path, lines)
    with serving(home) as running:
        url = f"{running.origin}/api/sessions/61000000-0000-4000-8000-000000000001/items"

        async def test(client: aiohttp.ClientSession) -> None:
            last = await get_json(client, f"{url}?limit=50")
            assert last["thread"] == "main" and last["after"] is None
            assert last["end"] == last["size"] == path.stat().st_size
            assert last["session_id"].startswith("61") and last["agent"] == "claude"
            big = last["items"][-1]
            assert big["kind"] == "tool_result" and big["truncated"] and big["chars"] == 30_000
            assert len(big["text"]) == 8000
            whole = await get_json(client, f"{url}/{big['offset']}/{big['index']}")
            assert whole["item"]["text"] == "z" * 30_000 and not whole["item"]["truncated"]
            seen = list(last["items"])
            before = last["before"]
            while before is not None:
                page = await get_json(client, f"{url}?before={before}&limit=50")
                seen[:0] = page["items"]
                before = page["before"]
            assert [i["text"] for i in seen if i["kind"] == "user"] == [
                f"prompt {n}" for n in range(120)
            ]
            first = await get_json(client, f"{url}?after=0&limit=3")
            assert [i["text"] for i in first["items"]] == ["prompt 0", "answer 0", "prompt 1"]
            assert first["before"] is None and first["after"] == first["end"]
            for bad in ("before=-1", "after=x", "limit=1e3", "before=1&after=2", "thread=../x"):
                await get_json(client, f"{url}?{bad}", 400)
            await get_json(client, f"{url}?thread=nosuch", 404)
            await get_json(client, f"{url}/{big['offset'] + 1}/0", 404)
            await get_json(client, f"{url}/{big['offset']}/9", 404)

        call(running, test)


def test_subagent_threads_through_the_api(home: Home):
    with serving(home) as running:
        base = f"{running.origin}/api/sessions"

        async def test(client: aiohttp.ClientSession) -> None:
            main = await get_json(client, f"{base}/{V21}/items")
            (link,) = [i for i in main["items"] if i["kind"] == "subagent"]
            assert link["link"] == {
                "thread": "a4c2d9",
                "description": "Profile the build",
                "agent_type": "general-purpose",
                "call_id": "toolu_agent",
            }
            thread = await get_json(client, f"{base}/{V21}/items?thread=a4c2d9")
            assert [i["kind"] for i in thread["items"]] == [
                "user", "tool_call", "tool_result", "assistant",
            ]  # fmt: skip
            legacy = await get_json(client, f"{base}/{V10}/items")
            (inline,) = [i for i in legacy["items"] if i["kind"] == "subagent"]
            assert inline["link"]["thread"].startswith("inline:")
            sub = await get_json(client, f"{base}/{V10}/items?thread={inline['link']['thread']}")
            assert sub["items"][-1]["text"] == "Found one call site."
            await get_json(client, f"{base}/{V10}/items?thread=inline:1", 404)

        call(running, test)


def test_search_and_export_downloads(home: Home):
    with serving(home) as running:
        base = running.origin

        async def test(client: aiohttp.ClientSession) -> None:
            found = await get_json(client, f"{base}/api/search?q=esbuild")
            (hit,) = found["hits"]
            assert hit["session_id"] == V21 and hit["kind"] == "answer" and hit["thread"] == "main"
            assert {"text": "esbuild", "mark": True} in hit["snippet"]
            assert hit["title"] == "Slow build investigation" and hit["project"] == "/work/new"
            page = await get_json(
                client, f"{base}/api/sessions/{V21}/items?after={hit['offset']}&limit=1"
            )
            assert "esbuild" in page["items"][0]["text"]
            assert (await get_json(client, f"{base}/api/search?q=%22%20OR%20*"))["hits"] == []
            limited = await get_json(client, f"{base}/api/search?q=build&limit=1")
            assert len(limited["hits"]) == 1
            scoped = await get_json(client, f"{base}/api/search?q=build&session={V20}")
            assert {h["session_id"] for h in scoped["hits"]} <= {V20}
            # The project filter names projects as the session list does; since bounds lines.
            assert (await get_json(client, f"{base}/api/search?q=esbuild&project=new"))["hits"]
            assert (await get_json(client, f"{base}/api/search?q=esbuild&project=nowhere"))[
                "hits"
            ] == []
            assert (await get_json(client, f"{base}/api/search?q=esbuild&since=1h"))["hits"] == []
            assert (await get_json(client, f"{base}/api/search?q=esbuild&since=2000-01-01"))["hits"]
            await get_json(client, f"{base}/api/search?q=esbuild&since=someday", 400)
            for fmt, kind in (
                ("md", "text/markdown"),
                ("html", "text/html"),
                ("json", "application/json"),
            ):
                async with client.get(f"{base}/api/sessions/{V21}/export?format={fmt}") as r:
                    assert r.status == 200
                    assert r.headers["Content-Type"].startswith(kind)
                    disposition = r.headers["Content-Disposition"]
                    assert disposition.startswith("attachment;") and f'.{fmt}"' in disposition
                    assert r.headers["X-Content-Type-Options"] == "nosniff"
                    body = await r.read()
            assert orjson.loads(body)["session"]["session_id"] == V21
            await get_json(client, f"{base}/api/sessions/{V21}/export?format=pdf", 400)

        call(running, test)


def test_the_websocket_sends_the_sessions_then_every_change(home: Home):
    t = ClaudeTranscript("71000000-0000-4000-8000-000000000001", "/work/live")
    path = home.claude / "projects" / "-work-live" / "71000000-0000-4000-8000-000000000001.jsonl"
    write_lines(path, [t.prompt("start"), t.text("first answer", stop_reason="end_turn")])
    with serving(home) as running:
        engine = running.engine
        engine.processes.add(  # type: ignore[attr-defined]
            ProcessInfo(
                pid=4242,
                ppid=1,
                create_time=t.now - 100,
                name="claude",
                cmdline=("claude",),
                cwd="/work/live",
            )
        )
        registry_path = home.claude / "sessions" / "4242.json"

        async def test(client: aiohttp.ClientSession) -> None:
            async with client.ws_connect(
                f"{running.origin}/api/events", headers={"Origin": running.origin}
            ) as ws:
                hello = await ws.receive_json(timeout=5)
                assert hello["type"] == "sessions" and len(hello["sessions"]) == 4
                registry_path.parent.mkdir(parents=True, exist_ok=True)
                registry_path.write_bytes(
                    orjson.dumps(
                        registry(4242, t.session_id, status="waiting", waiting_for="approve Bash")
                    )
                )
                write_lines(path, [t.bash("rm -rf build", call_id="toolu_rm")])
                engine.post(PathTouched(registry_path))
                engine.post(PathTouched(path))
                engine.post(Tick())
                await asyncio.get_running_loop().run_in_executor(None, engine.drain)
                message = await ws.receive_json(timeout=5)
                assert message["type"] == "change"
                assert message["change"]["session_id"] == t.session_id
                assert message["change"]["state"] == "input_required"
                assert message["session"]["session_id"] == t.session_id
                await ws.send_str("anything")  # ignored
                await ws.close()

        call(running, test)


def test_the_board_socket_sends_slim_sessions_encoded_anew_once_one_changes(
    home: Home, monkeypatch: pytest.MonkeyPatch
):
    """``/api/events?view=board``: the first message's rows are the SESSION's board fields only,
    with the same values; the rows a connect encodes are reused by the next, but a session that
    changed in between is sent as it is now (in both views)."""
    t = ClaudeTranscript("72000000-0000-4000-8000-000000000002", "/work/slim")
    path = home.claude / "projects" / "-work-slim" / "72000000-0000-4000-8000-000000000002.jsonl"
    write_lines(path, [t.prompt("start"), t.text("first answer", stop_reason="end_turn")])
    with serving(home) as running:
        engine = running.engine
        engine.processes.add(  # type: ignore[attr-defined]
            ProcessInfo(pid=4343, ppid=1, create_time=t.now - 100, name="claude",
                        cmdline=("claude",), cwd="/work/slim")
        )  # fmt: skip
        registry_path = home.claude / "sessions" / "4343.json"

        async def hello(client: aiohttp.ClientSession, query: str) -> dict[str, Any]:
            url = f"{running.origin}/api/events{query}"
            async with client.ws_connect(url, headers={"Origin": running.origin}) as ws:
                first: dict[str, Any] = await ws.receive_json(timeout=5)
            assert first["type"] == "sessions" and "progress" in first and "hosts" in first
            assert "rest" not in first  # all in one message (fewer than BOARD_FIRST_ROWS)
            return {s["session_id"]: s for s in first["sessions"]}

        async def test(client: aiohttp.ClientSession) -> None:
            listed = await get_json(client, f"{running.origin}/api/sessions?all=1")
            full, slim = await hello(client, ""), await hello(client, "?view=board")
            assert set(full) == set(slim) == {s["session_id"] for s in listed["sessions"]}
            for s in listed["sessions"]:  # SESSION as /api/sessions has it, counts null
                assert full[s["session_id"]] == {**s, "counts": None}
            for session_id, row in slim.items():
                assert set(row) == set(BOARD_FIELDS)
                assert row == {k: full[session_id][k] for k in BOARD_FIELDS}
            assert slim[t.session_id]["state"] != "input_required"
            registry_path.parent.mkdir(parents=True, exist_ok=True)
            registry_path.write_bytes(
                orjson.dumps(registry(4343, t.session_id, status="waiting", waiting_for="approve"))
            )
            write_lines(path, [t.bash("rm -rf build", call_id="toolu_rm")])
            engine.post(PathTouched(registry_path))
            engine.post(PathTouched(path))
            engine.post(Tick())
            await asyncio.get_running_loop().run_in_executor(None, engine.drain)
            full, slim = await hello(client, ""), await hello(client, "?view=board")
            for rows in (full, slim):
                assert rows[t.session_id]["state"] == "input_required"
                assert rows[t.session_id]["detail"] == full[t.session_id]["detail"]
            assert (await hello(client, "?view=board")) == slim  # the same rows again
            # More ended sessions than the first message holds: the newest first, then the rest.
            monkeypatch.setattr(app, "BOARD_FIRST_ROWS", 1)
            url = f"{running.origin}/api/events?view=board"
            async with client.ws_connect(url, headers={"Origin": running.origin}) as ws:
                first = await ws.receive_json(timeout=5)
                rest = await ws.receive_json(timeout=5)
            assert first["type"] == "sessions" and first["rest"] is True
            assert rest["type"] == "sessions_rest"
            live = [r for r in slim.values() if r["state"] in ("input_required", "running")]
            ended = [r for r in slim.values() if r not in live]
            newest = max(ended, key=lambda r: r["last_activity"] or "")
            assert sorted(r["session_id"] for r in first["sessions"]) == sorted(
                r["session_id"] for r in [*live, newest]
            )
            assert {r["session_id"]: r for r in first["sessions"] + rest["sessions"]} == slim
            assert len(first["sessions"]) + len(rest["sessions"]) == len(slim)

        call(running, test)


def test_pages_and_static_files_with_their_types(home: Home, tmp_path: Path):
    with serving(home, static=write_page(tmp_path / "web")) as running:
        base = running.origin

        async def test(client: aiohttp.ClientSession) -> None:
            for route in ("/", "/board", "/search", "/session/claude/abc"):
                async with client.get(base + route) as r:
                    assert r.status == 200, route
                    assert r.headers["Content-Type"].startswith("text/html")
                    assert "test page" in await r.text()
                    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
                    assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
                    assert r.headers["Referrer-Policy"] == "no-referrer"
            async with client.get(f"{base}/static/js/app.js") as r:
                assert r.status == 200
                assert r.headers["Content-Type"] in ("text/javascript", "application/javascript")
            async with client.get(f"{base}/static/app.css") as r:
                assert r.headers["Content-Type"] == "text/css"
            async with client.get(f"{base}/static/missing.js") as r:
                assert r.status == 404
            async with client.get(f"{base}/nowhere") as r:
                assert r.status == 404

        call(running, test)


def test_the_server_file_is_private_and_removed_when_done(tmp_path: Path):
    path = tmp_path / "data" / "server.json"
    info = {"url": "http://127.0.0.1:1/?token=t", "port": 1, "token": "t", "pid": os.getpid()}
    write_server_file(path, info)
    assert path.stat().st_mode & 0o777 == 0o600
    assert orjson.loads(path.read_bytes()) == info
    remove_server_file(path, pid=os.getpid() + 1)  # someone else's: kept
    assert path.exists()
    remove_server_file(path)
    assert not path.exists()


def test_a_taken_port_is_an_error(home: Home):
    with serving(home) as running, pytest.raises(OSError):
        serving(home, port=running.server.port).__enter__()
