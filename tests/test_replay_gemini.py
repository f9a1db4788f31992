"""What the real Gemini CLIs wrote in the conformance scenarios, replayed: each session pages
from end to end in both directions, tool results pair with their calls, prompts and answers
read as they were typed and shown, and every export format renders. A JSON chat (0.38) is one
document: its items all come at its first line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from export_check import check_exports
from replay_rig import DATA, make_home
from test_replay_recorded import every_item

from agentbar.core.replay.model import MAIN_THREAD, ItemKind
from agentbar.core.search import Searcher

SCENARIOS = sorted((DATA / "recorded").glob("gemini-*/*/scenario.json"))


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def _install(folder: Path, gemini: Path) -> None:
    """The chats as the CLI left them (a JSON chat: as it was at the last mark), and the
    project map beside them."""
    marks = json.loads((folder / "scenario.json").read_text())["marks"]
    for rel, state in marks[-1]["files"].items():
        source = folder / state.get("snapshot", rel)
        target = gemini / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    for extra in [folder / "projects.json", *folder.glob("tmp/*/.project_root")]:
        target = gemini / extra.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(extra, target)


def test_there_are_recordings_of_both_formats() -> None:
    assert {p.parent.parent.name for p in SCENARIOS} >= {"gemini-0.61.0", "gemini-0.38.2"}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_recorded_gemini_sessions_replay_and_export(tmp_path: Path, scenario: Path) -> None:
    home = make_home(tmp_path, claude=())
    _install(scenario.parent, home.home / ".gemini")
    engine = home.caught_up()
    try:
        replay = home.replay()
        (snap,) = [s for s in engine.sessions() if s.transcript]
        assert snap.key.agent == "gemini"
        items = every_item(replay, snap, MAIN_THREAD)
        data = Path(snap.transcript or "").read_bytes()
        for item in items:
            assert item.offset == 0 or data[item.offset - 1 : item.offset] == b"\n"
        calls = {i.call_id for i in items if i.kind is ItemKind.TOOL_CALL}
        results = [i for i in items if i.kind is ItemKind.TOOL_RESULT]
        assert all(r.call_id in calls for r in results)
        assert not [i for i in items if i.kind is ItemKind.UNKNOWN], items
        prompts = [i.text for i in items if i.kind is ItemKind.USER]
        assert prompts and not any(p.startswith("<session_context>") for p in prompts)
        if scenario.parent.name in ("approve", "ask_user"):
            assert results and results[0].text is not None and not results[0].denied
        if scenario.parent.name == "deny":
            assert [r.denied for r in results] == [True]
        for thread, path in snap.threads:  # a sub-agent's chat pages as its own thread
            assert Path(path).parent.name == snap.key.session_id
            sub_items = every_item(replay, snap, thread)
            assert [i.text for i in sub_items if i.kind is ItemKind.USER], sub_items
        if scenario.parent.name == "subagent":
            assert snap.threads
        check_exports(replay, snap)  # every result under its own call, none loose
        # Search finds the first prompt, in this session, at a line of its chat.
        word = prompts[0].split()[-1]
        hits = Searcher(home.settings.index_path).search(word, agent=snap.key.agent)
        assert any(h.key == snap.key for h in hits), (word, hits)
    finally:
        engine.stop()
