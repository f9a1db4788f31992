"""Claude Code: transcript lines (through the real adapter) + registry + liveness -> state.

Each row is a scenario a user meets; the expected state, what it waits for, the signal that
decided, and a piece of the detail a notification would show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import state_table
from claude_lines import ClaudeTranscript
from state_table import Scenario

from agentbar.core.agents.claude import TRAITS as CLAUDE_TRAITS
from agentbar.core.agents.claude.transcript import ClaudeTranscriptParser
from agentbar.core.model import Agent, SessionState, Source, State, WaitingFor
from agentbar.core.sources.base import StreamKind, StreamSpec
from agentbar.core.state import fusion

SID = "11111111-2222-3333-4444-555555555555"
MAIN = StreamSpec(
    Agent("claude"), StreamKind.TRANSCRIPT, Path(f"/p/x/{SID}.jsonl"), session_hint=SID
)


def sub_spec(agent: str) -> StreamSpec:
    path = Path(f"/p/x/{SID}/subagents/agent-{agent}.jsonl")
    return StreamSpec(
        Agent("claude"), StreamKind.SUBAGENT, path, session_hint=SID, agent_id_hint=agent
    )


def decide(scenario: Scenario) -> SessionState:
    return state_table.decide(scenario, ClaudeTranscriptParser, CLAUDE_TRAITS)


def scenarios() -> list[Scenario]:
    out: list[Scenario] = []

    def add(name: str, build: Any, expect: State, **kw: Any) -> None:
        t = ClaudeTranscript(SID)
        out.append(Scenario(name, [(MAIN, line) for line in build(t)], expect, **kw))

    add("a prompt starts a running turn", lambda t: [t.prompt("fix it")], State.RUNNING)
    add(
        "thinking is running",
        lambda t: [t.prompt("fix it"), t.thinking("hmm")],
        State.RUNNING,
        detail="working",
    )
    add(
        "a pending Bash call alone is running, not a confident approval",
        lambda t: [t.prompt("fix it"), t.bash("npm test")],
        State.RUNNING,
        detail="Bash: npm test",
    )
    add(
        "a pending Bash call stays running however long it waits",
        lambda t: [t.prompt("fix it"), t.bash("npm test")],
        State.RUNNING,
        quiet=600,
    )
    add(
        "the registry's waiting makes the pending call an approval",
        lambda t: [t.prompt("fix it"), t.bash("rm -rf build")],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.APPROVAL,
        source=Source.REGISTRY,
        detail="Bash: rm -rf build",
        registry=fusion.RegistryView("waiting", "permission prompt", None),
    )
    add(
        "registry waiting before the tool line lands: approval, detail from the registry",
        lambda t: [t.prompt("fix it")],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.APPROVAL,
        source=Source.REGISTRY,
        detail="permission prompt",
        registry=fusion.RegistryView("waiting", "permission prompt", None),
    )
    add(
        # Claude 2.1.332: a choice at start-up (auto mode), a paused session, or /status.
        "the registry waiting on an open dialog is a question, not an approval",
        lambda t: [t.prompt("hi"), t.text("Hello."), t.turn_duration()],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        source=Source.REGISTRY,
        detail="dialog open",
        registry=fusion.RegistryView("waiting", "dialog open", None),
    )
    add(
        "AskUserQuestion pending is a question",
        lambda t: [
            t.prompt("plan it"),
            t.tool_use(
                "AskUserQuestion",
                {"questions": [{"question": "Which database should I use?", "options": []}]},
                "toolu_q",
            ),
        ],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        detail="Which database should I use?",
    )
    add(
        "the registry's waiting on AskUserQuestion is a question too",
        lambda t: [
            t.prompt("plan it"),
            t.tool_use(
                "AskUserQuestion", {"questions": [{"question": "Postgres or SQLite?"}]}, "q"
            ),
        ],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        source=Source.REGISTRY,
        detail="Postgres or SQLite?",
        registry=fusion.RegistryView("waiting", "permission prompt", None),
    )
    add(
        "ExitPlanMode waits for the plan's approval",
        lambda t: [t.prompt("plan"), t.tool_use("ExitPlanMode", {"plan": "1. do x\n2. y"}, "p")],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.APPROVAL,
        detail="ExitPlanMode: 1. do x",
    )
    add(
        "a tool result resumes the turn",
        lambda t: [t.prompt("fix"), t.bash("npm test"), t.tool_result()],
        State.RUNNING,
        detail="working",
    )
    add(
        "turn_duration ends the turn: done, with the answer's last line",
        lambda t: [
            t.prompt("fix"),
            t.bash("npm test"),
            t.tool_result(),
            t.text("Fixed the race.\n\nAll 42 tests pass."),
            t.turn_duration(),
        ],
        State.DONE,
        detail="All 42 tests pass.",
    )
    add(
        "a final answer that asks something is a question",
        lambda t: [
            t.prompt("fix"),
            t.text("I found two options.\n\nShould I also update the migration?"),
            t.turn_duration(),
        ],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        detail="Should I also update the migration?",
    )
    add(
        "a question asked along the way and then answered is not a question",
        lambda t: [
            t.prompt("fix"),
            t.text("Why does it fail? Because of the cache.\n\nFixed it."),
            t.turn_duration(),
        ],
        State.DONE,
    )
    add(
        "a question mark inside a code block is not a question",
        lambda t: [
            t.prompt("regex"),
            t.text("Use this:\n\n```\n^a?b?$\n```"),
            t.turn_duration(),
        ],
        State.DONE,
    )
    add(
        "1.0.x: stop_reason end_turn ends the turn without turn_duration",
        lambda t: [t.prompt("hi"), t.text("Hello.", stop_reason="end_turn")],
        State.DONE,
        detail="Hello.",
    )
    add(
        "2.0.x: answer text with no end marker is running while fresh",
        lambda t: [t.prompt("hi"), t.text("Hello.")],
        State.RUNNING,
        quiet=2.0,
    )
    add(
        "2.0.x: answer text with no end marker is done once quiet",
        lambda t: [t.prompt("hi"), t.text("Hello.")],
        State.DONE,
        quiet=20.0,
        detail="Hello.",
    )
    add(
        "the registry's idle ends a turn whose turn_duration never came",
        lambda t: [t.prompt("hi"), t.text("Hello.")],
        State.DONE,
        source=Source.REGISTRY,
        registry=fusion.RegistryView("idle", None, None),
    )
    add(
        "the registry's busy is running",
        lambda t: [t.prompt("hi"), t.text("Hello."), t.turn_duration()],
        State.RUNNING,
        source=Source.REGISTRY,
        registry=fusion.RegistryView("busy", None, None),
    )
    add(
        "the registry's idle with a question in the answer is a question",
        lambda t: [t.prompt("hi"), t.text("Deploy to prod now?")],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        registry=fusion.RegistryView("idle", None, None),
    )
    add(
        "Escape interrupts: failed",
        lambda t: [t.prompt("fix"), t.thinking("..."), t.interrupt()],
        State.FAILED,
        detail="interrupted",
    )
    add(
        "Escape during a tool: failed",
        lambda t: [t.prompt("fix"), t.bash("sleep 100"), t.interrupt(for_tool=True)],
        State.FAILED,
        detail="interrupted",
    )
    add(
        "a denied tool stops the turn on purpose: done, saying what was denied",
        lambda t: [
            t.prompt("clean"),
            t.bash("rm -rf /"),
            t.tool_result(denied=True),
            t.interrupt(for_tool=True),
        ],
        State.DONE,
        detail="stopped: you denied Bash: rm -rf /",
    )
    add(
        "a denial is not stuck in input_required even with the registry idle",
        lambda t: [
            t.prompt("clean"),
            t.bash("rm -rf /"),
            t.tool_result(denied=True),
            t.interrupt(for_tool=True),
        ],
        State.DONE,
        source=Source.REGISTRY,
        registry=fusion.RegistryView("idle", None, None),
    )
    add(
        "an API error message fails the turn",
        lambda t: [t.prompt("hi"), t.synthetic_error("API Error: 529 overloaded")],
        State.FAILED,
        detail="API Error: 529 overloaded",
    )
    add(
        "an API error being retried is still running",
        lambda t: [t.prompt("hi"), t.api_error("overloaded", 1, 10)],
        State.RUNNING,
        detail="retrying after: overloaded",
    )
    add(
        # Claude 2.0.77 with CLAUDE_CODE_MAX_RETRIES=1 writes attempt 1 of 1 and then retries.
        "the last retry notice is still running: the retry follows it",
        lambda t: [t.prompt("hi"), t.api_error("overloaded", 10, 10)],
        State.RUNNING,
        detail="retrying after: overloaded",
    )
    add(
        "retries run out: the synthetic error line fails the turn",
        lambda t: [
            t.prompt("hi"),
            t.api_error("overloaded", 1, 1),
            t.synthetic_error("API Error: 529 overloaded"),
        ],
        State.FAILED,
        detail="API Error: 529 overloaded",
    )
    add(
        "a retry notice names the message nested in the HTTP error body (1.0.x-2.0.x)",
        lambda t: [
            t.prompt("hi"),
            {
                **t.api_error("", 1, 1),
                "error": {
                    "status": 500,
                    "headers": {},
                    "requestID": None,
                    "error": {
                        "type": "error",
                        "error": {"type": "api_error", "message": "Internal server error"},
                    },
                },
            },
        ],
        State.RUNNING,
        detail="retrying after: Internal server error",
    )
    add(
        "the CLI's own synthetic note after a resumed /exit is no turn (2.0.77)",
        lambda t: [
            t.prompt("first"),
            t.text("First answer.", stop_reason="end_turn"),
            t.prompt("<local-command-caveat>Caveat: The messages below were generated by the user"),
            t.prompt("<command-name>/exit</command-name>"),
            t.prompt("<local-command-stdout>Bye!</local-command-stdout>"),
            t.assistant(
                [{"type": "text", "text": "No response requested."}],
                model="<synthetic>",
                stop_reason="stop_sequence",
            ),
        ],
        State.DONE,
        detail="First answer.",
        quiet=600,
    )
    add(
        "a failed turn stays failed when the registry goes idle",
        lambda t: [t.prompt("hi"), t.synthetic_error("API Error: 500")],
        State.FAILED,
        registry=fusion.RegistryView("idle", None, None),
    )
    add(
        "a new prompt after a failure runs again",
        lambda t: [t.prompt("hi"), t.interrupt(), t.prompt("again")],
        State.RUNNING,
    )
    add(
        "a background-agent notification restarts the turn",
        lambda t: [
            t.prompt("hi"),
            t.text("Started."),
            t.turn_duration(),
            t.prompt("<task-notification>agent done</task-notification>"),
        ],
        State.RUNNING,
    )
    add(
        "meta and injected lines do not start a turn",
        lambda t: [
            t.prompt("hi"),
            t.text("Done.", stop_reason="end_turn"),
            t.meta("Caveat: The messages below were generated by the user"),
            t.prompt("<local-command-stdout>ok</local-command-stdout>"),
        ],
        State.DONE,
    )
    add(
        "a session whose process is gone is ended, whatever its transcript says",
        lambda t: [t.prompt("fix"), t.bash("npm test")],
        State.ENDED,
        source=Source.PROCESS,
        alive=False,
    )
    add(
        "unknown liveness (just started) does not end a session",
        lambda t: [t.prompt("fix")],
        State.RUNNING,
        alive=None,
    )
    add(
        "before any prompt the session waits for one",
        lambda t: [t.bookkeeping("file-history-snapshot", messageId="m", snapshot={})],
        State.DONE,
        detail="waiting for a prompt",
    )

    # Sub-agents: their lines never move the main turn, but a parent waiting on them is not done.
    t = ClaudeTranscript(SID)
    s = ClaudeTranscript(SID, sidechain=True, agent_id="a1", start=t.now + 2)
    out.append(
        Scenario(
            "2.1.x: a background sub-agent still working keeps the parent running",
            [
                (MAIN, t.prompt("research")),
                (MAIN, t.tool_use("Task", {"description": "survey", "prompt": "go"}, "toolu_t")),
                (MAIN, t.tool_result("toolu_t", "launched in background")),
                (sub_spec("a1"), s.prompt("go")),
                (sub_spec("a1"), s.bash("grep -r foo", call_id="toolu_s1")),
                (MAIN, t.text("Started a background agent.")),
                (MAIN, t.turn_duration(pending_agents=1)),
            ],
            State.RUNNING,
            detail="waiting for 1 sub-agent",
        )
    )
    t = ClaudeTranscript(SID)
    s = ClaudeTranscript(SID, sidechain=True, agent_id="a1", start=t.now + 2)
    out.append(
        Scenario(
            "2.1.x: the parent is done once its sub-agent reports back",
            [
                (MAIN, t.prompt("research")),
                (sub_spec("a1"), s.prompt("go")),
                (sub_spec("a1"), s.bash("grep -r foo", call_id="toolu_s1")),
                (sub_spec("a1"), s.tool_result("toolu_s1")),
                (sub_spec("a1"), s.text("Found 3 uses.")),
                (MAIN, t.text("The survey is done.")),
                (MAIN, t.turn_duration()),
            ],
            State.DONE,
        )
    )
    t = ClaudeTranscript(SID)
    s = ClaudeTranscript(SID, sidechain=True, agent_id="a1", start=t.now + 2)
    out.append(
        Scenario(
            "turn_duration saying no background agents closes stale sub-agent threads",
            [
                (MAIN, t.prompt("research")),
                (sub_spec("a1"), s.bash("grep -r foo", call_id="toolu_s1")),
                (MAIN, t.text("Done.")),
                (MAIN, t.turn_duration(pending_agents=0)),
            ],
            State.DONE,
        )
    )
    t = ClaudeTranscript(SID, version="1.0.98")
    side = ClaudeTranscript(SID, version="1.0.98", sidechain=True, start=t.now + 1)
    out.append(
        Scenario(
            "1.0.x inline sidechain: its pending tool is not the parent's approval",
            [
                (MAIN, t.prompt("research")),
                (MAIN, t.tool_use("Task", {"description": "look"}, "toolu_t")),
                (MAIN, side.prompt("look")),
                (MAIN, side.tool_use("AskUserQuestion", {"question": "?"}, "toolu_side")),
            ],
            State.RUNNING,
            detail="Task: look",
        )
    )
    return out


@pytest.mark.parametrize("scenario", scenarios(), ids=lambda s: s.name)
def test_claude_state(scenario: Scenario) -> None:
    state_table.check(scenario, decide(scenario))


def test_registry_waiting_without_tool_line_is_provisional() -> None:
    t = ClaudeTranscript(SID)
    got = decide(
        Scenario(
            "x",
            [(MAIN, t.prompt("go"))],
            State.INPUT_REQUIRED,
            registry=fusion.RegistryView("waiting", "permission prompt", None),
        )
    )
    assert got.provisional
    t = ClaudeTranscript(SID)
    got = decide(
        Scenario(
            "x",
            [(MAIN, t.prompt("go")), (MAIN, t.bash("ls"))],
            State.INPUT_REQUIRED,
            registry=fusion.RegistryView("waiting", "permission prompt", None),
        )
    )
    assert not got.provisional
