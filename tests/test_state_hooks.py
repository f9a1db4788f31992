"""Hook events: the reducer (events -> the state they imply) and fusion (a hook outranks the
registry and the transcript until something newer contradicts it).

Each fusion row is a timeline a user meets: hook events, transcript lines (through the real
Claude adapter) and registry changes, each at its own time, then the decision."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import T0, ClaudeTranscript

from agentbar.core.agents.claude import TRAITS as CLAUDE_TRAITS
from agentbar.core.agents.claude.transcript import ClaudeTranscriptParser
from agentbar.core.agents.codex import TRAITS as CODEX_TRAITS
from agentbar.core.agents.gemini import TRAITS as GEMINI_TRAITS
from agentbar.core.agents.opencode import TRAITS as OPENCODE_TRAITS
from agentbar.core.model import Agent, SessionState, Source, State, WaitingFor
from agentbar.core.records import HookEvent
from agentbar.core.sources.base import StreamKind, StreamSpec
from agentbar.core.state import fusion, hooks, turns
from agentbar.core.state.hooks import HookState
from agentbar.core.state.turns import TurnState

SID = "11111111-2222-3333-4444-555555555555"
MAIN = StreamSpec(
    Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/x/{SID}.jsonl"), session_hint=SID
)


# -- the reducer ----------------------------------------------------------------------------


def fold(
    *events: tuple[str, dict[str, Any]], traits: fusion.AgentTraits = CLAUDE_TRAITS
) -> HookState:
    state = HookState()
    for i, (name, fields) in enumerate(events):
        state = hooks.reduce(state, HookEvent(ts=T0 + i, event=name, **fields), traits)
    return state


BASH = {"tool_name": "Bash", "tool_summary": "rm -rf build"}

REDUCER_TABLE: list[tuple[str, list[tuple[str, dict[str, Any]]], tuple[Any, ...] | None]] = [
    ("nothing yet", [], None),
    ("a prompt runs", [("UserPromptSubmit", {})], (State.RUNNING, None, "")),
    ("a tool call runs", [("PreToolUse", BASH)], (State.RUNNING, None, "Bash: rm -rf build")),
    (
        "a permission request waits for approval",
        [("PreToolUse", BASH), ("PermissionRequest", BASH)],
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, "Bash: rm -rf build"),
    ),
    (
        "AskUserQuestion waits for an answer",
        [("PermissionRequest", {"tool_name": "AskUserQuestion", "tool_summary": "Which DB?"})],
        (State.INPUT_REQUIRED, WaitingFor.QUESTION, "Which DB?"),
    ),
    (
        "the tool's result after the approval runs again",
        [("PermissionRequest", BASH), ("PostToolUse", BASH)],
        (State.RUNNING, None, ""),
    ),
    (
        "a failed tool still runs",
        [("PermissionRequest", BASH), ("PostToolUseFailure", BASH)],
        (State.RUNNING, None, ""),
    ),
    (
        "the late permission_prompt keeps the request's detail",
        [
            ("PermissionRequest", BASH),
            ("Notification", {"notification_type": "permission_prompt", "message": "needs you"}),
        ],
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, "Bash: rm -rf build"),
    ),
    (
        "permission_prompt alone (no PermissionRequest in this build) is an approval",
        [
            ("PreToolUse", BASH),
            ("Notification", {"notification_type": "permission_prompt", "message": "needs you"}),
        ],
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, ""),
    ),
    (
        "an untyped notification about permission (old builds) is an approval",
        [("Notification", {"message": "Claude needs your permission to use Bash"})],
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, ""),
    ),
    (
        "idle_prompt after Stop changes nothing",
        [
            ("Stop", {"last_message": "Done."}),
            ("Notification", {"notification_type": "idle_prompt", "message": "waiting"}),
        ],
        (State.DONE, None, "Done."),
    ),
    (
        "an untyped idle notification (old builds) changes nothing",
        [("Stop", {"last_message": "Done."}), ("Notification", {"message": "Claude is waiting"})],
        (State.DONE, None, "Done."),
    ),
    (
        "an MCP elicitation waits for an answer, and its response runs again",
        [
            (
                "Notification",
                {"notification_type": "elicitation_dialog", "message": "Server wants a token"},
            ),
        ],
        (State.INPUT_REQUIRED, WaitingFor.QUESTION, "Server wants a token"),
    ),
    (
        "the elicitation answered",
        [
            ("Notification", {"notification_type": "elicitation_dialog", "message": "token?"}),
            ("Notification", {"notification_type": "elicitation_response"}),
        ],
        (State.RUNNING, None, ""),
    ),
    ("Stop is done", [("Stop", {"last_message": "All green."})], (State.DONE, None, "All green.")),
    (
        "Stop on a question waits for the answer",
        [("Stop", {"last_message": "Tests pass.\n\nShall I commit?"})],
        (State.INPUT_REQUIRED, WaitingFor.QUESTION, "Shall I commit?"),
    ),
    ("Stop without a message (old builds)", [("Stop", {})], (State.DONE, None, "")),
    (
        "Codex notify's turn-complete is Stop",
        [("agent-turn-complete", {"last_message": "Renamed."})],
        (State.DONE, None, "Renamed."),
    ),
    (
        "StopFailure fails with the error",
        [("StopFailure", {"error": "rate_limit: 429"})],
        (State.FAILED, None, "rate_limit: 429"),
    ),
    ("Codex Interrupt fails", [("Interrupt", {})], (State.FAILED, None, "interrupted")),
    (
        "SessionEnd ends, with the reason",
        [("Stop", {}), ("SessionEnd", {"reason": "prompt_input_exit"})],
        (State.ENDED, None, "session ended (prompt_input_exit)"),
    ),
    ("SessionStart says nothing itself", [("SessionStart", {"source": "startup"})], None),
    (
        "a resume after SessionEnd is a session again: the ended is forgotten",
        [("SessionEnd", {}), ("SessionStart", {"source": "resume"})],
        None,
    ),
    (
        "compaction mid-turn changes nothing",
        [("PreToolUse", BASH), ("SessionStart", {"source": "compact"}), ("PreCompact", {})],
        (State.RUNNING, None, "Bash: rm -rf build"),
    ),
    (
        "SubagentStop does not end the parent's turn",
        [("PreToolUse", {"tool_name": "Task"}), ("SubagentStop", {"agent_id": "a1"})],
        (State.RUNNING, None, "Task"),
    ),
    (
        "a sub-agent's approval wait counts",
        [("PreToolUse", {"tool_name": "Task"}), ("PermissionRequest", {**BASH, "agent_id": "a1"})],
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, "Bash: rm -rf build"),
    ),
    (
        "a background sub-agent's work after Stop does not make the parent busy",
        [("Stop", {"last_message": "Started it."}), ("PreToolUse", {**BASH, "agent_id": "a1"})],
        (State.DONE, None, "Started it."),
    ),
    (
        "its wait shows, and its next event puts the parent's state back",
        [
            ("Stop", {"last_message": "Started it."}),
            ("PermissionRequest", {**BASH, "agent_id": "a1"}),
            ("PostToolUse", {**BASH, "agent_id": "a1"}),
        ],
        (State.DONE, None, "Started it."),
    ),
    (
        "a sub-agent stopping also takes its wait away",
        [
            ("PreToolUse", {"tool_name": "Task"}),
            ("PermissionRequest", {**BASH, "agent_id": "a1"}),
            ("SubagentStop", {"agent_id": "a1"}),
        ],
        (State.RUNNING, None, "Task"),
    ),
    (
        "events this version does not know change nothing",
        [("Stop", {"last_message": "ok"}), ("TeammateIdle", {}), ("ConfigChange", {})],
        (State.DONE, None, "ok"),
    ),
]


@pytest.mark.parametrize(
    ("name", "events", "expect"), REDUCER_TABLE, ids=[r[0] for r in REDUCER_TABLE]
)
def test_reducer(name: str, events: list[tuple[str, dict[str, Any]]], expect: Any) -> None:
    view = fold(*events).view
    if expect is None:
        assert view is None
        return
    assert view is not None
    assert (view.state, view.waiting_for, view.detail) == expect


def test_events_apply_in_the_order_of_their_own_times() -> None:
    late = HookEvent(ts=T0 + 2, event="PostToolUse", tool_name="Bash")
    early = HookEvent(ts=T0 + 1, event="PermissionRequest", tool_name="Bash", tool_summary="x")
    state = hooks.reduce_all(HookState(), [late, early], CLAUDE_TRAITS)  # one batch, out of order
    assert state.view is not None and state.view.state is State.RUNNING
    again = hooks.reduce(hooks.reduce(HookState(), late, CLAUDE_TRAITS), early, CLAUDE_TRAITS)
    assert again.view is not None and again.view.state is State.RUNNING  # across batches
    assert again.events == 2


@pytest.mark.parametrize(
    ("traits", "tool", "waits_for"),
    [
        (CLAUDE_TRAITS, "AskUserQuestion", WaitingFor.QUESTION),
        (CODEX_TRAITS, "request_user_input", WaitingFor.QUESTION),
        (GEMINI_TRAITS, "ask_user", WaitingFor.QUESTION),
        # Another agent's question tool is just a tool to this one: its request is an approval.
        (CODEX_TRAITS, "AskUserQuestion", WaitingFor.APPROVAL),
        (CLAUDE_TRAITS, "ask_user", WaitingFor.APPROVAL),
        (OPENCODE_TRAITS, "request_user_input", WaitingFor.APPROVAL),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_question_tool_is_the_one_its_agents_kit_declares(
    traits: fusion.AgentTraits, tool: str, waits_for: WaitingFor
) -> None:
    asked = ("PermissionRequest", {"tool_name": tool, "tool_summary": "Which database?"})
    view = fold(asked, traits=traits).view
    assert view is not None
    assert (view.state, view.waiting_for) == (State.INPUT_REQUIRED, waits_for)


def test_facts_follow_the_newest_event() -> None:
    state = fold(
        ("SessionStart", {"cwd": "/w/a", "transcript_path": "/t/a.jsonl", "pid": 10}),
        ("UserPromptSubmit", {"cwd": "/w/b", "pid": 11}),
        ("Stop", {}),
    )
    assert (state.cwd, state.transcript_path, state.pid) == ("/w/b", "/t/a.jsonl", 11)
    assert (state.last_event, state.last_at, state.events) == ("Stop", T0 + 2, 3)


# -- fusion ---------------------------------------------------------------------------------


@dataclass
class Timeline:
    """Hook events, transcript lines and registry changes on one clock."""

    traits: fusion.AgentTraits = CLAUDE_TRAITS
    now: float = T0
    t: ClaudeTranscript = field(default_factory=lambda: ClaudeTranscript(SID, step=0.0))
    parser: ClaudeTranscriptParser = field(default_factory=lambda: ClaudeTranscriptParser(MAIN))
    turn: TurnState = field(default_factory=TurnState)
    hooks: HookState = field(default_factory=HookState)
    registry: fusion.RegistryView | None = None
    last_line: float | None = None

    def wait(self, seconds: float) -> Timeline:
        self.now += seconds
        return self

    def line(self, build: Callable[[ClaudeTranscript], dict[str, Any]]) -> Timeline:
        self.t.now = self.now
        for record in self.parser.parse(orjson.dumps(build(self.t))):
            self.turn = turns.reduce(self.turn, record)
        self.last_line = self.now
        return self

    def hook(self, event: str, **fields: Any) -> Timeline:
        event_now = HookEvent(ts=self.now, event=event, **fields)
        self.hooks = hooks.reduce(self.hooks, event_now, self.traits)
        return self

    def reg(self, status: str, waiting_for: str | None = None) -> Timeline:
        self.registry = fusion.RegistryView(status, waiting_for, self.now)
        return self

    def decide(self, *, later: float = 0.5, alive: bool | None = True) -> SessionState:
        signals = fusion.Signals(
            turn=self.turn,
            registry=self.registry,
            hook=self.hooks.view,
            alive=alive,
            last_activity=self.last_line,
        )
        return fusion.decide(signals, self.now + later, self.traits)


def approval(tl: Timeline) -> Timeline:
    """A prompt, a Bash call, and Claude asking to run it."""
    tl.hook("UserPromptSubmit").line(lambda t: t.prompt("clean up")).wait(1)
    tl.line(lambda t: t.bash("rm -rf build")).wait(0.01)
    tl.hook("PreToolUse", **BASH).wait(0.01).hook("PermissionRequest", **BASH)
    return tl


def finished(tl: Timeline, message: str | None = "Removed build/.") -> Timeline:
    tl.hook("UserPromptSubmit").line(lambda t: t.prompt("clean up")).wait(2)
    tl.line(lambda t: t.text(message or "Removed build/.")).wait(0.02)
    fields = {} if message is None else {"last_message": message}
    return tl.hook("Stop", **fields)


ROWS: list[tuple[str, Callable[[Timeline], Any], tuple[Any, ...]]] = [
    (
        "PermissionRequest: approval, with the command",
        approval,
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, Source.HOOK, "Bash: rm -rf build"),
    ),
    (
        "the registry saying 'waiting' a moment before agrees: still the hook's",
        lambda tl: approval(tl.wait(0.001).reg("waiting", "permission prompt")),
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, Source.HOOK, "Bash: rm -rf build"),
    ),
    (
        "approved: the registry turns busy after the hook, and wins",
        lambda tl: approval(tl).wait(3).reg("busy"),
        (State.RUNNING, None, Source.REGISTRY, "Bash: rm -rf build"),
    ),
    (
        "approved: tool progress after the hook wins (no registry)",
        lambda tl: approval(tl).wait(3).line(lambda t: t.progress()),
        (State.RUNNING, None, Source.TRANSCRIPT, "Bash: rm -rf build"),
    ),
    (
        "approved: the tool's result after the hook wins",
        lambda tl: approval(tl).wait(3).line(lambda t: t.tool_result()),
        (State.RUNNING, None, Source.TRANSCRIPT, "working"),
    ),
    (
        "a hook's own progress line is not the turn moving",
        lambda tl: approval(tl).wait(0.05).line(lambda t: t.progress("hook_progress")),
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, Source.HOOK, "Bash: rm -rf build"),
    ),
    (
        "approved and done: PostToolUse",
        lambda tl: approval(tl).wait(3).hook("PostToolUse", **BASH),
        (State.RUNNING, None, Source.HOOK, "Bash: rm -rf build"),
    ),
    (
        "denied: the transcript's refusal and stop are newer",
        lambda tl: (
            approval(tl)
            .wait(2)
            .line(lambda t: t.tool_result(denied=True))
            .line(lambda t: t.interrupt(for_tool=True))
        ),
        (State.DONE, None, Source.TRANSCRIPT, "you denied Bash: rm -rf build"),
    ),
    (
        "AskUserQuestion: waits for the answer, with the question",
        lambda tl: tl.hook(
            "PermissionRequest", tool_name="AskUserQuestion", tool_summary="Which database?"
        ),
        (State.INPUT_REQUIRED, WaitingFor.QUESTION, Source.HOOK, "Which database?"),
    ),
    (
        "permission_prompt without a PermissionRequest borrows the pending call",
        lambda tl: (
            tl.line(lambda t: t.prompt("go"))
            .wait(1)
            .line(lambda t: t.bash("make deploy"))
            .wait(6)
            .hook("Notification", notification_type="permission_prompt", message="needs you")
        ),
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, Source.HOOK, "Bash: make deploy"),
    ),
    (
        "permission_prompt with no call to borrow says what the agent said",
        lambda tl: tl.hook(
            "Notification",
            notification_type="permission_prompt",
            message="Claude needs your permission to use Bash",
        ),
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, Source.HOOK, "Claude needs your permission"),
    ),
    (
        "Stop: done, with the last message",
        finished,
        (State.DONE, None, Source.HOOK, "Removed build/."),
    ),
    (
        "the final answer line written just after Stop does not make it running",
        lambda tl: finished(tl).wait(0.03).line(lambda t: t.text("Removed build/.")),
        (State.DONE, None, Source.HOOK, "Removed build/."),
    ),
    (
        "turn_duration after Stop agrees",
        lambda tl: finished(tl).wait(0.03).line(lambda t: t.turn_duration()),
        (State.DONE, None, Source.HOOK, "Removed build/."),
    ),
    (
        "the registry still 'busy' from before Stop does not win",
        lambda tl: finished(tl.reg("busy")),
        (State.DONE, None, Source.HOOK, "Removed build/."),
    ),
    (
        "Stop ending on a question waits for the answer",
        lambda tl: finished(tl, "Tests pass.\n\nShall I commit?"),
        (State.INPUT_REQUIRED, WaitingFor.QUESTION, Source.HOOK, "Shall I commit?"),
    ),
    (
        "Stop without a message: the transcript's answer gives the question",
        lambda tl: (
            tl.line(lambda t: t.prompt("x"))
            .wait(1)
            .line(lambda t: t.text("Deploy now?"))
            .wait(0.02)
            .hook("Stop")
        ),
        (State.INPUT_REQUIRED, WaitingFor.QUESTION, Source.HOOK, "Deploy now?"),
    ),
    (
        "Stop without a message: the transcript's answer gives the detail",
        lambda tl: finished(tl, None),
        (State.DONE, None, Source.HOOK, "Removed build/."),
    ),
    (
        "Stop while a background sub-agent works: running",
        lambda tl: (
            tl.line(lambda t: t.prompt("x"))
            .wait(1)
            .line(lambda t: t.tool_use("Task", {"prompt": "dig"}, "toolu_task"))
            .wait(0.5)
            .line(
                lambda t: ClaudeTranscript(SID, sidechain=True, agent_id="s1", start=t.now).bash(
                    "ls"
                )
            )
            .hook("Stop", last_message="Started a helper.")
        ),
        (State.RUNNING, None, Source.TRANSCRIPT, "waiting for 1 sub-agent"),
    ),
    (
        "a new prompt after Stop runs (hook)",
        lambda tl: finished(tl).wait(30).hook("UserPromptSubmit"),
        (State.RUNNING, None, Source.HOOK, "working"),
    ),
    (
        "a new turn after Stop that ran no hook: the transcript's newer prompt wins",
        lambda tl: finished(tl).wait(30).line(lambda t: t.prompt("and the docs")),
        (State.RUNNING, None, Source.TRANSCRIPT, "working"),
    ),
    (
        "interrupted mid-tool (Claude runs no hook for it): the transcript is newer",
        lambda tl: tl.hook("PreToolUse", **BASH).wait(2).line(lambda t: t.interrupt(for_tool=True)),
        (State.FAILED, None, Source.TRANSCRIPT, "interrupted"),
    ),
    (
        "the registry turning idle after the last tool hook: done",
        lambda tl: (
            tl.hook("PostToolUse", **BASH)
            .wait(1)
            .line(lambda t: t.text("Done."))
            .wait(0.1)
            .reg("idle")
        ),
        (State.DONE, None, Source.REGISTRY, "Done."),
    ),
    (
        "a newer asking call in the transcript outranks a running hook",
        lambda tl: (
            tl.hook("PreToolUse", tool_name="AskUserQuestion")
            .wait(0.05)
            .line(
                lambda t: t.tool_use(
                    "AskUserQuestion", {"questions": [{"question": "Which one?"}]}, "toolu_q"
                )
            )
        ),
        (State.INPUT_REQUIRED, WaitingFor.QUESTION, Source.TRANSCRIPT, "Which one?"),
    ),
    (
        "StopFailure: failed",
        lambda tl: tl.hook("UserPromptSubmit").wait(3).hook("StopFailure", error="overloaded"),
        (State.FAILED, None, Source.HOOK, "overloaded"),
    ),
    (
        "SessionEnd: ended while the process lingers",
        lambda tl: finished(tl).wait(5).hook("SessionEnd", reason="prompt_input_exit"),
        (State.ENDED, None, Source.HOOK, "session ended (prompt_input_exit)"),
    ),
    (
        "a session resumed without hooks takes over from its old SessionEnd",
        lambda tl: (
            finished(tl)
            .wait(5)
            .hook("SessionEnd")
            .wait(86400)
            .line(lambda t: t.prompt("back again"))
        ),
        (State.RUNNING, None, Source.TRANSCRIPT, "working"),
    ),
    (
        "SubagentStop does not end the parent's turn",
        lambda tl: (
            tl.hook("PreToolUse", tool_name="Task", tool_summary="dig")
            .wait(5)
            .hook("SubagentStop", agent_id="s1")
        ),
        (State.RUNNING, None, Source.HOOK, "Task: dig"),
    ),
    (
        "idle_prompt a minute after Stop leaves it done",
        lambda tl: finished(tl).wait(60).hook("Notification", notification_type="idle_prompt"),
        (State.DONE, None, Source.HOOK, "Removed build/."),
    ),
    (
        "a days-old Stop is old news once a later turn ends without hooks",
        lambda tl: (
            finished(tl)
            .wait(86400)
            .line(lambda t: t.prompt("again"))
            .wait(5)
            .line(lambda t: t.text("Second answer."))
            .line(lambda t: t.turn_duration())
        ),
        (State.DONE, None, Source.TRANSCRIPT, "Second answer."),
    ),
    (
        "Codex: PreToolUse after the escalated call is written does not hide its approval",
        lambda tl: (
            tl.line(lambda t: t.prompt("x"))
            .wait(1)
            .line(lambda t: t.tool_use("ExitPlanMode", {"plan": "1. do it"}, "toolu_plan"))
            .wait(0.05)
            .hook("PreToolUse", tool_name="ExitPlanMode", tool_summary="1. do it")
        ),
        (State.INPUT_REQUIRED, WaitingFor.APPROVAL, Source.TRANSCRIPT, "ExitPlanMode"),
    ),
    (
        "Codex: a prompt's late SessionStart does not make the running turn done",
        lambda tl: (
            tl.line(lambda t: t.prompt("x"))
            .wait(0.05)
            .hook("SessionStart", source="startup")
            .wait(0.01)
            .hook("UserPromptSubmit")
        ),
        (State.RUNNING, None, Source.HOOK, "working"),
    ),
    (
        "a running hook defers to newer transcript detail",
        lambda tl: (
            tl.hook("PreToolUse", **BASH)
            .wait(1)
            .line(lambda t: t.bash("npm test", call_id="toolu_02"))
        ),
        (State.RUNNING, None, Source.HOOK, "Bash: npm test"),
    ),
]


@pytest.mark.parametrize(("name", "build", "expect"), ROWS, ids=[r[0] for r in ROWS])
def test_fusion(name: str, build: Callable[[Timeline], Any], expect: tuple[Any, ...]) -> None:
    tl = Timeline()
    build(tl)
    got = tl.decide()
    state, waiting, source, detail = expect
    assert (got.state, got.waiting_for, got.source) == (state, waiting, source), got
    assert detail in got.detail, got.detail


def test_a_session_that_said_it_ended_keeps_the_hooks_word_when_its_process_goes() -> None:
    tl = finished(Timeline()).wait(1).hook("SessionEnd", reason="clear")
    got = tl.decide(alive=False)
    assert (got.state, got.source, got.detail) == (
        State.ENDED,
        Source.HOOK,
        "session ended (clear)",
    )


def test_a_process_gone_without_a_session_end_is_ended_by_the_process() -> None:
    got = finished(Timeline()).decide(alive=False)
    assert (got.state, got.source) == (State.ENDED, Source.PROCESS)


def test_a_stop_before_the_answer_is_on_disk_is_provisional() -> None:
    tl = Timeline().line(lambda t: t.prompt("x")).wait(1).line(lambda t: t.bash("ls"))
    tl.line(lambda t: t.tool_result()).wait(1).hook("Stop")
    got = tl.decide()
    assert (got.state, got.provisional) == (State.DONE, True)


def test_the_hook_decides_only_while_nothing_newer_contradicts_it() -> None:
    """The same two signals, in both orders."""
    hook_first = approval(Timeline()).wait(1).reg("busy").decide()
    registry_first = Timeline().reg("busy").wait(1)
    registry_first = approval(registry_first).decide()
    assert (hook_first.state, hook_first.source) == (State.RUNNING, Source.REGISTRY)
    assert (registry_first.state, registry_first.source) == (State.INPUT_REQUIRED, Source.HOOK)


def test_codex_timeline() -> None:
    tl = Timeline(traits=CODEX_TRAITS)
    tl.hook("UserPromptSubmit", turn_id="t1").wait(2)
    tl.hook("PermissionRequest", tool_name="apply_patch", tool_summary="apply_patch src/a.py")
    got = tl.decide()
    assert (got.state, got.waiting_for, got.detail) == (
        State.INPUT_REQUIRED,
        WaitingFor.APPROVAL,
        "apply_patch: apply_patch src/a.py",
    )
    tl.wait(4).hook("PostToolUse", tool_name="apply_patch").wait(3)
    tl.hook("Stop", last_message="Patched.").wait(0.01)
    tl.hook("agent-turn-complete", last_message="Patched.")
    got = tl.decide()
    assert (got.state, got.source, got.detail) == (State.DONE, Source.HOOK, "Patched.")
    tl.wait(10).hook("UserPromptSubmit").wait(1).hook("Interrupt")
    assert tl.decide().state is State.FAILED
