"""Hooks, for real: agentbar's hook program run by the real Claude Code and Codex CLIs, and what
``agentbar watch --json`` reports with it (issue 4).

Claude Code gets its hooks the way a person installs them, ``agentbar hooks install --agent
claude --yes`` into the throwaway HOME (with that version's ``claude`` on ``PATH``, so the
installer writes only the events it knows). Codex 0.171 gets them as agentbar's own launches
will, the per-launch ``-c`` layer with the hook-trust bypass (a person trusts installed hooks in
Codex's ``/hooks`` screen; the rig cannot, and agentbar never marks them trusted); every Codex
gets the installed configuration, which Codex must accept, and its ``notify`` program.

Each test checks the events file the hook program wrote (one intact line per event, the
session's own id), that the state is right and, where the files alone cannot tell, that the
hook now does: a permission prompt of a Claude version without a live registry (2.0.x, 1.0.x)
is ``input_required`` within milliseconds instead of never.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from claude_rig import APPROVAL_PROMPT, ClaudeRun, ClaudeVersion, bash
from claude_rig import VERSIONS as CLAUDE_VERSIONS
from cli_runner import agentbar
from codex_rig import VERSIONS as CODEX_VERSIONS
from codex_rig import CodexRun, CodexVersion
from model_server import Reply, thinking

from agentbar.core.agents.codex.launch import launch_args as codex_launch_args
from agentbar.core.hooks.spec import MARKER, HookCommand, parse_version

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

DONE_TIMEOUT = 45.0
CODEX_APPROVAL_PROMPT = "Would you like to run the following command?"
PERMISSION_REQUEST_SINCE = (2, 0, 45)  # older Claude Codes say it with Notification instead


def hooks(env: dict[str, str], action: str, agent: str) -> str:
    """`agentbar hooks <action> --agent <agent>` (``--yes`` where it writes), which must
    succeed; what it printed."""
    done = agentbar(
        env, "hooks", action, "--agent", agent, *(("--yes",) if action != "status" else ())
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def hook_lines(
    data: Path, agent: str, sid: str, *, including: Collection[str] = (), timeout: float = 10.0
) -> list[dict[str, Any]]:
    """Every line the hook program wrote for ``sid``, once the events ``including`` are all
    there (an agent runs a hook a moment after the line that gave the state away; Codex runs
    ``notify`` after the turn). Each line must be whole JSON of this session."""
    path = data / "events" / agent / f"{sid}.jsonl"
    deadline = time.monotonic() + timeout
    while True:
        raw = path.read_bytes() if path.exists() else b""
        lines = [json.loads(line) for line in raw.splitlines()]
        if raw and set(including) <= {line["event"] for line in lines}:
            break
        if time.monotonic() > deadline:
            found = sorted(p.name for p in (data / "events").rglob("*"))
            raise AssertionError(f"hook events for {sid}: {lines}; files: {found}")
        time.sleep(0.05)
    assert raw.endswith(b"\n"), "the last hook line is torn"
    for line in lines:
        assert (line["agent"], line["session_id"]) == (agent, sid), line
    return lines


def hook_events(data: Path, agent: str, sid: str, *, including: Collection[str] = ()) -> list[str]:
    return [line["event"] for line in hook_lines(data, agent, sid, including=including)]


def without_agentbar(config: Path, before: bytes) -> None:
    """Codex writes its own TUI state into config.toml as it runs; agentbar's part is gone and
    what was there before is there unchanged."""
    text = config.read_bytes()
    assert MARKER.encode() not in text, text.decode()
    assert text.startswith(before), text.decode()


# -- Claude Code, hooks installed by `agentbar hooks install` ----------------------------------


@pytest.fixture(params=CLAUDE_VERSIONS, ids=lambda v: v.version)
def hooked_claude(rig: Rig, request: pytest.FixtureRequest) -> Iterator[ClaudeRun]:
    version: ClaudeVersion = request.param
    run = ClaudeRun(rig, version, "hooks_" + request.node.originalname.removeprefix("test_"))
    # The installer asks `claude --version` which events this build knows (1.0.x rejects a
    # settings file with events it does not know).
    rig.env["PATH"] = f"{run.binary.parent}{os.pathsep}{rig.env['PATH']}"
    settings = run.claude_home / "settings.json"
    before = settings.read_bytes()
    hooks(rig.env, "install", "claude")
    status = hooks(rig.env, "status", "claude")
    assert "installed" in status and "not installed" not in status, status
    document = json.loads(settings.read_text())
    assert document["permissions"] == json.loads(before)["permissions"]  # the rig's own stays
    # Only a build that knows PermissionRequest gets it.
    assert ("PermissionRequest" in document["hooks"]) == _at_least(
        version, PERMISSION_REQUEST_SINCE
    )
    yield run
    # Uninstalled, the file is the rig's again, byte for byte.
    hooks(rig.env, "uninstall", "claude")
    assert settings.read_bytes() == before


def _at_least(version: ClaudeVersion, first: tuple[int, ...]) -> bool:
    parsed = parse_version(version.version)
    assert parsed is not None
    return parsed >= first


def _claude_approval(run: ClaudeRun, record_delay: Any, command: str, then: Reply) -> str:
    """Up to the permission prompt, which the hook reports whatever the version."""
    sid, mark = run.first_turn(f"run {command}", bash(command, "Create the file"), then)
    screen = run.term.wait_for(APPROVAL_PROMPT)
    asked = run.wait("input_required", after=mark, waiting_for="approval", sid=sid)
    assert asked.event["detail"] == f"Bash: {command}"
    # 2.1.x's registry says it too; without a registry only the hook can.
    sources = {"hook", "registry"} if not run.version.gaps else {"hook"}
    assert asked.event["source"] in sources, asked.event
    run.delay(record_delay, "permission prompt on screen -> input_required (hooks)", screen, asked)
    return sid


def test_claude_hooked_approve(hooked_claude: ClaudeRun, record_delay: Any) -> None:
    run = hooked_claude
    then = Reply.text("Created approved.txt.\nAll done.", delay=1.0)
    sid = _claude_approval(run, record_delay, "touch approved.txt", then)
    mark = run.watch.count()
    run.read_screen()
    run.term.press("enter")  # "1. Yes"
    running = run.wait("running", after=mark, sid=sid)
    assert running.event["detail"] != ""
    screen = run.term.wait_for("All done.")
    done = run.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    assert done.event["detail"] == "All done."
    run.delay(record_delay, "answer on screen -> done (hooks)", screen, done)
    assert (run.rig.project / "approved.txt").exists()
    wanted = {"UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    events = hook_events(run.rig.data, "claude", sid, including=wanted)
    assert wanted <= set(events), events
    asked_by = "PermissionRequest" if _at_least(run.version, PERMISSION_REQUEST_SINCE) else None
    assert (asked_by or "Notification") in events, events
    if _at_least(run.version, (1, 0, 62)):
        assert events[0] == "SessionStart", events
    # Never stuck waiting once the command was allowed.
    assert run.states(sid)[-1][0] == "done"


def test_claude_hooked_deny(hooked_claude: ClaudeRun, record_delay: Any) -> None:
    run = hooked_claude
    sid = _claude_approval(run, record_delay, "touch denied.txt", Reply.text("Understood."))
    screen, settled = run.deny(sid, "touch denied.txt")
    run.delay(record_delay, "denied on screen -> done (hooks)", screen, settled)
    assert "PostToolUse" not in hook_events(run.rig.data, "claude", sid)


def test_claude_hooked_exit(hooked_claude: ClaudeRun, record_delay: Any) -> None:
    run = hooked_claude
    sid, mark = run.first_turn("say bye", Reply.text("Bye for now.", delay=1.0))
    screen = run.term.wait_for("Bye for now.")
    done = run.wait("done", after=mark, sid=sid, timeout=DONE_TIMEOUT)
    assert done.event["detail"] == "Bye for now."
    run.delay(record_delay, "answer on screen -> done (hooks)", screen, done)
    mark = run.watch.count()
    gone_at = run.exit()
    ended = run.wait("ended", after=mark, sid=sid)
    run.delay(record_delay, "process exited -> ended (hooks)", gone_at, ended)
    events = hook_events(run.rig.data, "claude", sid, including={"Stop", "SessionEnd"})
    assert events[-1] == "SessionEnd", events
    assert events.count("Stop") == 1, events  # a turn's end is not the session's end


# -- Codex -------------------------------------------------------------------------------------

CODEX_CURRENT = next(v for v in CODEX_VERSIONS if v.daemon)


def test_codex_launch_layer_approve(rig: Rig, record_delay: Any) -> None:
    """Codex 0.171 with agentbar's per-launch hooks: the approval, the approved command and the
    end of the turn each come from a hook; the user's config.toml is not touched."""
    version = CODEX_CURRENT
    run = CodexRun(rig, version, "hooks_launch_approve")
    config_before = (run.codex_home / "config.toml").read_bytes()
    layer = codex_launch_args(
        HookCommand.current(rig.data), bypass_trust=True, version=version.version
    )
    rig.server.script.add(
        thinking(version.command("touch made.txt", "create the file")),
        Reply.text("Created made.txt."),
    )
    run.start(*layer, "-a", "on-request", "-s", "read-only")
    mark = run.submit("make a file called made.txt")
    running = run.wait("running", after=mark)
    sid = running.event["session_id"]
    screen = run.term.wait_for(CODEX_APPROVAL_PROMPT)
    asked = run.wait("input_required", after=mark, waiting_for="approval", sid=sid)
    assert "touch made.txt" in asked.event["detail"]
    run.delay(record_delay, "approval prompt on screen -> input_required (hooks)", screen, asked)
    mark = run.watch.count()
    run.term.type("y")
    screen = run.term.wait_for("You approved")
    # No hook runs at the approval itself: the command's PostToolUse says it ran (a 3 s command
    # showed `running` 3 s after "You approved"); the rollout says nothing until its output.
    running = run.wait("running", after=mark, sid=sid)
    assert running.event["source"] == "hook", running.event
    run.delay(record_delay, "approved on screen -> running (hooks)", screen, running)
    screen = run.term.wait_for("Created made.txt.")
    done = run.wait("done", after=mark, sid=sid)
    assert (done.event["detail"], done.event["source"]) == ("Created made.txt.", "hook")
    run.delay(record_delay, "answer on screen -> done (hooks)", screen, done)
    wanted = {"UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"}
    events = hook_events(rig.data, "codex", sid, including=wanted)
    assert wanted <= set(events), events
    without_agentbar(run.codex_home / "config.toml", config_before)


@pytest.mark.parametrize("version", CODEX_VERSIONS, ids=lambda v: v.version)
def test_codex_installed_notify(rig: Rig, version: CodexVersion, record_delay: Any) -> None:
    """`agentbar hooks install` writes a config.toml every pinned Codex starts with: 0.171 asks
    to trust the new hooks and, trusted, runs them; every version runs the ``notify`` program
    at each finished turn; `uninstall` takes agentbar's part out again."""
    run = CodexRun(rig, version, "hooks_installed_notify")
    rig.env["PATH"] = f"{run.binary.parent}{os.pathsep}{rig.env['PATH']}"
    config = run.codex_home / "config.toml"
    before = config.read_bytes()
    hooks(rig.env, "install", "codex")
    status = hooks(rig.env, "status", "codex")
    assert "agentbar's notify" in status, status
    rig.server.script.add(thinking(Reply.text("The answer is 4.")))
    if version.daemon:
        # 0.171 asks about hooks it has not seen before, as it starts; the person trusts them.
        run.term = rig.terminal([str(run.binary)], name="codex-trust")
        run.term.wait_for("Trust all and continue", timeout=90)
        time.sleep(1.0)
        run.term.press("down")
        run.term.wait_for(re.compile(r"›\s*2\. Trust all"))
        run.term.press("enter")
        run.term.wait_for(version.ready, timeout=60)
        trusted = hooks(rig.env, "status", "codex")
        assert ", 0 trusted" not in trusted, trusted
    else:
        run.start()
    mark = run.submit("what is 2+2")
    running = run.wait("running", after=mark)
    sid = running.event["session_id"]
    screen = run.term.wait_for("The answer is 4.")
    done = run.wait("done", after=run.after(running), sid=sid)
    assert done.event["detail"] == "The answer is 4."
    run.delay(record_delay, "answer on screen -> done (installed)", screen, done)
    wanted = {"agent-turn-complete", *(("UserPromptSubmit", "Stop") if version.daemon else ())}
    lines = hook_lines(rig.data, "codex", sid, including=wanted)
    completes = [line for line in lines if line["event"] == "agent-turn-complete"]
    assert len(completes) == 1, lines
    assert "The answer is 4." in completes[0].get("last_assistant_message", ""), completes
    run.quit()
    hooks(rig.env, "uninstall", "codex")
    without_agentbar(config, before)
