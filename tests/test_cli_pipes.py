"""The commands' output read by a reader that goes away early (``| head``): real pipes, real
subprocesses, a throwaway HOME. Nothing but the lines read reaches the person: no traceback, no
"Broken pipe", exit 0."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_lines import write_lines
from engine_harness import new_transcript

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    now = time.time()
    for sid, project in ((A, "/w/alpha"), (B, "/w/beta")):
        t = new_transcript(sid, project, start=now - 600)
        path = home / ".claude" / "projects" / project.replace("/", "-") / f"{sid}.jsonl"
        # A long answer: the export is far more than a pipe's buffer (64 KiB on Linux).
        answer = "\n".join(f"line {i}: " + "words " * 12 for i in range(3000))
        write_lines(path, [t.prompt(f"work on {project}"), t.text(answer, stop_reason="end_turn")])
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    clean.update(HOME=str(home), AGENTBAR_DATA_DIR=str(tmp_path / "data"), COLUMNS="120")
    clean.pop("XDG_DATA_HOME", None)
    clean.pop("XDG_CONFIG_HOME", None)
    return clean


def piped(env: dict[str, str], args: str, reader: str) -> subprocess.CompletedProcess[str]:
    """``agentbar ARGS | READER`` in bash, its status the command's own (pipefail)."""
    command = f"{shlex.quote(sys.executable)} -m agentbar.tray {args}"
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command} | {reader}"],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def closed_early(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    """``agentbar ARGS`` whose standard output's reader is gone before it writes a byte."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader at all: the first write fails with EPIPE
    try:
        return subprocess.run(
            [sys.executable, "-m", "agentbar.tray", *args],
            env=env,
            check=False,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    finally:
        os.close(write_end)


def quiet(stderr: str | bytes) -> None:
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    assert "Traceback" not in text and "Broken pipe" not in text and "BrokenPipe" not in text, text
    assert "Exception ignored" not in text, text


def test_export_into_head_is_quiet(env: dict[str, str]) -> None:
    result = piped(env, f"export {A[:8]}", "head -3")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 3
    quiet(result.stderr)


@pytest.mark.parametrize(
    "args", [("status", "--all"), ("status", "--json"), ("export", A[:8]), ("usage",)]
)
def test_a_reader_gone_before_the_first_write(env: dict[str, str], args: tuple[str, ...]) -> None:
    result = closed_early(env, *args)
    assert result.returncode == 0, result.stderr
    quiet(result.stderr)


@pytest.mark.parametrize("args", ["status --all", "status --all --json", "usage"])
def test_into_a_reader_that_reads_nothing(env: dict[str, str], args: str) -> None:
    """``| head -c 0`` ends before the command writes (its start takes longer): the first
    write, or the one at exit, meets no reader."""
    result = piped(env, args, "head -c 0")
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    quiet(result.stderr)


def test_watch_into_head_ends_at_its_next_line(env: dict[str, str]) -> None:
    command = f"{shlex.quote(sys.executable)} -m agentbar.tray watch --json"
    proc = subprocess.Popen(
        ["bash", "-c", f"set -o pipefail; {command} | head -1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert "watching" in proc.stderr.readline()
        sid = "cccccccc-0000-4000-8000-000000000003"
        path = Path(env["HOME"]) / ".claude" / "projects" / "-w-gamma" / f"{sid}.jsonl"
        t = new_transcript(sid, "/w/gamma", start=time.time())
        lines = []
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            # A turn begun, then ended: two changes each time; the second meets no reader.
            for line in (t.prompt("more"), t.text("ok", stop_reason="end_turn")):
                lines.append(line)
                write_lines(path, lines)
                time.sleep(0.5)
        assert proc.wait(timeout=30) == 0
        quiet(proc.stderr.read())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
