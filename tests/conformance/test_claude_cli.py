"""Claude Code, for real: each pinned version's interactive TUI in a PTY against the scripted
model, driven like a person, and what ``agentbar watch --json`` reports about it.

A version that writes nothing agentbar could know a state from (see ``claude_rig.VERSIONS``,
``gaps``) is checked for not claiming that state, and the test ends as an expected failure
naming the gap; should agentbar ever report it, the test fails so the matrix gets updated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
import rig_base
from claude_rig import (
    APPROVAL_PROMPT,
    GAP_APPROVAL,
    VERSIONS,
    ClaudeRun,
    ClaudeVersion,
    bash,
)
from cli_runner import agentbar
from model_server import Reply, thinking
from rig_base import expect_gap, recorded, scenario_of
from watch_events import Seen

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

# 1.0.x and 2.0.x mark a turn's end only by stop_reason on its last line, and sometimes write
# that line before the stream's stop_reason has arrived: then "done" comes from 15 s of quiet.
DONE_TIMEOUT = 45.0
INTERRUPTED = "Interrupted"
SLOWER_THAN_ANY_WAIT = 120.0  # seconds; every wait in these tests gives up sooner


@pytest.fixture(params=VERSIONS, ids=lambda v: v.version)
def version(request: pytest.FixtureRequest) -> ClaudeVersion:
    return request.param


@pytest.fixture
def claude(rig: Rig, version: ClaudeVersion, request: pytest.FixtureRequest) -> Iterator[ClaudeRun]:
    yield from recorded(ClaudeRun(rig, version, scenario_of(request)), request)


def end_of_gaps(run: ClaudeRun) -> None:
    rig_base.end_of_gaps(run, note=" without hooks (test_hooks_cli.py: with them it does)")


def sequence(run: ClaudeRun, sid: str, after: int, until: Seen) -> list[str]:
    """The states reported for ``sid`` from watch position ``after`` up to ``until``."""
    states = []
    for seen in run.watch.events()[after:]:
        if seen.event["session_id"] == sid:
            states.append(seen.event["state"])
        if seen is until:
            break
    return states


# -- 1. a plain question and answer ------------------------------------------------------------


def test_answer(claude: ClaudeRun, record_delay: Any) -> None:
    # The model takes a moment, as models do: long enough for "running" to be on disk first.
    reply = Reply.text("Let me check.\nThe answer is 4.", delay=1.5)
    sid, mark = claude.first_turn("what is 2+2?", reply)
    claude.recorder.mark("working", "running", sid=sid)
    screen = claude.term.wait_for("The answer is 4.")
    done = claude.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    assert done.event["detail"] == "The answer is 4."
    assert sequence(claude, sid, mark, done) == ["running", "done"]
    claude.delay(record_delay, "answer on screen -> done", screen, done)
    claude.recorder.mark("answer on screen", "done", detail="The answer is 4.", sid=sid)
    # One session: sub-agent warm-ups (2.0.x) and bookkeeping files are not sessions.
    assert {s.event["session_id"] for s in claude.watch.events()} == {sid}


# -- 2. a command that needs approval ----------------------------------------------------------


def approval_turn(
    claude: ClaudeRun, record_delay: Any, command: str, then: Reply
) -> tuple[str, int]:
    """Up to the permission prompt on screen; returns the session and the watch position."""
    v = claude.version
    sid, mark = claude.first_turn(f"run {command}", bash(command, "Create the file"), then)
    screen = claude.term.wait_for(APPROVAL_PROMPT)
    assert command in claude.term.text()
    if GAP_APPROVAL in v.gaps:
        # All the files show is a pending call: agentbar says it runs, and what it runs.
        expect_gap(claude, GAP_APPROVAL, "input_required", after=mark, sid=sid)
        now = _status(claude)
        assert [(s["state"], s["detail"]) for s in now] == [("running", f"Bash: {command}")]
        claude.recorder.mark(
            "permission prompt on screen", "running", detail=command, sid=sid, gap=GAP_APPROVAL
        )
        return sid, claude.watch.count()
    asked = claude.wait("input_required", after=mark, waiting_for="approval", sid=sid)
    assert asked.event["detail"] == f"Bash: {command}"
    claude.delay(record_delay, "permission prompt on screen -> input_required", screen, asked)
    claude.recorder.mark(
        "permission prompt on screen",
        "input_required",
        waiting_for="approval",
        detail=f"Bash: {command}",
        sid=sid,
    )
    return sid, claude.watch.count()


def test_approve(claude: ClaudeRun, record_delay: Any) -> None:
    then = Reply.text("Created approved.txt.\nAll done.", delay=1.0)
    sid, mark = approval_turn(claude, record_delay, "touch approved.txt", then)
    claude.read_screen()
    claude.term.press("enter")  # "1. Yes"
    if GAP_APPROVAL not in claude.version.gaps:
        running = claude.wait("running", after=mark, sid=sid)
        claude.recorder.mark("approved, command ran", "running", sid=sid)
        assert running.event["detail"] != ""
    screen = claude.term.wait_for("All done.")
    done = claude.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    assert done.event["detail"] == "All done."
    claude.delay(record_delay, "answer on screen -> done", screen, done)
    assert (claude.rig.project / "approved.txt").exists()
    claude.recorder.mark("answer after the command", "done", detail="All done.", sid=sid)
    end_of_gaps(claude)


def test_deny(claude: ClaudeRun, record_delay: Any) -> None:
    then = Reply.text("Understood, I will not.")  # never asked for: Claude stops the turn
    sid, _ = approval_turn(claude, record_delay, "touch denied.txt", then)
    screen, settled = claude.deny(sid, "touch denied.txt")
    claude.delay(record_delay, "denied on screen -> done", screen, settled)
    claude.recorder.mark(
        "denied, turn stopped", "done", detail="stopped: you denied Bash: touch denied.txt",
        sid=sid,
    )  # fmt: skip
    end_of_gaps(claude)


# -- 3. a turn that ends with a question -------------------------------------------------------


def test_question(claude: ClaudeRun, record_delay: Any) -> None:
    reply = Reply.text("I can do that two ways.\n\nShould I use Python or Rust?", delay=1.0)
    sid, mark = claude.first_turn("write me a tool", reply)
    screen = claude.term.wait_for("Should I use Python or Rust?")
    asked = claude.wait("input_required", after=mark, waiting_for="question", sid=sid,
                        timeout=DONE_TIMEOUT)  # fmt: skip
    assert asked.event["detail"] == "Should I use Python or Rust?"
    assert sequence(claude, sid, mark, asked) == ["running", "input_required"]
    claude.delay(record_delay, "question on screen -> input_required", screen, asked)
    claude.recorder.mark(
        "question on screen",
        "input_required",
        waiting_for="question",
        detail="Should I use Python or Rust?",
        sid=sid,
    )


@pytest.mark.parametrize(
    "version", [v for v in VERSIONS if v.ask_tool], ids=lambda v: v.version, indirect=True
)
def test_ask_tool(claude: ClaudeRun, record_delay: Any) -> None:
    question = "Which color should the file be?"
    ask = thinking(
        Reply.tool(
            "AskUserQuestion",
            {
                "questions": [
                    {
                        "question": question,
                        "header": "Color",
                        "options": [
                            {"label": "Red", "description": "warm"},
                            {"label": "Blue", "description": "cool"},
                        ],
                        "multiSelect": False,
                    }
                ]
            },
        )
    )
    sid, mark = claude.first_turn("pick a color", ask, Reply.text("Blue it is.\nDone.", delay=1.0))
    assert "AskUserQuestion" in claude.tools_offered()
    screen = claude.term.wait_for(question)
    asked = claude.wait("input_required", after=mark, waiting_for="question", sid=sid)
    assert asked.event["detail"] == question
    claude.delay(record_delay, "question tool on screen -> input_required", screen, asked)
    claude.recorder.mark(
        "question tool on screen", "input_required", waiting_for="question", detail=question,
        sid=sid,
    )  # fmt: skip
    mark = claude.watch.count()
    claude.read_screen()
    claude.term.press("down")
    claude.term.wait_for("❯ 2. Blue")
    claude.read_screen()
    claude.term.press("enter")
    running = claude.wait("running", after=mark, sid=sid)
    assert running.event["detail"] != ""
    screen = claude.term.wait_for("Blue it is.")
    done = claude.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    assert done.event["detail"] == "Done."
    claude.delay(record_delay, "answer on screen -> done", screen, done)
    claude.recorder.mark("answered, answer on screen", "done", detail="Done.", sid=sid)


# -- 4. an interrupted turn and a model error --------------------------------------------------


def test_interrupt(claude: ClaudeRun, record_delay: Any) -> None:
    prompt = "take your time"
    # The answer never comes within the test: an Escape the TUI dropped fails plainly.
    sid, mark = claude.first_turn(prompt, Reply.text("Too late.", delay=SLOWER_THAN_ANY_WAIT))
    running = claude.wait("running", after=mark, sid=sid)
    claude.term.wait_for("esc to interrupt")
    claude.recorder.mark("working on screen", "running", sid=sid)
    claude.term.press("escape")
    if claude.version.interrupted == "failed":
        screen = claude.term.wait_for(INTERRUPTED)
    else:
        # 2.1.3xx takes the turn back: the prompt returns to the input box, nothing is written.
        # It may redraw that in two frames (first the idle footer over an empty input box,
        # then the prompt put back), so wait for the whole picture, not the spinner's end.
        screen = claude.wait_screen(lambda text: taken_back(text, prompt))
    # What agentbar said after this turn ran: a state from before the prompt (the TUI's
    # start-up, reported late on a loaded machine) is not the interrupt's.
    settled = claude.watch.wait_for(
        lambda e: e["session_id"] == sid and e["state"] != "running", after=claude.after(running)
    )
    expected = claude.version.interrupted
    detail = "interrupted" if expected == "failed" else "turn finished"
    assert (settled.event["state"], settled.event["detail"]) == (expected, detail)
    claude.delay(record_delay, f"interrupted on screen -> {expected}", screen, settled)
    claude.recorder.mark("interrupted on screen", expected, detail=detail, sid=sid)


def taken_back(screen: str, prompt: str) -> bool:
    """2.1.3xx after an Escape before any output: no spinner, and the prompt back in the input
    box (the line between the box's two rules, above the footer)."""
    return "esc to interrupt" not in screen and prompt in screen.rstrip().splitlines()[-3]


def test_model_error(claude: ClaudeRun, record_delay: Any) -> None:
    # CLAUDE_CODE_MAX_RETRIES=1: the request, a retry; 1.0.x/2.0.x also retry once with a
    # smaller max_tokens. Every one of them fails.
    failure = thinking(Reply.failure(500, "The scripted model is broken."))
    sid, mark = claude.first_turn("say something", *[failure] * 6)
    screen = claude.term.wait_for("API Error: 500")
    failed = claude.wait("failed", after=mark, sid=sid)
    assert "API Error: 500" in failed.event["detail"]
    assert "The scripted model is broken." in failed.event["detail"]
    claude.delay(record_delay, "error on screen -> failed", screen, failed)
    claude.recorder.mark("error on screen", "failed", detail="API Error: 500", sid=sid)
    # The person carries on: the next turn is reported as usual.
    claude.rig.server.script.replies.clear()
    claude.rig.server.script.add(Reply.text("Back again.", delay=1.0))
    mark = claude.submit("try again")
    claude.wait("running", after=mark, sid=sid)
    screen = claude.term.wait_for("Back again.")
    done = claude.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    assert done.event["detail"] == "Back again."
    claude.recorder.mark("next answer on screen", "done", detail="Back again.", sid=sid)


# -- 5. the agent exits ------------------------------------------------------------------------


def test_exit(claude: ClaudeRun, record_delay: Any) -> None:
    sid, mark = claude.first_turn("say bye", Reply.text("Bye for now.", delay=1.0))
    claude.term.wait_for("Bye for now.")
    claude.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    claude.recorder.mark("answer on screen", "done", detail="Bye for now.", sid=sid)
    mark = claude.watch.count()
    gone_at = claude.exit()
    ended = claude.wait("ended", after=mark, sid=sid)
    claude.delay(record_delay, "process exited -> ended", gone_at, ended)
    claude.recorder.mark("exited", "ended", sid=sid)


# -- 6. resume ---------------------------------------------------------------------------------


def test_resume(claude: ClaudeRun, record_delay: Any) -> None:
    first, second = Reply.text("First answer.", delay=1.0), Reply.text("Second answer.", delay=1.0)
    sid, mark = claude.first_turn("first prompt", first, second)
    claude.term.wait_for("First answer.")
    claude.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    claude.recorder.mark("first answer on screen", "done", detail="First answer.", sid=sid)
    mark = claude.watch.count()
    claude.exit()
    claude.wait("ended", after=mark, sid=sid)
    claude.recorder.mark("first process exited", "ended", sid=sid)

    mark = claude.watch.count()
    claude.start("--resume", sid)
    claude.term.wait_for("First answer.")  # the resumed history is on screen
    if not claude.version.gaps:
        mark = claude.submit("/status")
        # The CLI itself calls it the same session.
        claude.term.wait_for(re.compile(rf"Session ID:\s+{sid}"))
        # 2.1.3xx's registry says it waits while the panel is open: for an answer, not a yes.
        panel = claude.wait("input_required", after=mark, sid=sid)
        assert (panel.event["waiting_for"], panel.event["detail"]) == ("question", "dialog open")
        claude.read_screen()
        claude.term.press("escape")
        claude.wait_screen(lambda text: "Session ID:" not in text)
    # Claude 2.0.x warms its caches as it starts, in a sub-agent of its own ("Warmup"): the
    # session shows running until that answer is in. Sent during it, the prompt's own "running"
    # would be no change, and so not reported.
    claude.wait_quiet(sid)
    mark = claude.submit("second prompt")
    running = claude.wait("running", after=mark, sid=sid)
    screen = claude.term.wait_for("Second answer.")
    done = claude.wait("done", after=claude.after(running), sid=sid, timeout=DONE_TIMEOUT)
    assert done.event["detail"] == "Second answer.", "\n".join(map(str, claude.states()))
    claude.delay(record_delay, "answer on screen -> done (resumed)", screen, done)
    claude.recorder.mark("second answer on screen", "done", detail="Second answer.", sid=sid)

    # One session, not a resumed copy next to an ended original.
    assert {s.event["session_id"] for s in claude.watch.events()} == {sid}
    sessions = _status(claude)
    assert [(s["session_id"], s["state"], s["detail"]) for s in sessions] == [
        (sid, "done", "Second answer.")
    ]
    assert sessions[0]["pid"] == claude.pid()


def _status(claude: ClaudeRun) -> list[dict[str, Any]]:
    out = agentbar(claude.rig.env, "status", "--json", "--all", check=True)
    return [s for s in json.loads(out.stdout)["sessions"] if s["agent"] == "claude"]
