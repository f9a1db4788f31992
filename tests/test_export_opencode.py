"""opencode's recorded sessions (its database, or its JSON storage before 1.2), exported: each
tool result under its own call, as for every other agent (``export_check``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_harness import Rig
from export_check import check_exports
from test_recorded_opencode import SCENARIOS, _id, copy_mark, newest_ms

from agentbar.core.agents.opencode.files import AGENT
from agentbar.core.config import Settings
from agentbar.core.replay.files import AgentRoots
from agentbar.core.replay.model import ItemKind
from agentbar.core.replay.pages import Replay

WITH_TOOLS = [s for s in SCENARIOS if s.parent.name in ("approve-plugin", "deny", "question")]


@pytest.mark.parametrize("scenario", WITH_TOOLS, ids=_id)
def test_recorded_opencode_sessions_export_each_result_under_its_call(
    scenario: Path, tmp_path: Path
) -> None:
    doc = json.loads(scenario.read_text())
    home = tmp_path / "home"
    config_dir, data_dir = home / ".config" / "opencode", home / ".local" / "share" / "opencode"
    data_dir.mkdir(parents=True)
    settings = Settings(homes={AGENT: (config_dir, data_dir)}, data_dir=tmp_path / "data")
    last = scenario.parent / doc["marks"][-1]["folder"]
    copy_mark(last, data_dir, settings.events_dir(AGENT))
    rig = Rig(home=home, settings=settings)
    rig.clock.advance(newest_ms(last) + 1.0 - rig.clock.time())
    rig.open()
    try:
        rig.tick(0.5)
        (snap,) = rig.sessions().values()
    finally:
        rig.close()
    replay = Replay(AgentRoots(settings.agent_roots), settings.replay_adapters())
    items = list(replay.items(snap))
    assert any(i.kind is ItemKind.TOOL_CALL for i in items), items
    check_exports(replay, snap)
