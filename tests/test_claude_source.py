"""The Claude Code adapter: paths, every sub-agent layout, lines to records, the registry,
process recognition, and robustness against any JSON at all."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import ClaudeTranscript
from engine_harness import make_rig
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbar.core.agents.claude.files import ClaudeSource, default_claude_roots
from agentbar.core.agents.claude.transcript import ClaudeTranscriptParser
from agentbar.core.model import Agent
from agentbar.core.records import (
    TITLE_RANK_COMMAND,
    Activity,
    ApiError,
    Asks,
    Bookkeeping,
    Compaction,
    ModelSeen,
    Prompt,
    SessionMeta,
    TitleSet,
    ToolCall,
    ToolResult,
    TurnAborted,
    TurnEnded,
    TurnStarted,
    Unknown,
    UsageReport,
)
from agentbar.core.sources.base import (
    MalformedLine,
    ProcessInfo,
    StreamKind,
    StreamSpec,
    scan_source,
)

FIXTURES = Path(__file__).parent / "data" / "synthetic" / "claude"
SID = "11111111-2222-3333-4444-555555555555"
ROOT = Path("/h/.claude")


@pytest.mark.parametrize(
    ("relative", "kind", "session", "agent"),
    [
        (f"projects/-w/{SID}.jsonl", StreamKind.TRANSCRIPT, SID, None),
        ("projects/-w/agent-b7e1.jsonl", StreamKind.SUBAGENT, None, "b7e1"),
        (f"projects/-w/{SID}/subagents/agent-a1.jsonl", StreamKind.SUBAGENT, SID, "a1"),
        (
            f"projects/-w/{SID}/subagents/workflows/r1/agent-a2.jsonl",
            StreamKind.SUBAGENT,
            SID,
            "a2",
        ),
        ("sessions/4242.json", StreamKind.REGISTRY, None, None),
        (f"projects/-w/{SID}/subagents/agent-a1.meta.json", None, None, None),
        (f"projects/-w/{SID}/tool-results/toolu_1.txt", None, None, None),
        ("projects/-w/notes.jsonl", StreamKind.TRANSCRIPT, None, None),  # its lines name it
        ("projects/loose.jsonl", None, None, None),
        ("sessions/abc.json", None, None, None),
        ("history.jsonl", None, None, None),
        (f"todos/{SID}.jsonl", None, None, None),
    ],
)
def test_classify(
    relative: str, kind: StreamKind | None, session: str | None, agent: str | None
) -> None:
    spec = ClaudeSource(ROOT).classify(ROOT / relative)
    if kind is None:
        assert spec is None
        return
    assert spec is not None
    assert (spec.kind, spec.session_hint, spec.agent_id_hint) == (kind, session, agent)


def test_roots_follow_claude_config_dir_then_home() -> None:
    assert default_claude_roots({"CLAUDE_CONFIG_DIR": "/c", "HOME": "/h"}) == [Path("/c")]
    assert default_claude_roots({"HOME": "/h"}) == [Path("/h/.claude"), Path("/h/.config/claude")]
    assert default_claude_roots({"HOME": "/h", "XDG_CONFIG_HOME": "/x"})[1] == Path("/x/claude")


# -- every layout, through the engine ---------------------------------------------------------


@pytest.fixture
def rig(tmp_path: Path) -> Any:
    r = make_rig(tmp_path)
    yield r
    r.close()


def install(rig: Any, version: str) -> None:
    shutil.rmtree(rig.claude)
    shutil.copytree(FIXTURES / version, rig.claude)
    rig.clock.advance(86400)  # these sessions are old: no process is expected


def test_v1_inline_sidechains_belong_to_their_session(rig: Any) -> None:
    install(rig, "v1.0")
    rig.open()
    sessions = rig.sessions()
    assert list(sessions) == ["10000000-0000-4000-8000-000000000001"]
    snap = sessions["10000000-0000-4000-8000-000000000001"]
    assert (snap.project, snap.title) == ("/work/legacy app", "Legacy refactor of the parser")
    # Usage counts every response once, the sub-agent's included (4 responses x 10/20/100).
    assert (snap.usage.input_tokens, snap.usage.output_tokens) == (40, 80)


def test_v2_0_sibling_agent_file_belongs_to_its_parent(rig: Any) -> None:
    install(rig, "v2.0")
    engine = rig.open()
    sessions = rig.sessions()
    assert list(sessions) == ["20000000-0000-4000-8000-000000000002"]
    snap = sessions["20000000-0000-4000-8000-000000000002"]
    assert snap.title == "Add a CLI flag --dry-run"
    assert engine.stats().streams == 2
    # msg_a was written as two lines sharing its id: its usage counts once; then two more
    # responses in the session and two in its sub-agent.
    assert snap.usage.output_tokens == 7 + 20 * 2 + 20 * 2


def test_v2_1_subagents_folder_registry_and_titles(rig: Any) -> None:
    install(rig, "v2.1")
    engine = rig.open()
    sessions = rig.sessions()
    assert list(sessions) == ["30000000-0000-4000-8000-000000000003"]
    snap = sessions["30000000-0000-4000-8000-000000000003"]
    assert (snap.project, snap.title, snap.model) == (
        "/work/new",
        "Slow build investigation",
        "claude-sonnet-4-5",
    )
    assert str(snap.state.state) == "ended"  # the registry's pid 91234 is not running
    stats = engine.stats()
    assert (stats.streams, stats.unknown, stats.malformed) == (3, 0, 0)


def test_v2_1_live_session_asking_a_question(rig: Any) -> None:
    install(rig, "v2.1")
    rig.processes.add(
        ProcessInfo(
            pid=91234,
            ppid=1,
            create_time=1_700_000_000.0,
            name="claude",
            cmdline=("claude",),
            cwd="/work/new",
        )
    )
    rig.open()
    snap = rig.sessions()["30000000-0000-4000-8000-000000000003"]
    assert (str(snap.state.state), str(snap.state.waiting_for), snap.state.detail) == (
        "input_required",
        "question",
        "Should I switch to esbuild?",
    )


# -- lines to records -------------------------------------------------------------------------


def records(lines: list[dict[str, Any]], spec: StreamSpec | None = None) -> list[Any]:
    spec = spec or StreamSpec(
        Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/{SID}.jsonl"), session_hint=SID
    )
    parser = ClaudeTranscriptParser(spec)
    out: list[Any] = []
    for line in lines:
        out.extend(parser.parse(orjson.dumps(line)))
    return out


def kinds(recs: list[Any]) -> list[str]:
    return [type(r).__name__ for r in recs]


def test_records_of_a_tool_turn() -> None:
    t = ClaudeTranscript(SID)
    recs = records(
        [
            t.prompt("go"),
            t.thinking("plan"),
            t.bash("ls"),
            t.tool_result(),
            t.text("done"),
            t.turn_duration(),
        ]
    )
    assert kinds(recs) == [
        "SessionMeta",
        "Prompt",
        "ModelSeen",
        "UsageReport",
        "Thinking",
        "UsageReport",
        "ToolCall",
        "ToolResult",
        "UsageReport",
        "AssistantText",
        "TurnEnded",
    ]
    meta, call = recs[0], recs[6]
    assert isinstance(meta, SessionMeta) and (meta.session_id, meta.cwd) == (SID, "/work/demo")
    assert isinstance(call, ToolCall) and (call.name, call.summary, call.asks) == (
        "Bash",
        "ls",
        Asks.NOTHING,
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"type": "summary", "summary": "S"}, TitleSet),
        ({"type": "custom-title", "customTitle": "Mine"}, TitleSet),
        ({"type": "ai-title", "aiTitle": "AI"}, TitleSet),
        ({"type": "file-history-snapshot", "snapshot": {}}, Bookkeeping),
        ({"type": "queue-operation", "operation": "enqueue"}, Activity),
        ({"type": "progress", "data": {"type": "bash_progress"}}, Activity),
        ({"type": "attachment", "attachment": {"type": "file"}}, Activity),
        ({"type": "system", "subtype": "compact_boundary", "compactMetadata": {}}, Compaction),
        ({"type": "system", "subtype": "turn_duration", "durationMs": 1}, TurnEnded),
        ({"type": "system", "subtype": "api_error", "retryAttempt": 1, "maxRetries": 3}, ApiError),
        ({"type": "system", "subtype": "local_command", "content": "x"}, Bookkeeping),
        ({"type": "system", "subtype": "novel_subtype"}, Unknown),
        ({"type": "something-new"}, Unknown),
        ({"no": "type"}, Unknown),
        ({"type": "assistant", "message": "not an object"}, Unknown),
        ({"type": "user", "message": {"content": "[Request interrupted by user]"}}, TurnAborted),
        ({"type": "user", "message": {"content": "<task-notification>x"}}, TurnStarted),
        (
            {
                "type": "user",
                "message": {"content": "<local-command-stdout>x</local-command-stdout>"},
            },
            Bookkeeping,
        ),
        ({"type": "user", "isMeta": True, "message": {"content": "Caveat: ..."}}, Bookkeeping),
        ({"type": "user", "isCompactSummary": True, "message": {"content": "sum"}}, Bookkeeping),
        (
            {"type": "user", "message": {"content": "<ide_opened_file>a</ide_opened_file>"}},
            Bookkeeping,
        ),
        ({"type": "user", "message": {"content": "real prompt"}}, Prompt),
    ],
)
def test_line_kinds(line: dict[str, Any], expected: type) -> None:
    recs = [r for r in records([line]) if not isinstance(r, SessionMeta)]
    assert [type(r) for r in recs] == [expected]


def test_slash_command_is_injected_text_that_names_the_session_until_a_prompt() -> None:
    line = {"type": "user", "message": {"content": "<command-name>/clear</command-name>"}}
    recs = [r for r in records([line]) if not isinstance(r, SessionMeta)]
    assert [type(r) for r in recs] == [Bookkeeping, TitleSet]
    assert isinstance(recs[1], TitleSet)
    assert recs[1].title == "/clear" and recs[1].rank == TITLE_RANK_COMMAND


def test_denied_and_errored_tool_results() -> None:
    t = ClaudeTranscript(SID)
    denied, failed = records([t.tool_result(denied=True), t.tool_result(is_error=True)])[1:]
    assert isinstance(denied, ToolResult) and (denied.is_error, denied.denied) == (True, True)
    assert isinstance(failed, ToolResult) and (failed.is_error, failed.denied) == (True, False)


def test_synthetic_api_error_message_is_an_error_not_a_model() -> None:
    t = ClaudeTranscript(SID)
    recs = records([t.synthetic_error("API Error: 401")])
    assert [type(r) for r in recs] == [SessionMeta, ApiError]


def test_split_response_lines_share_a_usage_key() -> None:
    t = ClaudeTranscript(SID)
    recs = records([t.thinking("a", message_id="m1"), t.text("b", message_id="m1")])
    keys = {r.key for r in recs if isinstance(r, UsageReport)}
    assert keys == {"m1:req_m1"}
    assert sum(isinstance(r, ModelSeen) for r in recs) == 1


def test_question_tools_and_plan_approval() -> None:
    t = ClaudeTranscript(SID)
    ask, plan = [
        r
        for r in records(
            [
                t.tool_use("AskUserQuestion", {"questions": [{"question": "Which DB?"}]}, "q"),
                t.tool_use("ExitPlanMode", {"plan": "Step one\nStep two"}, "p"),
            ]
        )
        if isinstance(r, ToolCall)
    ]
    assert isinstance(ask, ToolCall) and (ask.asks, ask.summary) == (Asks.QUESTION, "Which DB?")
    assert isinstance(plan, ToolCall) and (plan.asks, plan.summary) == (Asks.APPROVAL, "Step one")


def test_subagent_stream_owner_comes_from_its_lines() -> None:
    spec = StreamSpec(
        Agent("claude"), StreamKind.SUBAGENT, Path("/p/agent-b7.jsonl"), agent_id_hint="b7"
    )
    parser = ClaudeTranscriptParser(spec)
    assert parser.owner is None
    side = ClaudeTranscript(SID, sidechain=True, agent_id="b7")
    recs = parser.parse(orjson.dumps(side.prompt("task")))
    assert parser.owner is not None
    assert (parser.owner.session_id, parser.owner.agent_id) == (SID, "b7")
    assert all(r.agent_id == "b7" for r in recs)


def test_checkpoint_round_trip_continues_mid_file() -> None:
    t = ClaudeTranscript(SID)
    lines = [t.prompt("a"), t.text("b"), t.text("c", model="claude-opus-4")]
    spec = StreamSpec(
        Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/{SID}.jsonl"), session_hint=SID
    )
    whole = ClaudeTranscriptParser(spec)
    one_pass = [r for line in lines for r in whole.parse(orjson.dumps(line))]
    first = ClaudeTranscriptParser(spec)
    split = list(first.parse(orjson.dumps(lines[0])))
    state = orjson.loads(orjson.dumps(first.checkpoint()))
    second = ClaudeTranscriptParser(spec, state)
    split += [r for line in lines[1:] for r in second.parse(orjson.dumps(line))]
    assert split == one_pass


def test_oversized_lines_are_still_recognised() -> None:
    spec = StreamSpec(
        Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/{SID}.jsonl"), session_hint=SID
    )
    parser = ClaudeTranscriptParser(spec)
    t = ClaudeTranscript(SID)
    # What the tailer hands over: the first 64 KiB of a line far bigger than that.
    result = orjson.dumps(t.tool_result("toolu_big", "x" * 100_000))[: 64 * 1024]
    prompt = orjson.dumps(t.prompt("y" * 100_000))[: 64 * 1024]
    (got_result,) = parser.parse_oversized(result, 50_000_000)
    (got_prompt,) = parser.parse_oversized(prompt, 20_000_000)
    (other,) = parser.parse_oversized(b'{"type":"assistant"', 30_000_000)
    assert isinstance(got_result, ToolResult) and got_result.call_id == "toolu_big"
    assert isinstance(got_prompt, Prompt) and got_prompt.text == "[message of 20.0 MB]"
    assert got_prompt.ts is not None
    assert isinstance(other, Activity)


def test_malformed_lines_raise_malformed_only() -> None:
    parser = ClaudeTranscriptParser(
        StreamSpec(
            Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/{SID}.jsonl"), session_hint=SID
        )
    )
    for garbage in (b"{", b"[]", b"42", b'"text"', b"\xff\xfe\x00", b"null"):
        with pytest.raises(MalformedLine):
            parser.parse(garbage)
    # Invalid UTF-8 inside an otherwise valid line is kept, not lost.
    recs = parser.parse(b'{"type":"user","message":{"content":"caf\xe9"}}')
    assert any(isinstance(r, Prompt) and r.text == "caf\ufffd" for r in recs)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)
claude_keys = st.sampled_from(
    [
        "type",
        "message",
        "content",
        "isSidechain",
        "agentId",
        "cwd",
        "subtype",
        "timestamp",
        "isMeta",
        "toolUseResult",
        "isApiErrorMessage",
        "model",
        "usage",
        "summary",
        "aiTitle",
    ]
)
claude_types = st.sampled_from(["user", "assistant", "system", "progress", "attachment", "summary"])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(claude_keys, json_values, max_size=8),
    claude_types,
    st.booleans(),
)
def test_any_json_object_parses_without_raising(obj: dict[str, Any], kind: str, sub: bool) -> None:
    obj.setdefault("type", kind)
    spec = (
        StreamSpec(
            Agent("claude"), StreamKind.SUBAGENT, Path("/p/agent-x.jsonl"), agent_id_hint="x"
        )
        if sub
        else StreamSpec(
            Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/{SID}.jsonl"), session_hint=SID
        )
    )
    parser = ClaudeTranscriptParser(spec)
    parser.parse(orjson.dumps(obj))
    orjson.dumps(parser.checkpoint())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_parse_or_raise_malformed(data: bytes) -> None:
    parser = ClaudeTranscriptParser(
        StreamSpec(
            Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/{SID}.jsonl"), session_hint=SID
        )
    )
    with contextlib.suppress(MalformedLine):
        parser.parse(data)


# -- registry and processes ------------------------------------------------------------------


def test_registry_parsing() -> None:
    source = ClaudeSource(ROOT)
    entry = source.parse_registry(
        orjson.dumps(
            {
                "pid": 4242,
                "sessionId": SID,
                "cwd": "/w",
                "startedAt": 1_764_400_000_000,
                "status": "waiting",
                "waitingFor": "permission prompt",
                "statusUpdatedAt": 1_764_400_005_000,
                "procStart": 123,
            }
        )
    )
    assert entry is not None
    assert (entry.pid, entry.session_id, entry.status, entry.waiting_for) == (
        4242,
        SID,
        "waiting",
        "permission prompt",
    )
    assert (entry.started_at, entry.updated_at, entry.proc_start) == (
        1_764_400_000.0,
        1_764_400_005.0,
        "123",
    )
    for bad in (
        b'{"pid": 1}',
        b'{"sessionId": "x"}',
        b"{",
        b"[]",
        b'{"pid": "1", "sessionId": "x"}',
    ):
        assert source.parse_registry(bad) is None


def proc(*cmdline: str, name: str | None = None) -> ProcessInfo:
    return ProcessInfo(
        pid=10,
        ppid=1,
        create_time=0.0,
        name=name or Path(cmdline[0]).name,
        cmdline=cmdline,
        cwd="/w",
    )


@pytest.mark.parametrize(
    ("process", "client", "hint"),
    [
        (proc("claude"), True, None),
        (proc("/home/u/.local/bin/claude", "fix the tests"), True, None),
        (proc("claude", "--resume", SID), True, SID),
        (proc("claude", "-r", SID, "--model", "opus"), True, SID),
        (proc("claude", "--resume", SID, "--fork-session"), True, None),
        (proc("claude", "--session-id", SID), True, SID),
        (proc("claude", "-p", "hello", "--output-format", "stream-json"), True, None),
        (proc("node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js", "-c"), True, None),
        (proc("claude", "mcp", "serve"), False, None),
        (proc("claude", "doctor"), False, None),
        (proc("claude", "--model", "mcp"), True, None),
        (proc("node", "/srv/app.js"), False, None),
        (proc("vim", "claude.md"), False, None),
    ],
)
def test_process_recognition(process: ProcessInfo, client: bool, hint: str | None) -> None:
    source = ClaudeSource(ROOT)
    assert source.is_client_process(process) is client
    if client:
        assert source.process_session_hint(process) == hint
        assert source.process_cwd(process) == "/w"


def test_scan_finds_every_layout(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "v2.1", tmp_path / "c21")
    specs = sorted((s.kind.value, s.path.name) for s in scan_source(ClaudeSource(tmp_path / "c21")))
    assert specs == [
        ("registry", "91234.json"),
        ("subagent", "agent-a4c2d9.jsonl"),
        ("transcript", "30000000-0000-4000-8000-000000000003.jsonl"),
    ]
    assert list(scan_source(ClaudeSource(tmp_path / "missing"))) == []
