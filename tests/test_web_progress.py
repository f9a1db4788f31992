"""The first reading's progress on the board, in Debian's Chromium, and in the API: a real server
and a real engine over a large history (``big_history``). The page is open before the engine
starts, so it sees the reading from its first step: the line while it reads (the words and the
bar follow what the engine publishes), gone once done, and the sessions it read on the board
without a reload; ``/api/health`` carries the same ``progress``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_harness import World, serve_world

from agentbar.core.config import Settings
from agentbar.core.engine import Engine
from agentbar.core.engine_messages import IndexProgress
from agentbar.core.model import Agent
from agentbar.core.procs import FakeProcessTable

pytestmark = pytest.mark.slow

GB = 1 << 30
LINE = ".board-progress"


@pytest.fixture
def reading_world(big_history: Path, tmp_path: Path) -> Iterator[tuple[World, Engine]]:
    """The server up over an engine not started yet (nothing read: a cold start)."""
    settings = Settings(
        homes={
            Agent("claude"): (big_history / ".claude",),
            Agent("codex"): (big_history / ".codex",),
        },
        data_dir=tmp_path / "data",
    )
    world = World(root=tmp_path, home=big_history, settings=settings,
                  processes=FakeProcessTable())  # fmt: skip
    engine = serve_world(world)
    try:
        yield world, engine
    finally:
        world.close()


def line_text(page: Any) -> str:
    return str(page.locator(LINE).inner_text())


def test_the_board_shows_the_reading_until_it_is_done(
    page: Any, reading_world: tuple[World, Engine]
) -> None:
    world, engine = reading_world
    health = world.api("/api/health")
    assert health["ready"] is False
    assert health["progress"] == {
        "host": "local", "live_ready": False, "done": False, "files_done": 0, "files_total": 0,
        "bytes_done": 0, "bytes_total": 0, "fraction": 0.0,
    }  # fmt: skip

    page.goto(world.url("/"))
    page.wait_for_selector(f"{LINE}:visible")
    assert line_text(page) == "Reading live sessions…"
    assert page.locator(".empty").is_hidden()  # not "no sessions yet": they are being read
    assert page.locator(f"{LINE} progress").evaluate("el => el.hasAttribute('value')") is False

    # The live sessions are read; the history goes on behind them (the seam's own publisher,
    # on this thread: the engine thread is not running yet).
    step = IndexProgress(live_ready=True, done=False, files_done=7, files_total=80,
                         bytes_done=int(1.3 * GB), bytes_total=int(3.1 * GB))  # fmt: skip
    engine._set_progress(step)
    page.wait_for_function(
        "sel => document.querySelector(sel).textContent.includes('41 %')", arg=LINE
    )
    assert line_text(page) == (
        "Reading history… 41 % (1.3 of 3.1 GB), live sessions are up to date"
    )
    bar = page.locator(f"{LINE} progress").evaluate("el => el.value")
    assert abs(bar - 0.4194) < 0.001
    assert world.api("/api/health")["progress"]["fraction"] == 0.4194

    # The engine reads the whole history: the line goes and the board has what it read.
    world.service.start()  # type: ignore[union-attr]
    page.wait_for_selector(f"{LINE}", state="hidden", timeout=180_000)
    page.wait_for_selector(".card")
    health = world.api("/api/health")
    assert health["ready"] is True
    assert health["progress"]["done"] is True and health["progress"]["fraction"] == 1.0
    assert page.locator(".card").count() > 0
