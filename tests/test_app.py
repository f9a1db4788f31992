"""The application object the front ends share: it runs over the service it is given (here an
engine over a fake process table and a fake clock, real files and a real index), hands out
plain values, serves and announces itself while serving, and closes what it opened."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from claude_lines import registry
from engine_harness import make_rig, new_transcript

from agentbar.core.app import Agentbar
from agentbar.core.lock import InstanceLock
from agentbar.core.model import Agent
from agentbar.core.service import Service

A = "aaaaaaaa-5555-4555-8555-555555555555"


def test_the_app_runs_over_the_service_it_is_given(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    rig.claude_process(4242)
    t = new_transcript(A)
    rig.write(rig.transcript_path(A), t.prompt("Clean the build"), t.bash("rm -rf build"))
    rig.write_json(
        rig.claude / "sessions" / "4242.json",
        registry(4242, A, status="waiting", waiting_for="permission prompt", cwd="/work/demo"),
    )
    engine = rig.open()
    lock = InstanceLock(rig.settings.lock_path)
    assert lock.acquire()
    app = Agentbar.open(rig.settings, tasks=False, service=Service(engine, lock, owner=True))
    try:
        app.catch_up()
        (snap,) = app.sessions()
        assert (snap.key.agent, snap.key.session_id) == (Agent("claude"), A)
        assert snap.state.state == "input_required"
        assert app.session_ids() == [("claude", A)]
        assert app.stats().sessions == 1
        assert app.problems() == ()
        assert app.running_tasks() == []
        with pytest.raises(RuntimeError):
            _ = app.windows  # not serving
        with app.serving() as server:
            announced = orjson.loads(rig.settings.server_path.read_bytes())
            assert (announced["url"], announced["tasks"]) == (server.url, False)
            assert app.windows.in_front() == frozenset()
        assert not rig.settings.server_path.exists()  # unannounced once it stops
        assert app.server is None
    finally:
        app.close()
        rig.engine = None  # closed with the app
    assert lock.acquire()  # the app released it
    lock.release()
