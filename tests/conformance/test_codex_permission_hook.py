"""Codex's PermissionRequest hook, for real (Codex 0.171, issue 17 part 3): what the real CLI
does while a hook holds an approval, which output allows or denies, what a timeout, no output
or a failing hook give, and that ``request_user_input`` runs no PermissionRequest hook at all.

A scripted hook (``SCRIPT``) stands in for a hook that waits for an answer: it saves its
payload, sleeps, then prints what the scenario says. Codex gets it through the per-launch
``-c hooks.<Event>=`` layer with ``--dangerously-bypass-hook-trust`` (the rig cannot trust
hooks in ``/hooks``). Then agentbar's own hook program with a hold (``--hold-seconds 30``, Codex's
timeout 35) and no agentbar running: the prompt comes at once. With agentbar answering (the
hook route's relay, once the hook program has it): ``agentbar approve`` / ``deny`` decide.
Findings are in README.md ("Codex's PermissionRequest hook").
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest
from cli_runner import agentbar, start_agentbar
from codex_rig import VERSIONS, CodexRun, CodexVersion
from model_server import Reply, thinking
from polling import end_process, wait_for

from agentbar.assets import hooks as hook_assets
from agentbar.core.agents.codex.events import CODEX_EVENTS, handler
from agentbar.core.hooks.layers import toml_value
from agentbar.core.hooks.spec import HookCommand
from agentbar.core.launch.client import api_call

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

CODEX: CodexVersion = next(v for v in VERSIONS if v.daemon)  # 0.171.0: the one with hooks
APPROVAL_PROMPT = "Would you like to run the following command?"
HOLDING = "Running hook"  # the status line while a hook runs: "Working (3s • esc …) · Running hook"
HOLD = 3.0  # seconds the scripted hook holds

SCRIPT = r"""
import json, os, sys, time
out, then, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
raw = sys.stdin.read()
event = json.loads(raw).get("hook_event_name", "unknown")
stamp = f"{time.time():.3f}"
with open(os.path.join(out, f"{event}-{stamp}.json"), "w") as fh:
    fh.write(raw)
if event == "PermissionRequest":
    time.sleep(delay)
    said = {"hookEventName": "PermissionRequest"}
    if then == "allow":
        said["decision"] = {"behavior": "allow"}
    elif then == "deny":
        said["decision"] = {"behavior": "deny", "message": "agentbar says no"}
    elif then == "always":
        said["decision"] = {"behavior": "allow", "updatedPermissions": [
            {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow",
             "destination": "session"}]}
    if then in ("allow", "deny", "always"):
        print(json.dumps({"hookSpecificOutput": said}))
    elif then == "garbage":
        print("this is not json")
    elif then == "exit2":
        sys.stderr.write("refused by exit status 2")
        sys.exit(2)
"""


def scripted_layer(
    rig: Rig, then: str, *, timeout: int = 30, events: tuple[str, ...] = ("PermissionRequest",)
) -> list[str]:
    script = rig.root / "hook.py"
    script.write_text(SCRIPT)
    out = rig.root / "payloads"
    out.mkdir(exist_ok=True)
    command = shlex.join([sys.executable, str(script), str(out), then, str(HOLD)])
    group = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    args = ["--dangerously-bypass-hook-trust"]
    for event in events:
        args += ["-c", f"hooks.{event}={toml_value([group])}"]
    return args


def payloads(rig: Rig, event: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((rig.root / "payloads").glob(f"{event}-*"))]


def approval_turn(rig: Rig, *layer: str) -> CodexRun:
    run = CodexRun(rig, CODEX, "permission_hook")
    rig.server.script.add(
        thinking(CODEX.command("touch made.txt", "create the file")),
        Reply.text("Turn over."),
    )
    run.start(*layer, "-a", "on-request", "-s", "read-only")
    run.submit("make a file called made.txt")
    return run


def held_without_a_prompt(run: CodexRun) -> float:
    """The hook holds: Codex says it runs a hook, and no approval prompt is drawn; a key the
    person types goes to the composer, not to an approval. Returns when the hold was seen."""
    assert run.term is not None
    seen = run.term.wait_for(HOLDING, timeout=60)
    assert APPROVAL_PROMPT not in run.term.text()
    run.term.type("y")
    time.sleep(0.5)
    assert APPROVAL_PROMPT not in run.term.text()
    return seen


def test_allow_after_a_hold_runs_the_command_with_no_prompt(rig: Rig) -> None:
    run = approval_turn(rig, *scripted_layer(rig, "allow"))
    held_without_a_prompt(run)
    assert run.term is not None
    run.term.wait_for("Turn over.", timeout=30)
    assert (rig.project / "made.txt").exists()
    assert APPROVAL_PROMPT not in run.term.text()
    (payload,) = payloads(rig, "PermissionRequest")
    assert payload["tool_name"] == "Bash"
    assert payload["tool_input"] == {"command": "touch made.txt", "description": "create the file"}
    assert set(payload) >= {"session_id", "turn_id", "cwd", "transcript_path", "permission_mode"}


def test_deny_after_a_hold_blocks_the_command_and_tells_the_model(rig: Rig) -> None:
    run = approval_turn(rig, *scripted_layer(rig, "deny"))
    held_without_a_prompt(run)
    assert run.term is not None
    run.term.wait_for("Blocked by hook", timeout=30)
    run.term.wait_for("agentbar says no")
    run.term.wait_for("Turn over.")  # the turn goes on: the model was told
    assert not (rig.project / "made.txt").exists()
    told = rig.server.wait_main_requests(2)[1].body
    assert "agentbar says no" in json.dumps(told)


@pytest.mark.parametrize("then", ["nothing", "garbage"])
def test_no_verdict_draws_the_usual_prompt_once_the_hook_is_done(rig: Rig, then: str) -> None:
    run = approval_turn(rig, *scripted_layer(rig, then))
    held = held_without_a_prompt(run)
    assert run.term is not None
    prompt = run.term.wait_for(APPROVAL_PROMPT, timeout=30)
    assert prompt - held > HOLD - 1.5  # only after the hold
    run.term.type("y")
    run.term.wait_for("Turn over.")
    assert (rig.project / "made.txt").exists()


def test_a_hook_past_its_timeout_is_ended_and_the_prompt_drawn(rig: Rig) -> None:
    run = approval_turn(rig, *scripted_layer(rig, "allow", timeout=1))
    assert run.term is not None
    run.term.wait_for("hook timed out after 1s", timeout=60)
    run.term.wait_for(APPROVAL_PROMPT)
    time.sleep(HOLD)  # the scripted hook would have allowed by now: its answer is not taken
    assert not (rig.project / "made.txt").exists()
    assert APPROVAL_PROMPT in run.term.text()


def test_escape_while_the_hook_holds_interrupts_the_turn(rig: Rig) -> None:
    """The one key that works during the hold: Esc stops the turn (no approval is given)."""
    run = approval_turn(rig, *scripted_layer(rig, "allow"))
    assert run.term is not None
    run.term.wait_for(HOLDING, timeout=60)
    run.term.press("escape")
    run.term.wait_for("Conversation interrupted", timeout=15)
    time.sleep(HOLD)  # the hook's later allow is not taken
    assert not (rig.project / "made.txt").exists()
    assert APPROVAL_PROMPT not in run.term.text()


def test_exit_status_2_denies(rig: Rig) -> None:
    """Why agentbar's hook program must never exit 2: Codex takes it as a denial."""
    run = approval_turn(rig, *scripted_layer(rig, "exit2"))
    assert run.term is not None
    run.term.wait_for("Blocked by hook", timeout=60)
    run.term.wait_for("refused by exit status 2")
    assert not (rig.project / "made.txt").exists()


def test_request_user_input_runs_no_permission_request_hook(rig: Rig) -> None:
    run = CodexRun(rig, CODEX, "permission_hook_question")
    question = {"id": "style", "header": "Style", "question": "Which style?",
                "options": [{"label": "Tabs (Recommended)", "description": "Use tabs."},
                            {"label": "Spaces", "description": "Use spaces."}]}  # fmt: skip
    rig.server.script.add(
        thinking(Reply.tool("request_user_input", {"questions": [question]})),
        Reply.text("Using tabs."),
    )
    events = ("PreToolUse", "PermissionRequest", "PostToolUse")
    run.start(*scripted_layer(rig, "nothing", events=events))
    run.submit_in_plan_mode("ask me which style")
    assert run.term is not None
    run.term.wait_for("enter to submit answer", timeout=60)
    run.term.press("enter")
    run.term.wait_for("Using tabs.")
    assert payloads(rig, "PermissionRequest") == []
    (pre,) = payloads(rig, "PreToolUse")
    assert pre["tool_name"] == "request_user_input"
    assert pre["tool_input"]["questions"][0]["question"] == "Which style?"


# -- agentbar's own hook program with a hold ---------------------------------------------------


def held_layer(rig: Rig, hold: int) -> list[str]:
    """agentbar's hooks as `agentbar hooks install` writes them with ``codex_hold_seconds =
    hold`` (each event's handler, PermissionRequest's holding), given as ``-c`` overrides: the
    rig cannot trust installed hooks in ``/hooks``. (A launched task's own layer never holds.)"""
    command = HookCommand.current(rig.data, agent_holds=(("codex", hold),))
    args = ["--dangerously-bypass-hook-trust"]
    for event in CODEX_EVENTS:
        args += ["-c", f"hooks.{event}={toml_value([{'hooks': [handler(command, event)]}])}"]
    assert sum("--hold-seconds" in a for a in args) == 1
    return args


def test_agentbar_s_hook_with_a_hold_and_no_agentbar_draws_the_prompt_at_once(
    rig: Rig, record_delay: Any
) -> None:
    run = approval_turn(rig, *held_layer(rig, 30))
    assert run.term is not None
    prompt = run.term.wait_for(APPROVAL_PROMPT, timeout=60)
    asked = run.wait("input_required", after=0, waiting_for="approval")
    assert "touch made.txt" in asked.event["detail"]
    # Not held for the 30 s: no agentbar, no wait (the figure is the delay table's).
    assert prompt - asked.at < 10.0
    record_delay(
        CODEX.label, "hold 30 s, no agentbar", "prompt vs input_required", prompt, asked.at
    )


def _hook_relays() -> bool:
    """Whether this tree's hook program relays a held event to the running agentbar (the hook
    route): until then there is nothing to answer from agentbar."""
    impl = Path(hook_assets.__file__).parent / "agentbar_hook_impl.py"
    return "--hold-seconds" in impl.read_text()


@pytest.mark.skipif(not _hook_relays(), reason="the hook program does not relay yet (hookroute)")
@pytest.mark.parametrize("verdict", ["approve", "deny"])
def test_agentbar_answers_a_held_codex_approval(rig: Rig, verdict: str, record_delay: Any) -> None:
    serve = start_agentbar(rig.env, "serve")
    try:
        wait_for((rig.data / "server.json").exists, 30, "agentbar serve to start")
        run = approval_turn(rig, *held_layer(rig, 30))
        assert run.term is not None
        run.term.wait_for(HOLDING, timeout=60)

        info = orjson.loads((rig.data / "server.json").read_bytes())

        def waiting() -> list[dict[str, Any]]:
            origin = f"http://127.0.0.1:{info['port']}"
            _, doc = api_call(origin, info["token"], "GET", "/api/decisions")
            return [r for r in doc["requests"] if r["agent"] == "codex"]

        (request,) = wait_for(waiting, 20, "the held request in agentbar's book")
        assert request["summary"] == "touch made.txt" and request["verdicts"] == ["allow", "deny"]
        told = ("--message", "agentbar says no") if verdict == "deny" else ()
        asked_at = time.perf_counter()
        done = agentbar(rig.env, verdict, request["session_id"], *told)
        assert done.returncode == 0, done.stderr
        if verdict == "approve":
            seen = run.term.wait_for("Ran touch made.txt", timeout=30)
            run.term.wait_for("Turn over.", timeout=30)
            assert (rig.project / "made.txt").exists()
        else:
            seen = run.term.wait_for("Blocked by hook", timeout=30)
            run.term.wait_for("agentbar says no")
            assert not (rig.project / "made.txt").exists()
        what = f"`agentbar {verdict}` run -> Codex shows the outcome"
        record_delay(CODEX.label, "held approval", what, asked_at, seen)
        assert APPROVAL_PROMPT not in run.term.text()
    finally:
        end_process(serve)


def test_updated_permissions_fail_the_hook_and_the_prompt_comes(rig: Rig) -> None:
    """Why Codex gets no "Always allow" from agentbar: an allow with ``updatedPermissions`` is
    refused as a failed hook (no verdict, not a denial), and the usual prompt is drawn."""
    run = approval_turn(rig, *scripted_layer(rig, "always"))
    assert run.term is not None
    run.term.wait_for("unsupported updatedPermissions", timeout=60)
    run.term.wait_for(APPROVAL_PROMPT)
    assert not (rig.project / "made.txt").exists()
