"""The hook program as the agents run it: a real subprocess per event, with the command line
each agent's kit installs (``HookCaller``), real payload shapes (agent-formats.md 2.4-2.8 for
Claude Code, 4.1 and 4.3 for Codex), the line it appends."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentbar.core.agents.claude.events import CALLER as CLAUDE
from agentbar.core.agents.codex.events import CALLER as CODEX
from agentbar.core.agents.gemini.hooks import CALLER as GEMINI
from agentbar.core.hooks.spec import HookCaller
from agentbar.core.model import Agent

REPO = Path(__file__).resolve().parents[1]
HOOK = REPO / "assets" / "hooks" / "agentbar_hook.py"
SID = "8f2c1d4e-5b6a-4c7d-9e8f-0a1b2c3d4e5f"
CODEX_SID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
CALLERS = {"claude": CLAUDE, "codex": CODEX, "gemini": GEMINI}
# Names the hook program refuses for an agent: its events folder would be outside events/,
# hidden, clash by case, or be impossible on some system.
UNSAFE_AGENT_NAMES = [
    "", "..", ".", "../x", "a/b", "a\\b", "a.b", ".hidden", "Claude", "-x", "1x", "x" * 33,
    "con", "nul", "com1", "a b", "a\nb", "é",
]  # fmt: skip


def caller_args(agent: str) -> list[str]:
    """What the agent's kit puts on the command line (an agent without a kit: its name)."""
    return CALLERS[agent].args() if agent in CALLERS else ["--agent", agent]


def run_hook(
    data_dir: Path | None,
    payload: Any = None,
    *,
    agent: str = "claude",
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-I", "-S", str(HOOK), *caller_args(agent)]
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    cmd += list(extra)
    if stdin is None:
        stdin = b"" if payload is None else json.dumps(payload).encode()
    base = {"PATH": os.environ.get("PATH", ""), "HOME": str(data_dir or "/nonexistent")}
    return subprocess.run(
        cmd, input=stdin, capture_output=True, env={**base, **(env or {})}, timeout=30, check=False
    )


def lines(data_dir: Path, agent: str = "claude", session: str = SID) -> list[dict[str, Any]]:
    path = data_dir / "events" / agent / f"{session}.jsonl"
    if not path.exists():
        return []
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.splitlines()]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return d


def claude(event: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": SID,
        "transcript_path": f"/home/u/.claude/projects/-work-api/{SID}.jsonl",
        "cwd": "/work/api",
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }


def codex(event: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": CODEX_SID,
        "transcript_path": "/home/u/.codex/sessions/2026/11/29/rollout.jsonl",
        "cwd": "/work/web",
        "hook_event_name": event,
        "model": "gpt-5-codex",
        **extra,
    }


BASH = {"command": "npm test -- --watch=false\necho done", "description": "Run the tests"}

CLAUDE_CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (claude("SessionStart", source="startup", model="claude-sonnet-4-5"), {"source": "startup"}),
    (claude("UserPromptSubmit", prompt="Fix the flaky test"), {}),
    (
        claude("PreToolUse", tool_name="Bash", tool_input=BASH, tool_use_id="toolu_1"),
        {"tool_name": "Bash", "tool_summary": "npm test -- --watch=false"},
    ),
    (
        claude("PermissionRequest", tool_name="Edit", tool_input={"file_path": "/w/a.py"}),
        {"tool_name": "Edit", "tool_summary": "/w/a.py"},
    ),
    (
        claude(
            "PermissionRequest",
            tool_name="AskUserQuestion",
            tool_input={"questions": [{"question": "Which database?", "options": []}]},
        ),
        {"tool_name": "AskUserQuestion", "tool_summary": "Which database?"},
    ),
    (
        claude(
            "PostToolUse",
            tool_name="Bash",
            tool_input=BASH,
            tool_response={"stdout": "x" * 50_000},
            tool_use_id="toolu_1",
        ),
        {"tool_name": "Bash"},
    ),
    (
        claude(
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input=BASH,
            error="exit status 1",
            tool_use_id="toolu_1",
        ),
        {"error": "exit status 1"},
    ),
    (
        claude(
            "Notification",
            notification_type="permission_prompt",
            message="Claude needs your permission to use Bash",
        ),
        {"notification_type": "permission_prompt", "message": "Claude needs your permission"},
    ),
    (
        claude("Notification", notification_type="idle_prompt", message="Claude is waiting"),
        {"notification_type": "idle_prompt"},
    ),
    (
        claude(
            "Stop",
            stop_hook_active=False,
            last_assistant_message="All tests pass.\n\nShall I commit?",
            background_tasks=[],
        ),
        {"last_assistant_message": "All tests pass.\n\nShall I commit?"},
    ),
    (
        claude("StopFailure", error="rate_limit", error_details="429 Too Many Requests"),
        {"error": "rate_limit: 429 Too Many Requests"},
    ),
    (
        claude("SubagentStop", agent_id="a1", agent_type="Explore", stop_hook_active=False),
        {"agent_id": "a1"},
    ),
    (claude("SessionEnd", reason="prompt_input_exit"), {"reason": "prompt_input_exit"}),
]


@pytest.mark.parametrize(("payload", "expect"), CLAUDE_CASES, ids=lambda c: str(c)[:40])
def test_each_claude_event_appends_one_line(
    data: Path, payload: dict[str, Any], expect: dict[str, Any]
) -> None:
    result = run_hook(data, payload, env={"CLAUDE_PID": "4242"})
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    (line,) = lines(data)
    assert line["v"] == 1
    assert (line["agent"], line["event"], line["session_id"]) == (
        "claude",
        payload["hook_event_name"],
        SID,
    )
    assert (line["cwd"], line["transcript_path"]) == ("/work/api", payload["transcript_path"])
    assert line["pid"] == 4242
    assert line["permission_mode"] == "default"
    assert abs(line["ts"] - __import__("time").time()) < 60
    for key, value in expect.items():
        assert str(line[key]).startswith(value), (key, line[key])
    assert "tool_response" not in line and "prompt" not in line


CODEX_CASES: list[tuple[dict[str, Any], dict[str, Any], bytes]] = [
    (codex("SessionStart", source="startup", permission_mode="default"), {}, b""),
    (codex("UserPromptSubmit", turn_id="t1", prompt="Add a login page"), {"turn_id": "t1"}, b""),
    (
        codex("PreToolUse", turn_id="t1", tool_name="Bash", tool_input={"command": "ls -la"}),
        {"tool_summary": "ls -la"},
        b"",
    ),
    (
        codex(
            "PermissionRequest",
            turn_id="t1",
            tool_name="apply_patch",
            tool_input={
                "command": "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n"
                "*** Add File: src/b.py\n+z\n*** End Patch",
                "description": "edit files",
            },
        ),
        {"tool_summary": "apply_patch src/a.py, src/b.py"},
        b"",
    ),
    (codex("PostToolUse", turn_id="t1", tool_name="Bash", tool_response="ok"), {}, b""),
    (
        codex("Stop", turn_id="t1", stop_hook_active=False, last_assistant_message="Done."),
        {"last_assistant_message": "Done."},
        b"{}\n",
    ),
    (
        codex("SubagentStop", turn_id="t1", agent_id="x", agent_type="worker"),
        {"agent_id": "x"},
        b"{}\n",
    ),
    (codex("StopFailure", turn_id="t1", error="server_error"), {"error": "server_error"}, b""),
]


@pytest.mark.parametrize(("payload", "expect", "stdout"), CODEX_CASES, ids=lambda c: str(c)[:40])
def test_each_codex_event_appends_one_line(
    data: Path, payload: dict[str, Any], expect: dict[str, Any], stdout: bytes
) -> None:
    result = run_hook(data, payload, agent="codex")
    # Only Stop and SubagentStop print, and only Codex's no-op "{}".
    assert (result.returncode, result.stdout, result.stderr) == (0, stdout, b"")
    (line,) = lines(data, "codex", CODEX_SID)
    assert (line["agent"], line["event"], line["cwd"]) == (
        "codex",
        payload["hook_event_name"],
        "/work/web",
    )
    for key, value in expect.items():
        assert line[key] == value


def test_claude_stop_prints_nothing(data: Path) -> None:
    result = run_hook(data, claude("Stop", last_assistant_message="ok"))
    assert result.stdout == b""


def test_codex_notify_reads_the_last_argument(data: Path) -> None:
    payload = {
        "type": "agent-turn-complete",
        "thread-id": CODEX_SID,
        "turn-id": "12",
        "cwd": "/work/web",
        "client": "codex-tui",
        "input-messages": ["rename the module"],
        "last-assistant-message": "Renamed. Want me to update the imports too?",
    }
    result = run_hook(data, agent="codex", stdin=b"", extra=("--notify", json.dumps(payload)))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    (line,) = lines(data, "codex", CODEX_SID)
    assert (line["event"], line["turn_id"], line["cwd"]) == (
        "agent-turn-complete",
        "12",
        "/work/web",
    )
    assert line["last_assistant_message"].endswith("imports too?")


def test_notify_without_a_thread_id_uses_codex_environment(data: Path) -> None:
    payload = {"type": "agent-turn-complete", "last-assistant-message": "ok"}
    run_hook(
        data,
        agent="codex",
        extra=("--notify", json.dumps(payload)),
        env={"CODEX_THREAD_ID": CODEX_SID},
    )
    assert [line["event"] for line in lines(data, "codex", CODEX_SID)] == ["agent-turn-complete"]


# -- session ids ---------------------------------------------------------------------------


def test_session_id_falls_back_to_the_agents_own_environment(data: Path) -> None:
    no_id = {"hook_event_name": "Stop", "cwd": "/w"}
    run_hook(data, no_id, env={"CLAUDE_CODE_SESSION_ID": "from-claude", "CODEX_THREAD_ID": "x"})
    run_hook(data, no_id, agent="codex", env={"CODEX_THREAD_ID": "from-codex"})
    assert [line["session_id"] for line in lines(data, session="from-claude")] == ["from-claude"]
    got = lines(data, "codex", session="from-codex")
    assert [line["session_id"] for line in got] == ["from-codex"]


def test_an_agent_never_takes_another_agents_session_variable(data: Path) -> None:
    # Claude Code run from a Codex shell inherits CODEX_THREAD_ID: it names Codex's session.
    run_hook(data, {"hook_event_name": "Stop"}, env={"CODEX_THREAD_ID": "codex-thread"})
    assert not list(data.rglob("*.jsonl"))


def test_the_payloads_session_id_beats_the_environment(data: Path) -> None:
    run_hook(data, claude("Stop"), env={"CLAUDE_CODE_SESSION_ID": "other"})
    assert len(lines(data)) == 1
    assert not (data / "events" / "claude" / "other.jsonl").exists()


def test_an_agentbar_task_id_is_never_a_session_id(data: Path) -> None:
    run_hook(
        data,
        {"hook_event_name": "Stop"},
        env={"AGENTBAR_TASK_ID": "task-1", "NEZHA_TASK_ID": "task-1"},
    )
    assert not (data / "events" / "claude").exists() or not any(
        (data / "events" / "claude").iterdir()
    )


@pytest.mark.parametrize("bad", ["../../etc/passwd", "a/b", "..", ".hidden", "x" * 200, "a\nb"])
def test_a_session_id_unsafe_as_a_file_name_writes_nothing(data: Path, bad: str) -> None:
    result = run_hook(data, {**claude("Stop"), "session_id": bad})
    assert (result.returncode, result.stdout) == (0, b"")
    written = [p for p in data.rglob("*") if p.is_file()]
    assert written == []
    assert not (data.parent / "etc").exists()


# -- never harm the agent ------------------------------------------------------------------


def test_a_missing_data_dir_writes_nothing_and_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = run_hook(missing, claude("PreToolUse", tool_name="Bash", tool_input=BASH))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert not missing.exists()


def test_a_missing_data_dir_still_gives_codex_its_stop_answer(tmp_path: Path) -> None:
    result = run_hook(tmp_path / "nowhere", codex("Stop"), agent="codex")
    assert (result.returncode, result.stdout, result.stderr) == (0, b"{}\n", b"")


def test_an_unwritable_data_dir_writes_nothing(data: Path) -> None:
    (data / "events").write_text("a file where the folder should be")
    result = run_hook(data, claude("Stop"))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert (data / "events").read_text() == "a file where the folder should be"


def test_a_data_dir_that_is_a_file_writes_nothing(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "data"
    not_a_dir.write_text("")
    result = run_hook(not_a_dir, claude("Stop"))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root writes")
def test_a_read_only_data_dir_writes_nothing(data: Path) -> None:
    data.chmod(0o500)
    try:
        result = run_hook(data, claude("Stop"))
    finally:
        data.chmod(0o700)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    "stdin",
    [b"", b"not json", b"{", b"[1, 2]", b'"text"', b"\xff\xfe\x00", b'{"a": 1} trailing', b"null"],
)
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_garbage_on_stdin_exits_zero_silently(data: Path, stdin: bytes, agent: str) -> None:
    result = run_hook(data, stdin=stdin, agent=agent)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert not list(data.rglob("*.jsonl"))


@pytest.mark.parametrize(
    "argv",
    [(), ("--agent",), ("--data-dir",), ("--bogus", "x")]
    + [("--agent", bad) for bad in UNSAFE_AGENT_NAMES],
)
def test_bad_arguments_exit_zero_silently(data: Path, argv: tuple[str, ...]) -> None:
    cmd = [sys.executable, "-I", "-S", str(HOOK), *argv, "--data-dir", str(data)]
    cmd += ["--reply", "Stop={}"]  # not even the reply: a bad agent name is not ours to answer
    result = subprocess.run(
        cmd, input=json.dumps(claude("Stop")).encode(), capture_output=True, timeout=30, check=False
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert list(data.rglob("*")) == []


def test_any_agent_named_safely_is_taken_with_what_its_command_line_says(data: Path) -> None:
    # An agent the hook program has never heard of: its kit's command line is all it needs.
    caller = HookCaller(
        Agent("gemini-2"), pid_env="GEMINI_PID", session_envs=("GEMINI_SID",),
        replies=(("AfterAgent", '{"decision": "allow"}'),),
    )  # fmt: skip
    cmd = [sys.executable, "-I", "-S", str(HOOK), *caller.args(), "--data-dir", str(data)]
    env = {"GEMINI_PID": "777", "GEMINI_SID": "g-1", "CLAUDE_PID": "1"}
    for event in ("BeforeTool", "AfterAgent"):
        result = subprocess.run(
            cmd,
            input=json.dumps({"hook_event_name": event, "cwd": "/w"}).encode(),
            capture_output=True,
            env=env,
            timeout=30,
            check=False,
        )
        reply = b'{"decision": "allow"}\n' if event == "AfterAgent" else b""
        assert (result.returncode, result.stdout, result.stderr) == (0, reply, b"")
    got = lines(data, "gemini-2", "g-1")
    assert [(g["agent"], g["event"], g["pid"]) for g in got] == [
        ("gemini-2", "BeforeTool", 777),
        ("gemini-2", "AfterAgent", 777),
    ]


@pytest.mark.parametrize("bad", UNSAFE_AGENT_NAMES)
def test_a_kit_cannot_name_an_agent_the_hook_program_would_refuse(bad: str) -> None:
    with pytest.raises(ValueError, match="cannot name a hook events folder"):
        HookCaller(Agent(bad))


def test_data_dir_falls_back_to_the_environment(data: Path) -> None:
    result = run_hook(None, claude("Stop"), env={"AGENTBAR_DATA_DIR": str(data)})
    assert result.returncode == 0
    assert len(lines(data)) == 1


def test_data_dir_falls_back_to_the_platform_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    default = home / ".local" / "share" / "agentbar"
    default.mkdir(parents=True)
    run_hook(None, claude("Stop"), env={"HOME": str(home)})
    if sys.platform.startswith("linux"):
        assert len(lines(default)) == 1


def test_files_are_private(data: Path) -> None:
    run_hook(data, claude("Stop"))
    folder = data / "events" / "claude"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / f"{SID}.jsonl").stat().st_mode) == 0o600


# -- line shape ----------------------------------------------------------------------------


def test_long_fields_are_cut_and_the_line_stays_under_4_kib(data: Path) -> None:
    huge = "é" * 100_000
    payload = claude(
        "Stop",
        cwd="/w/" + "d" * 3000,
        transcript_path="/t/" + "p" * 3000,
        last_assistant_message=huge,
        message=huge,
        reason=huge,
        tool_name="Bash",
        tool_input={"command": huge},
        error=huge,
    )
    run_hook(data, payload)
    raw = (data / "events" / "claude" / f"{SID}.jsonl").read_bytes()
    assert len(raw) < 4096
    (line,) = lines(data)
    assert line["event"] == "Stop"
    assert len(line["last_assistant_message"]) <= 1000


def test_unicode_and_control_characters_survive_on_one_line(data: Path) -> None:
    text = "Fertig ✓ — 完成\u2028next\x00\x1b[31m"
    run_hook(data, claude("Stop", last_assistant_message=text, cwd="/wörk/ü"))
    raw = (data / "events" / "claude" / f"{SID}.jsonl").read_bytes()
    assert raw.count(b"\n") == 1
    (line,) = lines(data)
    assert (line["last_assistant_message"], line["cwd"]) == (text, "/wörk/ü")


def test_the_agent_pid_is_the_parent_when_the_agent_names_none(data: Path) -> None:
    run_hook(data, claude("Stop"))
    (line,) = lines(data)
    assert isinstance(line["pid"], int) and line["pid"] > 0


def test_a_hundred_concurrent_invocations_give_a_hundred_intact_lines(data: Path) -> None:
    long_message = "The answer, at length. " * 60
    procs = []
    for i in range(100):
        payload = claude(
            "PreToolUse" if i % 2 else "Stop",
            tool_name="Bash",
            tool_input={"command": f"echo {i} " + "x" * 400},
            last_assistant_message=f"{i}: {long_message}",
        )
        cmd = [
            sys.executable, "-I", "-S", str(HOOK), *caller_args("claude"), "--data-dir", str(data)
        ]  # fmt: skip
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        procs.append((proc, json.dumps(payload).encode()))
    for proc, body in procs:
        out, err = proc.communicate(body, timeout=60)
        assert (proc.returncode, out, err) == (0, b"", b"")
    got = lines(data)
    assert len(got) == 100
    # Every line parses, and each invocation's line is there exactly once.
    assert sorted(int(line["last_assistant_message"].split(":")[0]) for line in got) == list(
        range(100)
    )
    assert all(line["tool_summary"].startswith("echo ") for line in got)


@pytest.mark.parametrize(
    ("body", "event"),
    [
        ("def translate(event, payload):\n    return 'Stop', {**payload, 'cwd': '/t'}\n", "Stop"),
        ("def translate(event, payload):\n    raise RuntimeError('bug')\n", "AfterAgent"),
        ("def translate(event, payload):\n    return None\n", "AfterAgent"),
        ("def translate(event, payload):\n    return '', payload\n", "AfterAgent"),
        ("import nonexistent_module_xyz\n", "AfterAgent"),
        ("this is not python\n", "AfterAgent"),
        (None, "AfterAgent"),  # the file is gone
    ],
    ids=["translated", "raises", "garbage", "empty", "bad-import", "syntax", "missing"],
)
def test_a_kits_translator_names_the_event_and_a_broken_one_loses_nothing(
    data: Path, tmp_path: Path, body: str | None, event: str
) -> None:
    translator = tmp_path / "kit" / "myagent_hook_payload.py"
    translator.parent.mkdir()
    if body is not None:
        translator.write_text(body)
    caller = HookCaller(Agent("myagent"), translator=translator)
    cmd = [sys.executable, "-I", "-S", str(HOOK), *caller.args(), "--data-dir", str(data)]
    payload = {"hook_event_name": "AfterAgent", "session_id": "m-1", "cwd": "/w"}
    result = subprocess.run(
        cmd, input=json.dumps(payload).encode(), capture_output=True, timeout=30, check=False
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    (line,) = lines(data, "myagent", "m-1")
    assert line["event"] == event
    assert line["cwd"] == ("/t" if event == "Stop" else "/w")
