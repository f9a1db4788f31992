"""Launching the real Gemini CLI (the current release) from agentbar's task manager, in a PTY
agentbar owns, against the scripted model, with a live engine in this process: the launch and
its binding (``--session-id``), the confirmation answered through ``TaskManager.approve`` (keys
into our own PTY only), a clean stop by its own exit keys, resume, and the fork it does not have
on its command line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from cli_install import ensure_installed
from gemini_rig import VERSIONS, gemini_env, settings
from model_server import Reply, thinking
from test_launch_agents import Launcher, launcher, record

from agentbar.core.launch.request import BadLaunch, LaunchRequest, Mode
from agentbar.core.launch.task import BindPath
from agentbar.core.model import Agent, Source, State, WaitingFor

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

GEMINI = VERSIONS[0]  # the current release
AGENT = Agent("gemini")


@pytest.fixture
def gemini(rig: Rig) -> Iterator[Launcher]:
    binary = ensure_installed(GEMINI.cli)
    gemini_env(rig.env, rig.server.url)
    (rig.home / ".gemini").mkdir(exist_ok=True)
    (rig.home / ".gemini" / "settings.json").write_text(json.dumps(settings()))
    run = launcher(rig, {AGENT: (str(binary),)})
    yield run
    run.manager.shutdown(keep=False)
    run.service.close()


def test_gemini_launch_bind_approve_stop_resume(gemini: Launcher, record_delay: Any) -> None:
    rig, manager = gemini.rig, gemini.manager
    rig.server.script.add(
        thinking(Reply.tool("run_shell_command", {"command": "touch made.txt"})),
        thinking(Reply.text("Created made.txt.")),
    )
    info = manager.launch(LaunchRequest(AGENT, str(rig.project), prompt="make made.txt"))
    bound = gemini.bound(info)
    assert bound.binding is not None and bound.binding.path is BindPath.SESSION_ID
    assert bound.binding.confirmed_seconds is not None
    record(record_delay, GEMINI.label, "launch -> session id confirmed",
           bound.binding.confirmed_seconds)  # fmt: skip
    # The chat never shows the confirmation; the task's own screen does.
    waiting = gemini.state(bound, lambda s: s.state.state is State.INPUT_REQUIRED)
    assert waiting.state.waiting_for is WaitingFor.APPROVAL
    assert waiting.state.source is Source.PTY, waiting.state
    gemini.approve_and_finish(
        bound, rig.project / "made.txt", "Created made.txt.", record_delay, GEMINI.label
    )
    ended = gemini.state(bound, lambda s: s.state.state is State.ENDED)

    rig.server.script.add(thinking(Reply.text("Second answer.")))
    resumed = manager.launch_from(ended, Mode.RESUME, prompt="second")
    assert resumed.binding is not None and resumed.binding.path is BindPath.RESUME
    assert resumed.session_id == bound.session_id
    back = gemini.state(resumed, lambda s: s.state.detail == "Second answer.")
    assert back.task_id == resumed.task_id and back.state.state is State.DONE
    manager.stop(resumed.task_id)
    ended = gemini.state(resumed, lambda s: s.state.state is State.ENDED)
    with pytest.raises(BadLaunch, match="/fork"):
        manager.launch_from(ended, Mode.FORK, prompt="fork it")
