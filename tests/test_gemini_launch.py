"""Gemini CLI's launch profile: the command lines agentbar runs it with, and its keys (pure)."""

from __future__ import annotations

import pytest

from agentbar.core.agents.gemini import KIT
from agentbar.core.agents.gemini.files import AGENT, GeminiSource
from agentbar.core.agents.gemini.launch import LAUNCH
from agentbar.core.launch.commands import command_line
from agentbar.core.launch.request import BadLaunch, LaunchRequest, Mode, Program
from agentbar.core.sources.base import ProcessInfo

SID = "2b2ab139-5d0f-4096-b846-0957a6724455"
CURRENT = Program(argv=("gemini",), version="0.61.0")
OLD = Program(argv=("gemini",), version="0.38.2")


def test_a_new_session_gets_its_id_from_us_where_the_cli_takes_one() -> None:
    request = LaunchRequest(AGENT, "/work/demo", prompt="fix the tests")
    sid = LAUNCH.preassigned_id(request, CURRENT)
    assert sid is not None and len(sid) == 36
    line = command_line(LAUNCH, request, CURRENT, hooks=None, session_id=sid)
    # The prompt is a positional argument: the interactive TUI starts with it.
    assert line.argv == ("gemini", "--session-id", sid, "fix the tests")
    # The engine reads the id back off the process, as it does a resume's.
    proc = ProcessInfo(pid=1, ppid=0, create_time=0.0, name="node", cmdline=line.argv, cwd="/w")
    assert GeminiSource(KIT.homes({"HOME": "/h"})[0]).process_session_hint(proc) == sid
    # 0.38 has no --session-id, and an unknown version is not guessed at.
    assert LAUNCH.preassigned_id(request, OLD) is None
    assert LAUNCH.preassigned_id(request, Program(argv=("gemini",))) is None
    assert command_line(LAUNCH, request, OLD, hooks=None).argv == ("gemini", "fix the tests")


def test_resume_and_no_fork() -> None:
    resume = LaunchRequest(AGENT, "/work/demo", mode=Mode.RESUME, source=SID)
    assert LAUNCH.preassigned_id(resume, CURRENT) is None
    assert command_line(LAUNCH, resume, CURRENT, hooks=None).argv == ("gemini", "--resume", SID)
    fork = LaunchRequest(AGENT, "/work/demo", mode=Mode.FORK, source=SID)
    with pytest.raises(BadLaunch, match="/fork"):
        command_line(LAUNCH, fork, CURRENT, hooks=None)


def test_keys_and_what_a_child_must_not_inherit() -> None:
    assert LAUNCH.approve_keys(("│ ● 1. Allow once",)) == b"\r"
    assert LAUNCH.keys.deny == b"\x1b"
    assert "GEMINI_CLI_NO_RELAUNCH" in LAUNCH.session_vars
    assert LAUNCH.program_env == "AGENTBAR_GEMINI"
    assert LAUNCH.status is None and not LAUNCH.hooks_run_unreviewed(True)
    assert KIT.launch is LAUNCH


def test_hand_off_reads_its_file_and_todo_tools() -> None:
    tools = KIT.tools
    assert tools is not None
    assert tools.changed_files("WriteFile", {"file_path": "/w/a.py", "content": "x"}) == ["/w/a.py"]
    assert tools.changed_files("replace", {"file_path": "/w/b.py"}) == ["/w/b.py"]
    assert tools.changed_files("Shell", {"command": "rm x"}) == []
    todos = {"todos": [{"description": "write tests", "status": "in_progress"}, {"x": 1}]}
    assert tools.todos("write_todos", todos) == [("in_progress", "write tests")]
    assert tools.todos("Edit", {}) is None
    assert "gemini" in KIT.process_names and "node" in KIT.process_names
