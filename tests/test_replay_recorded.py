"""What the real CLIs wrote in the conformance scenarios (``tests/data/recorded``), replayed:
every session pages from end to end in both directions, every item points at a line start, tool
results pair with their calls, and every export format renders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from export_check import check_exports
from replay_rig import DATA, make_home

from agentbar.core.model import SessionSnapshot
from agentbar.core.replay.model import MAIN_THREAD, ItemKind, ReplayItem
from agentbar.core.replay.pages import Replay

# Claude's and Codex's; every other agent's recordings are replayed by its own test.
SCENARIOS = sorted(
    p
    for agent in ("claude", "codex")
    for p in (DATA / "recorded").glob(f"{agent}-*/*/scenario.json")
)


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def every_item(replay: Replay, snap: SessionSnapshot, thread: str) -> list[ReplayItem]:
    forward: list[ReplayItem] = []
    cursor: int | None = 0
    while cursor is not None:
        page = replay.page(snap, thread, after=cursor, limit=7)
        forward += page.items
        cursor = page.after
    backward: list[ReplayItem] = []
    page = replay.page(snap, thread, limit=7)
    backward[:0] = page.items
    while page.before is not None:
        page = replay.page(snap, thread, before=page.before, limit=7)
        backward[:0] = page.items
    assert [i.key for i in forward] == [i.key for i in backward]
    return forward


def test_there_are_recordings_of_both_agents():
    agents = {p.parent.parent.name.split("-")[0] for p in SCENARIOS}
    assert agents == {"claude", "codex"}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_recorded_sessions_replay_and_export(tmp_path: Path, scenario: Path):
    home = make_home(tmp_path, claude=())
    folder = scenario.parent
    if (folder / "projects").is_dir():
        shutil.copytree(folder / "projects", home.claude / "projects")
    if (folder / "sessions").is_dir():
        shutil.copytree(folder / "sessions", home.codex / "sessions")
    engine = home.caught_up()
    replay = home.replay()
    snapshots = [s for s in engine.sessions() if s.transcript]
    assert snapshots
    prompts = 0
    for snap in snapshots:
        data = Path(snap.transcript or "").read_bytes()
        threads = [MAIN_THREAD, *(t for t, _ in snap.threads)]
        for thread in threads:
            items = every_item(replay, snap, thread)
            source = (
                data if thread == MAIN_THREAD else Path(dict(snap.threads)[thread]).read_bytes()
            )
            calls = {i.call_id for i in items if i.kind is ItemKind.TOOL_CALL}
            for item in items:
                assert item.offset == 0 or source[item.offset - 1 : item.offset] == b"\n"
                if item.kind is ItemKind.TOOL_RESULT and item.name != "oversized":
                    assert item.call_id in calls, item
                if item.kind is ItemKind.SUBAGENT and item.link is not None:
                    assert replay.page(snap, item.link.thread).items
            prompts += sum(1 for i in items if i.kind is ItemKind.USER)
            for unknown in (i for i in items if i.kind is ItemKind.UNKNOWN):
                assert unknown.text.strip() and unknown.name  # shown plainly, with its type
        check_exports(replay, snap)  # every result under its own call, none loose
    assert prompts >= 1
    engine.stop()
