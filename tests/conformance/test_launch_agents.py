"""Launching the real CLIs from agentbar's task manager: each current release in a PTY agentbar
owns, against the scripted model, with agentbar's hooks as a per-launch layer and a live engine
in this process. Checked: the launch and its binding (which path, how long), an approval
answered through ``TaskManager.approve`` (what a notification's Approve button calls: keys into
our own PTY only), a clean stop by the agent's own exit keys, resume and fork."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from claude_rig import VERSIONS as CLAUDE_VERSIONS
from claude_rig import bash, claude_env
from claude_rig import write_config as write_claude_config
from cli_install import ensure_installed
from codex_rig import VERSIONS as CODEX_VERSIONS
from codex_rig import write_config as write_codex_config
from model_server import Reply, thinking
from polling import wait_for

from agentbar.core.config import Settings
from agentbar.core.launch.manager import TaskManager
from agentbar.core.launch.options import LaunchOptions
from agentbar.core.launch.request import LaunchRequest, Mode
from agentbar.core.launch.task import BindPath, Status, TaskInfo
from agentbar.core.model import Agent, SessionKey, SessionSnapshot, State, WaitingFor
from agentbar.core.service import Service

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

CLAUDE = CLAUDE_VERSIONS[0]  # the current release
CODEX = CODEX_VERSIONS[0]
CODEX_APPROVALS = ("-a", "on-request", "-s", "read-only")


@dataclass
class Launcher:
    rig: Any
    service: Service
    manager: TaskManager

    def wait(self, what: str, check: Any, timeout: float = 60.0) -> Any:
        try:
            return wait_for(check, timeout, what)
        except AssertionError as exc:
            screens = "\n\n".join(
                f"--- task {t.task_id} ---\n{self.manager.task(t.task_id).screen_text()}"
                for t in self.manager.tasks()
            )
            raise AssertionError(f"{exc}\n{screens}") from None

    def approve_and_finish(
        self, info: TaskInfo, made: Path, answer: str, record_delay: Any, label: str
    ) -> None:
        """The prompt up, the session waiting for approval; approve(): the prompt goes, the
        command runs, the turn ends with ``answer``; stop(): by its own exit keys."""
        self.waiting(info)
        snap = self.state(info, lambda s: s.state.state is State.INPUT_REQUIRED)
        assert snap.state.waiting_for is WaitingFor.APPROVAL and snap.task_id == info.task_id
        started = time.monotonic()
        answered = self.manager.approve(info.task_id)
        assert answered.cleared, self.manager.task(info.task_id).screen_text()
        record(record_delay, label, "approve() -> prompt gone", time.monotonic() - started)
        self.wait("the approved command", made.exists)
        done = self.state(info, lambda s: s.state.state is State.DONE)
        assert done.state.detail == answer
        assert done.process is not None and done.process.pid == info.pid
        started = time.monotonic()
        stopped = self.manager.stop(info.task_id)
        record(record_delay, label, "stop() (its own exit keys)", time.monotonic() - started)
        assert stopped.status is Status.EXITED
        assert stopped.exit is not None and stopped.exit.code == 0, stopped.exit  # not a signal

    def screen(self, info: TaskInfo, text: str, timeout: float = 90.0) -> None:
        task = self.manager.task(info.task_id)
        self.wait(f"{text!r} on screen", lambda: text in task.screen_text(), timeout)

    def bound(self, info: TaskInfo, timeout: float = 60.0) -> TaskInfo:
        def check() -> TaskInfo | None:
            now = self.manager.get(info.task_id)
            return now if now.binding is not None and now.binding.confirmed else None

        return self.wait("the binding", check, timeout)

    def session(self, info: TaskInfo) -> SessionSnapshot | None:
        assert info.session_id is not None
        key = SessionKey(info.agent, info.session_id)
        return next((s for s in self.service.engine.sessions() if s.key == key), None)

    def state(self, info: TaskInfo, check: Any, timeout: float = 60.0) -> SessionSnapshot:
        def look() -> SessionSnapshot | None:
            snap = self.session(info)
            return snap if snap is not None and check(snap) else None

        return self.wait("the session's state", look, timeout)

    def waiting(self, info: TaskInfo, timeout: float = 60.0) -> TaskInfo:
        return self.wait(
            "the approval prompt", lambda: self.manager.get(info.task_id).waiting and info, timeout
        )


def launcher(rig: Rig, programs: dict[Agent, tuple[str, ...]], **options: Any) -> Launcher:
    settings = Settings.from_env(rig.env)
    service = Service.open(settings, tick_seconds=0.5)
    service.start()
    service.engine.ready.wait(30)
    manager = TaskManager(
        settings,
        engine=service.engine,
        options=LaunchOptions(programs=programs, **options),
        env=rig.env,
    )
    manager.start()
    return Launcher(rig, service, manager)


@pytest.fixture
def claude(rig: Rig) -> Iterator[Launcher]:
    binary = ensure_installed(CLAUDE.cli)
    rig.env.update(claude_env(rig.server.url))
    write_claude_config(rig.home, rig.project)
    run = launcher(rig, {Agent("claude"): (str(binary),)})
    yield run
    run.manager.shutdown(keep=False)
    run.service.close()


@pytest.fixture
def codex(rig: Rig) -> Iterator[Launcher]:
    binary = ensure_installed(CODEX.cli)
    rig.env["MOCK_API_KEY"] = "conformance"
    write_codex_config(rig.home / ".codex", rig.server.url, rig.project)
    # A throwaway HOME whose only hooks are agentbar's: their review may be bypassed.
    run = launcher(rig, {Agent("codex"): (str(binary), *CODEX_APPROVALS)},
                   bypass_hook_trust=True)  # fmt: skip
    yield run
    run.manager.shutdown(keep=False)
    run.service.close()


def record(record_delay: Any, label: str, what: str, seconds: float) -> None:
    record_delay(label, "launch", what, 0.0, seconds)


# -- Claude ------------------------------------------------------------------------------------


def test_claude_launch_bind_approve_stop(claude: Launcher, record_delay: Any) -> None:
    rig, manager = claude.rig, claude.manager
    rig.server.script.add(bash("touch approved.txt", "make the file"),
                          thinking(Reply.text("Made approved.txt.")))  # fmt: skip
    info = manager.launch(LaunchRequest(Agent("claude"), str(rig.project), prompt="make a file"))
    bound = claude.bound(info)
    assert bound.binding is not None and bound.binding.path is BindPath.SESSION_ID
    assert bound.binding.confirmed_seconds is not None
    record(record_delay, CLAUDE.label, "launch -> session id confirmed",
           bound.binding.confirmed_seconds)  # fmt: skip
    waiting = claude.state(bound, lambda s: s.state.state is State.INPUT_REQUIRED)
    assert "touch approved.txt" in waiting.state.detail
    claude.approve_and_finish(
        bound, rig.project / "approved.txt", "Made approved.txt.", record_delay, CLAUDE.label
    )
    claude.state(bound, lambda s: s.state.state is State.ENDED)


def test_claude_resume_and_fork(claude: Launcher) -> None:
    rig, manager = claude.rig, claude.manager
    rig.server.script.add(thinking(Reply.text("First answer.")))
    first = manager.launch(LaunchRequest(Agent("claude"), str(rig.project), prompt="first"))
    first = claude.bound(first)
    claude.state(first, lambda s: s.state.detail == "First answer.")
    manager.stop(first.task_id)
    ended = claude.state(first, lambda s: s.state.state is State.ENDED)

    rig.server.script.add(thinking(Reply.text("Second answer.")))
    resumed = manager.launch_from(ended, Mode.RESUME, prompt="second")
    assert resumed.binding is not None and resumed.binding.path is BindPath.RESUME
    assert resumed.session_id == first.session_id
    back = claude.state(resumed, lambda s: s.state.detail == "Second answer.")
    assert back.task_id == resumed.task_id and back.state.state is State.DONE
    manager.stop(resumed.task_id)

    rig.server.script.add(thinking(Reply.text("Forked answer.")))
    ended = claude.state(resumed, lambda s: s.state.state is State.ENDED)
    forked = claude.bound(manager.launch_from(ended, Mode.FORK, prompt="third"))
    assert forked.session_id not in (None, first.session_id)
    assert forked.binding is not None and forked.binding.path is BindPath.SESSION_ID
    fork_snap = claude.state(forked, lambda s: s.state.detail == "Forked answer.")
    assert fork_snap.transcript is not None and forked.session_id in fork_snap.transcript
    original = claude.session(first)  # untouched by the fork: a new file took its turn
    assert original is not None and original.state.state is State.ENDED
    assert original.transcript is not None and original.transcript != fork_snap.transcript
    assert b"Forked answer." not in Path(original.transcript).read_bytes()


# -- Codex -------------------------------------------------------------------------------------


def test_codex_launch_bind_approve_stop(codex: Launcher, record_delay: Any) -> None:
    rig, manager = codex.rig, codex.manager
    rig.server.script.add(CODEX.command("touch made.txt", "create the file"),
                          Reply.text("Created made.txt."))  # fmt: skip
    info = manager.launch(LaunchRequest(Agent("codex"), str(rig.project), prompt="make made.txt"))
    bound = codex.bound(info)
    assert bound.binding is not None and bound.binding.path is BindPath.HOOK
    record(record_delay, CODEX.label, "launch -> SessionStart hook", bound.binding.seconds)
    codex.approve_and_finish(
        bound, rig.project / "made.txt", "Created made.txt.", record_delay, CODEX.label
    )


def test_codex_deny_resume_and_fork(codex: Launcher) -> None:
    rig, manager = codex.rig, codex.manager
    # Esc on Codex's prompt refuses and ends the turn there: no second model request.
    rig.server.script.add(CODEX.command("touch denied.txt", "create it"))
    info = manager.launch(LaunchRequest(Agent("codex"), str(rig.project), prompt="make denied.txt"))
    bound = codex.bound(info)
    codex.waiting(info)
    assert manager.deny(info.task_id).cleared
    done = codex.state(bound, lambda s: s.state.state in (State.DONE, State.FAILED))
    assert not (rig.project / "denied.txt").exists(), done
    manager.stop(info.task_id)
    ended = codex.state(bound, lambda s: s.state.state is State.ENDED)

    rig.server.script.add(Reply.text("Resumed answer."))
    resumed = manager.launch_from(ended, Mode.RESUME, prompt="again")
    assert resumed.binding is not None and resumed.binding.path is BindPath.RESUME
    back = codex.state(resumed, lambda s: s.state.detail == "Resumed answer.")
    assert back.task_id == resumed.task_id
    manager.stop(resumed.task_id)
    ended = codex.state(resumed, lambda s: s.state.state is State.ENDED)

    rig.server.script.add(Reply.text("Forked answer."))
    forked = codex.bound(manager.launch_from(ended, Mode.FORK, prompt="fork it"))
    assert forked.session_id not in (None, info.session_id)
    assert forked.binding is not None and forked.binding.path is BindPath.HOOK
    codex.state(forked, lambda s: s.state.detail == "Forked answer.")


def test_codex_without_hooks_is_bound_by_status_in_its_own_pty(rig: Rig, record_delay: Any) -> None:
    binary = ensure_installed(CODEX.cli)
    rig.env["MOCK_API_KEY"] = "conformance"
    write_codex_config(rig.home / ".codex", rig.server.url, rig.project)
    run = launcher(rig, {Agent("codex"): (str(binary),)}, hooks=False)
    try:
        info = run.manager.launch(LaunchRequest(Agent("codex"), str(rig.project)))
        run.screen(info, CODEX.ready)
        bound = run.bound(info, timeout=60)
        assert bound.binding is not None and bound.binding.path is BindPath.STATUS
        record(record_delay, CODEX.label, "launch -> /status read", bound.binding.seconds)
        rollouts = list(Path(rig.home / ".codex" / "sessions").glob("**/rollout-*.jsonl"))
        rig.server.script.add(Reply.text("Bound."))
        run.manager.send_text(info.task_id, "hello")
        snap = run.state(bound, lambda s: s.state.detail == "Bound.")
        assert snap.task_id == info.task_id, rollouts
    finally:
        run.manager.shutdown(keep=False)
        run.service.close()
