"""The board's problems line, in Debian's Chromium: the runtime faults ``GET /api/health`` lists
(an index found damaged and rebuilt, a folder the system's watch limit leaves unwatched), each
with its message saying what to do, shown while they last and gone once they are over. A real
server and a real engine over a real damaged index file."""

from __future__ import annotations

import dataclasses
import errno
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_harness import World, serve_world

from agentbar.core.config import Settings
from agentbar.core.engine import Engine
from agentbar.core.errors import watch_fault
from agentbar.core.model import Agent
from agentbar.core.procs import FakeProcessTable

pytestmark = pytest.mark.slow

LINE = ".board-problems"
INDEX_TITLE = "The session index was damaged and is rebuilt"


@pytest.fixture
def damaged_world(tmp_path: Path) -> Iterator[tuple[World, Engine]]:
    """The server up over an engine not started yet, whose index file is damaged."""
    home = tmp_path / "home"
    settings = Settings(
        homes={Agent("claude"): (home / ".claude",), Agent("codex"): (home / ".codex",)},
        data_dir=tmp_path / "data",
    )
    for folder in (home / ".claude" / "projects", home / ".codex" / "sessions"):
        folder.mkdir(parents=True)
    settings.index_path.parent.mkdir(parents=True, exist_ok=True)
    settings.index_path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 4096)
    world = World(root=tmp_path, home=home, settings=settings, processes=FakeProcessTable())
    engine = serve_world(world)
    try:
        yield world, engine
    finally:
        world.close()


def problems_shown(page: Any) -> list[dict[str, str]]:
    return list(
        page.locator(f"{LINE} .problem").evaluate_all(
            """items => items.map(li => ({
                kind: li.dataset.kind, subject: li.title,
                title: li.querySelector('.problem-title').textContent,
                message: li.querySelector('.problem-message').textContent}))"""
        )
    )


def test_the_board_shows_problems_while_they_last(
    page: Any, damaged_world: tuple[World, Engine]
) -> None:
    world, engine = damaged_world
    assert world.api("/api/health")["problems"] == []  # nothing met yet: the engine waits
    page.goto(world.url("/"))
    page.wait_for_selector("[data-ready=true]")  # the board is live
    assert page.locator(LINE).is_hidden()

    # The engine starts, finds its index damaged and rebuilds it: the open board says so.
    world.service.start()  # type: ignore[union-attr]
    page.wait_for_selector(f"{LINE}:visible", timeout=30_000)
    assert page.locator(f"{LINE} .problems-heading").inner_text() == "agentbar has a problem:"
    (index,) = problems_shown(page)
    assert index["kind"] == "index" and index["title"] == INDEX_TITLE
    assert "untouched" in index["message"]  # what it means for the person's files
    assert index["subject"] == str(world.settings.index_path)
    assert [p["title"] for p in world.api("/api/health")["problems"]] == [INDEX_TITLE]

    # The watch limit runs out on a folder (the engine's own report, as its watcher makes it):
    # the board, opened again, lists both, the second with the command that raises the limit.
    folder = world.claude / "projects"
    full = watch_fault(folder, OSError(errno.ENOSPC, "inotify watch limit reached"))
    engine._report(full)
    page.reload()
    page.wait_for_function(
        "sel => document.querySelectorAll(sel).length === 2", arg=f"{LINE} .problem"
    )
    assert page.locator(f"{LINE} .problems-heading").inner_text() == "agentbar has 2 problems:"
    watch = problems_shown(page)[1]
    assert watch["kind"] == "watch_limit" and watch["subject"] == str(folder)
    assert "sudo sysctl fs.inotify.max_user_watches=" in watch["message"]

    # Watched after all: that problem leaves the line, the other stays.
    engine._report(dataclasses.replace(full, over=True))
    page.reload()
    page.wait_for_function(
        "sel => document.querySelectorAll(sel).length === 1", arg=f"{LINE} .problem"
    )
    assert [p["kind"] for p in problems_shown(page)] == ["index"]
    assert page.locator(f"{LINE}").is_visible()
