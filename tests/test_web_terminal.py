"""Launched agents in Debian's Chromium (Playwright): a task's live terminal (xterm.js over the
terminal WebSocket: scrollback, typing, resizing, Approve), the replay's Resume / Fork /
Hand-off buttons and the board's launch form, against a real server, engine and task manager
running the fake agent in real PTYs.

(Named to run after every test that calls ``asyncio.run``: Playwright's sync API keeps an event
loop running on the main thread for the rest of the session, as ``test_web_ui.py`` does.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from launch_rig import LaunchRig, launch_rig
from polling import wait_for

from agentbar.core.model import Agent, State

pytestmark = pytest.mark.slow


class Site:
    def __init__(self, rig: LaunchRig, server: Any) -> None:
        self.rig, self.server, self.manager = rig, server, server.tasks

    def url(self, path: str) -> str:
        """An address that opens ``path`` once (a one-time code the server trades for its
        cookie)."""
        return self.server.open_url(path)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    with launch_rig(tmp_path) as rig, rig.serving(rig.manager()) as server:
        yield Site(rig, server)


@pytest.fixture
def csp_violations(page: Any) -> Iterator[list[str]]:
    found: list[str] = []
    page.on(
        "console",
        lambda msg: found.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    yield found
    assert not found, found


def terminal_text(page: Any) -> str:
    return page.evaluate(
        """() => { const b = window.agentbarTerminal.term.buffer.active; const out = [];
                   for (let i = 0; i < b.length; i++)
                     out.push(b.getLine(i).translateToString(true));
                   return out.join('\\n'); }"""
    )


def wait_terminal(page: Any, text: str, timeout: float = 15.0) -> None:
    wait_for(lambda: text in terminal_text(page), timeout, f"{text!r} in the terminal")


def test_the_terminal_page_shows_types_resizes_and_approves(
    site: Site, page: Any, csp_violations: list[str]
):
    info = site.rig.launch(site.manager, Agent("claude"))
    wait_for(lambda: site.manager.task(info.task_id).first_output_at, 10, "the agent's output")
    page.goto(site.url(f"/terminal/{info.task_id}"))
    page.wait_for_selector("body[data-ready='true'][data-output='true']")
    wait_terminal(page, "Fake Claude Code")  # the scrollback, from before the page opened
    assert page.locator(".xterm-rows").count() == 1
    page.locator(".terminal-box").click()
    page.keyboard.type("hello web")
    page.keyboard.press("Enter")
    wait_terminal(page, "You said: hello web")
    # The page fitted the terminal to its box and the PTY took that size.
    cols = page.evaluate("window.agentbarTerminal.term.cols")
    wait_for(lambda: site.manager.get(info.task_id).cols == cols, 5, "the PTY resized")
    page.set_viewport_size({"width": 800, "height": 600})
    wait_for(lambda: site.manager.get(info.task_id).cols < cols, 5, "the PTY resized smaller")
    # An approval prompt: the page offers Approve; clicking it answers the agent's own PTY.
    page.keyboard.type("run: touch from-web.txt")
    page.keyboard.press("Enter")
    page.locator("#task-waiting button.approve").click()
    wait_for((site.rig.project / "from-web.txt").exists, 10, "the approved command")
    page.wait_for_selector("#task-waiting", state="hidden")
    page.locator("button.stop").click()
    page.wait_for_selector("body[data-status='exited']")
    assert page.locator("#live-status").text_content() == "ended"
    assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0


def test_closing_the_page_leaves_the_task_running(site: Site, browser: Any):
    info = site.rig.launch(site.manager, Agent("codex"))
    context = browser.new_context()
    page = context.new_page()
    page.goto(site.url(f"/terminal/{info.task_id}"))
    page.wait_for_selector("body[data-output='true']")
    wait_for(lambda: site.manager.get(info.task_id).clients == 1, 5, "the page attached")
    context.close()
    wait_for(lambda: site.manager.get(info.task_id).clients == 0, 5, "the page detached")
    assert site.manager.get(info.task_id).status == "running"


def test_resume_fork_and_hand_off_from_the_replay(site: Site, page: Any):
    manager, rig = site.manager, site.rig
    first = rig.bound(manager, rig.launch(manager, Agent("claude"), prompt="plan the work").task_id)
    rig.state(first, lambda s: s.state.detail == "You said: plan the work")
    manager.stop(first.task_id)
    rig.state(first, lambda s: s.state.state is State.ENDED)
    replay = site.url(f"/session/claude/{first.session_id}")

    page.goto(replay)
    page.wait_for_selector("#app[data-ready='true'] .session-actions")
    page.locator("button[data-action='resume']").click()
    page.wait_for_url("**/terminal/*")
    resumed_id = page.url.rsplit("/", 1)[1]
    resumed = manager.get(resumed_id)
    assert resumed.mode == "resume" and resumed.session_id == first.session_id

    page.goto(replay)
    page.wait_for_selector(f".session-task[data-task='{resumed_id}'] .open-terminal")
    page.locator("button[data-action='fork']").click()
    page.wait_for_url("**/terminal/*")
    forked = manager.get(page.url.rsplit("/", 1)[1])
    assert forked.mode == "fork" and forked.source == first.session_id

    page.goto(replay)
    page.wait_for_selector("#app[data-ready='true'] .session-actions")
    page.locator("button[data-action='handoff']").click()
    form = page.locator(".handoff-form")
    form.locator("select[name='what']").select_option("answer")
    form.locator("select[name='to']").select_option(f"task:{forked.task_id}")
    form.locator("button[type='submit']").click()
    page.wait_for_selector(".action-note:has-text('Sent')")
    rig.state(rig.bound(manager, forked.task_id),
              lambda s: s.state.detail == "You said: You said: plan the work")  # fmt: skip
    form.locator("select[name='what']").select_option("brief")
    form.locator("select[name='to']").select_option("agent:codex")
    form.locator("button[type='submit']").click()
    page.wait_for_url("**/terminal/*")
    handed = manager.get(page.url.rsplit("/", 1)[1])
    assert handed.agent == Agent("codex") and handed.prompt is not None
    assert handed.prompt.startswith("# Hand-off:") and "plan the work" in handed.prompt


def test_the_board_lists_launched_agents_and_launches_one(
    site: Site, page: Any, monkeypatch: pytest.MonkeyPatch, artifacts: Path
):
    # `~` is the server's user's home: here the rig's HOME, with the project in it.
    monkeypatch.setenv("HOME", str(site.rig.root))
    info = site.rig.launch(site.manager, Agent("claude"))
    page.goto(site.url("/"))
    page.wait_for_selector(f".tasks-panel li[data-task='{info.task_id}']")
    form = page.locator(".launch-form")
    # The folder field offers the recent folders (the launched task's) and pins one.
    form.locator("input[name='project']").click()
    option = form.locator(f".folder-option[data-folder='{site.rig.project}']")
    option.wait_for()
    option.locator("button.pin").dispatch_event("mousedown")
    form.locator(".folder-heading", has_text="Pinned").wait_for()
    page.screenshot(path=str(artifacts / "launch-1200.png"))
    # At 420 px the control wraps: nothing runs off the side, the list included.
    page.set_viewport_size({"width": 420, "height": 900})
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    right = form.locator(".folder-list").evaluate("el => el.getBoundingClientRect().right")
    assert right <= 420
    page.screenshot(path=str(artifacts / "launch-420.png"))
    page.set_viewport_size({"width": 1200, "height": 900})
    assert page.evaluate("localStorage.getItem('agentbar.launch.pinned')") == json.dumps(
        [str(site.rig.project)]
    )
    form.locator("[data-agent='codex']").click()
    assert form.locator("[data-agent='codex']").get_attribute("aria-checked") == "true"
    form.locator("input[name='project']").fill(f"~/{site.rig.project.name}")
    form.locator("input[name='prompt']").fill("from the board")
    form.locator("button[type='submit']").click()
    page.wait_for_url("**/terminal/*")
    launched = site.manager.get(page.url.rsplit("/", 1)[1])
    assert launched.agent == Agent("codex") and launched.prompt == "from the board"
    assert launched.project == str(site.rig.project)  # ~/project, expanded by the server
    wait_terminal(page, "You said: from the board")
    page.goto(site.url("/"))
    form = page.locator(".launch-form")
    form.locator("input[name='project']").fill("~/no-such-folder")
    form.locator("button[type='submit']").click()
    note = form.locator(".action-note")
    note.filter(has_text="does not exist").wait_for()
    assert note.inner_text() == (
        f"no such folder: ~/no-such-folder ({site.rig.root}/no-such-folder) does not exist"
    )
