"""Hostile transcript lines never stop the engine (issue 16, item 5): numbers of any size,
timestamps of any value, deep nesting, strings of any encoding. Each case is a real file on
tmp_path read by a real engine into a real SQLite index, then read back the way a person does
(a warm restart, ``agentbar status --json``, the server's JSON, the replay and the exports)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from claude_lines import T0, ClaudeTranscript, iso, registry, write_lines
from cli_runner import agentbar
from codex_lines import CodexRollout
from engine_harness import Rig, make_rig, new_transcript
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_rig import make_home, snapshot
from server_rig import serving

from agentbar.core import jsonsafe
from agentbar.core.listing import diagnostics
from agentbar.core.model import iso as model_iso
from agentbar.core.records import TOKEN_LIMIT, Usage
from agentbar.core.replay.export import Format, Options, export
from agentbar.core.search import Searcher
from agentbar.core.sources.base import (
    EPOCH_MAX,
    EPOCH_MIN,
    ODD_VALUES,
    label,
    parse_timestamp,
    token_count,
)

A = "aaaaaaaa-0000-4000-8000-000000000001"
X = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
BIG = 2**63  # one past SQLite's largest INTEGER


@pytest.fixture
def rig(tmp_path: Path) -> Any:
    r = make_rig(tmp_path)
    r.claude_process(4242)  # a live Claude: its sessions end on their answers, not "exited"
    yield r
    r.close()


def usage(output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": 1,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }


def codex_path(rig: Rig, session_id: str = X) -> Path:
    return rig.codex / "sessions/2026/11/29" / f"rollout-2026-11-29T10-00-00-{session_id}.jsonl"


def deep(depth: int) -> bytes:
    """A JSON value nested ``depth`` levels (orjson writes at most 254)."""
    return b'{"a":' * depth + b"1" + b"}" * depth


def write_any(path: Path, lines: list[dict[str, Any]]) -> None:
    """``write_lines`` for values orjson will not write (integers past 64 bits)."""
    with open(path, "a") as fh:
        for line in lines:
            fh.write(json.dumps(line, separators=(",", ":")) + "\n")


def restarted(rig: Rig) -> dict[str, Any]:
    """The sessions a warm restart finds in the index (what was saved, not what was read)."""
    rig.close()
    rig.open()
    return rig.sessions()


# -- numbers of any size --------------------------------------------------------------------


def test_a_token_count_past_int64_is_clamped_counted_and_saved(rig: Rig) -> None:
    t = new_transcript(A)
    path = rig.transcript_path(A)
    write_lines(path, [t.prompt("count"), t.text("Many.", usage=usage(BIG))])
    write_lines(path, [t.prompt("and later"), t.text("Still here.", stop_reason="end_turn")])
    engine = rig.open()
    snap = rig.sessions()[A]
    assert snap.usage.output_tokens == TOKEN_LIMIT
    assert diagnostics(engine.stats())["clamped_numbers"] == 1
    again = restarted(rig)[A]
    assert again.usage.output_tokens == TOKEN_LIMIT and again.title == "count"
    assert again.state.detail == "Still here."


def test_two_counts_whose_sum_overflows_int64_saturate(rig: Rig) -> None:
    t = new_transcript(A)
    path = rig.transcript_path(A)
    lines = [t.prompt("sum"), t.text("one", usage=usage(5 * 10**18))]
    lines += [t.text("two", usage=usage(5 * 10**18), stop_reason="end_turn")]
    write_lines(path, lines)
    rig.open()
    assert rig.sessions()[A].usage.output_tokens == TOKEN_LIMIT
    assert restarted(rig)[A].usage.output_tokens == TOKEN_LIMIT


def test_a_codex_token_count_past_int64_is_clamped(rig: Rig) -> None:
    r = CodexRollout(X)
    huge = r.tokens(BIG, 0, BIG)
    write_lines(codex_path(rig), [r.meta(), r.started(), r.prompt("go"), huge, r.complete("ok")])
    engine = rig.open()
    snap = rig.sessions()[X]
    assert snap.usage.output_tokens == TOKEN_LIMIT and snap.usage.input_tokens == TOKEN_LIMIT
    # both counts of the line's running total and of its response's own counts
    assert diagnostics(engine.stats())["clamped_numbers"] == 4
    assert restarted(rig)[X].usage.output_tokens == TOKEN_LIMIT


def test_negative_and_float_counts_are_not_counts(rig: Rig) -> None:
    t = new_transcript(A)
    odd = {**usage(-5), "input_tokens": 1.5e30}
    write_lines(rig.transcript_path(A), [t.prompt("odd"), t.text("x", usage=odd)])
    engine = rig.open()
    snap = rig.sessions()[A]
    assert (snap.usage.output_tokens, snap.usage.input_tokens) == (0, TOKEN_LIMIT)
    assert diagnostics(engine.stats())["clamped_numbers"] == 2
    restarted(rig)


def test_a_pending_agent_count_past_int64_is_saved(rig: Rig) -> None:
    t = new_transcript(A)
    write_lines(rig.transcript_path(A), [t.prompt("p"), t.turn_duration(pending_agents=2**64 - 1)])
    rig.open()
    assert A in restarted(rig)


# -- timestamps of any value ------------------------------------------------------------------

ODD_TIMES: list[Any] = [
    "9999-12-31T23:59:59-23:59",  # parses, but is a moment in the year 10000
    "0001-01-01T00:00:00+23:59",  # the year 0
    "99999-01-01T00:00:00Z",
    "2026-13-45T99:99:99Z",
    -62135596800 * 1000,  # year 1 in milliseconds
    -1,
    10**30,
    2**64,
    1.7976931348623157e308,
    {"not": "a time"},
]


@pytest.mark.parametrize("value", ODD_TIMES, ids=[repr(v)[:30] for v in ODD_TIMES])
def test_an_unrepresentable_timestamp_is_unknown_and_counted(rig: Rig, value: Any) -> None:
    t = new_transcript(A)
    odd = t.prompt("odd time")
    odd["timestamp"] = value
    path = rig.transcript_path(A)
    write_lines(path, [t.prompt("first")])
    write_any(path, [odd])
    write_lines(path, [t.text("after", stop_reason="end_turn")])
    engine = rig.open()
    snap = rig.sessions()[A]
    assert snap.state.detail == "after"
    assert snap.last_activity is not None and T0 < snap.last_activity < T0 + 60
    assert diagnostics(engine.stats())["unrepresentable_timestamps"] == 1
    assert A in restarted(rig)


def test_a_registry_with_odd_times_and_pid_is_read_without_them(rig: Rig) -> None:
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("registry"))
    entry = registry(4242, A, status="busy")
    entry.update(startedAt="9999-12-31T23:59:59-23:59", statusUpdatedAt=-1, updatedAt=-1)
    rig.write_json(rig.claude / "sessions" / "4242.json", entry)
    odd_pid = registry(2**70, A, status="idle")
    with open(rig.claude / "sessions" / "4243.json", "w") as fh:
        json.dump(odd_pid, fh)
    engine = rig.open()
    assert rig.state(A) == ("running", None)
    assert diagnostics(engine.stats())["unrepresentable_timestamps"] >= 1
    assert diagnostics(engine.stats())["malformed_lines"] == 1  # the pid no process can have
    assert A in restarted(rig)


def test_an_odd_codex_timestamp_is_unknown(rig: Rig) -> None:
    r = CodexRollout(X)
    odd = r.prompt("when?")
    odd["timestamp"] = "9999-12-31T23:59:59-23:59"
    odd["payload"]["timestamp"] = -(10**20)
    path = codex_path(rig)
    write_lines(path, [r.meta(), r.started()])
    write_any(path, [odd, r.complete("ok")])
    engine = rig.open()
    assert rig.sessions()[X].title == "when?"
    assert diagnostics(engine.stats())["unrepresentable_timestamps"] >= 1


def test_status_json_and_the_server_survive_odd_numbers_and_times(tmp_path: Path) -> None:
    home = make_home(tmp_path, claude=())
    t = ClaudeTranscript(A, "/work/odd", start=time.time() - 60)
    odd_time = t.prompt("odd time")
    odd_time["timestamp"] = "9999-12-31T23:59:59-23:59"
    lines = [t.prompt("numbers"), t.text("big", usage=usage(BIG)), odd_time]
    lines += [t.text("fine", stop_reason="end_turn")]
    write_lines(home.transcript_path(A, "-work-odd"), lines)
    env = {
        "HOME": str(home.home),
        "AGENTBAR_DATA_DIR": str(home.settings.data_dir),
        "PATH": "/usr/bin:/bin",
    }
    result = agentbar(env, "status", "--all", "--json")
    assert result.returncode == 0, result.stderr
    doc = orjson.loads(result.stdout)
    (row,) = doc["sessions"]
    assert row["usage"]["output_tokens"] == TOKEN_LIMIT
    assert doc["diagnostics"]["clamped_numbers"] == 1
    assert doc["diagnostics"]["unrepresentable_timestamps"] == 1
    with serving(home) as running:

        async def main() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                base = running.origin
                async with client.get(f"{base}/api/sessions?all=1") as r:
                    assert r.status == 200, await r.text()
                    (session,) = (await r.json())["sessions"]
                    assert session["session_id"] == A
                async with client.get(f"{base}/api/sessions/{A}/items") as r:
                    assert r.status == 200, await r.text()
                for fmt in ("json", "md", "html"):
                    async with client.get(f"{base}/api/sessions/{A}/export?format={fmt}") as r:
                        assert r.status == 200, await r.text()
                async with client.ws_connect(f"{base}/api/events", headers={"Origin": base}) as ws:
                    hello = await ws.receive_json(timeout=10)
                    assert hello["type"] == "sessions"

        asyncio.run(main())


# -- deep nesting ----------------------------------------------------------------------------


def test_a_tool_input_nested_300_deep_loses_no_line(tmp_path: Path) -> None:
    home = make_home(tmp_path, claude=())
    t = ClaudeTranscript(A, "/work/deep")
    path = home.transcript_path(A, "-work-deep")
    call = orjson.dumps(t.tool_use("Mystery", {"x": 0}, "toolu_deep"))
    call = call.replace(b'{"x":0}', b'{"x":' + deep(300) + b"}")
    write_lines(path, [t.prompt("go deep")])
    with open(path, "ab") as fh:
        fh.write(call + b"\n")
    write_lines(
        path, [t.tool_result("toolu_deep", "ok"), t.text("Done deep.", stop_reason="end_turn")]
    )
    engine = home.caught_up()
    try:
        snap = snapshot(engine, A)
        assert snap.title == "go deep" and snap.last_activity == t.now
        page = home.replay().page(snap)
        kinds = [item.kind.value for item in page.items]
        assert "tool_call" in kinds and kinds[-1] == "assistant"
        doc = orjson.loads("".join(export(home.replay(), snap, Format.JSON, Options())))
        assert [i["kind"] for i in doc["items"]][-1] == "assistant"
        (call_item,) = (i for i in doc["items"] if i["kind"] == "tool_call")
        assert jsonsafe.TRUNCATED in orjson.dumps(call_item["input"]).decode()
        for fmt in (Format.MARKDOWN, Format.HTML):
            assert "Done deep." in "".join(export(home.replay(), snap, fmt, Options()))
    finally:
        engine.stop()
        engine.index.close()


def test_a_codex_call_nested_300_deep_loses_no_line(rig: Rig) -> None:
    r = CodexRollout(X)
    call = orjson.dumps(
        r.item({"type": "function_call", "name": "odd", "call_id": "c1", "arguments": {"k": 0}})
    )
    call = call.replace(b'{"k":0}', deep(300))
    path = codex_path(rig)
    write_lines(path, [r.meta(), r.started(), r.prompt("deep")])
    with open(path, "ab") as fh:
        fh.write(call + b"\n")
    write_lines(path, [r.answer("Deep done."), r.complete("Deep done.")])
    rig.open()
    assert rig.sessions()[X].state.detail == "Deep done."
    assert restarted(rig)[X].title == "deep"


def test_a_deep_line_read_live_keeps_the_lines_read_with_it(rig: Rig) -> None:
    t = new_transcript(A)
    path = rig.transcript_path(A)
    rig.write(path, t.prompt("live and deep"))
    engine = rig.open()
    call = orjson.dumps(t.tool_use("Mystery", {"x": 0}, "toolu_deep"))
    call = call.replace(b'{"x":0}', b'{"x":' + deep(300) + b"}")
    batch = orjson.dumps(t.text("before it")) + b"\n" + call + b"\n"
    batch += orjson.dumps(t.tool_result("toolu_deep", "ok")) + b"\n"
    rig.write_raw(path, batch + orjson.dumps(t.text("Deep done.", stop_reason="end_turn")) + b"\n")
    rig.settle()
    assert rig.sessions()[A].state.detail == "Deep done."
    assert engine.stats().unreadable == 0
    again = restarted(rig)[A]  # saved: the index holds every line of the batch
    assert again.state.detail == "Deep done." and again.last_activity == t.now


def test_depth_safe_dumps_truncates_below_a_depth_with_a_marker() -> None:
    value = orjson.loads(deep(1000))
    text = jsonsafe.dumps(value)
    assert jsonsafe.TRUNCATED.encode() in text
    assert orjson.loads(text)  # still JSON
    assert jsonsafe.dumps({"a": [1, "b"]}) == orjson.dumps({"a": [1, "b"]})
    assert orjson.loads(jsonsafe.dumps({"n": 2**70})) == {"n": str(2**70)}


# -- strings of any encoding ------------------------------------------------------------------

ODD_LINES = [
    b'{"type":"user","message":{"role":"user","content":"lone \\ud800 surrogate"}}',
    b'{"type":"user","message":{"role":"user","content":"low \\udc00 first"}}',
    b'{"type":"user","message":{"role":"user","content":"nul \\u0000 inside"}}',
    b'{"type":"user","message":{"role":"user","content":"bad \xff\xfe utf-8"}}',
    b'{"type":"user","message":{"role":"user","content":"raw \x00 nul"}}',
    b'{"type":"user","message":"a string where a dict goes"}',
    b'{"type":"assistant","message":{"content":[1,"x",null],"usage":[1,2]}}',
    b'{"type":["assistant"],"timestamp":{"a":1}}',
    b'{"type":"system","subtype":{"x":1},"pendingBackgroundAgentCount":1e300}',
    b'"just a string"',
    b'{"type":"user","message":{"role":"user","content":"cut in the mid',
]


def test_lines_of_any_encoding_or_shape_lose_nothing_after_them(rig: Rig) -> None:
    t = new_transcript(A)
    path = rig.transcript_path(A)
    write_lines(path, [t.prompt("before")])
    with open(path, "ab") as fh:
        for line in ODD_LINES:
            fh.write(line + b"\n")
    write_lines(path, [t.text("After all that.", stop_reason="end_turn")])
    engine = rig.open()
    snap = rig.sessions()[A]
    assert snap.state.detail == "After all that." and snap.title == "before"
    stats = diagnostics(engine.stats())
    assert stats["malformed_lines"] + stats["unknown_records"] >= 3
    assert restarted(rig)[A].state.detail == "After all that."


def test_a_damaged_line_before_the_first_real_one_does_not_move_the_file(rig: Rig) -> None:
    t = new_transcript(A, version="2.0.77")
    damaged = t.prompt("damaged")
    damaged["sessionId"] = A.replace("a", "b", 1)  # a flipped byte: another well-formed id
    damaged["parentUuid"] = "00000000-0000-4000-8000-000000000000"
    odd = t.prompt("odd")
    odd.pop("parentUuid")  # a line with no parent says nothing of whose file this is
    path = rig.transcript_path(A)
    snapshot_line = t.bookkeeping("file-history-snapshot", messageId="m1", snapshot={})
    write_lines(path, [snapshot_line, odd, damaged, t.prompt("real"), t.text("ok")])
    rig.open()
    assert set(rig.sessions()) == {A}
    t10 = new_transcript(A, version="1.0.128")  # where 1.0's resume rule still applies
    resumed = t10.prompt("resumed")
    resumed["sessionId"], resumed["parentUuid"] = X.replace("019a2d7a", "cccccccc"), "p-1"
    B = "bbbbbbbb-0000-4000-8000-000000000002"
    write_lines(rig.transcript_path(B), [resumed])
    rig.touch(rig.transcript_path(B))
    rig.settle()
    assert X.replace("019a2d7a", "cccccccc") in rig.sessions()


def test_a_parser_bug_costs_one_line_not_the_file(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentbar.core.agents.claude.transcript import ClaudeTranscriptParser

    real_parse = ClaudeTranscriptParser.parse

    def parse(self: ClaudeTranscriptParser, line: bytes) -> Any:
        if b"poison" in line:
            raise RecursionError("adapter bug")
        return real_parse(self, line)

    monkeypatch.setattr(ClaudeTranscriptParser, "parse", parse)
    t = new_transcript(A)
    write_lines(
        rig.transcript_path(A),
        [t.prompt("healthy"), t.prompt("poison"), t.text("later", stop_reason="end_turn")],
    )
    engine = rig.open()
    assert rig.sessions()[A].state.detail == "later"
    assert diagnostics(engine.stats())["unknown_records"] == 1


def test_iso_of_an_unrepresentable_moment_is_none() -> None:
    assert model_iso(1e300) is None and model_iso(float("nan")) is None
    assert model_iso(T0) == iso(T0)


# -- the pure parts, for every value ------------------------------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)  # lone surrogates
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(JSON_VALUES)
@settings(max_examples=300, deadline=None)
def test_depth_safe_dumps_writes_any_json_like_value(value: Any) -> None:
    text = jsonsafe.dumps({"deep": value})
    assert isinstance(orjson.loads(text), dict)


@given(JSON_VALUES)
@settings(max_examples=300, deadline=None)
def test_timestamps_and_counts_of_any_value_never_raise(value: Any) -> None:
    ts = parse_timestamp(value)
    assert ts is None or EPOCH_MIN <= ts < EPOCH_MAX
    assert model_iso(ts) is not None or ts is None
    assert 0 <= token_count(value) <= TOKEN_LIMIT
    assert isinstance(label(value), str) and len(label(value)) <= 200


def test_a_value_nested_past_any_parser_is_cut_not_recursed() -> None:
    nested: Any = 1
    for _ in range(100_000):  # far past Python's recursion limit
        nested = [nested]
    text = jsonsafe.dumps(nested)
    assert text.startswith(b"[" * jsonsafe.MAX_DEPTH + b'"' + jsonsafe.TRUNCATED.encode())


def test_usage_sums_saturate_and_odd_values_are_counted() -> None:
    ODD_VALUES.take()
    big = Usage(output_tokens=token_count(2**63))
    assert big.output_tokens == TOKEN_LIMIT and ODD_VALUES.take() == (0, 1)
    assert (big + big).output_tokens == TOKEN_LIMIT
    assert parse_timestamp("9999-12-31T23:59:59-23:59") is None and ODD_VALUES.take() == (1, 0)
    assert parse_timestamp(None) is None and ODD_VALUES.take() == (0, 0)  # missing: not odd


def test_a_search_for_any_text_answers(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    engine = home.caught_up()
    engine.stop()
    engine.index.close()
    searcher = Searcher(home.settings.index_path)
    try:
        for query in ("build\x00slow", "\ud800", "a\udc00b", "\x00", '"', "NEAR(", "build" * 500):
            assert isinstance(searcher.search(query), list)
        assert searcher.search("slow\x00")  # the NUL is a space, the word still found
    finally:
        searcher.close()
