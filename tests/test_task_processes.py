"""A launched task's agent process runs its own session, never one matched to it by folder:
a fork started in the folder the original just ran in left the original "done" and alive
(the conformance run of opencode's fork), with the real engine on real files and a fake
process table and clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_harness import Rig, make_rig, new_transcript

from agentbar.core.engine_messages import TaskBound, TaskStarted
from agentbar.core.model import Agent, Process, SessionKey
from agentbar.core.sources.base import ProcessInfo

CLAUDE = Agent("claude")
ORIGINAL = "aaaaaaaa-0000-4000-8000-000000000001"
FORK = "bbbbbbbb-0000-4000-8000-000000000002"


@pytest.fixture
def rig(tmp_path: Path) -> Any:
    r = make_rig(tmp_path)
    yield r
    r.close()


def _ended_original(rig: Rig) -> None:
    """The original ran under pid 100 and exited a moment ago."""
    rig.claude_process(100)
    rig.open()
    t = new_transcript(ORIGINAL, start=rig.clock.time() - 4)
    rig.write(rig.transcript_path(ORIGINAL), t.prompt("hi"), t.text("Hello."), t.turn_duration())
    rig.settle()
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("done", None)
    rig.processes.remove(100)
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("ended", None)


def _started(rig: Rig, pid: int, *, ppid: int = 1, name: str = "claude") -> Process:
    """A client process started now in the original's folder."""
    now = rig.clock.time()
    rig.processes.add(
        ProcessInfo(
            pid=pid, ppid=ppid, create_time=now, name=name, cmdline=(name,), cwd="/work/demo"
        )
    )
    return Process(pid=pid, create_time=now)


def test_a_process_started_in_the_folder_is_taken_for_the_session_it_may_resume(rig: Rig) -> None:
    """The heuristic the launched tasks are kept out of: a client started in the folder just
    after the session's last line is that session resumed (``claude --continue`` by hand)."""
    _ended_original(rig)
    _started(rig, 200)
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("done", None)


def test_a_launched_tasks_agent_leaves_the_session_it_did_not_start(rig: Rig) -> None:
    _ended_original(rig)
    assert rig.engine is not None
    rig.engine.post(TaskStarted("t1", _started(rig, 200)))
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("ended", None)
    # Its own new session, first seen after it started, is matched to it by folder as before.
    t = new_transcript(FORK, start=rig.clock.time())
    rig.write(rig.transcript_path(FORK), t.prompt("forked"))
    rig.settle()
    rig.tick(0.5)
    fork = rig.sessions()[FORK]
    assert fork.process is not None and fork.process.pid == 200
    assert rig.state(ORIGINAL) == ("ended", None)


def test_a_wrappers_agent_is_its_tasks_too(rig: Rig) -> None:
    """``node opencode`` starts the native binary: the PTY's child is the wrapper, and the
    child, a client process of the same agent, is the one matched by folder."""
    _ended_original(rig)
    assert rig.engine is not None
    rig.engine.post(TaskStarted("t1", _started(rig, 200)))
    _started(rig, 201, ppid=200)
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("ended", None)


def test_a_child_of_a_bound_wrapper_is_not_free_for_another_session(rig: Rig) -> None:
    _ended_original(rig)
    assert rig.engine is not None
    wrapper = _started(rig, 200)
    rig.engine.post(TaskStarted("t1", wrapper))
    rig.engine.post(TaskBound("t1", SessionKey(CLAUDE, FORK), wrapper))
    _started(rig, 201, ppid=200)
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("ended", None)


def test_the_task_binding_its_process_lets_a_session_matched_by_folder_go(rig: Rig) -> None:
    """Matched by folder before the task's start was read (the engine's tick ran between the
    spawn and its message): the task's binding takes the process back."""
    _ended_original(rig)
    assert rig.engine is not None
    process = _started(rig, 200)
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("done", None)
    rig.engine.post(TaskStarted("t1", process))
    rig.engine.post(TaskBound("t1", SessionKey(CLAUDE, FORK), process))
    rig.settle()
    assert rig.state(ORIGINAL) == ("ended", None)
    rig.tick(0.5)
    assert rig.state(ORIGINAL) == ("ended", None)
