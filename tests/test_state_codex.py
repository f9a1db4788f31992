"""Codex: rollout lines (through the real adapter) + liveness -> state. Codex writes no approval
request and has no live registry, so the transcript and the process are all there is until
hooks arrive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import state_table
from codex_lines import CodexRollout
from state_table import Scenario

from agentbar.core.agents.codex import TRAITS as CODEX_TRAITS
from agentbar.core.agents.codex.rollout import CodexRolloutParser
from agentbar.core.model import Agent, SessionState, Source, State, WaitingFor
from agentbar.core.sources.base import StreamKind, StreamSpec

SID = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01"
SPEC = StreamSpec(
    Agent("codex"),
    StreamKind.TRANSCRIPT,
    Path(f"/h/.codex/sessions/2026/11/29/rollout-2026-11-29T10-00-00-{SID}.jsonl"),
    session_hint=SID,
)


def decide(scenario: Scenario) -> SessionState:
    return state_table.decide(scenario, CodexRolloutParser, CODEX_TRAITS)


def turn_start(r: CodexRollout, prompt: str = "do it", **context: str) -> list[dict[str, Any]]:
    return [r.meta(), r.context(**context), r.started(), r.prompt(prompt)]


def scenarios() -> list[Scenario]:
    out: list[Scenario] = []

    def add(name: str, build: Any, expect: State, **kw: Any) -> None:
        lines = [(SPEC, line) for line in build(CodexRollout(SID))]
        out.append(Scenario(name, lines, expect, **kw))

    add("a started task is running", turn_start, State.RUNNING, detail="working")
    add(
        "reasoning and commentary mid-turn stay running however quiet",
        lambda r: [*turn_start(r), r.reasoning("plan"), r.answer("Let me look.")],
        State.RUNNING,
        quiet=600,
    )
    add(
        "an ordinary pending command is running, with the command",
        lambda r: [*turn_start(r), r.exec("ls -la")],
        State.RUNNING,
        detail="ls -la",
    )
    add(
        "an escalated command under on-request waits for approval",
        lambda r: [*turn_start(r), r.exec("rm -rf dist", escalate=True)],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.APPROVAL,
        detail="rm -rf dist",
    )
    add(
        "an escalated command under never is not put to the user",
        lambda r: [*turn_start(r, policy="never"), r.exec("rm -rf dist", escalate=True)],
        State.RUNNING,
    )
    add(
        "apply_patch in a read-only sandbox waits for approval",
        lambda r: [
            *turn_start(r, sandbox="read-only"),
            r.item(
                {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "call_id": "p1",
                    "input": (
                        "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** End Patch"
                    ),
                }
            ),
        ],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.APPROVAL,
        detail="src/app.py",
    )
    add(
        "the approved command's output resumes the turn",
        lambda r: [*turn_start(r), r.exec("rm -rf dist", escalate=True), r.output()],
        State.RUNNING,
    )
    add(
        "request_user_input is a question",
        lambda r: [
            *turn_start(r),
            r.call(
                "request_user_input",
                {"questions": [{"id": "q", "header": "DB", "question": "Postgres or SQLite?"}]},
            ),
        ],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        detail="Postgres or SQLite?",
    )
    add(
        "task_complete is done, with the last message",
        lambda r: [
            *turn_start(r),
            r.answer("Added the page.", "final_answer"),
            r.complete("Added the page."),
        ],
        State.DONE,
        detail="Added the page.",
    )
    add(
        "task_complete whose message asks something is a question",
        lambda r: [*turn_start(r), r.complete("I can also add tests. Want me to?")],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        detail="Want me to?",
    )
    add(
        "task_complete with an error is failed",
        lambda r: [*turn_start(r), r.complete(None, error={"message": "stream disconnected"})],
        State.FAILED,
        detail="stream disconnected",
    )
    add(
        "turn_aborted (Escape) is failed",
        lambda r: [*turn_start(r), r.exec("sleep 100"), r.aborted("interrupted")],
        State.FAILED,
        detail="interrupted",
    )
    add(
        "turn_aborted: replaced by a new turn keeps running",
        lambda r: [*turn_start(r), r.aborted("replaced"), r.started(), r.prompt("instead")],
        State.RUNNING,
    )
    add(
        "a denied command that stops the turn is done, naming it",
        lambda r: [
            *turn_start(r),
            r.exec("rm -rf /", escalate=True),
            r.output(text="exec command rejected by user"),
            r.aborted("interrupted"),
        ],
        State.DONE,
        detail="stopped: you denied exec_command: rm -rf /",
    )
    add(
        "a denied command the model works around keeps running",
        lambda r: [
            *turn_start(r),
            r.exec("rm -rf /", escalate=True),
            r.output(text="exec command rejected by user"),
            r.reasoning("try something else"),
        ],
        State.RUNNING,
    )
    add(
        "an error event fails the turn",
        lambda r: [*turn_start(r), r.event("error", message="Quota exceeded")],
        State.FAILED,
        detail="Quota exceeded",
    )
    add(
        "a stream error being retried is running",
        lambda r: [*turn_start(r), r.event("stream_error", message="reconnecting 1/5")],
        State.RUNNING,
        detail="retrying after: reconnecting 1/5",
    )
    add(
        "a new task after a failure runs again",
        lambda r: [*turn_start(r), r.aborted(), r.started(), r.prompt("again")],
        State.RUNNING,
    )

    # Builds up to 0.99 write no task_started/task_complete: a turn ends when its last response
    # (answer text, no tool call) completes, shown by the token_count after that response's
    # output. The line orders below are the real ones of 0.58.0 and 0.99.0.
    def unmarked_start(r: CodexRollout, prompt: str = "do it") -> list[dict[str, Any]]:
        return [r.meta(), r.prompt(prompt), r.context(), r.event("token_count", info=None)]

    def said(r: CodexRollout, text: str) -> dict[str, Any]:
        return r.event("agent_message", message=text)

    add(
        "0.99: an answer then its response's token_count is done, with the answer",
        lambda r: [
            *unmarked_start(r),
            said(r, "The answer is 4."),
            r.answer("The answer is 4."),
            r.tokens(120, 0, 30),
        ],
        State.DONE,
        detail="The answer is 4.",
    )
    add(
        "0.58: the token_count after the answer's event, then the answer, is done",
        lambda r: [
            *unmarked_start(r),
            said(r, "The answer is 4."),
            r.tokens(120, 0, 30),
            r.answer("The answer is 4."),
        ],
        State.DONE,
        detail="The answer is 4.",
    )
    add(
        "0.99: an answer whose response has not completed is still running",
        lambda r: [*unmarked_start(r), said(r, "Let me look."), r.answer("Let me look.")],
        State.RUNNING,
        quiet=600,
    )
    add(
        "the token_count of a request starting (before any output) completes nothing",
        lambda r: [
            *unmarked_start(r),
            r.exec("ls"),
            r.tokens(120, 0, 30),
            r.output("call_1"),
            r.context(),
            r.tokens(120, 0, 30),
            r.answer("Looking at the files."),
        ],
        State.RUNNING,
        quiet=600,
    )
    add(
        "0.99: a response with text and a tool call is still running",
        lambda r: [
            *unmarked_start(r),
            r.answer("I will list the files."),
            r.exec("ls"),
            r.tokens(120, 0, 30),
        ],
        State.RUNNING,
        detail="ls",
    )
    add(
        "0.99: an approval wait in an unmarked turn",
        lambda r: [*unmarked_start(r), r.exec("touch x", escalate=True), r.tokens(120, 0, 30)],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.APPROVAL,
        detail="touch x",
    )
    add(
        "0.99: after the command, the final answer completing is done",
        lambda r: [
            *unmarked_start(r),
            r.exec("touch x", escalate=True),
            r.tokens(120, 0, 30),
            r.output("call_1"),
            r.context(),
            r.tokens(120, 0, 30),
            said(r, "Created x."),
            r.answer("Created x."),
            r.tokens(240, 0, 60),
        ],
        State.DONE,
        detail="Created x.",
    )
    add(
        "0.58: the command and its output land together, then the answer",
        lambda r: [
            *unmarked_start(r),
            r.tokens(120, 0, 30),
            r.exec("touch x", escalate=True),
            r.output("call_1"),
            r.context(),
            r.tokens(120, 0, 30),
            said(r, "Created x."),
            r.tokens(240, 0, 60),
            r.answer("Created x."),
        ],
        State.DONE,
        detail="Created x.",
    )
    add(
        "0.58 resumed: the running total starts again, the same numbers still complete",
        lambda r: [
            *unmarked_start(r),
            said(r, "First."),
            r.tokens(120, 0, 30),
            r.answer("First."),
            r.prompt("second"),
            r.context(),
            r.event("token_count", info=None),
            said(r, "Second."),
            r.tokens(120, 0, 30),
            r.answer("Second."),
        ],
        State.DONE,
        detail="Second.",
    )
    add(
        "an unmarked turn that ends on a question asks it",
        lambda r: [
            *unmarked_start(r),
            r.answer("Two ways.\n\nShould I use tabs or spaces?"),
            r.tokens(120, 0, 30),
        ],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        detail="Should I use tabs or spaces?",
    )
    add(
        "the next prompt after an inferred end runs again",
        lambda r: [
            *unmarked_start(r),
            r.answer("Done."),
            r.tokens(120, 0, 30),
            r.prompt("again"),
            r.context(),
            r.tokens(120, 0, 30),
        ],
        State.RUNNING,
    )
    add(
        "a turn opened by task_started waits for task_complete, whatever the token counts",
        lambda r: [*turn_start(r), r.answer("Let me look."), r.tokens(120, 0, 30)],
        State.RUNNING,
        quiet=600,
    )
    add(
        "request_user_input in Default mode is refused at once: not a question",
        lambda r: [
            r.meta(),
            r.context(mode="default"),
            r.started(),
            r.prompt("ask me"),
            r.call("request_user_input", {"questions": [{"id": "q", "question": "Tabs?"}]}),
        ],
        State.RUNNING,
    )
    add(
        "request_user_input in Plan mode is a question",
        lambda r: [
            r.meta(),
            r.context(mode="plan"),
            r.started(),
            r.prompt("ask me"),
            r.call("request_user_input", {"questions": [{"id": "q", "question": "Tabs?"}]}),
        ],
        State.INPUT_REQUIRED,
        waiting=WaitingFor.QUESTION,
        detail="Tabs?",
    )
    add(
        "the TUI gone is ended",
        lambda r: [*turn_start(r), r.exec("rm -rf dist", escalate=True)],
        State.ENDED,
        source=Source.PROCESS,
        alive=False,
    )
    add(
        "a session with no turn yet waits for a prompt",
        lambda r: [r.meta(), r.context()],
        State.DONE,
        detail="waiting for a prompt",
    )
    return out


@pytest.mark.parametrize("scenario", scenarios(), ids=lambda s: s.name)
def test_codex_state(scenario: Scenario) -> None:
    state_table.check(scenario, decide(scenario))


def test_usage_is_the_sum_of_the_responses_counts() -> None:
    from agentbar.core.facts import SessionFacts, fold

    r = CodexRollout(SID)
    parser = CodexRolloutParser(SPEC)
    facts = SessionFacts()
    for line in [r.meta(), r.tokens(1000, 800, 50), r.tokens(2500, 2000, 120)]:
        for record in parser.parse(orjson.dumps(line)):
            facts = fold(facts, record)
    usage = facts.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (500, 2000, 120)
