"""Gemini CLI's hooks: its real payloads (recorded from 0.61.0, ``tests/data/hooks/gemini``)
through agentbar's hook program into the state they imply, and agentbar's entries in its
``settings.json`` put in and taken out exactly (pure, plus the hook program as a process)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_hook_program import lines, run_hook

from agentbar.core.agents.gemini import TRAITS
from agentbar.core.agents.gemini.hooks import EVENTS, HOOKS, handler
from agentbar.core.hooks.errors import HooksFileError
from agentbar.core.hooks.files import Record
from agentbar.core.hooks.spec import HookCommand
from agentbar.core.model import State, WaitingFor
from agentbar.core.records import HookEvent
from agentbar.core.sources.base import StreamKind, StreamSpec
from agentbar.core.sources.hook_events import HookEventParser
from agentbar.core.state.hooks import HookState, reduce_all

PAYLOADS = Path(__file__).parent / "data" / "hooks" / "gemini" / "payloads-0.61.0.jsonl"
COMMAND = HookCommand(python="/usr/bin/python3", script="/opt/agentbar_hook.py", data_dir="/d")


def payloads() -> list[dict[str, Any]]:
    return [json.loads(line) for line in PAYLOADS.read_text().splitlines()]


def find(**match: Any) -> dict[str, Any]:
    return next(p for p in payloads() if all(p.get(k) == v for k, v in match.items()))


def written(data: Path, payload: dict[str, Any]) -> dict[str, Any]:
    assert run_hook(data, payload, agent="gemini").returncode == 0
    return lines(data, "gemini", payload["session_id"])[-1]


def events_of(data: Path, session: str) -> list[HookEvent]:
    path = data / "events" / "gemini" / f"{session}.jsonl"
    spec = StreamSpec("gemini", StreamKind.HOOKS, path, session_hint=session)  # type: ignore[arg-type]
    parser = HookEventParser(spec)
    found: list[HookEvent] = []
    for line in path.read_bytes().splitlines():
        found += [r for r in parser.parse(line) if isinstance(r, HookEvent)]
    return found


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


# -- the hook program --------------------------------------------------------------------------


def test_every_recorded_event_is_written_under_the_shared_names(data: Path) -> None:
    names = {}
    for payload in payloads():
        line = written(data, payload)
        names[(payload["hook_event_name"], line["event"])] = line
        assert line["agent"] == "gemini" and line["session_id"] == payload["session_id"]
        assert line["cwd"] == "/home/user/project"
    assert {
        ("SessionStart", "SessionStart"),
        ("BeforeAgent", "UserPromptSubmit"),
        ("BeforeTool", "PreToolUse"),
        ("AfterTool", "PostToolUse"),
        ("Notification", "PermissionRequest"),
        ("AfterAgent", "Stop"),
        ("AfterAgent", "AfterAgent"),  # after an interrupt or an error: says nothing
        ("SessionEnd", "SessionEnd"),
    } <= set(names)


def test_the_confirmation_on_screen_is_an_approval_with_its_command(data: Path) -> None:
    payload = find(hook_event_name="Notification", notification_type="ToolPermission")
    assert payload["details"]["type"] == "exec"
    line = written(data, payload)
    assert (line["event"], line["tool_name"], line["tool_summary"]) == (
        "PermissionRequest",
        "Shell",
        "touch made.txt",
    )
    (event,) = events_of(data, payload["session_id"])
    view = reduce_all(HookState(), [event], TRAITS).view
    assert view is not None
    assert (view.state, view.waiting_for) == (State.INPUT_REQUIRED, WaitingFor.APPROVAL)
    assert "touch made.txt" in view.detail


def test_an_ask_user_confirmation_waits_for_an_answer(data: Path) -> None:
    payload = next(
        p
        for p in payloads()
        if p["hook_event_name"] == "Notification" and p["details"].get("type") == "ask_user"
    )
    written(data, payload)
    view = reduce_all(HookState(), events_of(data, payload["session_id"]), TRAITS).view
    assert view is not None
    assert (view.state, view.waiting_for) == (State.INPUT_REQUIRED, WaitingFor.QUESTION)


def test_a_finished_turn_is_done_with_its_answer_and_a_cancelled_one_says_nothing(
    data: Path,
) -> None:
    finished = next(
        p
        for p in payloads()
        if p["hook_event_name"] == "AfterAgent" and p["prompt_response"] != "[no response text]"
    )
    line = written(data, finished)
    assert line["event"] == "Stop"
    assert line["last_assistant_message"] == finished["prompt_response"]
    cancelled = find(hook_event_name="AfterAgent", prompt_response="[no response text]")
    started = {**find(hook_event_name="BeforeAgent"), "session_id": cancelled["session_id"]}
    written(data, started)
    written(data, cancelled)
    view = reduce_all(HookState(), events_of(data, cancelled["session_id"]), TRAITS).view
    assert view is not None and view.state is State.RUNNING  # the chat tells how it ended


# -- settings.json -----------------------------------------------------------------------------

USER_SETTINGS = """{
  "security": {
    "auth": {
      "selectedType": "oauth-personal"
    }
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file",
        "hooks": [
          {
            "type": "command",
            "command": "./check.sh",
            "timeout": 30000
          }
        ]
      }
    ]
  },
  "ui": {
    "theme": "GitHub"
  }
}
"""


def test_install_keeps_everything_of_the_users_and_uninstall_gives_it_back() -> None:
    edit = HOOKS.add(USER_SETTINGS, "settings.json", COMMAND, version=None, notify=True)
    assert edit.after is not None and edit.events == len(EVENTS)
    data = json.loads(edit.after)
    assert data["security"] == {"auth": {"selectedType": "oauth-personal"}}
    assert data["ui"] == {"theme": "GitHub"}
    assert data["hooks"]["BeforeTool"][0]["matcher"] == "write_file"  # the user's, first
    assert data["hooks"]["BeforeTool"][1] == {"hooks": [handler(COMMAND)]}
    assert set(data["hooks"]) == set(EVENTS)
    assert handler(COMMAND)["timeout"] == 5000  # Gemini CLI counts milliseconds
    assert edit.created_keys == [f"hooks.{e}" for e in EVENTS if e != "BeforeTool"]
    # Idempotent: a second install has nothing to change.
    again = HOOKS.add(edit.after, "settings.json", COMMAND, version=None, notify=True)
    assert again.after is None
    record = Record(before_sha256="x", after_sha256="y", created_keys=edit.created_keys)
    removal = HOOKS.remove(edit.after, "settings.json", record)
    assert removal.after == USER_SETTINGS and removal.removed == len(EVENTS)


def test_a_file_agentbar_created_goes_away_again() -> None:
    edit = HOOKS.add(None, "settings.json", COMMAND, version=None, notify=True)
    assert edit.after is not None and edit.created_keys[0] == "hooks"
    record = Record(before_sha256=None, after_sha256="y", created_keys=edit.created_keys)
    assert HOOKS.remove(edit.after, "settings.json", record).after is None


def test_hooks_turned_off_are_named() -> None:
    text = '{"hooksConfig": {"enabled": false}}\n'
    edit = HOOKS.add(text, "settings.json", COMMAND, version=None, notify=True)
    assert edit.notes and "hooksConfig.enabled" in edit.notes[0]


def test_a_broken_file_is_refused_with_a_clear_error() -> None:
    with pytest.raises(HooksFileError, match="not valid JSON"):
        HOOKS.add("{broken", "settings.json", COMMAND, version=None, notify=True)
    with pytest.raises(HooksFileError, match="not an object"):
        HOOKS.add('{"hooks": []}', "settings.json", COMMAND, version=None, notify=True)
