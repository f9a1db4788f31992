"""Gemini CLI's files, chat lines and processes (pure units; the shapes are the real CLI's, as
recorded in ``tests/data/recorded/gemini-*``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentbar.core.agents.gemini import KIT, homes
from agentbar.core.agents.gemini.chat import GeminiChatParser, api_error_text, tool_summary
from agentbar.core.agents.gemini.files import AGENT, GeminiSource, default_gemini_home
from agentbar.core.records import (
    ApiError,
    Asks,
    AssistantText,
    Bookkeeping,
    ModelSeen,
    Prompt,
    Record,
    SessionMeta,
    TitleSet,
    ToolCall,
    ToolResult,
    TurnAborted,
    UsageReport,
)
from agentbar.core.sources.base import MalformedLine, ProcessInfo, StreamKind, StreamSpec
from agentbar.core.state.fusion import AgentTraits, Signals, decide
from agentbar.core.state.turns import TurnState, reduce_all

SID = "2b2ab139-5d0f-4096-b846-0957a6724455"
CALL = "run_shell_command__run_shell_command_1796167147468_0"
TOKENS = {"input": 120, "output": 30, "cached": 20, "thoughts": 5, "tool": 0, "total": 150}


def spec(path: str = "/h/.gemini/tmp/p/chats/session-x.jsonl", **kw: Any) -> StreamSpec:
    return StreamSpec(AGENT, kw.pop("kind", StreamKind.TRANSCRIPT), Path(path), **kw)


def feed(parser: GeminiChatParser, *objs: dict[str, Any]) -> list[Record]:
    out: list[Record] = []
    for obj in objs:
        out.extend(parser.parse(json.dumps(obj).encode()))
    return out


def meta(**kw: Any) -> dict[str, Any]:
    return {
        "sessionId": SID,
        "projectHash": "ab" * 32,
        "startTime": "2026-12-01T23:19:04.996Z",
        "lastUpdated": "2026-12-01T23:19:04.996Z",
        "kind": "main",
        **kw,
    }


def user(mid: str, *texts: str) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": "2026-12-01T23:19:06.034Z",
        "type": "user",
        "content": [{"text": t} for t in texts],
    }


def gemini(mid: str, content: Any = "", **kw: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": "2026-12-01T23:19:07.504Z",
        "type": "gemini",
        "content": content,
        "thoughts": [],
        "tokens": TOKENS,
        "model": "gemini-2.5-flash",
        **kw,
    }


def shell_call(status: str, error: str | None = None) -> dict[str, Any]:
    response = {"error": error} if error else {"output": "Output: (empty)"}
    return {
        "id": CALL,
        "name": "run_shell_command",
        "displayName": "Shell",
        "args": {"command": "touch made.txt", "description": "make it"},
        "status": status,
        "timestamp": "2026-12-01T23:19:08.726Z",
        "result": [
            {"functionResponse": {"id": CALL, "name": "run_shell_command", "response": response}}
        ],
    }


def kinds(records: list[Record]) -> list[str]:
    return [type(r).__name__ for r in records]


def state_of(records: list[Record]) -> tuple[str, str | None, str]:
    turn = reduce_all(TurnState(), records)
    got = decide(Signals(turn=turn, alive=True), now=1e10, traits=AgentTraits(None))
    return str(got.state), (str(got.waiting_for) if got.waiting_for else None), got.detail


# -- the chat parser ---------------------------------------------------------------------------


def test_metadata_names_the_session_and_its_project() -> None:
    parser = GeminiChatParser(spec(), None, cwd="/work/demo")
    (record,) = feed(parser, meta())
    assert isinstance(record, SessionMeta)
    assert (record.session_id, record.cwd) == (SID, "/work/demo")
    assert parser.owner is not None and parser.owner.session_id == SID
    # A resumed session's second header is bookkeeping, not a second session.
    assert kinds(feed(parser, meta(startTime="2026-12-01T23:30:00Z"))) == ["Bookkeeping"]


def test_a_turn_with_an_approved_command_as_the_cli_writes_it() -> None:
    parser = GeminiChatParser(spec(), None)
    records = feed(parser, meta(), user("u1", "make a file"), gemini("g1"))
    assert kinds(records) == ["SessionMeta", "Prompt", "ModelSeen", "UsageReport"]
    # While the approval is on screen the chat says no more than this: running.
    assert state_of(records)[0] == "running"
    # The same message again, with its finished call: the call and its result, once.
    again = feed(parser, gemini("g1", toolCalls=[shell_call("success")]))
    assert kinds(again) == ["ToolCall", "ToolResult"]
    call = again[0]
    assert isinstance(call, ToolCall)
    assert (call.name, call.summary, call.asks) == ("Shell", "touch made.txt", Asks.NOTHING)
    # The tool's answer going back to the model repeats the result: nothing new.
    back = {
        "id": "u2",
        "timestamp": "2026-12-01T23:19:08.871Z",
        "type": "user",
        "content": [
            {
                "functionResponse": {
                    "id": CALL,
                    "name": "run_shell_command",
                    "response": {"output": "ok"},
                }
            }
        ],
    }
    assert kinds(feed(parser, back)) == ["Bookkeeping"]
    answer = feed(parser, gemini("g2", "Created made.txt."))
    (text,) = [r for r in answer if isinstance(r, AssistantText)]
    assert text.final
    assert state_of(records + again + answer) == ("done", None, "Created made.txt.")


def test_tokens_are_counted_once_per_message_and_split_like_anthropic() -> None:
    parser = GeminiChatParser(spec(), None)
    first = feed(parser, meta(), gemini("g1"))
    second = feed(parser, gemini("g1", toolCalls=[shell_call("success")]))
    usage = [r for r in first + second if isinstance(r, UsageReport)]
    assert len(usage) == 1
    assert usage[0].usage.to_json() == {
        "input_tokens": 100,
        "output_tokens": 35,
        "cache_read_tokens": 20,
        "cache_creation_tokens": 0,
        "cache_creation_1h_tokens": 0,
    }
    assert [r.model for r in first if isinstance(r, ModelSeen)] == ["gemini-2.5-flash"]


def test_a_denied_command_ends_the_turn_as_stopped_not_failed() -> None:
    parser = GeminiChatParser(spec(), None)
    denied = shell_call("cancelled", "[Operation Cancelled] Reason: User denied execution.")
    records = feed(
        parser,
        meta(),
        user("u1", "make a file"),
        gemini("g1"),
        gemini("g1", toolCalls=[denied]),
        {
            "id": "i1",
            "timestamp": "2026-12-01T23:19:13.931Z",
            "type": "info",
            "content": "Request cancelled.",
        },
    )
    result = next(r for r in records if isinstance(r, ToolResult))
    assert result.denied and result.is_error
    assert state_of(records) == ("done", None, "stopped: you denied Shell: touch made.txt")


def test_an_interrupt_fails_the_turn_and_other_notes_do_not() -> None:
    parser = GeminiChatParser(spec(), None)
    records = feed(
        parser,
        meta(),
        user("u1", "take your time"),
        {
            "id": "i1",
            "timestamp": "2026-12-01T23:20:12.552Z",
            "type": "info",
            "content": "Request cancelled.",
        },
    )
    assert isinstance(records[-1], TurnAborted)
    assert state_of(records) == ("failed", None, "interrupted")
    note = {"id": "i2", "type": "info", "content": "This request failed. Press F12 ..."}
    assert kinds(feed(parser, note)) == ["Bookkeeping"]


def test_a_model_error_fails_the_turn_with_its_message() -> None:
    parser = GeminiChatParser(spec(), None)
    error = {
        "id": "e1",
        "timestamp": "2026-12-01T23:20:17.989Z",
        "type": "error",
        "content": '[API Error: {"error":{"code":400,"message":"The model rejected this '
        'request.","status":"INVALID_ARGUMENT"}}]',
    }
    records = feed(parser, meta(), user("u1", "say something"), error)
    assert isinstance(records[-1], ApiError)
    assert state_of(records) == ("failed", None, "The model rejected this request.")
    assert api_error_text("[API Error: not json]") == "not json"
    assert api_error_text("something else") == "something else"


def test_an_answer_ending_on_a_question_waits_for_the_person() -> None:
    parser = GeminiChatParser(spec(), None)
    records = feed(
        parser,
        meta(),
        user("u1", "format it"),
        gemini("g1", "I can do that two ways.\n\nShould I use tabs or spaces?"),
    )
    assert state_of(records) == ("input_required", "question", "Should I use tabs or spaces?")


def test_ask_user_is_a_question_tool() -> None:
    parser = GeminiChatParser(spec(), None)
    call = {
        "id": "ask_1",
        "name": "ask_user",
        "status": "success",
        "args": {"questions": [{"question": "Which style?", "header": "Style"}]},
    }
    record = next(
        r for r in feed(parser, meta(), gemini("g1", toolCalls=[call])) if isinstance(r, ToolCall)
    )
    assert (record.asks, record.summary) == (Asks.QUESTION, "Which style?")


def test_text_and_a_call_in_one_response_reopen_the_turn() -> None:
    """The CLI writes the text first and adds the call once it ran: the file cannot tell this
    text from a last word until then."""
    parser = GeminiChatParser(spec(), None)
    first = feed(parser, meta(), user("u1", "go"), gemini("g1", "I'll create it."))
    assert state_of(first)[0] == "done"
    later = feed(parser, gemini("g1", "I'll create it.", toolCalls=[shell_call("success")]))
    assert kinds(later) == ["ToolCall", "ToolResult"]
    assert state_of(first + later)[0] == "running"


def test_history_copied_after_a_cancel_is_not_new_prompts() -> None:
    """0.61 writes the whole kept history again as new lines (new ids) after an interrupt or a
    denial, then a ``$set.messages`` snapshot."""
    parser = GeminiChatParser(spec(), None)
    feed(parser, meta(), user("u1", "make a file"), gemini("g1", "Created made.txt."))
    copy = feed(
        parser,
        user("c1", "<session_context>\nThis is the Gemini CLI.\n</session_context>", "make a file"),
        gemini("c2", [{"text": "Created made.txt."}], tokens=None),
        user("c3", "second prompt, as kept"),
        {"$set": {"messages": [{"id": "c1", "type": "user", "content": []}]}},
    )
    assert not [r for r in copy if not isinstance(r, Bookkeeping)], copy
    (prompt,) = feed(parser, user("u2", "a real new prompt"))
    assert isinstance(prompt, Prompt) and prompt.text == "a real new prompt"


def test_rewind_forgets_the_messages_it_dropped() -> None:
    parser = GeminiChatParser(spec(), None)
    feed(parser, meta(), user("u1", "first"), user("u2", "second"))
    assert kinds(feed(parser, {"$rewindTo": "u2"})) == ["Bookkeeping"]
    # Written again under the same id after the rewind: a prompt again.
    assert kinds(feed(parser, user("u2", "second, edited"))) == ["Prompt"]
    # Not rewound: a re-append of u1 is still a copy.
    assert kinds(feed(parser, user("u1", "first"))) == ["Bookkeeping"]


def test_summary_is_the_agents_title() -> None:
    parser = GeminiChatParser(spec(), None)
    (title,) = feed(parser, meta(), {"$set": {"summary": "Fix the flaky test"}})[1:]
    assert isinstance(title, TitleSet) and title.title == "Fix the flaky test"
    assert kinds(feed(parser, {"$set": {"lastUpdated": "x"}})) == ["Bookkeeping"]


def test_checkpoint_round_trips_mid_file() -> None:
    parser = GeminiChatParser(spec(), None)
    feed(parser, meta(), user("u1", "make a file"), gemini("g1"))
    saved = json.loads(json.dumps(parser.checkpoint()))
    resumed = GeminiChatParser(spec(), saved)
    assert resumed.owner == parser.owner
    # The re-append after the restart still yields only what is new.
    assert kinds(feed(resumed, gemini("g1", toolCalls=[shell_call("success")]))) == [
        "ToolCall",
        "ToolResult",
    ]
    assert kinds(feed(resumed, user("u1", "make a file"))) == ["Bookkeeping"]


def test_garbage_is_a_malformed_line() -> None:
    parser = GeminiChatParser(spec(), None)
    with pytest.raises(MalformedLine):
        parser.parse(b"[1, 2]")
    with pytest.raises(MalformedLine):
        parser.parse(b'{"neither": 1}')


def test_a_legacy_json_document_reads_whole() -> None:
    parser = GeminiChatParser(
        spec("/h/.gemini/tmp/p/chats/session-x.json", whole_document=True), None, cwd="/work/demo"
    )
    doc = meta(
        summary="Conformance session",
        messages=[
            user("u1", "make a file"),
            gemini("g1", toolCalls=[shell_call("success")]),
            gemini("g2", "Created made.txt."),
        ],
    )
    text = json.dumps(doc, indent=2).replace("\n", " ").encode()
    records = parser.parse(text)
    assert kinds(records)[:2] == ["SessionMeta", "Prompt"]
    assert any(isinstance(r, TitleSet) for r in records)
    assert state_of(records) == ("done", None, "Created made.txt.")
    # Read again after a rewrite: the same records, not nothing.
    assert kinds(parser.parse(text)) == kinds(records)
    assert parser.checkpoint() == {}


def test_tool_summary_names_what_the_call_does() -> None:
    assert tool_summary("read_file", {"file_path": "/a/b.py"}) == "/a/b.py"
    assert tool_summary("web_fetch", {"prompt": "summarise x"}) == "summarise x"
    assert tool_summary("odd", {}, "does a thing") == "does a thing"
    assert tool_summary("odd", {"n": 1}) == '{"n":1}'


def test_a_subagent_chat_belongs_to_its_parent() -> None:
    sub = "9f1c2d3e-0000-4000-8000-000000000001"
    parser = GeminiChatParser(
        spec(
            f"/h/.gemini/tmp/p/chats/{SID}/{sub}.jsonl",
            kind=StreamKind.SUBAGENT,
            session_hint=SID,
            agent_id_hint=sub,
        ),
        None,
    )
    records = feed(parser, meta(sessionId=sub, kind="subagent"), user("u1", "look around"))
    assert kinds(records) == ["Bookkeeping", "Prompt"]
    assert all(r.agent_id == sub for r in records)
    assert parser.owner is not None and (parser.owner.session_id, parser.owner.agent_id) == (
        SID,
        sub,
    )


# -- files -------------------------------------------------------------------------------------


def test_classify_sessions_documents_and_subagents(tmp_path: Path) -> None:
    source = GeminiSource(tmp_path / ".gemini")
    tmp = tmp_path / ".gemini" / "tmp" / "proj" / "chats"
    jsonl = source.classify(tmp / "session-2026-12-01T23-19-2b2ab139.jsonl")
    assert jsonl is not None and jsonl.kind is StreamKind.TRANSCRIPT and not jsonl.whole_document
    legacy = source.classify(tmp / "session-2026-12-01T23-19-2b2ab139.json")
    assert legacy is not None and legacy.whole_document
    sub = source.classify(tmp / SID / "abc.jsonl")
    assert sub is not None and sub.kind is StreamKind.SUBAGENT
    assert (sub.session_hint, sub.agent_id_hint) == (SID, "abc")
    data = tmp_path / ".gemini" / "data" / "proj" / "chats" / "session-x.jsonl"
    assert source.classify(data) is not None  # the release that named ``tmp`` ``data``
    for ignored in (
        tmp_path / ".gemini" / "tmp" / "proj" / "logs.json",
        tmp / "session-x.jsonl.tmp-123",
        tmp / "not-a-session.jsonl",
        tmp / "notauuid" / "abc.jsonl",
        tmp_path / ".gemini" / "settings.json",
        tmp_path / "elsewhere" / "chats" / "session-x.jsonl",
    ):
        assert source.classify(ignored) is None, ignored


def test_project_path_from_project_root_or_projects_json(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    (home / "tmp" / "one" / "chats").mkdir(parents=True)
    (home / "tmp" / "one" / ".project_root").write_text("/work/one\n")
    (home / "tmp" / "two" / "chats").mkdir(parents=True)
    (home / "projects.json").write_text(json.dumps({"projects": {"/work/two": "two"}}))
    source = GeminiSource(home)
    assert source.project_path(home / "tmp" / "one" / "chats" / "session-a.jsonl") == "/work/one"
    assert source.project_path(home / "tmp" / "two" / "chats" / "session-b.jsonl") == "/work/two"
    assert source.project_path(home / "tmp" / "two" / "chats" / SID / "s.jsonl") == "/work/two"
    assert source.project_path(home / "tmp" / "three" / "chats" / "session-c.jsonl") is None
    (home / "projects.json").write_text("{broken")
    assert GeminiSource(home).project_path(home / "tmp" / "two" / "chats" / "x.jsonl") is None


def test_homes_follow_the_clis_own_rule() -> None:
    assert default_gemini_home({"HOME": "/home/a"}) == Path("/home/a/.gemini")
    assert default_gemini_home({"HOME": "/home/a", "GEMINI_CLI_HOME": "/srv/g"}) == Path(
        "/srv/g/.gemini"
    )
    assert homes({"HOME": "/home/a"}) == (Path("/home/a/.gemini"),)
    assert KIT.agent == "gemini" and KIT.display_name == "Gemini CLI"


# -- processes ---------------------------------------------------------------------------------

BIN = "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js"


def proc(*cmdline: str, pid: int = 10, ppid: int = 1) -> ProcessInfo:
    return ProcessInfo(
        pid=pid, ppid=ppid, create_time=1.0, name="node", cmdline=cmdline, cwd="/work/demo"
    )


@pytest.mark.parametrize(
    "cmdline",
    [
        ("node", "/home/u/.npm/bin/gemini"),
        ("/usr/bin/node", "--max-old-space-size=12052", BIN, "-r", "latest"),
        ("gemini", "-m", "gemini-2.5-pro"),
        ("node", BIN, "--resume", SID),
        ("node", BIN, "-i", "fix the tests"),
    ],
)
def test_clients(cmdline: tuple[str, ...]) -> None:
    assert GeminiSource(Path("/h")).is_client_process(proc(*cmdline))


@pytest.mark.parametrize(
    "cmdline",
    [
        ("node", BIN, "--version"),
        ("node", BIN, "--list-sessions"),
        ("node", BIN, "mcp", "list"),
        ("node", "/usr/lib/node_modules/other/cli.js"),
        ("node",),
        ("python3", "gemini"),
        (),
    ],
)
def test_not_clients(cmdline: tuple[str, ...]) -> None:
    assert not GeminiSource(Path("/h")).is_client_process(proc(*cmdline))


def test_resume_names_the_session() -> None:
    source = GeminiSource(Path("/h"))
    assert source.process_session_hint(proc("node", BIN, "-r", SID.upper())) == SID
    assert source.process_session_hint(proc("node", BIN, f"--resume={SID}")) == SID
    assert source.process_session_hint(proc("node", BIN, "-r", "latest")) is None
    assert source.process_session_hint(proc("node", BIN)) is None
    assert source.process_cwd(proc("node", BIN)) == "/work/demo"


def test_a_subagent_that_handed_its_result_over_is_finished() -> None:
    sub = "e9b3115c-c388-4514-82ee-50283ca22015"
    parser = GeminiChatParser(
        spec(
            f"/h/.gemini/tmp/p/chats/{SID}/{sub}.jsonl",
            kind=StreamKind.SUBAGENT,
            session_hint=SID,
            agent_id_hint=sub,
        ),
        None,
    )
    done = {"id": f"{sub}#0-0", "name": "complete_task", "status": "success",
            "args": {"result": {"response": "Nothing here."}}}  # fmt: skip
    records = feed(
        parser,
        meta(sessionId=sub, kind="subagent"),
        user("u1", "look around"),
        gemini("g1"),
        gemini("g1", toolCalls=[done]),
        {"$set": {"summary": '{"response": "Nothing here."}'}},
    )
    assert kinds(records)[-3:] == ["ToolResult", "TurnEnded", "Bookkeeping"]  # no title
    parent = reduce_all(TurnState(), [Prompt(text="use a helper"), *records])
    assert parent.open_subagents(now=0.0, stale_after=600.0) == 0
