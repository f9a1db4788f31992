"""Codex CLI, for real: each pinned version's interactive TUI in a PTY against the scripted
model, driven like a person, and what ``agentbar watch --json`` reports about it.

A version that writes nothing agentbar could know a state from (see ``codex_rig.VERSIONS``,
``gaps``) is checked for not claiming that state, and the test ends as an expected failure
naming the gap; should agentbar ever report it, the test fails so the matrix gets updated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import psutil
import pytest
from cli_runner import agentbar
from codex_rig import GAP_APPROVAL, GAP_ERROR, VERSIONS, CodexRun, CodexVersion
from model_server import Reply, thinking
from rig_base import end_of_gaps, expect_gap, recorded, scenario_of

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

APPROVAL_PROMPT = "Would you like to run the following command?"
INTERRUPTED = "Conversation interrupted"


@pytest.fixture(params=VERSIONS, ids=lambda v: v.version)
def version(request: pytest.FixtureRequest) -> CodexVersion:
    return request.param


@pytest.fixture
def codex(rig: Rig, version: CodexVersion, request: pytest.FixtureRequest) -> Iterator[CodexRun]:
    yield from recorded(CodexRun(rig, version, scenario_of(request)), request)


# -- 1. a plain question and answer ------------------------------------------------------------


def test_answer(codex: CodexRun, record_delay: Any) -> None:
    codex.rig.server.script.add(thinking(Reply.text("The answer is 4.")))
    codex.start()
    mark = codex.submit("what is 2+2")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    screen = codex.term.wait_for("The answer is 4.")
    done = codex.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "The answer is 4."
    assert done.at > running.at
    codex.delay(record_delay, "answer on screen -> done", screen, done)
    codex.recorder.mark("answer on screen", "done", detail="The answer is 4.")
    assert {s.event["session_id"] for s in codex.watch.events()} == {sid}
    # Nothing else was said about it: no "done" while the turn was starting (a rollout made at
    # start-up does wait for the prompt, and says so if the prompt takes a moment).
    states = [(s.event["state"], s.event["detail"]) for s in codex.watch.events(sid)]
    if codex.version.rollout_at_start and states[0] == ("done", "waiting for a prompt"):
        states = states[1:]
    assert [state for state, _ in states] == ["running", "done"], states
    # The tools this version offers the model are the ones codex_rig says it has.
    offered = [t.get("name") for t in codex.rig.server.main_requests()[0].body["tools"]]
    assert codex.version.shell_tool in offered, offered
    assert ("request_user_input" in offered) == codex.version.question_tool, offered


# -- 2. a command that needs approval ----------------------------------------------------------


def approval_turn(codex: CodexRun, record_delay: Any) -> tuple[str, int]:
    """Up to the approval prompt on screen; returns the session and the watch position."""
    v = codex.version
    codex.rig.server.script.add(
        thinking(v.command("touch made.txt", "create the file")), Reply.text("Created made.txt.")
    )
    codex.start("-a", "on-request", "-s", "read-only")
    mark = codex.submit("make a file called made.txt")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    offered = [t.get("name") for t in codex.rig.server.wait_main_requests(1)[0].body["tools"]]
    assert v.shell_tool in offered, offered  # the version's shell tool, as codex_rig says
    screen = codex.term.wait_for(APPROVAL_PROMPT)
    assert "touch made.txt" in codex.term.text()
    if GAP_APPROVAL in v.gaps:
        expect_gap(codex, GAP_APPROVAL, "input_required", after=mark, sid=sid)
        codex.recorder.mark("approval prompt on screen", "running", gap=GAP_APPROVAL)
        return sid, codex.watch.count()
    asked = codex.wait("input_required", after=mark, waiting_for="approval", sid=sid)
    assert "touch made.txt" in asked.event["detail"]
    codex.delay(record_delay, "approval prompt on screen -> input_required", screen, asked)
    codex.recorder.mark(
        "approval prompt on screen",
        "input_required",
        waiting_for="approval",
        detail="touch made.txt",
    )
    return sid, codex.watch.count()


def test_approve(codex: CodexRun, record_delay: Any) -> None:
    sid, mark = approval_turn(codex, record_delay)
    codex.term.type("y")
    screen = codex.term.wait_for("You approved")
    if GAP_APPROVAL not in codex.version.gaps:  # (otherwise it never stopped running)
        running = codex.wait("running", after=mark, sid=sid)
        codex.delay(record_delay, "approved on screen -> running", screen, running)
    screen = codex.term.wait_for("Created made.txt.")
    done = codex.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Created made.txt."
    codex.delay(record_delay, "answer on screen -> done", screen, done)
    assert (codex.rig.project / "made.txt").exists()
    codex.recorder.mark("answer after the command", "done", detail="Created made.txt.")
    end_of_gaps(codex)


def test_deny(codex: CodexRun, record_delay: Any) -> None:
    sid, mark = approval_turn(codex, record_delay)
    codex.term.press("escape")  # the menu's "No, and tell Codex what to do differently (esc)"
    screen = codex.term.wait_for(INTERRUPTED)
    settled = codex.watch.wait_for(
        lambda e: e["session_id"] == sid and e["state"] in ("done", "failed"), after=mark
    )
    # Codex stops the turn ("Conversation interrupted"); agentbar names the refusal.
    assert settled.event["state"] == "done"
    assert settled.event["detail"].startswith("stopped: you denied")
    assert "touch made.txt" in settled.event["detail"]
    codex.delay(record_delay, "denied on screen -> done", screen, settled)
    assert codex.latest(sid)["state"] != "input_required"
    assert not (codex.rig.project / "made.txt").exists()
    codex.recorder.mark(
        "denied, turn interrupted", settled.event["state"], detail="stopped: you denied"
    )
    end_of_gaps(codex)


# -- 3. a turn that ends with a question -------------------------------------------------------


def test_question(codex: CodexRun, record_delay: Any) -> None:
    codex.rig.server.script.add(
        thinking(Reply.text("I can do that two ways.\n\nShould I use tabs or spaces?"))
    )
    codex.start()
    mark = codex.submit("format the file")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    screen = codex.term.wait_for("Should I use tabs or spaces?")
    asked = codex.wait("input_required", after=mark, waiting_for="question", sid=sid)
    assert asked.event["detail"] == "Should I use tabs or spaces?"
    codex.delay(record_delay, "question on screen -> input_required", screen, asked)
    codex.recorder.mark(
        "question on screen",
        "input_required",
        waiting_for="question",
        detail="Should I use tabs or spaces?",
    )


@pytest.mark.parametrize(
    "version", [v for v in VERSIONS if v.question_tool], ids=lambda v: v.version, indirect=True
)
def test_request_user_input(codex: CodexRun, record_delay: Any) -> None:
    question = "Which indentation style do you want?"
    codex.rig.server.script.add(
        thinking(
            Reply.tool(
                "request_user_input",
                {
                    "questions": [
                        {
                            "id": "style",
                            "header": "Style",
                            "question": question,
                            "options": [
                                {"label": "Tabs (Recommended)", "description": "Use tabs."},
                                {"label": "Spaces", "description": "Use spaces."},
                            ],
                        }
                    ]
                },
            )
        ),
        Reply.text("Using tabs."),
    )
    codex.start()
    mark = codex.submit_in_plan_mode("ask me which style")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    screen = codex.term.wait_for("enter to submit answer")
    asked = codex.wait("input_required", after=mark, waiting_for="question", sid=sid)
    assert asked.event["detail"] == question
    codex.delay(record_delay, "question tool on screen -> input_required", screen, asked)
    codex.recorder.mark("question tool on screen", "input_required", waiting_for="question",
                        detail=question)  # fmt: skip
    mark = codex.watch.count()
    codex.term.press("enter")  # the recommended first option
    screen = codex.term.wait_for("Using tabs.")
    done = codex.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Using tabs."
    codex.delay(record_delay, "answer on screen -> done", screen, done)
    codex.recorder.mark("answered, answer on screen", "done", detail="Using tabs.")


# -- 4. an interrupted turn and a model error --------------------------------------------------


def test_interrupt(codex: CodexRun, record_delay: Any) -> None:
    codex.rig.server.script.add(Reply.text("Too late.", delay=30))
    codex.start()
    mark = codex.submit("take your time")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    codex.term.wait_for("esc to interrupt")
    codex.recorder.mark("working on screen", "running")
    codex.term.press("escape")
    screen = codex.term.wait_for(INTERRUPTED)
    failed = codex.wait("failed", after=mark, sid=sid)
    assert failed.event["detail"] == "interrupted"
    codex.delay(record_delay, "interrupted on screen -> failed", screen, failed)
    codex.recorder.mark("interrupted on screen", "failed", detail="interrupted")


def test_model_error(codex: CodexRun, record_delay: Any) -> None:
    codex.rig.server.script.add(thinking(Reply.failure(400, "The model rejected this request.")))
    codex.start()
    mark = codex.submit("say something")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    screen = codex.term.wait_for("The model rejected this request.")
    if GAP_ERROR in codex.version.gaps:
        expect_gap(codex, GAP_ERROR, "failed", after=mark, sid=sid)
        codex.recorder.mark("error on screen", "running", gap=GAP_ERROR)
    else:
        failed = codex.wait("failed", after=mark, sid=sid)
        assert "The model rejected this request." in failed.event["detail"]
        codex.delay(record_delay, "error on screen -> failed", screen, failed)
        codex.recorder.mark("error on screen", "failed", detail="The model rejected")
    # The person carries on: the next turn is reported as usual.
    codex.rig.server.script.add(Reply.text("Back again."))
    mark = codex.submit("try again")
    codex.term.wait_for("Back again.")
    done = codex.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Back again."
    codex.recorder.mark("next answer on screen", "done", detail="Back again.")
    end_of_gaps(codex)


# -- 5. the agent exits ------------------------------------------------------------------------


def test_exit(codex: CodexRun, record_delay: Any) -> None:
    codex.rig.server.script.add(thinking(Reply.text("Bye for now.")))
    codex.start()
    mark = codex.submit("say bye")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    codex.term.wait_for("Bye for now.")
    codex.wait("done", after=mark, sid=sid)
    codex.recorder.mark("answer on screen", "done", detail="Bye for now.")
    transcript = codex.latest(sid)
    mark = codex.watch.count()
    gone_at = codex.quit()
    ended = codex.wait("ended", after=mark, sid=sid)
    codex.delay(record_delay, "TUI exited -> ended", gone_at, ended)
    if codex.version.daemon:
        # The daemon still holds the rollout open: "someone has the file open" is not liveness.
        daemons = codex.daemons()
        assert daemons, "Codex's app-server daemon should outlive the TUI"
        rollout = next(iter(_rollouts(codex)))
        holders = [d for d in daemons if _holds_open(d, str(rollout))]
        assert holders, f"no daemon holds {rollout} open (did Codex change?)"
    codex.recorder.mark("TUI exited", "ended")
    assert transcript["state"] == "done"
    # A separate `agentbar status` (a private copy of the index) agrees.
    assert [(s["session_id"], s["state"]) for s in _status(codex)] == [(sid, "ended")]
    for daemon in codex.daemons():
        daemon.kill()


def _rollouts(codex: CodexRun) -> list[Any]:
    return sorted((codex.codex_home / "sessions").glob("**/rollout-*.jsonl"))


def _holds_open(proc: psutil.Process, path: str) -> bool:
    try:
        return any(f.path == path for f in proc.open_files())
    except psutil.Error:
        return False


# -- 6. resume ---------------------------------------------------------------------------------


def test_resume(codex: CodexRun, record_delay: Any) -> None:
    first, second = thinking(Reply.text("First answer.")), thinking(Reply.text("Second answer."))
    codex.rig.server.script.add(first, second)
    codex.start()
    mark = codex.submit("first prompt")
    running = codex.wait("running", after=mark)
    sid, mark = running.event["session_id"], codex.after(running)
    codex.term.wait_for("First answer.")
    codex.wait("done", after=mark, sid=sid)
    codex.recorder.mark("first answer on screen", "done", detail="First answer.")
    mark = codex.watch.count()
    codex.quit()
    codex.wait("ended", after=mark, sid=sid)
    codex.recorder.mark("first TUI exited", "ended")

    mark = codex.watch.count()
    screen = codex.start("resume", sid)
    codex.term.wait_for("First answer.")  # the resumed history is on screen
    back = codex.watch.wait_for(
        lambda e: e["session_id"] == sid and e["state"] != "ended", after=mark
    )
    assert back.event["state"] == "done" and back.event["detail"] == "First answer."
    codex.delay(record_delay, "resumed TUI ready -> back to life", screen, back)
    codex.recorder.mark("resumed, ready", "done", detail="First answer.")

    mark = codex.submit("second prompt")
    codex.wait("running", after=mark, sid=sid)
    screen = codex.term.wait_for("Second answer.")
    done = codex.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Second answer."
    codex.delay(record_delay, "answer on screen -> done", screen, done)
    codex.recorder.mark("second answer on screen", "done", detail="Second answer.")

    # One session, not a resumed copy next to an ended original.
    assert {s.event["session_id"] for s in codex.watch.events()} == {sid}
    sessions = _status(codex)
    assert [(s["session_id"], s["state"]) for s in sessions] == [(sid, "done")]
    assert sessions[0]["detail"] == "Second answer."


def _status(codex: CodexRun) -> list[dict[str, Any]]:
    out = agentbar(codex.rig.env, "status", "--json", "--all", check=True)
    return [s for s in json.loads(out.stdout)["sessions"] if s["agent"] == "codex"]
