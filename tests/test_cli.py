"""``agentbar status`` and ``agentbar watch`` as a user runs them: real subprocesses, a
throwaway HOME, the environment variables the agents honour."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from claude_lines import write_lines
from cli_runner import agentbar
from engine_harness import new_transcript

from agentbar.core.listing import select
from agentbar.core.status_table import render_table
from agentbar.core.text import ago

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
X = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    clean.update(HOME=str(home), AGENTBAR_DATA_DIR=str(tmp_path / "data"))
    clean.pop("XDG_DATA_HOME", None)
    clean.pop("XDG_CONFIG_HOME", None)
    return clean


def write_claude(root: Path, session_id: str, cwd: str, prompt: str, *, start: float) -> Path:
    t = new_transcript(session_id, cwd, start=start)
    path = root / "projects" / cwd.replace("/", "-") / f"{session_id}.jsonl"
    write_lines(path, [t.prompt(prompt), t.text("Done.", stop_reason="end_turn")])
    return path


def write_codex(home: Path, session_id: str, cwd: str, prompt: str, *, start: float) -> Path:
    path = (
        home / "sessions" / "2026" / "11" / "29" / f"rollout-2026-11-29T10-00-00-{session_id}.jsonl"
    )
    from claude_lines import iso

    lines = [
        {
            "timestamp": iso(start),
            "type": "session_meta",
            "payload": {"id": session_id, "cwd": cwd, "cli_version": "0.171.0"},
        },
        {
            "timestamp": iso(start + 1),
            "type": "event_msg",
            "payload": {"type": "user_message", "message": prompt},
        },
    ]
    write_lines(path, lines)
    return path


def test_status_json_lists_sessions_with_the_documented_fields(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    now = time.time()
    write_claude(home / ".claude", A, "/work/api", "Fix the flaky test", start=now - 3600)
    write_codex(home / ".codex", X, "/work/web", "Add a login page", start=now - 7200)
    result = agentbar(env, "status", "--json")
    assert result.returncode == 0, result.stderr
    doc = orjson.loads(result.stdout)
    rows = {row["session_id"]: row for row in doc["sessions"]}
    assert set(rows) == {A, X}
    required = {
        "agent",
        "session_id",
        "project",
        "title",
        "state",
        "waiting_for",
        "detail",
        "last_activity",
        "transcript",
        "pid",
        "task_id",
        "source",
    }
    for row in rows.values():
        assert required <= set(row)
    assert (rows[A]["agent"], rows[A]["project"], rows[A]["title"], rows[A]["state"]) == (
        "claude",
        "/work/api",
        "Fix the flaky test",
        "ended",
    )
    assert (rows[X]["agent"], rows[X]["project"], rows[X]["title"]) == (
        "codex",
        "/work/web",
        "Add a login page",
    )
    assert doc["diagnostics"]["malformed_lines"] == 0


def test_status_honours_claude_config_dir_and_codex_home(
    env: dict[str, str], tmp_path: Path
) -> None:
    now = time.time()
    write_claude(tmp_path / "elsewhere-claude", A, "/w/a", "from CLAUDE_CONFIG_DIR", start=now - 60)
    write_codex(tmp_path / "elsewhere-codex", X, "/w/b", "from CODEX_HOME", start=now - 60)
    write_claude(Path(env["HOME"]) / ".claude", B, "/w/c", "default home, not used", start=now - 60)
    env = dict(
        env,
        CLAUDE_CONFIG_DIR=str(tmp_path / "elsewhere-claude"),
        CODEX_HOME=str(tmp_path / "elsewhere-codex"),
    )
    doc = orjson.loads(agentbar(env, "status", "--json").stdout)
    assert {r["title"] for r in doc["sessions"]} == {"from CLAUDE_CONFIG_DIR", "from CODEX_HOME"}


def test_status_hides_old_ended_sessions_unless_all(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    now = time.time()
    write_claude(home / ".claude", A, "/w/recent", "recent", start=now - 3600)
    write_claude(home / ".claude", B, "/w/old", "old", start=now - 10 * 86400)
    table = agentbar(env, "status").stdout
    assert "recent" in table and "old" not in table.split("\n(")[0]
    assert "(1 older ended session is not shown; --all lists them)" in table
    everything = agentbar(env, "status", "--all").stdout
    assert "recent" in everything and "/w/old" in everything


def test_status_reports_skipped_input(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    path = write_claude(home / ".claude", A, "/w/a", "ok", start=time.time() - 60)
    with open(path, "ab") as fh:
        fh.write(b"garbage{{{\n")
    result = agentbar(env, "status")
    assert "(noticed while reading: 1 malformed line skipped; which files: " in result.stdout
    assert "agentbar.log" in result.stdout
    log = (Path(env["AGENTBAR_DATA_DIR"]) / "agentbar.log").read_text()
    assert f"{path}: 1 malformed line skipped" in log


def test_status_with_nothing_on_disk(env: dict[str, str]) -> None:
    result = agentbar(env, "status")
    assert (result.returncode, result.stdout) == (0, "No agent sessions found.\n")


def test_watch_prints_one_json_line_per_change(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "watch", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # A live agent: a Claude registry naming this test's own process, which is alive.
        sessions = home / ".claude" / "sessions"
        sessions.mkdir(parents=True)
        assert proc.stderr is not None
        ready = proc.stderr.readline()  # what came before is settled silently: wait it out
        assert ready == "agentbar: watching 0 sessions; changes from now on\n", ready
        t = new_transcript(A, "/w/live", start=time.time())
        path = home / ".claude" / "projects" / "-w-live" / f"{A}.jsonl"
        write_lines(path, [t.prompt("go")])
        from claude_lines import registry

        (sessions / f"{os.getpid()}.json").write_bytes(
            orjson.dumps(
                registry(os.getpid(), A, status="busy", cwd="/w/live", started_at=time.time())
            )
        )
        assert proc.stdout is not None
        first = orjson.loads(proc.stdout.readline())
        assert (first["session_id"], first["state"], first["prev_state"]) == (A, "running", None)
        assert set(first) >= {
            "ts",
            "agent",
            "session_id",
            "project",
            "state",
            "prev_state",
            "waiting_for",
            "detail",
            "source",
        }
        write_lines(path, [t.bash("rm -rf build")])
        (sessions / f"{os.getpid()}.json").write_bytes(
            orjson.dumps(
                registry(
                    os.getpid(),
                    A,
                    status="waiting",
                    waiting_for="permission prompt",
                    cwd="/w/live",
                    started_at=time.time(),
                )
            )
        )
        second = orjson.loads(proc.stdout.readline())
        assert (second["state"], second["waiting_for"], second["detail"], second["source"]) == (
            "input_required",
            "approval",
            "Bash: rm -rf build",
            "registry",
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0


def test_two_agentbars_share_the_data_dir_safely(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    write_claude(home / ".claude", A, "/w/a", "shared", start=time.time() - 60)
    owner = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "watch", "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)
        result = agentbar(env, "status", "--json")
        assert result.returncode == 0, result.stderr
        assert [r["title"] for r in orjson.loads(result.stdout)["sessions"]] == ["shared"]
    finally:
        owner.terminate()
        owner.wait(timeout=10)


def test_table_rendering() -> None:
    assert ago(None, 0) == "" and ago(90, 100) == "10s ago" and ago(0, 7200) == "2h ago"
    assert render_table([], now=0, width=80) == ""
    assert select([], now=0, show_all=False) == []
