"""``agentbar status`` as a person and a script run it: filters, widths, the words after the
table, the first run's line. Real subprocesses over real transcripts in a throwaway HOME."""

from __future__ import annotations

import logging
import os
import pty
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from claude_lines import write_lines
from cli_runner import agentbar
from engine_harness import new_transcript

from agentbar.core.status_cli import FILES_LOGGED, log_input_notes
from agentbar.core.text import width_of

IDS = [
    f"{i:x}{i:x}{i:x}{i:x}{i:x}{i:x}{i:x}{i:x}-0000-4000-8000-00000000000{i:x}" for i in range(1, 8)
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    clean.update(HOME=str(home), AGENTBAR_DATA_DIR=str(tmp_path / "data"), COLUMNS="120")
    clean.pop("XDG_DATA_HOME", None)
    clean.pop("XDG_CONFIG_HOME", None)
    return clean


def write_claude(env: dict[str, str], sid: str, cwd: str, prompt: str, *, start: float) -> Path:
    t = new_transcript(sid, cwd, start=start)
    path = Path(env["HOME"]) / ".claude" / "projects" / cwd.replace("/", "-") / f"{sid}.jsonl"
    write_lines(path, [t.prompt(prompt), t.text("Done.", stop_reason="end_turn")])
    return path


def worktrees(env: dict[str, str]) -> list[str]:
    """Five worktrees deep in the HOME, and two older sessions elsewhere."""
    now = time.time()
    base = f"{env['HOME']}/projects/something-with-a-long-name/worktrees"
    for i in range(5):
        write_claude(
            env, IDS[i], f"{base}/agentbar-wt{i + 1}", f"データベース移行 wt{i + 1} " * 4,
            start=now - 600 - i,
        )  # fmt: skip
    write_claude(env, IDS[5], "/srv/old/api", "an old one", start=now - 5 * 86400)
    write_claude(env, IDS[6], "/srv/old/web", "an older one", start=now - 9 * 86400)
    return IDS


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
def test_the_table_fits_the_terminal(env: dict[str, str], columns: int) -> None:
    worktrees(env)
    result = agentbar({**env, "COLUMNS": str(columns)}, "status")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    table = [line for line in lines if not line.startswith(("(", "Limits:"))]
    assert len(table) == 6, result.stdout
    assert max(width_of(line) for line in table) <= columns, result.stdout
    for i in range(1, 6):  # five worktrees, five names: never the same cut prefix
        assert sum(f"agentbar-wt{i}" in line for line in table) == 1, result.stdout
    assert env["HOME"] not in result.stdout
    assert "~/" in result.stdout or columns < 120
    if columns >= 200:
        assert "~/projects/something-with-a-long-name/…/agentbar-wt1" in result.stdout


def test_filters(env: dict[str, str]) -> None:
    worktrees(env)

    def ids(*args: str) -> list[str]:
        result = agentbar(env, "status", "--json", *args)
        assert result.returncode == 0, result.stderr
        doc = orjson.loads(result.stdout)
        assert doc["total"] >= len(doc["sessions"])
        return [s["session_id"] for s in doc["sessions"]]

    assert ids() == IDS[:5]  # live and recent, newest first
    assert ids("--all") == IDS
    assert ids("--project", "agentbar-wt3") == [IDS[2]]
    assert ids("--project", "/srv/old") == []  # older ended: hidden unless asked for
    assert ids("--project", "/srv/old", "--all") == [IDS[5], IDS[6]]
    assert ids("--state", "done,ended", "--project", "srv") == [IDS[5], IDS[6]]
    assert ids("--since", "6d") == [*IDS[:5], IDS[5]]
    assert ids("--agent", "codex") == []
    assert ids("--host", "local", "--limit", "2") == IDS[:2]
    assert ids("--host", "devbox") == []
    limited = orjson.loads(agentbar(env, "status", "--json", "--limit", "2").stdout)
    assert limited["total"] == 5
    table = agentbar(env, "status", "--limit", "2").stdout
    assert "(2 of 5 shown; a larger --limit shows more)" in table
    assert "(2 older ended sessions are not shown; --all lists them)" in table


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--state", "sleeping"), "unknown state 'sleeping'"),
        (("--since", "soon"), "cannot read 'soon' as a time"),
        (("--limit", "0"), "limit must be 1 or more"),
        (("--limit", "many"), "limit must be a whole number"),
        (("--agent", "clod"), "unknown agent 'clod'"),
    ],
)
def test_bad_filters_exit_2_saying_why(
    env: dict[str, str], args: tuple[str, ...], words: str
) -> None:
    result = agentbar(env, "status", *args)
    assert result.returncode == 2
    assert words in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_empty_listings_say_why(env: dict[str, str]) -> None:
    assert agentbar(env, "status").stdout == "No agent sessions found.\n"
    write_claude(env, IDS[0], "/srv/old/api", "old", start=time.time() - 5 * 86400)
    out = agentbar(env, "status").stdout
    assert out.startswith("No live or recent sessions; 1 older ended one: agentbar status --all\n")
    assert "not shown" not in out
    out = agentbar(env, "status", "--project", "api").stdout
    assert out.startswith(
        "No live or recent sessions matching --project api; 1 older ended one: "
        "agentbar status --all --project api\n"
    )
    out = agentbar(env, "status", "--project", "nothing-like-it").stdout
    assert out.startswith("No sessions match --project nothing-like-it.\n")
    out = agentbar(env, "status", "--all", "--project", "nothing-like-it").stdout
    assert out.startswith("No sessions match --project nothing-like-it.\n")


def test_unknown_records_are_said_to_be_kept_and_the_log_names_them(env: dict[str, str]) -> None:
    path = write_claude(env, IDS[0], "/w/a", "ok", start=time.time() - 60)
    with open(path, "ab") as fh:
        fh.write(b'{"type":"brand-new-kind","sessionId":"x","timestamp":"2026-12-01T10:00:00Z"}\n')
    result = agentbar(env, "status")
    line = next(x for x in result.stdout.splitlines() if "unknown type" in x)
    assert "1 record of unknown type kept as-is, shown raw in the replay" in line
    assert "skipped" not in line and "agentbar.log" in line
    log = (Path(env["AGENTBAR_DATA_DIR"]) / "agentbar.log").read_text()
    assert f"{path}: the line at byte " in log and "unknown type 'brand-new-kind'" in log
    assert f"{path}: 1 record of unknown type kept as-is" in log
    # A second run reads nothing again: its line and the log still agree.
    again = agentbar(env, "status")
    assert "1 record of unknown type kept as-is" in again.stdout
    log = (Path(env["AGENTBAR_DATA_DIR"]) / "agentbar.log").read_text()
    assert log.count(f"{path}: 1 record of unknown type kept as-is") == 2


def test_a_nameless_transcript_is_listed_by_its_lines(env: dict[str, str]) -> None:
    folder = Path(env["HOME"]) / ".claude" / "projects" / "-w-tool"
    t = new_transcript("tool-made-7", "/w/tool", start=time.time() - 60)
    write_lines(folder / "export.jsonl", [t.prompt("from a tool"), t.text("ok")])
    write_lines(folder / "notes.jsonl", [{"type": "note"}])
    result = agentbar(env, "status")
    assert "from a tool" in result.stdout
    assert "1 transcript naming no session ignored" in result.stdout
    log = (Path(env["AGENTBAR_DATA_DIR"]) / "agentbar.log").read_text()
    assert f"{folder / 'notes.jsonl'}: names no session in its lines; ignored" in log
    exported = agentbar(env, "export", "tool-made-7")
    assert exported.returncode == 0 and "from a tool" in exported.stdout


def run_on_a_terminal(env: dict[str, str], *args: str) -> tuple[str, str]:
    """``agentbar ARGS`` with its standard error on a pseudo-terminal: (stdout, stderr)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "agentbar.tray", *args],
            env=env,
            check=False,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=60,
        )
        os.close(follower)
        follower = -1
        said = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not chunk:
                break
            said += chunk
        return proc.stdout, said.decode()
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)


def test_the_first_run_says_what_it_found_and_what_next(env: dict[str, str]) -> None:
    worktrees(env)
    _, said = run_on_a_terminal(env, "status")
    assert "first run: 7 sessions, 0 need you. Next: `agentbar hooks install` for exact " in said
    assert "approvals (claude); `agentbar autostart enable` to start with your desktop." in said
    _, said = run_on_a_terminal(env, "status")
    assert "first run" not in said  # once only


def test_the_first_run_leaves_out_the_hooks_already_there(env: dict[str, str]) -> None:
    worktrees(env)
    installed = agentbar(env, "hooks", "install", "--agent", "claude", "--yes")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    for leftover in Path(env["AGENTBAR_DATA_DIR"]).glob("index.sqlite3*"):
        leftover.unlink()
    _, said = run_on_a_terminal(env, "status")
    assert "first run: 7 sessions" in said and "hooks install" not in said


def test_the_first_run_line_stays_off_scripts(env: dict[str, str]) -> None:
    worktrees(env)
    out, said = run_on_a_terminal(env, "status", "--json")
    assert "first run" not in said and "first run" not in out
    orjson.loads(out)


def test_version() -> None:
    from agentbar.core.cli import version

    for module in ("agentbar.tray", "agentbar.core.cli"):
        result = subprocess.run(
            [sys.executable, "-m", module, "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (result.returncode, result.stdout) == (0, f"agentbar {version()}\n")
        assert version() != "unknown"


@dataclass
class Counted:
    """A stream's counters, as ``log_input_notes`` reads them."""

    path: str
    malformed: int = 0
    oversized: int = 0
    unknown: int = 0
    odd_times: int = 0
    clamped: int = 0


def test_the_log_names_files_in_one_record_bounded(caplog: pytest.LogCaptureFixture) -> None:
    streams = [Counted(f"/t/{i}.jsonl", unknown=i + 1) for i in range(24)] + [Counted("/t/ok")]
    with caplog.at_level(logging.INFO, logger="agentbar.core.status_cli"):
        log_input_notes(streams, ["/t/nameless.jsonl"])
    (record,) = caplog.records
    lines = record.getMessage().splitlines()
    assert lines[0] == "odd input, by file:"
    assert lines[1] == "  /t/0.jsonl: 1 record of unknown type kept as-is, shown raw in the replay"
    assert lines[2].startswith("  /t/1.jsonl: 2 records of unknown type kept as-is")
    assert len(lines) == 1 + FILES_LOGGED + 1 and lines[-1] == "  … and 5 more files"
    assert "/t/ok" not in record.getMessage()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="agentbar.core.status_cli"):
        log_input_notes([Counted("/t/ok")], [])
    assert caplog.records == []
