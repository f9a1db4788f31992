"""The progress of the first reading in ``agentbar status``: a bar on a terminal's stderr while a
cold status reads a large history (a real PTY), nothing when stderr is piped, stdout the same
either way; ``status --json`` carries the ``progress`` object; ``agentbar watch`` draws it too
until it says it watches; ``agentbar usage --host`` draws the host's own reading. The bar's line
and its drawing are checked on their own with set values."""

from __future__ import annotations

import io
import os
import re
import signal
import sys
import time
from pathlib import Path

import orjson
import pytest
from big_history import SESSIONS
from cli_runner import agentbar
from ptyprocess import PtyProcess
from remote_far import FarHome, near_settings

from agentbar.core.engine_messages import STARTING, IndexProgress
from agentbar.core.progress_bar import CLEAR, ProgressBar, bar_line
from agentbar.core.progress_text import progress_json, reading_line, sizes, tooltip_part

GB = 1 << 30
MB = 1 << 20
COLUMNS = 100


def reading(done: int, total: int, *, live: bool = True) -> IndexProgress:
    return IndexProgress(
        live_ready=live, done=False, files_done=3, files_total=9, bytes_done=done,
        bytes_total=total,
    )  # fmt: skip


def test_the_words_say_what_is_read_and_how_far() -> None:
    assert reading_line(STARTING) == "Reading live sessions…"
    assert reading_line(reading(0, 0)) == "Reading history…"
    assert reading_line(reading(int(1.3 * GB), int(3.1 * GB))) == (
        "Reading history: 41 % (1.3 of 3.1 GB)"
    )
    assert reading_line(reading(3 * GB, 3 * GB)) == "Reading history: 99 % (3.0 of 3.0 GB)"
    assert reading_line(IndexProgress(live_ready=True, done=True)) is None
    assert sizes(640 * MB, 3 * GB) == "640 MB of 3.0 GB"
    assert sizes(12, 900) == "12 bytes of 900 bytes"
    assert sizes(0, 646 * MB) == "0 of 646 MB"
    assert tooltip_part(reading(GB, 2 * GB)) == (
        "reading history: 50 % (1.0 of 2.0 GB), live sessions are up to date"
    )
    assert tooltip_part(STARTING) == "reading live sessions…"
    assert progress_json(reading(GB, 4 * GB)) == {
        "host": "local", "live_ready": True, "done": False, "files_done": 3, "files_total": 9,
        "bytes_done": GB, "bytes_total": 4 * GB, "fraction": 0.25,
    }  # fmt: skip


def test_the_bar_line_has_the_bar_percent_sizes_and_speed() -> None:
    line = bar_line(reading(GB, 4 * GB), seconds=8.0)
    assert line == (
        "agentbar: reading history [#####---------------] 25 %  1.0 of 4.0 GB  128 MB/s"
    )
    assert bar_line(STARTING, seconds=2.4) == "agentbar: reading live sessions… 2 s"
    assert bar_line(reading(GB, 4 * GB), 8.0, "agentbar: box: ") == (
        "agentbar: box: reading history [#####---------------] 25 %  1.0 of 4.0 GB  128 MB/s"
    )
    assert bar_line(IndexProgress(live_ready=True, done=True), seconds=9.0) is None


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_is_drawn_on_a_terminal_only_and_cleared_at_the_end() -> None:
    values = iter([STARTING, reading(MB, 4 * MB), reading(2 * MB, 4 * MB)])
    current = [STARTING]

    def progress() -> IndexProgress:
        current[0] = next(values, current[0])
        return current[0]

    terminal = Terminal()
    with ProgressBar(progress, terminal, grace=0.0, columns=lambda: 60):
        time.sleep(1.0)
    drawn = terminal.getvalue()
    frames = drawn.split(CLEAR)
    assert frames[0] == "" and frames[-1] == ""  # starts at the line's start, ends cleared
    assert "agentbar: reading live sessions… 0 s" in frames
    assert any(f.startswith("agentbar: reading history [##########") for f in frames)
    assert all(len(f) <= 59 for f in frames)

    piped = io.StringIO()
    with ProgressBar(progress, piped, grace=0.0):
        time.sleep(0.5)
    assert piped.getvalue() == ""


def on_terminal(argv: list[str], env: dict[str, str]) -> str:
    """Everything ``argv`` writes to the terminal it runs on (a PTY of COLUMNS columns)."""
    child = PtyProcess.spawn(argv, env=env, dimensions=(24, COLUMNS))
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(child.read(65536))
        except EOFError:
            break
    child.wait()
    assert child.exitstatus == 0, b"".join(chunks)
    return b"".join(chunks).decode()


@pytest.mark.slow
def test_a_cold_status_draws_a_bar_on_a_terminal_and_nothing_when_piped(
    big_history: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.update(HOME=str(big_history), COLUMNS=str(COLUMNS), TERM="xterm")
    env.pop("XDG_DATA_HOME", None)
    env.pop("XDG_CONFIG_HOME", None)

    piped = agentbar(dict(env, AGENTBAR_DATA_DIR=str(tmp_path / "piped")), "status", timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""  # no bar, no escape, nothing
    assert piped.stdout.startswith("STATE")

    shown = on_terminal(
        [sys.executable, "-m", "agentbar.tray", "status"],
        dict(env, AGENTBAR_DATA_DIR=str(tmp_path / "terminal")),
    )
    frames = shown.split(CLEAR)
    assert any(f.startswith("agentbar: reading") for f in frames[:-1]), frames[:3]
    # The bar is cleared before the table: what stays on the terminal is what a pipe gets
    # (but for the ages, which move on between the two runs), and the first run's line.
    table, first_run = frames[-1].replace("\r\n", "\n").split("agentbar: first run: ")
    assert first_run.endswith("to start with your desktop.\n") and "need you" in first_run
    assert without_ages(table) == without_ages(piped.stdout)

    as_json = agentbar(
        dict(env, AGENTBAR_DATA_DIR=str(tmp_path / "piped")), "status", "--json", timeout=300
    )
    assert as_json.stderr == ""
    progress = orjson.loads(as_json.stdout)["progress"]
    assert progress["done"] is True and progress["live_ready"] is True
    assert progress["fraction"] == 1.0


@pytest.mark.slow
def test_watch_draws_the_bar_until_it_watches(big_history: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.update(HOME=str(big_history), TERM="xterm", AGENTBAR_DATA_DIR=str(tmp_path / "data"))
    child = PtyProcess.spawn(
        [sys.executable, "-m", "agentbar.tray", "watch"], env=env, dimensions=(24, COLUMNS)
    )
    shown = ""
    try:
        while "changes from now on" not in shown:
            shown += child.read(65536).decode()
    finally:
        child.kill(signal.SIGINT)
        child.wait()
    before, watching = shown.rsplit(CLEAR, 1)
    assert any(f.startswith("agentbar: reading") for f in before.split(CLEAR))
    assert watching.startswith(f"agentbar: watching {SESSIONS} sessions; changes from now on")


@pytest.mark.slow
def test_usage_host_draws_the_host_s_first_reading_on_a_terminal(
    big_history: Path, tmp_path: Path
) -> None:
    """``agentbar usage --host box`` while the agentbar there reads its history for the first
    time: on a terminal, the bar says how far the host's reading has come (from the progress
    frames the far side sends), cleared before the report, which is what a pipe gets."""
    far = FarHome(tmp_path / "far")
    far.root.mkdir()
    far.home.symlink_to(big_history)  # read, never written: the far index is in far.data
    near = tmp_path / "near"
    near_settings(near, far)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.update(HOME=str(near / "home"), AGENTBAR_DATA_DIR=str(near / "data"),
               AGENTBAR_CONFIG_DIR=str(near / "config"), TERM="xterm")  # fmt: skip
    env["COLUMNS"] = str(COLUMNS)  # the pipe's tables as wide as the terminal's
    shown = on_terminal([sys.executable, "-m", "agentbar.tray", "usage", "--host", "box"], env)
    frames = shown.split(CLEAR)
    assert any(f.startswith("agentbar: box: reading history") for f in frames[:-1]), frames[:3]
    piped = agentbar(env, "usage", "--host", "box", timeout=300)
    assert (piped.returncode, piped.stderr) == (0, "")
    assert frames[-1].replace("\r\n", "\n") == piped.stdout


def without_ages(table: str) -> str:
    """The table without its ACTIVE column's "3m ago"."""
    return re.sub(r"\s*\d+[smhd] ago$", "", table, flags=re.MULTILINE)
