"""Codex's HookDecisions with payloads recorded from the real Codex 0.171 (tests/data/hooks/
codex/), the engine's settings.toml options, and the installed hook entry carrying the hold."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runner import agentbar

from agentbar.core.agents.codex import KIT
from agentbar.core.agents.codex import config as codex_config
from agentbar.core.agents.codex.decisions import DECISIONS
from agentbar.core.agents.codex.events import CALLER, CODEX_EVENTS, handler
from agentbar.core.agents.codex.hooks import HOOKS, hold_note, installed_hold
from agentbar.core.decisions import Decision, RequestKind, Verdict
from agentbar.core.hooks.spec import TIMEOUT_SECONDS, HookCommand
from agentbar.core.options import Options, load, parse

DATA = Path(__file__).parent / "data" / "hooks" / "codex"
COMMAND = HookCommand("/usr/bin/python3", "/opt/agentbar/agentbar_hook.py", "/home/u/.agentbar")


def holding(agent: str, seconds: int) -> HookCommand:
    return HookCommand(COMMAND.python, COMMAND.script, COMMAND.data_dir, ((agent, seconds),))


def recorded(name: str) -> dict[str, object]:
    doc = json.loads((DATA / name).read_text())
    assert isinstance(doc, dict)
    return doc


def test_the_kit_carries_its_decisions() -> None:
    assert KIT.decisions is DECISIONS


def test_a_recorded_permission_request_is_held_as_an_approval() -> None:
    payload = recorded("permission_request.json")
    held = DECISIONS.held_request("PermissionRequest", payload)
    assert held is not None
    assert held.session_id == payload["session_id"]
    assert (held.kind, held.tool, held.summary) == (RequestKind.APPROVAL, "Bash", "touch made.txt")
    assert held.always_rule is None  # Codex fails a hook that sets updatedPermissions
    assert held.questions == ()


def test_request_user_input_runs_no_permission_hook_and_is_never_held() -> None:
    payload = recorded("pre_tool_use_request_user_input.json")
    assert payload["tool_name"] == "request_user_input"
    assert DECISIONS.held_request("PreToolUse", payload) is None
    assert DECISIONS.held_request("PermissionRequest", payload) is None  # its name says PreToolUse


@pytest.mark.parametrize(
    "change",
    [
        {"session_id": None},
        {"session_id": "../../etc"},
        {"session_id": "x" * 129},
        {"session_id": 7},
        {"tool_name": None},
        {"tool_name": ""},
        {"tool_name": ["Bash"]},
        {"hook_event_name": "PostToolUse"},
    ],
)
def test_odd_or_hostile_payloads_hold_nothing(change: dict[str, object]) -> None:
    payload = {**recorded("permission_request.json"), **change}
    assert DECISIONS.held_request("PermissionRequest", payload) is None


def test_a_summary_is_one_short_line_whatever_the_input() -> None:
    base = recorded("permission_request.json")
    noisy = {**base, "tool_input": {"command": "echo hi\n\x1b[31mrm -rf /\x07" + "x" * 1000}}
    held = DECISIONS.held_request("PermissionRequest", noisy)
    assert held is not None
    assert "\n" not in held.summary and "\x1b" not in held.summary
    assert held.summary.startswith("echo hi [31mrm -rf /")
    assert len(held.summary) <= 300
    patch = "*** Begin Patch\n*** Update File: api/conf.py\n@@\n-a\n+b\n*** End Patch\n"
    edit = {**base, "tool_name": "apply_patch", "tool_input": {"command": patch}}
    held = DECISIONS.held_request("PermissionRequest", edit)
    assert held is not None and held.summary == "api/conf.py"
    write = {**base, "tool_name": "Write", "tool_input": {"file_path": "a/b.py", "content": "x"}}
    held = DECISIONS.held_request("PermissionRequest", write)
    assert held is not None and (held.tool, held.summary) == ("Write", "a/b.py")
    other = {**base, "tool_name": "mcp__x__y", "tool_input": {"url": "https://e.org"}}
    held = DECISIONS.held_request("PermissionRequest", other)
    assert held is not None and held.summary == '{"url":"https://e.org"}'
    assert DECISIONS.held_request("PermissionRequest", {**base, "tool_input": None}) is not None


def test_replies_are_codex_s_own_output_format() -> None:
    payload = recorded("permission_request.json")
    allow = json.loads(DECISIONS.reply(payload, Decision("r1", Verdict.ALLOW, "cli")))
    assert allow == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    deny = json.loads(DECISIONS.reply(payload, Decision("r1", Verdict.DENY, "cli", "not now")))
    assert deny["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": "not now"}
    bare = json.loads(DECISIONS.reply(payload, Decision("r1", Verdict.DENY, "cli")))
    assert bare["hookSpecificOutput"]["decision"] == {"behavior": "deny"}
    # Nothing else decides anything: no output is "no verdict", Codex's own prompt.
    assert DECISIONS.reply(payload, Decision("r1", Verdict.ALLOW_ALWAYS, "cli")) == ""
    assert DECISIONS.reply(payload, Decision("r1", Verdict.REPLY, "cli", replies=("x",))) == ""


# -- settings.toml: the engine's options -------------------------------------------------------


def test_options_default_to_observing_codex_and_five_idle_minutes(tmp_path: Path) -> None:
    assert load(None) == Options() == load(tmp_path / "missing.toml")
    assert (Options().codex_hold_seconds, Options().background_idle_seconds) == (0, 300.0)
    assert Options().agent_holds() == ()


def test_options_read_their_sections_and_skip_the_tray_s() -> None:
    text = "[menu]\nrecent_hours = 3\n[answers]\ncodex_hold_seconds = 20\n"
    text += "[serve]\nbackground_idle_seconds = 2.5\n"
    options = parse(text)
    assert (options.codex_hold_seconds, options.background_idle_seconds) == (20, 2.5)
    assert options.agent_holds() == (("codex", 20),)
    assert options.problems == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[answers]\ncodex_hold_seconds = -1\n", "answers.codex_hold_seconds: must be between"),
        ("[answers]\ncodex_hold_seconds = 9999\n", "must be between 0 (observe only) and 600"),
        ("[answers]\ncodex_hold_seconds = true\n", "must be a whole number of seconds"),
        ("[answers]\ncodex_hold_seconds = 2.5\n", "must be a whole number of seconds"),
        ("[answers]\nclaude_hold = 3\n", "unknown key answers.claude_hold"),
        ("[serve]\nbackground_idle_seconds = 0\n", "serve.background_idle_seconds: must be"),
        ("[serve]\nbackground_idle_seconds = 'x'\n", "must be a number of seconds"),
        ("answers = 3\n", "[answers] must be a table"),
        ("[answers\n", "using the defaults"),
    ],
)
def test_wrong_options_are_one_clear_line_and_the_default(text: str, problem: str) -> None:
    options = parse(text, where="settings.toml")
    assert options == Options()
    assert len(options.problems) == 1 and problem in options.problems[0], options.problems


def test_an_unreadable_options_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(b"\xff\xfe")
    assert "not UTF-8" in load(path).problems[0]


# -- the installed entry carries the hold ------------------------------------------------------


def test_without_a_hold_every_codex_entry_is_the_plain_one() -> None:
    plain = COMMAND.handler(CALLER)
    for event in CODEX_EVENTS:
        assert handler(COMMAND, event) == plain
    assert "--hold" not in str(plain["command"])


def test_a_hold_goes_into_permission_request_alone_with_codex_s_timeout_past_it() -> None:
    held = holding("codex", 20)
    entry = handler(held, "PermissionRequest")
    tail = "--hold PermissionRequest --hold-seconds 20 --data-dir /home/u/.agentbar"
    assert str(entry["command"]).endswith(tail)
    assert entry["timeout"] == 20 + TIMEOUT_SECONDS
    for event in CODEX_EVENTS:
        if event != "PermissionRequest":
            assert handler(held, event) == COMMAND.handler(CALLER)
    # Another agent's hold is not Codex's.
    other = holding("claude", 9)
    assert handler(other, "PermissionRequest") == COMMAND.handler(CALLER)


def test_install_writes_the_hold_status_says_it_and_uninstall_is_an_exact_undo() -> None:
    before = 'model = "o3"\n'
    held = holding("codex", 30)
    edit = HOOKS.add(before, "config.toml", held, version="codex-cli 0.171.0", notify=True)
    assert edit.after is not None and "--hold PermissionRequest --hold-seconds 30" in edit.after
    assert edit.after.count("--hold-seconds") == 1 and "timeout = 35" in edit.after
    doc = codex_config.load(edit.after, "config.toml")
    assert codex_config.is_current(doc, held, notify=True, config_path="config.toml")
    assert not codex_config.is_current(doc, COMMAND, notify=True, config_path="config.toml")
    found = codex_config.status(doc, "config.toml")
    assert installed_hold(found.commands) == 30
    assert "waits up to 30 s" in hold_note(found.commands, 30)
    assert "now says codex_hold_seconds = 0" in hold_note(found.commands, 0)
    assert "observed only" in hold_note(set(), 0)
    # Installing again with the hold taken away rewrites the entry to the plain one.
    again = HOOKS.add(edit.after, "config.toml", COMMAND, version="codex-cli 0.171.0", notify=True)
    assert again.after is not None and "--hold" not in again.after
    removal = HOOKS.remove(edit.after, "config.toml", None)
    assert removal.after == before


def test_hooks_install_takes_the_hold_from_settings_toml_and_undoes_it_exactly(
    tmp_path: Path,
) -> None:
    """The real command, as a person runs it: the hold chosen in settings.toml goes into
    Codex's PermissionRequest entry alone; status says it, and says when the file disagrees;
    uninstall gives the file back byte for byte."""
    home, config_dir = tmp_path / "home", tmp_path / "config"
    (home / ".codex").mkdir(parents=True)
    config_dir.mkdir()
    codex_config_file = home / ".codex" / "config.toml"
    before = b'model = "o3"  # mine\n'
    codex_config_file.write_bytes(before)
    settings = config_dir / "settings.toml"
    settings.write_text("[answers]\ncodex_hold_seconds = 20\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.update(HOME=str(home), AGENTBAR_CONFIG_DIR=str(config_dir),
               AGENTBAR_DATA_DIR=str(tmp_path / "data"))  # fmt: skip
    done = agentbar(env, "hooks", "install", "--agent", "codex", "--yes")
    assert done.returncode == 0, done.stderr
    written = codex_config_file.read_text()
    assert written.count("--hold PermissionRequest --hold-seconds 20") == 1
    assert "timeout = 25" in written
    held = next(line for line in written.splitlines() if "--hold" in line)
    assert held.startswith("PermissionRequest")
    status = agentbar(env, "hooks", "status", "--agent", "codex").stdout
    assert "waits up to 20 s for an answer from agentbar" in status, status
    settings.write_text("[answers]\ncodex_hold_seconds = 0\n")
    status = agentbar(env, "hooks", "status", "--agent", "codex").stdout
    assert "settings.toml now says codex_hold_seconds = 0" in status, status
    settings.write_text("[answers]\ncodex_hold_seconds = 'long'\n")
    wrong = agentbar(env, "hooks", "status", "--agent", "codex")
    assert "answers.codex_hold_seconds: must be a whole number of seconds" in wrong.stderr
    done = agentbar(env, "hooks", "uninstall", "--agent", "codex", "--yes")
    assert done.returncode == 0, done.stderr
    assert codex_config_file.read_bytes() == before
