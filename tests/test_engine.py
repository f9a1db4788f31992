"""The engine over real files on tmp_path: discovery, transitions reported once, warm restarts,
index recovery, bad input, registries and process liveness (fake process table and clock)."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from claude_lines import T0, iso, registry
from engine_harness import Rig, make_rig, new_transcript

from agentbar.core.engine import CAUGHT_UP
from agentbar.core.model import Agent, Source
from agentbar.core.tail import Cursor

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
C = "cccccccc-0000-4000-8000-000000000003"
X = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


@pytest.fixture
def rig(tmp_path: Path) -> Any:
    r = make_rig(tmp_path)
    yield r
    r.close()


def codex_line(ts: float, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": iso(ts), "type": kind, "payload": payload}


def codex_rollout(rig: Rig, session_id: str, cwd: str, *, archived: bool = False) -> Path:
    folder = rig.codex / ("archived_sessions" if archived else "sessions/2026/11/29")
    return folder / f"rollout-2026-11-29T10-00-00-{session_id}.jsonl"


def codex_start(session_id: str, cwd: str, policy: str = "on-request") -> list[dict[str, Any]]:
    return [
        codex_line(
            T0,
            "session_meta",
            {
                "id": session_id,
                "timestamp": iso(T0),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.171.0",
                "source": "cli",
            },
        ),
        codex_line(
            T0 + 0.1,
            "turn_context",
            {
                "cwd": cwd,
                "approval_policy": policy,
                "sandbox_policy": {"type": "read-only"},
                "model": "gpt-5-codex",
            },
        ),
    ]


# -- discovery ------------------------------------------------------------------------------


def test_catch_up_says_when_changes_are_reported_from(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    # What changes before this line is settled silently: `agentbar watch -v` readers (the
    # conformance rig) wait for it before they start an agent.
    t = new_transcript(A, "/work/api")
    rig.write(rig.transcript_path(A, "-work-api"), t.prompt("Fix the flaky test"), t.text("Done."))
    with caplog.at_level(logging.INFO, logger="agentbar.core.engine"):
        rig.open()
        rig.sessions()
    said = [r.getMessage() for r in caplog.records if CAUGHT_UP in r.getMessage()]
    assert said == [f"{CAUGHT_UP}: 1 sessions"]
    assert rig.events == []


def test_cold_catch_up_finds_sessions_without_reporting_them(rig: Rig) -> None:
    t = new_transcript(A, "/work/api")
    rig.write(rig.transcript_path(A, "-work-api"), t.prompt("Fix the flaky test"), t.text("Done."))
    # A 2.1.x sub-agent and a 2.0.x sibling sub-agent file belong to A, not sessions of their own.
    sub = new_transcript(A, "/work/api", sidechain=True, agent_id="s1")
    rig.write(
        rig.claude / "projects" / "-work-api" / A / "subagents" / "agent-s1.jsonl",
        sub.prompt("look around"),
    )
    rig.write(rig.claude / "projects" / "-work-api" / "agent-s2.jsonl", sub.prompt("more"))
    codex = codex_rollout(rig, X, "/work/web")
    rig.write(
        codex,
        *codex_start(X, "/work/web"),
        codex_line(T0 + 1, "event_msg", {"type": "user_message", "message": "Add a login page"}),
    )
    rig.clock.advance(3600)  # written an hour ago
    engine = rig.open()
    sessions = rig.sessions()
    assert set(sessions) == {A, X}
    assert rig.events == []
    claude = sessions[A]
    assert (claude.key.agent, claude.project, claude.title) == (
        Agent("claude"),
        "/work/api",
        "Fix the flaky test",
    )
    assert claude.transcript == str(rig.transcript_path(A, "-work-api"))
    assert claude.model == "claude-sonnet-4-5"
    assert str(claude.state.state) == "ended"  # no process: an old session
    assert claude.state.source is Source.PROCESS
    assert (sessions[X].project, sessions[X].title, sessions[X].model) == (
        "/work/web",
        "Add a login page",
        "gpt-5-codex",
    )
    assert engine.stats().streams == 4


def test_project_comes_from_the_lines_not_the_folder_name(rig: Rig) -> None:
    t = new_transcript(A, "/Users/me/my_app.v2")
    rig.write(rig.transcript_path(A, "-Users-me-my-app-v2"), t.prompt("hi"))
    rig.open()
    assert rig.sessions()[A].project == "/Users/me/my_app.v2"


# -- live transitions -------------------------------------------------------------------------


def test_a_live_claude_session_reports_each_transition_once(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("Clean the build"))
    rig.settle()
    assert rig.state(A) == ("running", None)
    rig.write(path, t.bash("rm -rf build"))
    rig.settle()
    assert rig.state(A) == ("running", None)  # a pending call alone is not an approval
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(
        reg,
        registry(4242, A, status="waiting", waiting_for="permission prompt", started_at=T0 - 59),
    )
    rig.settle()
    assert rig.state(A) == ("input_required", "approval")
    snap = rig.sessions()[A]
    assert (snap.state.detail, snap.state.source, snap.process and snap.process.pid) == (
        "Bash: rm -rf build",
        Source.REGISTRY,
        4242,
    )
    rig.write_json(reg, registry(4242, A, status="busy", started_at=T0 - 59))
    rig.write(path, t.tool_result(), t.text("Removed build/."))
    rig.settle()
    assert rig.state(A) == ("running", None)
    rig.write(path, t.turn_duration())
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0 - 59))
    rig.settle()
    assert rig.state(A) == ("done", None)
    # Nothing new: ticks do not repeat anything.
    rig.tick()
    rig.tick()
    # The agent exits: its registry file goes and its process with it.
    reg.unlink()
    rig.processes.remove(4242)
    rig.touch(reg)
    rig.settle()
    assert rig.state(A) == ("ended", None)
    assert rig.transitions() == [
        ("aaaaaaaa", None, "running"),
        ("aaaaaaaa", "running", "input_required"),
        ("aaaaaaaa", "input_required", "running"),
        ("aaaaaaaa", "running", "done"),
        ("aaaaaaaa", "done", "ended"),
    ]


def test_an_approval_event_waits_briefly_for_the_command_it_is_about(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open(settle_seconds=0.25)
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("Clean"))
    rig.settle()
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(
        reg,
        registry(4242, A, status="waiting", waiting_for="permission prompt", started_at=T0 - 59),
    )
    rig.settle()
    assert [e.snapshot.state.state for e in rig.events] == ["running"]  # held back
    rig.clock.advance(0.1)
    rig.write(path, t.bash("rm -rf build"))
    rig.settle()
    last = rig.events[-1]
    assert (str(last.snapshot.state.state), last.snapshot.state.detail) == (
        "input_required",
        "Bash: rm -rf build",
    )
    assert len(rig.events) == 2


def test_a_held_approval_is_reported_with_what_is_known_when_the_wait_is_over(rig: Rig) -> None:
    rig.claude_process(4242)
    engine = rig.open(settle_seconds=0.25)
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("Clean"))
    rig.settle()
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(
        reg,
        registry(4242, A, status="waiting", waiting_for="permission prompt", started_at=T0 - 59),
    )
    rig.settle()
    assert len(rig.events) == 1
    rig.clock.advance(0.3)
    engine.step(timeout=0.0)
    assert (str(rig.events[-1].snapshot.state.state), rig.events[-1].snapshot.state.detail) == (
        "input_required",
        "permission prompt",
    )


def test_an_approval_waits_for_a_command_line_written_half_a_second_late(rig: Rig) -> None:
    """Claude 2.1.332 writes its transcript every 100 ms, after the registry; on a busy machine
    the line naming the command came 0.3-0.6 s after the registry's "waiting"."""
    rig.claude_process(4242)
    engine = rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("Clean"))
    rig.settle()
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(
        reg,
        registry(4242, A, status="waiting", waiting_for="permission prompt", started_at=T0 - 59),
    )
    rig.settle()
    rig.clock.advance(0.6)
    engine.step(timeout=0.0)
    assert [e.snapshot.state.state for e in rig.events] == ["running"]  # still held back
    rig.write(path, t.bash("rm -rf build"))
    rig.settle()
    assert [(str(e.snapshot.state.state), e.snapshot.state.detail) for e in rig.events][1:] == [
        ("input_required", "Bash: rm -rf build")
    ]


def test_a_question_waits_for_the_line_that_asks_it(rig: Rig) -> None:
    """Claude 2.1.332's registry says "input needed" for AskUserQuestion before the line."""
    rig.claude_process(4242)
    rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("pick"))
    rig.settle()
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(
        reg, registry(4242, A, status="waiting", waiting_for="input needed", started_at=T0 - 59)
    )
    rig.settle()
    rig.clock.advance(0.5)
    rig.write(path, t.tool_use("AskUserQuestion", {"questions": [{"question": "Red?"}]}, "q"))
    rig.settle()
    assert [(str(e.snapshot.state.state), e.snapshot.state.detail) for e in rig.events] == [
        ("running", "working"),
        ("input_required", "Red?"),
    ]


def test_a_dialog_is_reported_at_once_no_line_will_name_it(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("hi"), t.text("Hello."), t.turn_duration())
    rig.settle()
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(
        reg, registry(4242, A, status="waiting", waiting_for="dialog open", started_at=T0 - 59)
    )
    rig.settle()
    last = rig.events[-1].snapshot.state
    assert (str(last.state), str(last.waiting_for), last.detail) == (
        "input_required",
        "question",
        "dialog open",
    )


def test_a_removed_registry_ends_the_session_while_the_process_winds_down(rig: Rig) -> None:
    """Claude 2.1.332 removes its registry ~0.1 s before its process is gone; agentbar matched
    the still-running process to the session by its command line and said "ended" only at the
    next tick, up to 2 s later."""
    rig.claude_process(4242)
    rig.open()
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(reg, registry(4242, A, status="busy", started_at=T0 - 59))
    t = new_transcript(A, start=rig.clock.time() - 3)
    rig.write(rig.transcript_path(A), t.prompt("hi"), t.text("Hello."), t.turn_duration())
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0 - 59))
    rig.settle()
    assert rig.state(A) == ("done", None)
    reg.unlink()
    rig.touch(reg)
    rig.settle()
    assert rig.state(A) == ("ended", None)
    rig.tick()  # the process is still in the table, the transcript is fresh
    assert rig.state(A) == ("ended", None)
    assert [str(e.snapshot.state.state) for e in rig.events][-1:] == ["ended"]


def _quick_turn_ahead_of_its_transcript(rig: Rig, answer: str) -> None:
    """Claude 2.1.332: a quick turn's registry goes busy and idle before a single line of the
    turn is in the transcript; the lines land about 0.1 s after the idle."""
    rig.claude_process(4242)
    rig.open(settle_seconds=0.25)
    reg = rig.claude / "sessions" / "4242.json"
    path = rig.transcript_path(A)
    t = new_transcript(A, start=T0 + 10)
    rig.write(path, t.prompt("first"), t.text("Earlier answer."), t.turn_duration())
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0, updated_at=T0 + 20))
    rig.settle()
    rig.events.clear()
    rig.write_json(reg, registry(4242, A, status="busy", started_at=T0, updated_at=T0 + 30))
    rig.settle()
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0, updated_at=T0 + 30.3))
    rig.settle()
    assert [str(e.snapshot.state.state) for e in rig.events] == ["running"]  # held back
    rig.clock.advance(0.1)
    t.now = T0 + 29.99  # the prompt is stamped a moment before the registry said busy
    rig.write(path, t.prompt("second"), t.text(answer), t.turn_duration())
    rig.settle()


def test_registry_idle_ahead_of_the_transcript_reports_this_turns_answer(rig: Rig) -> None:
    _quick_turn_ahead_of_its_transcript(rig, "Let me see.\nThe answer is 4.")
    assert [(str(e.snapshot.state.state), e.snapshot.state.detail) for e in rig.events] == [
        ("running", "working"),
        ("done", "The answer is 4."),
    ]


def test_registry_idle_ahead_of_the_transcript_reports_the_question_not_done(rig: Rig) -> None:
    _quick_turn_ahead_of_its_transcript(rig, "Two ways.\n\nShould I use Python or Rust?")
    assert [(str(e.snapshot.state.state), e.snapshot.state.detail) for e in rig.events] == [
        ("running", "working"),
        ("input_required", "Should I use Python or Rust?"),
    ]


def test_closing_a_dialog_after_a_finished_turn_is_done_with_that_turns_answer(rig: Rig) -> None:
    """Claude 2.1.332: /status opens a panel (registry "waiting", "dialog open"); closing it
    turns the registry idle. No turn ran: the transcript is not behind."""
    rig.claude_process(4242)
    rig.open()
    reg = rig.claude / "sessions" / "4242.json"
    t = new_transcript(A, start=T0 + 10)
    rig.write_json(reg, registry(4242, A, status="busy", started_at=T0, updated_at=T0 + 10.5))
    rig.write(rig.transcript_path(A), t.prompt("first"), t.text("First answer."), t.turn_duration())
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0, updated_at=T0 + 14))
    rig.settle()
    rig.write_json(
        reg,
        registry(4242, A, status="waiting", waiting_for="dialog open", started_at=T0,
                 updated_at=T0 + 20),
    )  # fmt: skip
    rig.settle()
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0, updated_at=T0 + 25))
    rig.settle()
    assert [(str(e.snapshot.state.state), e.snapshot.state.detail) for e in rig.events][-2:] == [
        ("input_required", "dialog open"),
        ("done", "First answer."),
    ]


def test_registry_idle_with_a_transcript_that_never_catches_up_is_reported_after_the_wait(
    rig: Rig,
) -> None:
    rig.claude_process(4242)
    engine = rig.open(settle_seconds=0.25)
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0, updated_at=T0 + 1))
    rig.settle()
    rig.events.clear()
    rig.write_json(reg, registry(4242, A, status="busy", started_at=T0, updated_at=T0 + 2))
    rig.settle()
    rig.write_json(reg, registry(4242, A, status="idle", started_at=T0, updated_at=T0 + 3))
    rig.settle()
    rig.clock.advance(0.3)
    engine.step(timeout=0.0)
    assert [(str(e.snapshot.state.state), e.snapshot.state.detail) for e in rig.events] == [
        ("running", "working"),
        ("done", "turn finished"),
    ]


def test_a_claude_1_0_resume_continues_the_old_session_from_its_new_file(rig: Rig) -> None:
    """Claude 1.0.128: ``claude --resume A`` writes to a new file named by a new id, starting
    with a summary line; the lines carry A's id and continue A's chain (``/status`` says A)."""
    t = new_transcript(A, version="1.0.128")
    first = [t.prompt("first"), t.text("First answer.", stop_reason="end_turn")]
    rig.write(rig.transcript_path(A), *first)
    rig.clock.advance(60)
    rig.open()
    assert rig.state(A) == ("ended", None)
    rig.claude_process(4242, "/work/demo", "--resume", A)
    continuation = rig.transcript_path(B)
    summary = {"type": "summary", "summary": "Greeting", "leafUuid": first[-1]["uuid"]}
    rig.write(continuation, summary)
    rig.settle()
    t.now = T0 + 60
    rig.write(continuation, t.prompt("second"))
    rig.settle()
    assert rig.state(A) == ("running", None)
    rig.write(continuation, t.text("Second answer.", stop_reason="end_turn"))
    rig.settle()
    assert set(rig.sessions()) == {A}
    snap = rig.sessions()[A]
    assert (str(snap.state.state), snap.state.detail) == ("done", "Second answer.")
    assert snap.process is not None and snap.process.pid == 4242
    assert [e.snapshot.key.session_id for e in rig.events] == [A, A]


def test_a_file_of_bookkeeping_alone_is_no_session(rig: Rig) -> None:
    """Claude 2.0.77's resume appends to the old file and also leaves a new one holding just a
    summary and a file-history snapshot."""
    rig.open()
    t = new_transcript(A, version="2.0.77")
    rig.write(rig.transcript_path(A), t.prompt("first"), t.text("First.", stop_reason="end_turn"))
    rig.write(
        rig.transcript_path(B),
        {"type": "summary", "summary": "Greeting", "leafUuid": "x"},
        {
            "type": "file-history-snapshot",
            "messageId": "m",
            "snapshot": {},
            "isSnapshotUpdate": False,
        },
    )
    rig.settle()
    assert set(rig.sessions()) == {A}


def test_a_reused_pid_in_a_leftover_registry_does_not_make_a_session_live(rig: Rig) -> None:
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("x"), t.text("y"), t.turn_duration())
    from agentbar.core.sources.base import ProcessInfo

    # pid 777 now belongs to an editor that started at T0-60 ...
    rig.processes.add(
        ProcessInfo(pid=777, ppid=1, create_time=T0 - 60, name="vim", cmdline=("vim",), cwd="/")
    )
    rig.write_json(
        rig.claude / "sessions" / "777.json",
        registry(777, A, status="busy", started_at=T0 - 3600),  # ... but the agent an hour before
    )
    rig.clock.advance(60)
    rig.open()
    assert rig.state(A) == ("ended", None)


def test_a_codex_session_is_live_while_its_tui_runs_not_while_the_daemon_holds_the_file(
    rig: Rig,
) -> None:
    daemon = ("app-server", "--listen", "unix://", "--managed-daemon")
    rig.codex_process(900, "/work/web", *daemon)
    rig.open()
    path = codex_rollout(rig, X, "/work/web")
    rig.write(path, *codex_start(X, "/work/web"))
    rig.settle()
    rig.clock.advance(30)  # well past the grace given to a session whose process is not seen yet
    rig.tick()
    assert rig.state(X, Agent("codex")) == ("ended", None)
    rig.codex_process(901, "/work/web")  # the TUI
    rig.tick()
    rig.write(
        path,
        codex_line(T0 + 31, "event_msg", {"type": "task_started", "turn_id": "1"}),
        codex_line(T0 + 31, "event_msg", {"type": "user_message", "message": "go"}),
    )
    rig.settle()
    assert rig.state(X, Agent("codex")) == ("running", None)
    assert rig.sessions()[X].process is not None
    assert rig.sessions()[X].process.pid == 901  # type: ignore[union-attr]
    rig.processes.remove(901)
    rig.tick()
    assert rig.state(X, Agent("codex")) == ("ended", None)


def test_a_new_codex_rollout_read_before_its_turn_is_not_reported_done_first(rig: Rig) -> None:
    """Codex 0.99+ creates the rollout at the first prompt and writes it line by line: a read
    between session_meta and task_started saw no turn yet. Seen live: "done, waiting for a
    prompt" just before "running", for every new session. That state now settles first."""
    rig.codex_process(901, "/work/web")
    rig.open()
    path = codex_rollout(rig, X, "/work/web")
    rig.write(path, *codex_start(X, "/work/web"))
    rig.settle()
    assert rig.transitions() == []
    rig.clock.advance(0.05)
    rig.write(
        path,
        codex_line(T0 + 0.2, "event_msg", {"type": "task_started", "turn_id": "1"}),
        codex_line(T0 + 0.2, "event_msg", {"type": "user_message", "message": "go"}),
    )
    rig.settle()
    rig.tick()
    assert rig.transitions() == [(X[:8], None, "running")]


def test_a_codex_rollout_made_at_start_up_waits_for_a_prompt(rig: Rig) -> None:
    """Codex 0.58 writes its rollout when the TUI starts: idle is true there, reported once
    it has settled."""
    rig.codex_process(901, "/work/web")
    rig.open()
    rig.write(codex_rollout(rig, X, "/work/web"), *codex_start(X, "/work/web"))
    rig.settle()
    rig.tick()
    assert rig.transitions() == [(X[:8], None, "done")]
    assert rig.sessions()[X].state.detail == "waiting for a prompt"


def test_codex_approval_and_completion(rig: Rig) -> None:
    rig.codex_process(901, "/work/web")
    rig.open()
    path = codex_rollout(rig, X, "/work/web")
    args = {"cmd": "rm -rf dist", "sandbox_permissions": "require_escalated", "justification": "x"}
    rig.write(
        path,
        *codex_start(X, "/work/web"),
        codex_line(T0 + 1, "event_msg", {"type": "task_started", "turn_id": "1"}),
        codex_line(T0 + 1, "event_msg", {"type": "user_message", "message": "clean"}),
        codex_line(
            T0 + 2,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": orjson.dumps(args).decode(),
                "call_id": "call_1",
            },
        ),
    )
    rig.settle()
    assert rig.state(X, Agent("codex")) == ("input_required", "approval")
    assert "rm -rf dist" in rig.sessions()[X].state.detail
    rig.write(
        path,
        codex_line(
            T0 + 9,
            "response_item",
            {"type": "function_call_output", "call_id": "call_1", "output": "done"},
        ),
        codex_line(
            T0 + 10,
            "event_msg",
            {"type": "task_complete", "turn_id": "1", "last_agent_message": "Cleaned dist/."},
        ),
    )
    rig.settle()
    assert rig.state(X, Agent("codex")) == ("done", None)
    assert rig.sessions()[X].state.detail == "Cleaned dist/."


# -- restarts and the index -------------------------------------------------------------------


def test_a_warm_restart_resumes_at_the_offsets_and_reports_nothing_old(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("one"), t.text("Done."), t.turn_duration())
    rig.settle()
    assert rig.transitions() == [("aaaaaaaa", None, "done")]
    first_usage = rig.sessions()[A].usage
    engine = rig.open()  # a restart over the same index
    assert rig.events == []
    assert engine.stats().lines == 0  # nothing re-read
    assert rig.sessions()[A].usage == first_usage
    assert rig.state(A) == ("done", None)
    rig.write(path, t.prompt("two"))
    rig.settle()
    assert rig.transitions() == [("aaaaaaaa", "done", "running")]
    assert engine.stats().lines == 1


def test_changes_while_stopped_are_settled_silently(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("one"))
    rig.settle()
    rig.close()
    from claude_lines import write_lines

    write_lines(path, [t.text("Done."), t.turn_duration()])
    rig.open()
    assert rig.events == []
    assert rig.state(A) == ("done", None)


def test_a_corrupt_index_is_rebuilt_from_the_transcripts(rig: Rig) -> None:
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("hello"))
    rig.open()
    rig.close()
    index = rig.settings.index_path
    for suffix in ("-wal", "-shm"):
        Path(str(index) + suffix).unlink(missing_ok=True)
    index.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    rig.open()
    assert set(rig.sessions()) == {A}
    assert rig.sessions()[A].title == "hello"
    assert list(index.parent.glob("index.sqlite3.unusable-*"))


def test_an_index_from_other_rules_is_rebuilt(rig: Rig) -> None:
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("hello"))
    rig.open()
    rig.close()
    with sqlite3.connect(rig.settings.index_path) as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'rules'")
    engine = rig.open()
    assert engine.stats().lines == 1  # read again from the transcript
    assert set(rig.sessions()) == {A}


def test_an_undecodable_row_rebuilds_the_index(rig: Rig) -> None:
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("hello"))
    rig.open()
    rig.close()
    with sqlite3.connect(rig.settings.index_path) as db:
        db.execute("UPDATE sessions SET turn = X'7b7d7b'")
    rig.open()
    assert rig.sessions()[A].title == "hello"


# -- files that change under us ---------------------------------------------------------------


def test_a_rewritten_transcript_rebuilds_its_session(rig: Rig) -> None:
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("first"), t.text("a" * 100))
    rig.open()
    before = rig.sessions()[A].usage.output_tokens
    assert before == 20
    t2 = new_transcript(A)
    path.write_bytes(b"")  # truncated, then rewritten with other content
    rig.write(path, t2.prompt("replacement prompt"), t2.text("b"), t2.text("c"))
    rig.settle()
    snap = rig.sessions()[A]
    assert snap.title == "replacement prompt"
    assert snap.usage.output_tokens == 40  # only the new file's lines count


def test_a_deleted_transcript_removes_its_session(rig: Rig) -> None:
    path = rig.transcript_path(A)
    rig.write(path, new_transcript(A).prompt("bye"))
    engine = rig.open()
    path.unlink()
    rig.touch(path)
    rig.settle()
    assert rig.sessions() == {}
    rig.close()
    rig.open()
    assert rig.sessions() == {}
    assert engine.stats().streams == 0


def test_a_new_file_found_only_by_the_periodic_rescan(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open(full_rescan_seconds=10)
    t = new_transcript(A)
    from claude_lines import write_lines

    write_lines(rig.transcript_path(A), [t.prompt("quietly")])  # no file event
    rig.tick(5)
    assert A not in rig.sessions()
    rig.tick(6)
    assert rig.state(A) == ("running", None)


def test_a_dropped_event_on_a_live_session_is_caught_at_the_next_tick(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open(full_rescan_seconds=1000)
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("go"))
    rig.settle()
    from claude_lines import write_lines

    write_lines(path, [t.text("ok"), t.turn_duration()])  # its event was lost
    rig.tick(2)
    assert rig.state(A) == ("done", None)


# -- bad input --------------------------------------------------------------------------------


def test_bad_lines_are_counted_and_later_lines_still_count(rig: Rig) -> None:
    rig.claude_process(4242)
    engine = rig.open(max_line_bytes=64 * 1024)
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("start"))
    rig.write_raw(path, b"{not json\n")
    rig.write_raw(path, os.urandom(300).replace(b"\n", b" ") + b"\n")
    rig.write_raw(path, b"[1, 2, 3]\n")
    rig.write(path, {"type": "brand-new-kind", "payload": 1})
    huge = t.prompt("x")
    huge["message"]["content"] = "y" * (200 * 1024)
    rig.write(path, huge)
    rig.write(path, t.text("Finished.", stop_reason="end_turn"))
    rig.settle()
    stats = engine.stats()
    assert (stats.malformed, stats.oversized, stats.unknown) == (3, 1, 1)
    assert rig.state(A) == ("done", None)
    assert rig.sessions()[A].state.detail == "Finished."


def test_a_half_written_line_waits_for_its_end(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A)
    line = orjson.dumps(t.prompt("Ünïcödé prompt ✓")) + b"\n"
    cut = line.index("✓".encode()) + 1  # inside the multi-byte character
    rig.write_raw(path, line[:cut])
    rig.settle()
    assert A not in rig.sessions()
    rig.write_raw(path, line[cut:])
    rig.settle()
    assert rig.sessions()[A].title == "Ünïcödé prompt ✓"


def test_an_unreadable_folder_is_skipped(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("fine"))
    blocked = rig.claude / "projects" / "-blocked"
    rig.write(blocked / f"{B}.jsonl", new_transcript(B).prompt("hidden"))
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if str(path) == str(blocked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    rig.open()
    assert set(rig.sessions()) == {A}


def test_a_half_written_registry_keeps_the_last_good_entry(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("go"), t.bash("make"))
    reg = rig.claude / "sessions" / "4242.json"
    rig.write_json(
        reg,
        registry(4242, A, status="waiting", waiting_for="permission prompt", started_at=T0 - 59),
    )
    rig.settle()
    assert rig.state(A) == ("input_required", "approval")
    reg.write_bytes(b'{"pid": 4242, "sessionId": "')
    rig.touch(reg)
    rig.settle()
    assert rig.state(A) == ("input_required", "approval")


# -- archives ----------------------------------------------------------------------------------


def test_compressed_archives_are_read_and_the_plain_copy_wins(rig: Rig) -> None:
    lines = [
        *codex_start(X, "/work/old"),
        codex_line(T0 + 1, "event_msg", {"type": "user_message", "message": "archived prompt"}),
    ]
    raw = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    plain = codex_rollout(rig, X, "/work/old", archived=True)
    plain.parent.mkdir(parents=True)
    Path(str(plain) + ".zst").write_bytes(zstandard.ZstdCompressor().compress(raw))
    other = "019a2d7a-41c4-78b1-b7cc-000000000009"
    twin = codex_rollout(rig, other, "/work/old", archived=True)
    twin_lines = [
        *codex_start(other, "/work/old"),
        codex_line(T0 + 1, "event_msg", {"type": "user_message", "message": "plain wins"}),
    ]
    from claude_lines import write_lines

    write_lines(twin, twin_lines)
    zipped = zstandard.ZstdCompressor().compress(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    Path(str(twin) + ".zst").write_bytes(zipped)
    engine = rig.open()
    sessions = rig.sessions()
    assert sessions[X].title == "archived prompt"
    assert sessions[other].title == "plain wins"
    assert engine.stats().streams == 2


def test_cursor_is_stored_per_stream(rig: Rig) -> None:
    path = rig.transcript_path(A)
    rig.write(path, new_transcript(A).prompt("hello"))
    rig.open()
    rig.close()
    from agentbar.core.index import Index

    index = Index.open(rig.settings.index_path)
    streams, _ = index.load()
    index.close()
    row = streams[str(path)]
    assert row.cursor.offset == path.stat().st_size
    assert row.cursor != Cursor.start()


def test_every_codex_fixture_through_the_engine(rig: Rig) -> None:
    fixtures = Path(__file__).parent / "data" / "synthetic" / "codex"
    folder = rig.codex / "sessions" / "2026" / "11" / "29"
    folder.mkdir(parents=True)
    ids: dict[str, str] = {}
    for fixture in sorted(fixtures.glob("*.jsonl")):
        first = fixture.read_bytes().split(b"\n", 1)[0]
        try:
            obj = orjson.loads(first)
            payload = obj.get("payload", obj)
            session_id = payload["id"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            session_id = fixture.stem[-36:]
        ids[fixture.name] = session_id
        name = (
            fixture.name
            if fixture.name.startswith("rollout-")
            else (f"rollout-2026-11-29T10-00-00-{session_id}.jsonl")
        )
        (folder / name).write_bytes(fixture.read_bytes())
    rig.clock.advance(86400)
    engine = rig.open()
    listed = set(rig.sessions())
    sub = ids["subagent.jsonl"]
    assert sub not in listed  # a sub-agent's rollout is part of its parent, not a session
    assert listed == set(ids.values()) - {sub}
    assert engine.stats().malformed > 0
    assert all(s.project for s in rig.sessions().values())


def test_an_adapter_bug_on_one_file_does_not_stop_the_others(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentbar.core.agents.claude.transcript import ClaudeTranscriptParser

    real_parse = ClaudeTranscriptParser.parse

    def parse(self: ClaudeTranscriptParser, line: bytes) -> Any:
        if b"poison" in line:
            raise RuntimeError("adapter bug")
        return real_parse(self, line)

    monkeypatch.setattr(ClaudeTranscriptParser, "parse", parse)
    rig.write(rig.transcript_path(A), new_transcript(A).prompt("poison pill"))
    rig.write(rig.transcript_path(B), new_transcript(B).prompt("healthy"))
    engine = rig.open()
    assert set(rig.sessions()) == {B}  # A's one line is an unknown record: no session yet
    assert engine.stats().unknown == 1  # the line, not the file (tests/test_hostile_input.py)


def test_a_session_stamped_in_the_future_without_a_process_is_ended(rig: Rig) -> None:
    t = new_transcript(A, start=T0 + 3600)  # a wrong clock: an hour ahead of ours
    rig.write(rig.transcript_path(A), t.prompt("from the future"))
    rig.open()
    assert rig.state(A) == ("ended", None)


def test_an_event_with_nothing_new_writes_nothing(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig.claude_process(4242)
    engine = rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A)
    rig.write(path, t.prompt("go"))
    rig.settle()
    saves: list[int] = []
    real_save = engine.index.save

    def counting_save(*args: Any, **kwargs: Any) -> None:
        saves.append(1)
        real_save(*args, **kwargs)

    monkeypatch.setattr(engine.index, "save", counting_save)
    rig.touch(path)  # the close-after-write event that follows every modify event
    rig.settle()
    assert saves == []
    rig.write(path, t.text("more"))
    rig.settle()
    assert saves == [1]


def test_ticks_stat_only_the_warm_sessions_and_the_full_rescan_finds_a_cold_write(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between full rescans a tick stats the files of live and recent sessions, not of the
    old ended ones (with 2,000 of them that walk was most of the engine's idle CPU); a write
    to an old session whose file event was lost is still read, by the next full rescan."""
    from claude_lines import write_lines

    from agentbar.core.streams import Stream

    rig.claude_process(4242)
    old = new_transcript(A, "/work/old", start=T0 - 3 * 86400)
    old_path = rig.transcript_path(A, "-work-old")
    write_lines(old_path, [old.prompt("long ago"), old.text("done"), old.turn_duration()])
    live = new_transcript(B)
    live_path = rig.transcript_path(B)
    write_lines(live_path, [live.prompt("now")])
    engine = rig.open(full_rescan_seconds=60)
    assert rig.state(A)[0] == "ended"
    assert rig.state(B) == ("running", None)
    stated: list[str] = []
    changed_on_disk = Stream.changed_on_disk

    def counting(stream: Stream) -> bool | None:
        stated.append(stream.path)
        return changed_on_disk(stream)

    monkeypatch.setattr(Stream, "changed_on_disk", counting)
    write_lines(old_path, [old.prompt("back to it")])  # its event was lost
    lines = engine.stats().lines
    for _ in range(5):
        rig.tick(2)
    assert str(live_path) in stated  # the live session's file, at every tick
    assert str(old_path) not in stated
    assert engine.stats().lines == lines
    rig.tick(60)  # the full rescan
    assert str(old_path) in stated
    assert engine.stats().lines == lines + 1
    # Resumed (a new process names it): warm from the tick that binds it, so a lost event on
    # its file is caught at the next tick again, long before the next full rescan.
    rig.claude_process(4343, "/work/old", "--resume", A)
    rig.tick(2)
    assert rig.sessions()[A].process is not None
    write_lines(old_path, [old.text("picked up")])  # its event was lost too
    rig.tick(2)
    assert engine.stats().lines == lines + 2
