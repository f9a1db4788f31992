"""The web pages over a remote host's sessions, in Debian's Chromium: a real far side reached by
a local command (as ``docker exec -i`` reaches a container), the real app and server here. A
remote session whose id is also a local one's is its own card, its replay, export and search
hits ask its host, never this machine."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from polling import wait_for
from remote_far import FarHome, make_far, near_settings
from test_cli import write_claude

from agentbar.core.app import Agentbar

SHARED_ID = "aaaaaaaa-0000-4000-8000-00000000000a"  # a session of both machines
FORKED_ID = "ffffffff-0000-4000-8000-00000000000f"  # a far session whose folder is there
SLOW = 60.0  # the far side's first start imports and reads everything


def near_app(tmp_path: Path, far: FarHome) -> Agentbar:
    near = tmp_path / "near"
    write_claude(near / "home" / ".claude", SHARED_ID, "/w/here", "the local prompt",
                 start=time.time() - 60)  # fmt: skip
    return Agentbar.open(near_settings(near, far), tasks=False)


def test_a_remote_session_is_its_own_card_replay_export_and_search_hit(
    tmp_path: Path, browser: Any
) -> None:
    far = make_far(tmp_path / "far")
    far.claude(SHARED_ID, "/srv/api", "the remote prompt", start=time.time() - 600)
    (far.root / "proj").mkdir()
    far.claude(FORKED_ID, str(far.root / "proj"), "fork me there", start=time.time() - 500)
    app = near_app(tmp_path, far)
    try:
        with app.serving() as server:
            app.start()
            keys = lambda: {(s.key.host, s.key.session_id) for s in app.sessions()}  # noqa: E731
            wait_for(lambda: {("local", SHARED_ID), ("box", SHARED_ID)} <= keys(), SLOW,
                     "the same id on both hosts")  # fmt: skip
            # The session's one Chromium (web_harness's fixture): a second sync Playwright in
            # this thread would find the first one's event loop running.
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            try:
                page = context.new_page()
                page.set_default_timeout(20_000)
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                check_board_and_replay(page, server)
                check_search(page, server)
                check_resume_and_fork(page, server, app)
                assert not errors, errors
            finally:
                context.close()
    finally:
        app.close()


def check_board_and_replay(page: Any, server: Any) -> None:
    page.goto(server.open_url("/"))
    remote_card = page.locator(f'a.card[href="/session/claude/{SHARED_ID}?host=box"]')
    local_card = page.locator(f'a.card[href="/session/claude/{SHARED_ID}"]')
    remote_card.wait_for()
    assert local_card.count() == 1, "the local session with the same id lost its card"
    assert remote_card.count() == 1
    remote_card.click()
    page.get_by_text("the remote prompt").first.wait_for()
    assert "the local prompt" not in page.inner_text("main")
    exports = page.locator("a.export")
    assert exports.count() >= 1
    for href in exports.evaluate_all("(links) => links.map((a) => a.getAttribute('href'))"):
        assert "host=box" in href, href
    # The local one's replay is this machine's.
    page.goto(server.open_url(f"/session/claude/{SHARED_ID}"))
    page.get_by_text("the local prompt").first.wait_for()
    assert "the remote prompt" not in page.inner_text("main")


def check_search(page: Any, server: Any) -> None:
    page.goto(server.open_url("/search?q=remote+prompt"))
    hit = page.locator("a.result-link[href*='host=box']").first
    hit.wait_for()
    href = hit.get_attribute("href")
    assert href.startswith(f"/session/claude/{SHARED_ID}?") and "q=remote" in href, href
    hit.click()
    page.get_by_text("the remote prompt").first.wait_for()


def check_resume_and_fork(page: Any, server: Any, app: Agentbar) -> None:
    """The replay's Resume and Fork of a remote session ask its host (this app launches
    nothing): a refusal there is shown as said there, a fork started there is named."""
    page.goto(server.open_url(f"/session/claude/{SHARED_ID}?host=box"))
    page.get_by_text("the remote prompt").first.wait_for()
    page.locator("button.resume").click()
    note = page.locator(".action-note")
    wait_for(note.inner_text, 20, "the resume's answer")
    assert "/srv/api" in note.inner_text(), note.inner_text()  # the far side's own refusal
    page.goto(server.open_url(f"/session/claude/{FORKED_ID}?host=box"))
    page.get_by_text("fork me there").first.wait_for()
    page.locator("button.fork").click()
    wait_for(lambda: "Forked on box: task " in note.inner_text(), 20, "the fork's answer")
    task_id = note.inner_text().split("task ")[1].split(" ")[0]
    forked = wait_for(
        lambda: [s for s in app.sessions() if s.task_id == task_id], SLOW, "the forked session"
    )
    assert forked[0].key.host == "box"
    assert app.hub is not None
    app.hub.links["box"].call_later("term_input", {"task_id": task_id, "data": "/exit\r"})
