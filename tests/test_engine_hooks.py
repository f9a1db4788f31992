"""Hook events through the real engine (real files on tmp_path, fake process table and clock):
the fusion scenarios end to end, one report per transition, bad and vanished events files,
liveness from the hook's pid, and what an ended session gives back."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import T0, iso, registry
from engine_harness import Rig, make_rig, new_transcript

from agentbar.core.engine import HOOK_FILE_KEEP_SECONDS
from agentbar.core.model import Agent, Source
from agentbar.core.sources.base import StreamKind

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
X = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
HOOK = Path(__file__).resolve().parents[1] / "assets" / "hooks" / "agentbar_hook.py"


@pytest.fixture
def rig(tmp_path: Path) -> Any:
    r = make_rig(tmp_path)
    r.settings.data_dir.mkdir(parents=True, exist_ok=True)
    yield r
    r.close()


def events_file(rig: Rig, session: str, agent: str = "claude") -> Path:
    return rig.settings.data_dir / "events" / agent / f"{session}.jsonl"


def hook(
    rig: Rig, session: str, event: str, *, agent: str = "claude", at: float | None = None, **f: Any
) -> None:
    """Append what the hook program writes, at the rig's clock (or ``at``)."""
    line = {
        "v": 1,
        "ts": rig.clock.time() if at is None else at,
        "agent": agent,
        "event": event,
        "session_id": session,
        "cwd": f.pop("cwd", "/work/demo"),
        **f,
    }
    path = events_file(rig, session, agent)
    rig.write_raw(path, orjson.dumps(line) + b"\n")


BASH = {"tool_name": "Bash", "tool_summary": "rm -rf build"}


def states(rig: Rig) -> list[tuple[str | None, str, str | None, str]]:
    return [
        (
            None if e.prev is None else str(e.prev.state),
            str(e.snapshot.state.state),
            None if e.snapshot.state.waiting_for is None else str(e.snapshot.state.waiting_for),
            str(e.snapshot.state.source),
        )
        for e in rig.events
    ]


# -- the life of a session --------------------------------------------------------------------


def test_a_claude_session_told_by_its_hooks_reports_each_transition_once(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    path = rig.transcript_path(A)
    t = new_transcript(A, start=rig.clock.time())
    hook(rig, A, "SessionStart", source="startup", pid=4242)
    rig.settle()
    hook(rig, A, "UserPromptSubmit", pid=4242)
    rig.write(path, t.prompt("Clean the build"))
    rig.settle()
    rig.clock.advance(2)
    rig.write(path, t.bash("rm -rf build"))
    hook(rig, A, "PreToolUse", **BASH)
    rig.clock.advance(0.01)
    hook(rig, A, "PermissionRequest", **BASH)
    rig.settle()
    snap = rig.sessions()[A]
    assert (str(snap.state.state), snap.state.detail, snap.state.source) == (
        "input_required",
        "Bash: rm -rf build",
        Source.HOOK,
    )
    rig.clock.advance(6)  # the late notification changes nothing
    hook(rig, A, "Notification", notification_type="permission_prompt", message="needs you")
    rig.settle()
    rig.clock.advance(3)  # approved: the tool runs and reports
    t.now = rig.clock.time()
    rig.write(path, t.progress())
    rig.settle()
    assert rig.state(A) == ("running", None)
    rig.clock.advance(1)
    t.now = rig.clock.time()
    rig.write(path, t.tool_result())
    hook(rig, A, "PostToolUse", **BASH)
    rig.write(path, t.text("Removed build/."))
    rig.clock.advance(0.5)
    hook(rig, A, "Stop", last_assistant_message="Removed build/.")
    rig.settle()
    assert rig.state(A) == ("done", None)
    rig.clock.advance(0.05)  # the lines Claude writes just after Stop
    t.now = rig.clock.time()
    rig.write(path, t.text("Removed build/."), t.turn_duration())
    rig.settle()
    rig.clock.advance(60)
    hook(rig, A, "Notification", notification_type="idle_prompt", message="waiting")
    rig.tick()
    hook(rig, A, "SessionEnd", reason="prompt_input_exit")
    rig.settle()
    assert rig.state(A) == ("ended", None)
    rig.processes.remove(4242)
    rig.tick()
    assert states(rig) == [
        (None, "done", None, "transcript"),  # SessionStart: a session, waiting for a prompt
        ("done", "running", None, "hook"),
        ("running", "input_required", "approval", "hook"),
        ("input_required", "running", None, "transcript"),
        ("running", "done", None, "hook"),
        ("done", "ended", None, "hook"),
    ]
    assert rig.sessions()[A].state.detail == "session ended (prompt_input_exit)"


def test_the_registry_turning_busy_after_an_approval_wins(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    reg = rig.claude / "sessions" / "4242.json"
    t = new_transcript(A, start=rig.clock.time())
    rig.write(rig.transcript_path(A), t.prompt("go"), t.bash("make deploy"))
    rig.write_json(reg, registry(4242, A, status="busy", started_at=T0 - 59))
    rig.settle()
    rig.clock.advance(2)
    rig.write_json(
        reg,
        registry(
            4242, A, status="waiting", waiting_for="permission", started_at=T0 - 59,
            updated_at=rig.clock.time(),
        ),
    )  # fmt: skip
    rig.clock.advance(0.03)
    hook(rig, A, "PermissionRequest", tool_name="Bash", tool_summary="make deploy")
    rig.settle()
    assert rig.sessions()[A].state.source is Source.HOOK
    rig.clock.advance(4)
    rig.write_json(
        reg, registry(4242, A, status="busy", started_at=T0 - 59, updated_at=rig.clock.time())
    )
    rig.settle()
    snap = rig.sessions()[A]
    assert (str(snap.state.state), snap.state.source) == ("running", Source.REGISTRY)
    assert [s[1] for s in states(rig)] == ["running", "input_required", "running"]


def test_stop_failure_fails_the_turn(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    rig.write(rig.transcript_path(A), new_transcript(A, start=rig.clock.time()).prompt("go"))
    hook(rig, A, "UserPromptSubmit")
    rig.settle()
    rig.clock.advance(5)
    hook(rig, A, "StopFailure", error="rate_limit: 429 Too Many Requests")
    rig.settle()
    snap = rig.sessions()[A]
    assert (str(snap.state.state), snap.state.detail) == (
        "failed",
        "rate_limit: 429 Too Many Requests",
    )


def test_a_codex_session_with_hooks_and_notify(rig: Rig) -> None:
    rig.codex_process(901, "/work/web")
    rig.open()
    folder = rig.codex / "sessions" / "2026" / "11" / "29"
    rollout = folder / f"rollout-2026-11-29T10-00-00-{X}.jsonl"
    now = rig.clock.time()
    rig.write(
        rollout,
        {"timestamp": iso(now), "type": "session_meta",
         "payload": {"id": X, "timestamp": iso(now), "cwd": "/work/web", "cli_version": "0.171.0"}},
        {"timestamp": iso(now), "type": "event_msg",
         "payload": {"type": "task_started", "turn_id": "1"}},
        {"timestamp": iso(now), "type": "event_msg",
         "payload": {"type": "user_message", "message": "add a login page"}},
    )  # fmt: skip
    rig.settle()
    assert rig.state(X, Agent("codex")) == ("running", None)
    rig.clock.advance(3)
    hook(
        rig, X, "PermissionRequest", agent="codex", cwd="/work/web", tool_name="apply_patch",
        tool_summary="apply_patch src/login.py", turn_id="1",
    )  # fmt: skip
    rig.settle()
    assert rig.state(X, Agent("codex")) == ("input_required", "approval")
    assert rig.sessions()[X].state.detail == "apply_patch: apply_patch src/login.py"
    rig.clock.advance(4)
    hook(rig, X, "PostToolUse", agent="codex", cwd="/work/web", tool_name="apply_patch")
    rig.clock.advance(2)
    hook(rig, X, "Stop", agent="codex", cwd="/work/web", last_assistant_message="Added it.")
    hook(
        rig, X, "agent-turn-complete", agent="codex", cwd="/work/web",
        last_assistant_message="Added it.",
    )  # fmt: skip
    rig.settle()
    snap = rig.sessions()[X]
    assert (str(snap.state.state), snap.state.detail, snap.state.source) == (
        "done",
        "Added it.",
        Source.HOOK,
    )
    assert [s[1] for s in states(rig)] == ["running", "input_required", "done"]


# -- sessions from hooks alone ----------------------------------------------------------------


def test_a_hook_event_before_any_transcript_creates_the_session(rig: Rig) -> None:
    rig.claude_process(4242, "/work/fresh")
    rig.open()
    hook(rig, A, "SessionStart", source="startup", cwd="/work/fresh", pid=4242,
         transcript_path=str(rig.transcript_path(A)))  # fmt: skip
    rig.settle()
    snap = rig.sessions()[A]
    assert (snap.project, str(snap.state.state), snap.state.detail) == (
        "/work/fresh",
        "done",
        "waiting for a prompt",
    )
    assert snap.process is not None and snap.process.pid == 4242
    assert snap.transcript == str(rig.transcript_path(A))
    # Its transcript arrives: the same session.
    t = new_transcript(A, "/work/fresh", start=rig.clock.time())
    rig.write(rig.transcript_path(A), t.prompt("hello"))
    hook(rig, A, "UserPromptSubmit", cwd="/work/fresh", pid=4242)
    rig.settle()
    assert set(rig.sessions()) == {A}
    assert rig.sessions()[A].title == "hello"


def test_a_hook_event_without_a_cwd_lists_nothing(rig: Rig) -> None:
    rig.open()
    hook(rig, A, "Stop", cwd=None)
    rig.settle()
    assert rig.sessions() == {}


def test_the_hooks_pid_binds_liveness_and_its_exit_ends_the_session(rig: Rig) -> None:
    rig.open()
    rig.claude_process(5151, "/somewhere/else")  # no folder match: only the pid can tell
    hook(rig, A, "UserPromptSubmit", cwd="/work/demo", pid=5151)
    rig.settle()
    snap = rig.sessions()[A]
    assert snap.process is not None and snap.process.pid == 5151
    assert rig.state(A) == ("running", None)
    rig.processes.remove(5151)
    rig.tick()
    assert rig.state(A) == ("ended", None)
    assert rig.sessions()[A].state.source is Source.PROCESS


def test_a_pid_that_is_not_the_agent_binds_nothing(rig: Rig) -> None:
    from agentbar.core.sources.base import ProcessInfo

    rig.open()
    rig.processes.add(
        ProcessInfo(pid=777, ppid=1, create_time=T0 - 60, name="bash", cmdline=("bash",), cwd="/")
    )
    hook(rig, A, "UserPromptSubmit", cwd="/nowhere", pid=777)
    rig.settle()
    assert rig.sessions()[A].process is None
    rig.clock.advance(30)
    rig.tick()
    assert rig.state(A) == ("ended", None)


def test_a_pid_reused_after_the_event_binds_nothing(rig: Rig) -> None:
    from agentbar.core.sources.base import ProcessInfo

    rig.open()
    rig.processes.add(
        ProcessInfo(
            pid=888, ppid=1, create_time=rig.clock.time() + 100, name="claude",
            cmdline=("claude",), cwd="/elsewhere",
        )
    )  # fmt: skip
    hook(rig, A, "UserPromptSubmit", cwd="/nowhere", pid=888)
    rig.settle()
    assert rig.sessions()[A].process is None


def test_after_clear_the_new_session_takes_the_process(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    hook(rig, A, "UserPromptSubmit", pid=4242)
    rig.settle()
    assert rig.sessions()[A].process is not None
    rig.clock.advance(10)
    hook(rig, A, "SessionEnd", reason="clear", pid=4242)
    hook(rig, B, "SessionStart", source="clear", pid=4242)
    rig.settle()
    rig.tick()
    assert rig.state(A) == ("ended", None)
    assert rig.state(B) == ("done", None)
    assert rig.sessions()[B].process is not None


# -- files that go wrong ---------------------------------------------------------------------


def test_garbage_lines_are_counted_and_later_events_count(rig: Rig) -> None:
    rig.claude_process(4242)
    engine = rig.open()
    rig.write(rig.transcript_path(A), new_transcript(A, start=rig.clock.time()).prompt("go"))
    path = events_file(rig, A)
    rig.write_raw(path, b"{not json\n")
    rig.write_raw(path, b'{"event": "Stop"}\n')  # no time
    rig.write_raw(path, b'["a list"]\n')
    rig.clock.advance(1)
    hook(rig, A, "PermissionRequest", **BASH)
    rig.settle()
    assert engine.stats().malformed == 3
    assert rig.state(A) == ("input_required", "approval")


def test_a_deleted_events_file_leaves_the_session_and_its_last_word(rig: Rig) -> None:
    rig.claude_process(4242)
    engine = rig.open()
    rig.write(rig.transcript_path(A), new_transcript(A, start=rig.clock.time()).prompt("go"))
    rig.clock.advance(1)
    hook(rig, A, "PermissionRequest", **BASH)
    rig.settle()
    path = events_file(rig, A)
    path.unlink()
    rig.touch(path)
    rig.settle()
    assert rig.state(A) == ("input_required", "approval")
    assert not any(s.spec.kind is StreamKind.HOOKS for s in engine.streams)
    hook(rig, A, "PostToolUse", **BASH)  # the hook writes a new file: followed again
    rig.settle()
    assert rig.state(A) == ("running", None)


def test_a_half_written_event_waits_for_its_end(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    rig.write(rig.transcript_path(A), new_transcript(A, start=rig.clock.time()).prompt("go"))
    rig.settle()
    line = orjson.dumps(
        {"v": 1, "ts": rig.clock.time() + 1, "event": "PermissionRequest", "session_id": A,
         "tool_name": "Bash", "tool_summary": "ls"}
    ) + b"\n"  # fmt: skip
    rig.write_raw(events_file(rig, A), line[:20])
    rig.settle()
    assert rig.state(A) == ("running", None)
    rig.write_raw(events_file(rig, A), line[20:])
    rig.settle()
    assert rig.state(A) == ("input_required", "approval")


def test_files_that_are_not_events_are_ignored(rig: Rig) -> None:
    rig.open()
    folder = rig.settings.data_dir / "events" / "claude"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("notes.txt", "..jsonl", "-x.jsonl"):
        rig.write_raw(folder / name, b'{"v":1,"ts":1,"event":"Stop","cwd":"/w"}\n')
    rig.settle()
    rig.tick(31)
    assert rig.sessions() == {}


# -- restarts and resources ------------------------------------------------------------------


def test_the_hooks_word_survives_a_restart_and_is_not_reported_again(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    rig.write(rig.transcript_path(A), new_transcript(A, start=rig.clock.time()).prompt("go"))
    rig.clock.advance(1)
    hook(rig, A, "PermissionRequest", **BASH)
    rig.settle()
    engine = rig.open()  # warm restart over the same index
    assert rig.events == []
    assert engine.stats().lines == 0
    snap = rig.sessions()[A]
    assert (str(snap.state.state), snap.state.source, snap.state.detail) == (
        "input_required",
        Source.HOOK,
        "Bash: rm -rf build",
    )
    rig.clock.advance(5)
    hook(rig, A, "PostToolUse", **BASH)
    rig.settle()
    assert [s[1] for s in states(rig)] == ["running"]


def test_an_index_from_before_hooks_is_rebuilt(rig: Rig) -> None:
    import sqlite3

    rig.write(rig.transcript_path(A), new_transcript(A).prompt("hello"))
    rig.open()
    rig.close()
    with sqlite3.connect(rig.settings.index_path) as db:
        db.execute("UPDATE meta SET value = '1' WHERE key IN ('schema', 'rules')")
    rig.open()
    assert rig.sessions()[A].title == "hello"


def test_an_ended_session_closes_its_readers_and_no_one_elses(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.claude_process(4343, "/work/other")
    engine = rig.open()
    t = new_transcript(A, start=rig.clock.time() - 30)
    rig.write(rig.transcript_path(A), t.prompt("a"), t.text("Done."), t.turn_duration())
    rig.write(
        rig.transcript_path(B, "-work-other"),
        new_transcript(B, "/work/other", start=rig.clock.time()).prompt("b"),
    )
    hook(rig, A, "UserPromptSubmit", pid=4242)
    hook(rig, B, "UserPromptSubmit", cwd="/work/other", pid=4343)
    rig.settle()

    def open_readers(session: str) -> list[str]:
        return [
            s.path for s in engine.streams
            if s.session is not None and s.session.session_id == session and s.reader is not None
        ]  # fmt: skip

    assert len(open_readers(A)) == 2 and len(open_readers(B)) == 2
    rig.clock.advance(1)
    hook(rig, A, "SessionEnd", reason="logout", pid=4242)
    rig.settle()
    assert rig.state(A) == ("ended", None)
    assert open_readers(A) == []
    assert len(open_readers(B)) == 2
    # A resumed session reads on from where it was.
    rig.clock.advance(5)
    hook(rig, A, "SessionStart", source="resume", pid=4242)
    rig.settle()
    assert rig.state(A) == ("done", None)


def test_an_ended_sessions_events_are_pruned_a_day_later_and_no_one_elses(rig: Rig) -> None:
    rig.claude_process(4343, "/work/other")
    engine = rig.open(full_rescan_seconds=30)
    hook(rig, A, "UserPromptSubmit", pid=1)
    hook(rig, A, "SessionEnd", reason="logout")
    hook(rig, B, "UserPromptSubmit", cwd="/work/other", pid=4343)
    rig.settle()
    assert rig.state(A) == ("ended", None)
    old = rig.clock.time()
    rig.clock.advance(HOOK_FILE_KEEP_SECONDS / 2)
    rig.tick(31)
    assert events_file(rig, A).exists()  # not yet a day
    rig.clock.advance(HOOK_FILE_KEEP_SECONDS / 2)
    for session in (A, B):
        os.utime(events_file(rig, session), (old, old))
    rig.tick(31)
    assert not events_file(rig, A).exists()
    assert events_file(rig, B).exists()  # B still runs: its file stays, however old
    assert A not in rig.sessions()  # a session only its hooks knew goes with them
    assert engine.stats().streams == 1


def test_a_pruned_session_with_a_transcript_stays_listed(rig: Rig) -> None:
    rig.open(full_rescan_seconds=30)
    rig.write(rig.transcript_path(A), new_transcript(A, start=rig.clock.time() - 10).prompt("x"))
    hook(rig, A, "SessionEnd", reason="logout")
    rig.settle()
    rig.clock.advance(HOOK_FILE_KEEP_SECONDS + 60)
    old = rig.clock.time() - HOOK_FILE_KEEP_SECONDS - 1
    os.utime(events_file(rig, A), (old, old))
    rig.tick(31)
    assert not events_file(rig, A).exists()
    assert rig.state(A) == ("ended", None)


# -- the real hook program, end to end -----------------------------------------------------------


def test_the_real_hook_program_feeds_the_engine(rig: Rig) -> None:
    rig.claude_process(4242)
    rig.open()
    rig.clock = type(rig.clock)(time.time())  # the hook stamps real time
    rig.close()
    rig.open()
    t = new_transcript(A, start=time.time() - 5)
    rig.write(rig.transcript_path(A), t.prompt("clean"), t.bash("rm -rf build"))
    rig.settle()
    payload = {
        "session_id": A,
        "transcript_path": str(rig.transcript_path(A)),
        "cwd": "/work/demo",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build", "description": "clean"},
        "permission_mode": "default",
    }
    cmd = [sys.executable, "-I", "-S", str(HOOK), "--agent", "claude", "--data-dir",
           str(rig.settings.data_dir)]  # fmt: skip
    result = subprocess.run(
        cmd, input=json.dumps(payload).encode(), capture_output=True, check=False, timeout=30
    )
    assert (result.returncode, result.stdout) == (0, b"")
    rig.touch(events_file(rig, A))
    rig.settle()
    snap = rig.sessions()[A]
    assert (str(snap.state.state), snap.state.detail, snap.state.source) == (
        "input_required",
        "Bash: rm -rf build",
        Source.HOOK,
    )


# -- the fusion table, through the engine ------------------------------------------------------


class EngineTimeline:
    """``test_state_hooks.Timeline``'s interface over the real engine: each step writes the
    real file (transcript line, hook line, registry file) at its time on the fake clock."""

    def __init__(self, rig: Rig) -> None:
        import test_state_hooks

        self.rig = rig
        self.now = T0
        self.sid = test_state_hooks.SID
        self.t = new_transcript(self.sid, step=0.0)
        rig.claude_process(4242)
        rig.open()

    def _at(self) -> None:
        self.rig.clock.advance(self.now - self.rig.clock.time())

    def wait(self, seconds: float) -> EngineTimeline:
        self.now += seconds
        return self

    def line(self, build: Any) -> EngineTimeline:
        self._at()
        self.t.now = self.now
        self.rig.write(self.rig.transcript_path(self.sid), build(self.t))
        self.rig.settle()
        return self

    def hook(self, event: str, **fields: Any) -> EngineTimeline:
        self._at()
        renamed = {"last_message": "last_assistant_message"}
        hook(self.rig, self.sid, event, **{renamed.get(k, k): v for k, v in fields.items()})
        self.rig.settle()
        return self

    def reg(self, status: str, waiting_for: str | None = None) -> EngineTimeline:
        self._at()
        entry = registry(
            4242, self.sid, status=status, waiting_for=waiting_for, started_at=T0 - 59,
            updated_at=self.now,
        )  # fmt: skip
        self.rig.write_json(self.rig.claude / "sessions" / "4242.json", entry)
        self.rig.settle()
        return self

    def decide(self) -> Any:
        from agentbar.core.engine import Tick

        self.now += 0.5
        self._at()
        assert self.rig.engine is not None
        self.rig.engine.post(Tick())
        self.rig.settle()
        return self.rig.sessions()[self.sid].state


def fusion_rows() -> list[Any]:
    import test_state_hooks

    return [pytest.param(build, expect, id=name) for name, build, expect in test_state_hooks.ROWS]


@pytest.mark.parametrize(("build", "expect"), fusion_rows())
def test_the_fusion_table_through_the_engine(rig: Rig, build: Any, expect: Any) -> None:
    tl = EngineTimeline(rig)
    build(tl)
    got = tl.decide()
    state, waiting, source, detail = expect
    assert (got.state, got.waiting_for, got.source) == (state, waiting, source), got
    assert detail in got.detail, got.detail
    # Every report is a change: no state is reported twice in a row.
    seen = [(e.snapshot.state.state, e.snapshot.state.waiting_for) for e in rig.events]
    assert all(a != b for a, b in itertools.pairwise(seen)), seen
