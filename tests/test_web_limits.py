"""The board header's usage line, in Debian's Chromium: Codex's windows from a real rollout,
the plain note while Claude's limits are not known, and Claude's windows once the status-line
link has recorded them (a real server over a real engine)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_lines import write_lines
from codex_lines import CodexRollout
from polling import wait_for
from remote_far import make_far, near_settings
from test_limits import CLAUDE_PAYLOAD, codex_limits, window
from test_remote_channel import SLOW
from test_remote_gauges import FAR_CODEX, NEAR_CODEX, codex_rollout, drop
from web_harness import World, serve_world

from agentbar.core.app import Agentbar
from agentbar.core.config import Settings
from agentbar.core.limits_claude import NOT_KNOWN, record_path
from agentbar.core.model import Agent
from agentbar.core.procs import FakeProcessTable

pytestmark = pytest.mark.slow

X = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
LINE = ".board-limits"


@pytest.fixture
def limits_world(tmp_path: Path) -> Iterator[World]:
    home = tmp_path / "home"
    settings = Settings(
        homes={Agent("claude"): (home / ".claude",), Agent("codex"): (home / ".codex",)},
        data_dir=tmp_path / "data",
    )
    (home / ".claude" / "projects").mkdir(parents=True)
    now = time.time()
    r = CodexRollout(X, "/w/limits", start=now - 60)
    token_count = r.tokens(100, 0, 10)
    token_count["payload"]["rate_limits"] = codex_limits(
        window(91.0, 300, now + 3600), window(40.0, 10080, now + 86400)
    )
    path = home / ".codex" / "sessions" / "2026" / "12" / "01" / f"rollout-2026-12-01-{X}.jsonl"
    write_lines(path, [r.meta(), r.started(), r.prompt("hi"), token_count])
    world = World(root=tmp_path, home=home, settings=settings, processes=FakeProcessTable())
    serve_world(world)
    world.service.start()  # type: ignore[union-attr]
    try:
        yield world
    finally:
        world.close()


def shown(page: Any) -> list[dict[str, str]]:
    return list(
        page.locator(f"{LINE} .limit").evaluate_all(
            """items => items.map(li => ({agent: li.dataset.agent, window: li.dataset.window,
                high: li.dataset.high || '', text: li.querySelector('.limit-text').textContent}))"""
        )
    )


def test_the_board_header_shows_the_windows_and_the_note(page: Any, limits_world: World) -> None:
    world = limits_world
    world.wait_for("the rollout's windows", lambda: bool(world.api("/api/limits")["limits"]))
    page.goto(world.url("/"))
    page.wait_for_selector(f"{LINE}[data-ready=true]")
    five, week = shown(page)
    assert (five["agent"], five["window"], five["high"]) == ("codex", "5h", "true")
    assert five["text"].startswith("Codex: 9 % of 5 h left, resets ")
    assert (week["window"], week["high"]) == ("weekly", "")
    assert week["text"].startswith("Codex: 60 % of the week left")
    assert page.locator(f"{LINE} .limit-notes").inner_text() == NOT_KNOWN

    # The link records what Claude hands it: the board, opened again, shows Claude's windows.
    record = record_path(world.settings.data_dir)
    record.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        **CLAUDE_PAYLOAD,
        "rate_limits": {"five_hour": {"used_percentage": 23.5, "resets_at": time.time() + 7200}},
    }
    record.write_text(json.dumps(payload))
    page.reload()
    page.wait_for_selector(f"{LINE} .limit[data-agent=claude]")
    texts = [item["text"] for item in shown(page)]
    assert texts[0].startswith("Claude: 76 % of 5 h left, resets ")
    assert page.locator(f"{LINE} .limit-notes").is_hidden()


def test_a_remote_host_s_windows_are_its_own_and_dim_once_it_drops(
    page: Any, tmp_path: Path
) -> None:
    """A real far side (``agentbar channel`` over its own HOME) and the real app here: the
    board lists this computer's windows, then the host's, named by it; the host goes and its
    windows stay as last known, marked, without a reload (the socket's ``host`` message)."""
    far = make_far(tmp_path / "far")
    codex_rollout(far.home / ".codex", FAR_CODEX, 38.0, at=time.time() - 30)
    near = tmp_path / "near"
    codex_rollout(near / "home" / ".codex", NEAR_CODEX, 10.0, at=time.time() - 30)
    app = Agentbar.open(near_settings(near, far), tasks=False)
    try:
        with app.serving() as server:
            app.start()
            wait_for(lambda: any(w.host == "box" for w in app.limits()), SLOW, "box's windows")
            page.goto(server.open_url("/"))
            page.wait_for_selector(f"{LINE} .limit[data-host=box]")
            items = page.locator(f"{LINE} .limit").evaluate_all(
                "items => items.map(li => [li.dataset.host, li.dataset.window,"
                " li.querySelector('.limit-text').textContent])"
            )
            assert [(host, span) for host, span, _ in items] == [
                ("local", "5h"), ("local", "weekly"), ("box", "5h"), ("box", "weekly"),
            ]  # fmt: skip
            assert items[0][2].startswith("Codex: 90 % of 5 h left")
            assert items[2][2].startswith("Codex on box: 62 % of 5 h left")
            # This machine's note, then box's, named by it.
            notes = page.locator(f"{LINE} .limit-notes")
            wait_for(lambda: notes.inner_text() == f"{NOT_KNOWN} box: {NOT_KNOWN}", 20, "notes")
            drop(far)
            stale = page.locator(f"{LINE} .limit[data-host=box][data-stale=true]").first
            stale.wait_for()
            assert "box not connected" in stale.inner_text()
            away = f"{NOT_KNOWN} box: {NOT_KNOWN} (last known, box not connected)"
            wait_for(lambda: notes.inner_text() == away, 20, "box's note as last known")
            assert page.locator(f"{LINE} .limit[data-host=local][data-stale]").count() == 0
            assert page.problems.errors == []
    finally:
        app.close()
