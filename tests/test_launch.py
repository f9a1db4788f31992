"""The task manager with real PTYs: the scripted fake agent (``fake_agent.py``) launched like
the real CLIs, bound to its session on every path, typed into, approved and denied from its
own screen, stopped cleanly (no zombie, ever), kept running through an agentbar restart, and
seen by a live engine (``task_id``, the PTY as a signal)."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import sys
import sysconfig
import termios
import threading
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
from launch_rig import FAKE_AGENT, launch_rig, zombies_of_this_process
from polling import wait_for

from agentbar.core.launch.manager import AlreadyRunning, NotWaiting
from agentbar.core.launch.request import BadLaunch, LaunchRequest, Mode
from agentbar.core.launch.task import BindPath, Status
from agentbar.core.model import Agent, Source, State, WaitingFor

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def no_zombies():
    yield
    wait_for(lambda: not zombies_of_this_process(), 5.0, "every child reaped")


# -- launching and binding ------------------------------------------------------------------


def test_claude_is_bound_by_its_preassigned_id_and_the_engine_names_the_task(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        info = rig.launch(manager, Agent("claude"), prompt="hello there")
        bound = rig.bound(manager, info.task_id)
        assert bound.binding is not None
        assert bound.binding.path is BindPath.SESSION_ID and bound.binding.seconds == 0.0
        # Confirmed by the agent's own SessionStart hook (the per-launch layer) or registry.
        assert bound.binding.confirmed_seconds is not None
        snap = rig.state(bound, lambda s: s.state.detail == "You said: hello there")
        assert snap.task_id == info.task_id and snap.state.state is State.DONE
        assert snap.process is not None and snap.process.pid == info.pid
        assert snap.state.detail == "You said: hello there"
        assert snap.project == str(rig.project)


def test_codex_is_bound_by_its_session_start_hook(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("codex")).task_id)
        assert info.binding is not None and info.binding.path is BindPath.HOOK
        events = rig.settings.events_dir(Agent("codex")) / f"{info.session_id}.jsonl"
        assert b'"event":"SessionStart"' in events.read_bytes()
        assert info.binding.seconds < 5.0


def test_an_events_file_from_before_the_launch_is_not_taken(tmp_path: Path):
    with launch_rig(tmp_path, hook_delay="1.0") as rig:
        folder = rig.settings.events_dir(Agent("codex"))
        folder.mkdir(parents=True, exist_ok=True)
        other = "0199aaaa-0000-7000-8000-000000000001"
        # Another session's events, written before the launch, even naming the same pid range.
        (folder / f"{other}.jsonl").write_text(
            f'{{"v":1,"ts":{time.time()},"agent":"codex","event":"SessionStart",'
            f'"session_id":"{other}","pid":{os.getpid()}}}\n'
        )
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("codex")).task_id)
        assert info.session_id != other and info.binding is not None
        assert info.binding.path is BindPath.HOOK


def test_claude_without_hooks_is_bound_by_its_registry(tmp_path: Path):
    with launch_rig(tmp_path, hooks="0", ignore_session_id="1") as rig:
        manager = rig.manager()
        info = rig.launch(manager, Agent("claude"))
        assert info.binding is not None and info.binding.path is BindPath.SESSION_ID

        def by_registry():
            now = manager.get(info.task_id)
            return now if now.binding and now.binding.path is BindPath.REGISTRY else None

        found = wait_for(by_registry, 10, "the registry binding")
        registry = rig.home / ".claude" / "sessions" / f"{info.pid}.json"
        assert found.session_id is not None and found.session_id in registry.read_text()


def test_codex_without_hooks_is_bound_by_status_typed_into_its_own_pty(tmp_path: Path):
    with launch_rig(tmp_path, hooks="0", work="0.05") as rig:
        manager = rig.manager(engine=False)  # no engine: nothing else could tell
        info = rig.launch(manager, Agent("codex"))
        bound = rig.bound(manager, info.task_id, timeout=15)
        assert bound.binding is not None and bound.binding.path is BindPath.STATUS
        assert bound.binding.seconds >= 3.5  # only once the other ways had their chance
        assert "Session:" in manager.task(info.task_id).screen_text()


def test_the_engine_binds_a_codex_session_by_its_process(tmp_path: Path):
    with launch_rig(tmp_path, hooks="0") as rig:
        # The fake agent run under the name "codex" (a link to this Python), so the engine's
        # process table sees a Codex client in the project folder, as it would the real one.
        link = tmp_path / "bin" / "codex"
        link.parent.mkdir()
        link.symlink_to(sys.executable)
        site = sysconfig.get_paths()["purelib"]
        manager = rig.manager(scrape_status=False, extra_env={"PYTHONPATH": site})
        program = (str(link), str(FAKE_AGENT), "--agent", "codex")
        manager.options = replace(manager.options, programs={Agent("codex"): program})
        info = rig.launch(manager, Agent("codex"), prompt="hi")
        bound = rig.bound(manager, info.task_id, timeout=15)
        assert bound.binding is not None and bound.binding.path is BindPath.PROCESS
        rig.state(bound, lambda s: s.task_id == info.task_id)  # the engine names the task


def test_a_resumed_session_is_bound_at_once_and_a_fork_gets_a_new_id(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        first = rig.bound(manager, rig.launch(manager, Agent("claude"), prompt="one").task_id)
        rig.state(first, lambda s: s.state.detail == "You said: one")
        manager.stop(first.task_id)
        source = first.session_id
        assert source is not None
        snap = rig.state(first, lambda s: s.state.state is State.ENDED)
        resumed = manager.launch_from(snap, Mode.RESUME, prompt="two")
        assert resumed.binding is not None and resumed.binding.path is BindPath.RESUME
        assert resumed.session_id == source
        back = rig.state(resumed, lambda s: s.state.detail == "You said: two")
        assert back.task_id == resumed.task_id and back.state.state is State.DONE
        forked = manager.launch_from(back, Mode.FORK)
        fork_info = rig.bound(manager, forked.task_id)
        assert fork_info.session_id not in (None, source)
        assert fork_info.binding is not None and fork_info.binding.path is BindPath.SESSION_ID
        # A second resume while a task holds the session is refused, and starts nothing.
        running = len(manager.running())
        with pytest.raises(AlreadyRunning, match=f"task {resumed.task_id} runs this session"):
            manager.launch_from(back, Mode.RESUME)
        assert len(manager.running()) == running


def test_claude_clear_binds_the_new_session_of_the_same_process(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("claude"), prompt="first").task_id)
        old = info.session_id
        manager.send_text(info.task_id, "/clear")

        def rebound():
            now = manager.get(info.task_id)
            return now if now.session_id not in (None, old) else None

        new = wait_for(rebound, 10, "the new session after /clear")
        assert new.binding is not None and new.binding.path in (BindPath.HOOK, BindPath.REGISTRY)
        manager.send_text(info.task_id, "second")
        snap = rig.state(new, lambda s: s.state.detail == "You said: second")
        assert snap.task_id == info.task_id


def test_a_launch_in_a_missing_folder_or_of_a_missing_program_says_why(tmp_path: Path):
    with launch_rig(tmp_path, engine=False) as rig:
        manager = rig.manager(engine=False)
        with pytest.raises(BadLaunch, match="is not a folder"):
            manager.launch(LaunchRequest(Agent("claude"), str(tmp_path / "nope")))
        from agentbar.core.launch.manager import TaskManager
        from agentbar.core.launch.options import LaunchOptions

        missing = TaskManager(
            rig.settings,
            options=LaunchOptions(programs={Agent("codex"): ("no-such-codex-here",)}),
            env=rig.env,
        )
        with pytest.raises(BadLaunch, match="not installed"):
            missing.launch(LaunchRequest(Agent("codex"), str(rig.project)))
        assert manager.tasks() == []


# -- typing, approving, denying -------------------------------------------------------------


@pytest.mark.parametrize("agent", [Agent("claude"), Agent("codex")])
def test_approve_from_outside_runs_the_command(tmp_path: Path, agent: Agent):
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, agent).task_id)
        manager.send_text(info.task_id, "run: touch approved.txt")
        waiting = wait_for(lambda: manager.get(info.task_id).waiting, 10, "the prompt")
        assert waiting.question in ("Do you want to proceed?",
                                    "Would you like to run the following command?")  # fmt: skip
        assert [t.task_id for t in manager.waiting()] == [info.task_id]
        rig.state(
            info,
            lambda s: (
                s.state.state is State.INPUT_REQUIRED and s.state.waiting_for is WaitingFor.APPROVAL
            ),
        )
        answer = manager.approve(info.task_id)
        assert answer.cleared and answer.answer == "approve"
        wait_for((rig.project / "approved.txt").exists, 10, "the command to run")
        snap = rig.state(info, lambda s: s.state.state is State.DONE)
        assert snap.state.detail.startswith("Ran it")
        assert manager.get(info.task_id).waiting is None


def test_approve_holds_when_the_screen_is_resized_while_the_dialog_settles(tmp_path: Path):
    """The window's waiting banner takes rows from its terminal as it appears: the task is
    resized while its approval waits out the dialog's settle, the lines above it redrawn or
    cut; it is the same dialog, and the approval is typed."""
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("claude")).task_id)
        manager.send_text(info.task_id, "run: touch resized.txt")
        wait_for(lambda: manager.get(info.task_id).waiting, 10, "the prompt")
        rows, cols = manager.get(info.task_id).rows, manager.get(info.task_id).cols
        resizing = threading.Timer(0.2, manager.resize, (info.task_id, rows - 6, cols - 30))
        resizing.start()
        answer = manager.approve(info.task_id)
        resizing.join()
        assert answer.cleared and answer.answer == "approve"
        wait_for((rig.project / "resized.txt").exists, 10, "the command to run")


def test_deny_refuses_and_a_task_without_a_prompt_gets_no_keys(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("codex")).task_id)
        before = manager.task(info.task_id).screen_text()
        with pytest.raises(NotWaiting):
            manager.approve(info.task_id)
        time.sleep(0.3)
        assert manager.task(info.task_id).screen_text() == before  # nothing was typed
        manager.send_text(info.task_id, "run: touch denied.txt")
        wait_for(lambda: manager.get(info.task_id).waiting, 10, "the prompt")
        assert manager.deny(info.task_id).cleared
        snap = rig.state(info, lambda s: s.state.state is State.DONE)
        assert "will not run" in snap.state.detail
        assert not (rig.project / "denied.txt").exists()


def test_codex_without_hooks_shows_its_approval_wait_through_the_pty(tmp_path: Path):
    with launch_rig(tmp_path, hooks="0") as rig:
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("codex")).task_id, timeout=15)
        # A plain command (no escalation): the transcript alone would say "running".
        manager.send_text(info.task_id, "run: touch pty.txt")
        snap = rig.state(info, lambda s: s.state.state is State.INPUT_REQUIRED)
        assert snap.state.source in (Source.PTY, Source.TRANSCRIPT)
        assert snap.state.waiting_for is WaitingFor.APPROVAL
        assert "touch pty.txt" in snap.state.detail
        # The transcript may say so before the dialog is drawn: approve what is on screen.
        wait_for(lambda: manager.get(info.task_id).waiting, 10, "the prompt")
        manager.approve(info.task_id)
        rig.state(info, lambda s: s.state.state is State.DONE)


def test_text_is_typed_as_a_paste_then_sent(tmp_path: Path):
    with launch_rig(tmp_path) as rig:
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("claude")).task_id)
        manager.send_text(info.task_id, "two\nlines")
        # One prompt of two lines (a paste), not two prompts: its answer's last line.
        snap = rig.state(info, lambda s: s.state.detail == "lines")
        assert snap.transcript is not None
        assert b'"content": "two\\nlines"' in Path(snap.transcript).read_bytes()
        manager.send_keys(info.task_id, ["h", "i", "enter"])
        rig.state(info, lambda s: s.state.detail == "You said: hi")


def test_attach_gets_the_scrollback_then_live_output_and_resize_reaches_the_pty(tmp_path: Path):
    with launch_rig(tmp_path, engine=False) as rig:
        manager = rig.manager(engine=False)
        info = rig.launch(manager, Agent("claude"))
        wait_for(lambda: "for shortcuts" in manager.task(info.task_id).screen_text(), 10, "banner")
        seen: list[bytes] = []
        backlog, detach = manager.attach(info.task_id, seen.append)
        assert b"Fake Claude Code" in backlog
        assert manager.get(info.task_id).clients == 1
        manager.send_keys(info.task_id, ["x", "y", "z"])
        wait_for(lambda: b"xyz" in b"".join(seen), 5, "the echo")
        detach()
        assert manager.get(info.task_id).clients == 0
        manager.resize(info.task_id, 30, 100)
        task = manager.task(info.task_id)
        size = fcntl.ioctl(task.terminal.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
        assert struct.unpack("HHHH", size)[:2] == (30, 100)
        assert manager.get(info.task_id).rows == 30


# -- stopping, exiting, keeping ---------------------------------------------------------------


def test_an_agent_that_exits_by_itself_is_ended_by_the_pty(tmp_path: Path):
    with launch_rig(tmp_path, hooks="0") as rig:  # (with hooks, its SessionEnd says so first)
        manager = rig.manager()
        info = rig.bound(manager, rig.launch(manager, Agent("claude"), prompt="hi").task_id)
        rig.state(info, lambda s: s.state.state is State.DONE)
        manager.send_text(info.task_id, "/exit")
        task = manager.task(info.task_id)
        assert task.exited.wait(10)
        done = manager.get(info.task_id)
        assert done.status is Status.EXITED and done.exit is not None and done.exit.code == 0
        snap = rig.state(info, lambda s: s.state.source is Source.PTY)
        assert snap.state.state is State.ENDED and "exit status 0" in snap.state.detail


def _stop_and_check(manager, info, child: bool = False) -> float:
    family = [psutil.Process(info.pid)]
    if child:
        family += wait_for(lambda: psutil.Process(info.pid).children(), 5, "the child")
    started = time.monotonic()
    stopped = manager.stop(info.task_id)
    took = time.monotonic() - started
    assert stopped.status is Status.EXITED
    for proc in family:
        assert not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    return took


def test_stop_uses_the_agents_own_exit_first(tmp_path: Path):
    with launch_rig(tmp_path, engine=False) as rig:
        manager = rig.manager(engine=False)
        info = rig.launch(manager, Agent("claude"))
        wait_for(lambda: "for shortcuts" in manager.task(info.task_id).screen_text(), 10, "banner")
        _stop_and_check(manager, info)
        exit_status = manager.get(info.task_id).exit
        assert exit_status is not None and exit_status.code == 0  # Ctrl-C twice, not a signal


def test_stop_escalates_to_sigterm_then_sigkill_and_takes_the_session_with_it(tmp_path: Path):
    with launch_rig(tmp_path, engine=False, deaf="1", child="1") as rig:
        manager = rig.manager(engine=False)
        info = rig.launch(manager, Agent("codex"))
        wait_for(lambda: "for agents" in manager.task(info.task_id).screen_text(), 10, "banner")
        _stop_and_check(manager, info, child=True)
        assert manager.get(info.task_id).exit.code == 143  # SIGTERM, handled
    with launch_rig(tmp_path / "2", engine=False, deaf="1", trap_term="1") as rig:
        manager = rig.manager(engine=False)
        info = rig.launch(manager, Agent("claude"))
        wait_for(lambda: "for shortcuts" in manager.task(info.task_id).screen_text(), 10, "banner")
        _stop_and_check(manager, info)
        assert manager.get(info.task_id).exit.signal == signal.SIGKILL


def test_quit_and_stop_stops_every_task(tmp_path: Path):
    with launch_rig(tmp_path, engine=False) as rig:
        manager = rig.manager(engine=False)
        infos = [rig.launch(manager, agent) for agent in (Agent("claude"), Agent("codex"))]
        wait_for(lambda: all(manager.task(i.task_id).first_output_at for i in infos), 10, "output")
        done = manager.shutdown(keep=False)
        assert {d.task_id for d in done} == {i.task_id for i in infos}
        assert all(d.status is Status.EXITED for d in done)
        for info in infos:
            assert not psutil.pid_exists(info.pid) or (
                psutil.Process(info.pid).status() == psutil.STATUS_ZOMBIE
            )


def test_quit_and_keep_leaves_the_agents_running_and_the_next_agentbar_takes_them_back(
    tmp_path: Path,
):
    with launch_rig(tmp_path) as rig:
        first = rig.manager()
        info = rig.bound(first, rig.launch(first, Agent("claude"), prompt="before").task_id)
        rig.state(info, lambda s: s.state.detail == "You said: before")
        kept = first.shutdown(keep=True)
        assert [k.task_id for k in kept] == [info.task_id]
        assert first.get(info.task_id).status is Status.DETACHED
        time.sleep(0.5)  # agentbar's end of the PTY is closed now: the agent lives on
        proc = psutil.Process(info.pid)
        assert proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
        keeper = list((rig.settings.data_dir / "tasks").glob("keeper-*.json"))
        assert len(keeper) == 1

        second = rig.manager()
        back = second.get(info.task_id)
        assert back.adopted and back.status is Status.RUNNING and back.pid == info.pid
        assert back.session_id == info.session_id
        assert b"You said: before" in second.task(info.task_id).scrollback()
        wait_for(lambda: not list((rig.settings.data_dir / "tasks").glob("keeper-*")), 5,
                 "the keeper to leave")  # fmt: skip
        second.send_text(info.task_id, "after")
        rig.state(back, lambda s: s.state.detail == "You said: after")
        assert rig.session(back).task_id == info.task_id
        stopped = second.stop(info.task_id)
        assert stopped.status is Status.EXITED
        wait_for(lambda: not psutil.pid_exists(info.pid), 5, "the agent to be gone and reaped")


def test_a_keeper_whose_agents_exit_goes_away(tmp_path: Path):
    with launch_rig(tmp_path, engine=False) as rig:
        manager = rig.manager(engine=False)
        info = rig.launch(manager, Agent("codex"))
        wait_for(lambda: "for agents" in manager.task(info.task_id).screen_text(), 10, "banner")
        manager.shutdown(keep=True)
        pids = list(_keepers(rig))
        assert len(pids) == 1
        os.kill(info.pid, signal.SIGTERM)
        wait_for(lambda: not psutil.pid_exists(pids[0]), 10, "the keeper to exit")
        assert not list((rig.settings.data_dir / "tasks").glob("keeper-*"))
        wait_for(lambda: not psutil.pid_exists(info.pid), 5, "the agent reaped")


def _keepers(rig):
    from agentbar.core.launch.keeper import running_keepers

    return running_keepers(rig.settings)
