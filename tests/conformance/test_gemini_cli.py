"""Gemini CLI, for real: each pinned version's interactive TUI in a PTY against the scripted
model (the Gemini API on 127.0.0.1), driven like a person, and what ``agentbar watch --json``
reports about it.

A version that writes nothing agentbar could know a state from (``gemini_rig.VERSIONS``,
``gaps``) is checked for not claiming that state, and the test ends as an expected failure
naming the gap; should agentbar ever report it, the test fails so the matrix gets updated.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from agent_terminal import ScreenTimeout
from cli_runner import agentbar
from gemini_rig import (
    APPROVAL_PROMPT,
    CANCELLED,
    GAP_APPROVAL,
    GAP_QUESTION_TOOL,
    QUESTION_HINT,
    VERSIONS,
    GeminiRun,
    GeminiVersion,
)
from model_server import Reply, thinking
from rig_base import end_of_gaps, expect_gap, recorded, scenario_of

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance


@pytest.fixture(params=VERSIONS, ids=lambda v: v.version)
def version(request: pytest.FixtureRequest) -> GeminiVersion:
    return request.param


@pytest.fixture
def gemini(rig: Rig, version: GeminiVersion, request: pytest.FixtureRequest) -> Iterator[GeminiRun]:
    yield from recorded(GeminiRun(rig, version, scenario_of(request)), request)


def first_turn(gemini: GeminiRun, prompt: str) -> tuple[str, int]:
    """Send the first prompt; returns the session and the watch position after its running."""
    mark = gemini.submit(prompt)
    running = gemini.wait("running", after=mark)
    return running.event["session_id"], gemini.after(running)


# -- 1. a plain question and answer ------------------------------------------------------------


def test_answer(gemini: GeminiRun, record_delay: Any) -> None:
    gemini.rig.server.script.add(thinking(Reply.text("The answer is 4.")))
    gemini.start()
    sid, mark = first_turn(gemini, "what is 2+2")
    screen = gemini.term.wait_for("The answer is 4.")
    done = gemini.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "The answer is 4."
    gemini.delay(record_delay, "answer on screen -> done", screen, done)
    gemini.recorder.mark("answer on screen", "done", detail="The answer is 4.")
    assert {s.event["session_id"] for s in gemini.watch.events()} == {sid}
    # Nothing else was said about it: the chat is created when the TUI starts (metadata only),
    # which reads as waiting for a prompt; then the turn.
    states = [(s.event["state"], s.event["detail"]) for s in gemini.watch.events(sid)]
    if states[0] == ("done", "waiting for a prompt"):
        states = states[1:]
    assert [state for state, _ in states] == ["running", "done"], states
    # The chat is where gemini_rig says it is, in the format it says.
    (chat,) = gemini.chats()
    assert chat.suffix == (".json" if gemini.version.legacy_json else ".jsonl")
    # The model was offered the tools the scenarios below use.
    offered = [
        d.get("name")
        for tools in gemini.rig.server.main_requests()[0].body["tools"]
        for d in tools.get("functionDeclarations", [])
    ]
    assert "run_shell_command" in offered and "ask_user" in offered, offered


# -- 2. a command that needs approval ----------------------------------------------------------


def approval_turn(gemini: GeminiRun, record_delay: Any, filename: str) -> tuple[str, int]:
    """Up to the approval prompt on screen; returns the session and the watch position."""
    gemini.rig.server.script.add(
        thinking(
            Reply.tool(
                "run_shell_command",
                {"command": f"touch {filename}", "description": "create the file"},
            )
        ),
        Reply.text(f"Created {filename}."),
    )
    gemini.start()
    sid, mark = first_turn(gemini, f"make a file called {filename}")
    screen = gemini.term.wait_for(APPROVAL_PROMPT)
    assert f"touch {filename}" in gemini.term.text()
    if GAP_APPROVAL in gemini.version.gaps:
        expect_gap(gemini, GAP_APPROVAL, "input_required", after=mark, sid=sid)
        assert gemini.latest(sid)["state"] == "running"
        gemini.recorder.mark("approval prompt on screen", "running", gap=GAP_APPROVAL)
        return sid, gemini.watch.count()
    asked = gemini.wait("input_required", after=mark, waiting_for="approval", sid=sid)
    gemini.delay(record_delay, "approval prompt on screen -> input_required", screen, asked)
    gemini.recorder.mark(
        "approval prompt on screen",
        "input_required",
        waiting_for="approval",
        detail=f"touch {filename}",
    )
    return sid, gemini.watch.count()


def test_approve(gemini: GeminiRun, record_delay: Any) -> None:
    sid, mark = approval_turn(gemini, record_delay, "made.txt")
    gemini.term.press("enter")  # "1. Allow once"
    screen = gemini.term.wait_for("Created made.txt.")
    done = gemini.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Created made.txt."
    gemini.delay(record_delay, "answer on screen -> done", screen, done)
    assert (gemini.rig.project / "made.txt").exists()
    gemini.recorder.mark("answer after the command", "done", detail="Created made.txt.")
    end_of_gaps(gemini)


def test_deny(gemini: GeminiRun, record_delay: Any) -> None:
    sid, mark = approval_turn(gemini, record_delay, "denied.txt")
    gemini.term.press("escape")  # "3. No, suggest changes (esc)"
    screen = gemini.term.wait_for(CANCELLED)
    settled = gemini.watch.wait_for(
        lambda e: e["session_id"] == sid and e["state"] in ("done", "failed"), after=mark
    )
    # Gemini CLI stops the turn ("Request cancelled."); agentbar names the refusal.
    assert settled.event["state"] == "done", settled.event
    assert settled.event["detail"].startswith("stopped: you denied"), settled.event
    assert "touch denied.txt" in settled.event["detail"]
    gemini.delay(record_delay, "denied on screen -> done", screen, settled)
    assert not (gemini.rig.project / "denied.txt").exists()
    gemini.recorder.mark("denied, turn cancelled", "done", detail="stopped: you denied")
    end_of_gaps(gemini)


# -- 3. a turn that ends with a question -------------------------------------------------------


def test_question(gemini: GeminiRun, record_delay: Any) -> None:
    gemini.rig.server.script.add(
        thinking(Reply.text("I can do that two ways.\n\nShould I use tabs or spaces?"))
    )
    gemini.start()
    sid, mark = first_turn(gemini, "format the file")
    screen = gemini.term.wait_for("Should I use tabs or spaces?")
    asked = gemini.wait("input_required", after=mark, waiting_for="question", sid=sid)
    assert asked.event["detail"] == "Should I use tabs or spaces?"
    gemini.delay(record_delay, "question on screen -> input_required", screen, asked)
    gemini.recorder.mark(
        "question on screen",
        "input_required",
        waiting_for="question",
        detail="Should I use tabs or spaces?",
    )


def test_ask_user(gemini: GeminiRun, record_delay: Any) -> None:
    question = "Which indentation style do you want?"
    gemini.rig.server.script.add(
        thinking(
            Reply.tool(
                "ask_user",
                {
                    "questions": [
                        {
                            "question": question,
                            "header": "Style",
                            "type": "choice",
                            "options": [
                                {"label": "Tabs", "description": "Use tabs."},
                                {"label": "Spaces", "description": "Use spaces."},
                            ],
                        }
                    ]
                },
            )
        ),
        Reply.text("Using tabs."),
    )
    gemini.start()
    sid, mark = first_turn(gemini, "ask me which style")
    gemini.term.wait_for(QUESTION_HINT)
    assert question in gemini.term.text()
    expect_gap(gemini, GAP_QUESTION_TOOL, "input_required", after=mark, sid=sid)
    gemini.recorder.mark("question tool on screen", "running", gap=GAP_QUESTION_TOOL)
    mark = gemini.watch.count()
    # The first option. 0.38 ignores an Enter that comes right as the dialog appears: like a
    # person, press again when nothing happened.
    for _ in range(3):
        gemini.term.press("enter")
        try:
            screen = gemini.term.wait_for("Using tabs.", timeout=5)
            break
        except ScreenTimeout:
            continue
    else:
        raise AssertionError(f"the answer never came; screen:\n{gemini.term.text()}")
    done = gemini.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Using tabs."
    gemini.delay(record_delay, "answer on screen -> done", screen, done)
    gemini.recorder.mark("answered, answer on screen", "done", detail="Using tabs.")
    end_of_gaps(gemini)


# -- 4. an interrupted turn and a model error --------------------------------------------------


def test_interrupt(gemini: GeminiRun, record_delay: Any) -> None:
    gemini.rig.server.script.add(Reply.text("Too late.", delay=120))
    gemini.start()
    sid, mark = first_turn(gemini, "take your time")
    gemini.term.wait_for("esc to cancel")
    gemini.recorder.mark("working on screen", "running")
    gemini.term.press("escape")
    screen = gemini.term.wait_for(CANCELLED)
    failed = gemini.wait("failed", after=mark, sid=sid)
    assert failed.event["detail"] == "interrupted"
    gemini.delay(record_delay, "interrupted on screen -> failed", screen, failed)
    gemini.recorder.mark("interrupted on screen", "failed", detail="interrupted")


def test_model_error(gemini: GeminiRun, record_delay: Any) -> None:
    gemini.rig.server.script.add(thinking(Reply.failure(400, "The model rejected this request.")))
    gemini.start()
    sid, mark = first_turn(gemini, "say something")
    screen = gemini.term.wait_for("The model rejected this request.")
    failed = gemini.wait("failed", after=mark, sid=sid)
    assert "The model rejected this request." in failed.event["detail"]
    gemini.delay(record_delay, "error on screen -> failed", screen, failed)
    gemini.recorder.mark("error on screen", "failed", detail="The model rejected")
    # The person carries on: the next turn is reported as usual.
    gemini.rig.server.script.add(thinking(Reply.text("Back again.")))
    mark = gemini.submit("try again")
    gemini.wait("running", after=mark, sid=sid)
    gemini.term.wait_for("Back again.")
    done = gemini.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Back again."
    gemini.recorder.mark("next answer on screen", "done", detail="Back again.")


# -- 5. the agent exits ------------------------------------------------------------------------


def test_exit(gemini: GeminiRun, record_delay: Any) -> None:
    gemini.rig.server.script.add(thinking(Reply.text("Bye for now.")))
    gemini.start()
    sid, mark = first_turn(gemini, "say bye")
    gemini.term.wait_for("Bye for now.")
    gemini.wait("done", after=mark, sid=sid)
    gemini.recorder.mark("answer on screen", "done", detail="Bye for now.")
    mark = gemini.watch.count()
    gone_at = gemini.quit()
    ended = gemini.wait("ended", after=mark, sid=sid)
    gemini.delay(record_delay, "TUI exited -> ended", gone_at, ended)
    gemini.recorder.mark("TUI exited", "ended")
    assert [(s["session_id"], s["state"]) for s in _status(gemini)] == [(sid, "ended")]


# -- 6. resume ---------------------------------------------------------------------------------


def test_resume(gemini: GeminiRun, record_delay: Any) -> None:
    first, second = thinking(Reply.text("First answer.")), thinking(Reply.text("Second answer."))
    gemini.rig.server.script.add(first, second)
    gemini.start()
    sid, mark = first_turn(gemini, "first prompt")
    gemini.term.wait_for("First answer.")
    gemini.wait("done", after=mark, sid=sid)
    gemini.recorder.mark("first answer on screen", "done", detail="First answer.")
    mark = gemini.watch.count()
    gemini.quit()
    gemini.wait("ended", after=mark, sid=sid)
    gemini.recorder.mark("first TUI exited", "ended")

    mark = gemini.watch.count()
    screen = gemini.start("--resume", sid)
    gemini.term.wait_for("First answer.")  # the resumed history is on screen
    back = gemini.watch.wait_for(
        lambda e: e["session_id"] == sid and e["state"] != "ended", after=mark
    )
    assert back.event["state"] == "done" and back.event["detail"] == "First answer.", back.event
    gemini.delay(record_delay, "resumed TUI ready -> back to life", screen, back)
    gemini.recorder.mark("resumed, ready", "done", detail="First answer.")

    mark = gemini.submit("second prompt")
    gemini.wait("running", after=mark, sid=sid)
    screen = gemini.term.wait_for("Second answer.")
    done = gemini.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "Second answer."
    gemini.delay(record_delay, "answer on screen -> done", screen, done)
    gemini.recorder.mark("second answer on screen", "done", detail="Second answer.")

    # One session, not a resumed copy next to an ended original.
    assert {s.event["session_id"] for s in gemini.watch.events()} == {sid}
    sessions = _status(gemini)
    assert [(s["session_id"], s["state"]) for s in sessions] == [(sid, "done")]
    assert sessions[0]["detail"] == "Second answer."


def _status(gemini: GeminiRun) -> list[dict[str, Any]]:
    out = agentbar(gemini.rig.env, "status", "--json", "--all", check=True)
    return [s for s in json.loads(out.stdout)["sessions"] if s["agent"] == "gemini"]


# -- 7. with agentbar's hooks installed --------------------------------------------------------


def test_hooks(gemini: GeminiRun, record_delay: Any) -> None:
    """``agentbar hooks install --agent gemini`` as a person runs it: the confirmation on screen
    is ``input_required``/approval from the ``Notification`` hook (the chat never shows it), the
    answer is ``done`` from ``AfterAgent``, ``/quit`` is ``ended``; uninstall gives
    ``settings.json`` back byte for byte."""
    settings = gemini.gemini_home / "settings.json"
    before = settings.read_bytes()
    installed = agentbar(gemini.rig.env, "hooks", "install", "--agent", "gemini", "--yes")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "installed agentbar's hooks for 7 events" in installed.stdout
    gemini.rig.server.script.add(
        thinking(Reply.tool("run_shell_command", {"command": "touch hooked.txt"})),
        Reply.text("All done."),
    )
    gemini.start()
    sid, mark = first_turn(gemini, "make a file called hooked.txt")
    screen = gemini.term.wait_for(APPROVAL_PROMPT)
    asked = gemini.wait("input_required", after=mark, waiting_for="approval", sid=sid)
    assert asked.event["source"] == "hook", asked.event
    assert "touch hooked.txt" in asked.event["detail"]
    gemini.delay(record_delay, "approval prompt on screen -> input_required (hook)", screen, asked)
    mark = gemini.after(asked)
    gemini.term.press("enter")
    screen = gemini.term.wait_for("All done.")
    done = gemini.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "All done."
    gemini.delay(record_delay, "answer on screen -> done (hook)", screen, done)
    assert (gemini.rig.project / "hooked.txt").exists()
    mark = gemini.watch.count()
    gone_at = gemini.quit()
    ended = gemini.wait("ended", after=mark, sid=sid)
    gemini.delay(record_delay, "TUI exited -> ended (hook)", gone_at, ended)
    events = [
        json.loads(line)["event"]
        for line in (gemini.rig.data / "events" / "gemini" / f"{sid}.jsonl")
        .read_text()
        .splitlines()
    ]
    for name in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
                 "PostToolUse", "Stop", "SessionEnd"):  # fmt: skip
        assert name in events, events
    removed = agentbar(gemini.rig.env, "hooks", "uninstall", "--agent", "gemini", "--yes")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert settings.read_bytes() == before


# -- 8. a sub-agent ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version", [v for v in VERSIONS if not v.legacy_json], ids=lambda v: v.version, indirect=True
)
def test_subagent(gemini: GeminiRun, record_delay: Any) -> None:
    """``invoke_agent`` runs a sub-agent whose chat is ``chats/<session id>/<its id>.jsonl``:
    part of the parent session, never a session of its own."""
    gemini.rig.server.script.add(
        thinking(Reply.tool("invoke_agent", {"agent_name": "generalist", "prompt": "look around"})),
        thinking(Reply.tool("complete_task", {"result": {"response": "Nothing here."}})),
        thinking(Reply.text("The helper found nothing.")),
    )
    gemini.start()
    sid, mark = first_turn(gemini, "use a helper")
    screen = gemini.term.wait_for("The helper found nothing.")
    done = gemini.wait("done", after=mark, sid=sid)
    assert done.event["detail"] == "The helper found nothing."
    gemini.delay(record_delay, "answer on screen -> done", screen, done)
    gemini.recorder.mark("answer after the sub-agent", "done", detail="The helper found nothing.")
    subs = [c for c in gemini.chats() if c.parent.name == sid]
    assert len(subs) == 1, gemini.chats()
    assert {s.event["session_id"] for s in gemini.watch.events()} == {sid}
    sessions = _status(gemini)
    assert [(s["session_id"], s["state"]) for s in sessions] == [(sid, "done")]
    assert sessions[0]["title"] == "use a helper"


def test_hooks_deny_and_interrupt(gemini: GeminiRun, record_delay: Any) -> None:
    """With the hooks installed, what comes after the confirmation is still right: Gemini CLI
    runs no hook when a confirmation is refused or a turn interrupted (its ``AfterAgent`` then
    says "[no response text]", which tells nothing), so the chat, newer than the hook's
    ``input_required``, decides: done "stopped: you denied ...", then failed "interrupted"."""
    installed = agentbar(gemini.rig.env, "hooks", "install", "--agent", "gemini", "--yes")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    gemini.rig.server.script.add(
        thinking(Reply.tool("run_shell_command", {"command": "touch denied.txt"})),
        Reply.text("Too late.", delay=120),
    )
    gemini.start()
    sid, mark = first_turn(gemini, "make a file called denied.txt")
    gemini.term.wait_for(APPROVAL_PROMPT)
    asked = gemini.wait("input_required", after=mark, waiting_for="approval", sid=sid)
    mark = gemini.after(asked)
    gemini.term.press("escape")
    screen = gemini.term.wait_for(CANCELLED)
    # The refusal reaches the chat in two writes a few ms apart: the first may show the turn
    # still working (running) before the second ends it; what it settles on must be done.
    settled = gemini.watch.wait_for(
        lambda e: e["session_id"] == sid and e["state"] not in ("input_required", "running"),
        after=mark,
    )
    assert settled.event["state"] == "done", settled.event
    assert settled.event["detail"] == "stopped: you denied Shell: touch denied.txt"
    gemini.delay(record_delay, "denied on screen -> done (hooks)", screen, settled)
    mark = gemini.submit("take your time")
    gemini.wait("running", after=mark, sid=sid)
    gemini.term.wait_for("esc to cancel")
    gemini.term.press("escape")
    screen = gemini.term.wait_for(re.compile(f"(?s)({re.escape(CANCELLED)}.*){{2}}"))
    failed = gemini.wait("failed", after=mark, sid=sid)
    assert failed.event["detail"] == "interrupted"
    gemini.delay(record_delay, "interrupted on screen -> failed (hooks)", screen, failed)
    time.sleep(1.0)  # the hook that runs after it (AfterAgent) must not undo it
    assert gemini.latest(sid)["state"] == "failed"
