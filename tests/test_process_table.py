"""The real process table (``PsutilProcessTable``) over this machine's processes: a new pid's
start time and name, read from one ``/proc/<pid>/stat`` on Linux, agree with psutil's, and a
process whose name matches is inspected in full (real child processes, no fakes)."""

from __future__ import annotations

import subprocess
import sys

import psutil
import pytest

from agentbar.core import procs
from agentbar.core.model import Process


def test_start_times_and_names_agree_with_psutil() -> None:
    boot = psutil.boot_time()
    compared = 0
    for pid in psutil.pids():
        found = procs._started_and_named(pid, boot)
        try:
            proc = psutil.Process(pid)
            started, name = proc.create_time(), proc.name()
        except psutil.Error:
            continue  # gone meanwhile
        if found is None:
            continue
        assert abs(found[0] - started) < 0.05, (pid, found, started)
        assert name.startswith(found[1]), (pid, found, name)  # the kernel keeps 15 characters
        compared += 1
    assert compared > 5


def test_a_matching_process_is_inspected_and_its_exit_seen() -> None:
    child = subprocess.Popen(["sleep", "30"])
    try:
        table = procs.PsutilProcessTable(["sleep"])
        assert table.refresh() is True
        (mine,) = [p for p in table.candidates() if p.pid == child.pid]
        assert mine.name == "sleep"
        assert mine.cmdline == ("sleep", "30")
        assert table.is_alive(Process(pid=mine.pid, create_time=mine.create_time))
        assert table.refresh() is False  # nothing new
    finally:
        child.kill()
        child.wait()
    assert table.refresh() is True  # a candidate left
    assert child.pid not in {p.pid for p in table.candidates()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_a_name_with_parentheses_and_spaces_is_read_whole(tmp_path: object) -> None:
    import shutil
    from pathlib import Path

    odd = Path(str(tmp_path)) / "my (odd) name"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", odd)
    child = subprocess.Popen([str(odd), "30"])
    try:
        found = procs._started_and_named(child.pid, psutil.boot_time())
        assert found is not None
        assert found[1] == "my (odd) name"
        assert abs(found[0] - psutil.Process(child.pid).create_time()) < 0.05
    finally:
        child.kill()
        child.wait()
