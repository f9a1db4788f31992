"""The web pages over a remote host's sessions, in Debian's Chromium: a real far side reached by
a local command (as ``docker exec -i`` reaches a container), the real app and server here. A
remote session whose id is also a local one's is its own card, its replay, export and search
hits ask its host, never this machine."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from polling import wait_for
from remote_far import FarHome, end_far_agents, make_far, near_settings
from test_cli import write_claude
from test_remote_channel import far_pids

from agentbar.core.app import Agentbar
from agentbar.core.remote.hosts import HostState
from agentbar.core.remote.link import Link

SHARED_ID = "aaaaaaaa-0000-4000-8000-00000000000a"  # a session of both machines
FORKED_ID = "ffffffff-0000-4000-8000-00000000000f"  # a far session whose folder is there
SLOW = 60.0  # the far side's first start imports and reads everything


def near_app(tmp_path: Path, far: FarHome) -> Agentbar:
    near = tmp_path / "near"
    write_claude(near / "home" / ".claude", SHARED_ID, "/w/here", "the local prompt",
                 start=time.time() - 60)  # fmt: skip
    return Agentbar.open(near_settings(near, far), tasks=False)


@contextlib.contextmanager
def far_host(tmp_path: Path) -> Iterator[tuple[FarHome, Agentbar, Any, Link]]:
    """A far home with a ``proj`` folder, and this machine's app and server with its host
    ``box`` connected (its link); after, what still runs in the far home's folders is ended (a
    far task outlives its channel, as on a real host)."""
    far = make_far(tmp_path / "far")
    (far.root / "proj").mkdir()
    app = near_app(tmp_path, far)
    try:
        with app.serving() as server:
            app.start()
            wait_for(lambda: app.hosts()[0].state is HostState.CONNECTED, SLOW, "the host")
            assert app.hub is not None
            yield far, app, server, app.hub.links["box"]
    finally:
        app.close()
        end_far_agents(far)


def test_a_remote_session_is_its_own_card_replay_export_and_search_hit(
    tmp_path: Path, page: Any
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
            check_board_and_replay(page, server)
            check_search(page, server)
            check_resume_and_fork(page, server, app)
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
    # The fork runs there; its terminal page opens here, through the channel.
    page.wait_for_url("**/terminal/*?host=box")
    task_id = page.url.split("/terminal/")[1].split("?")[0]
    forked = wait_for(
        lambda: [s for s in app.sessions() if s.task_id == task_id], SLOW, "the forked session"
    )
    assert forked[0].key.host == "box"
    check_remote_terminal(page, app, task_id)


def terminal_text(page: Any) -> str:
    return str(
        page.evaluate(
            """() => { const b = window.agentbarTerminal.term.buffer.active; const out = [];
                       for (let i = 0; i < b.length; i++)
                         out.push(b.getLine(i).translateToString(true));
                       return out.join('\\n'); }"""
        )
    )


def wait_terminal(page: Any, text: str) -> None:
    wait_for(lambda: text in terminal_text(page), SLOW, f"{text!r} in the terminal")


def far_task(app: Agentbar, task_id: str) -> dict[str, Any]:
    assert app.hub is not None
    task: dict[str, Any] = app.hub.links["box"].call("task", {"task_id": task_id})
    return task


def check_remote_terminal(page: Any, app: Agentbar, task_id: str) -> None:
    """A remote task's terminal page: its output live, typed into and sized as a local one's,
    its Stop stops it there."""
    page.wait_for_selector("body[data-ready='true'][data-output='true']")
    wait_terminal(page, "Fake Claude Code")
    assert "on box" in page.inner_text("#task-header")
    page.locator(".terminal-box").click()
    page.keyboard.type("hello over there")
    page.keyboard.press("Enter")
    wait_terminal(page, "You said: hello over there")
    cols = page.evaluate("window.agentbarTerminal.term.cols")
    wait_for(lambda: far_task(app, task_id)["size"]["cols"] == cols, 20, "the far PTY sized")
    page.set_viewport_size({"width": 800, "height": 600})
    wait_for(lambda: far_task(app, task_id)["size"]["cols"] < cols, 20, "the far PTY smaller")
    page.locator("button.stop").click()
    page.wait_for_selector("body[data-status='exited']")
    assert far_task(app, task_id)["status"] == "exited"
    wait_for(lambda: page.locator("#live-status").text_content() == "ended", 20, "the end")


def test_a_remote_terminal_detaches_on_close_and_says_when_its_host_drops(
    tmp_path: Path, page: Any
) -> None:
    with far_host(tmp_path) as (far, app, server, link):
        launch = {"agent": "claude", "project": str(far.root / "proj"), "prompt": None}
        task_id = link.call("launch", launch)["task_id"]
        # Closing the page detaches its terminal there; the task runs on.
        page.goto(server.open_url(f"/terminal/{task_id}?host=box"))
        page.wait_for_selector("body[data-output='true']")
        wait_for(lambda: far_task(app, task_id)["clients"] == 1, 20, "attached there")
        page.close()
        wait_for(lambda: far_task(app, task_id)["clients"] == 0, 20, "detached there")
        assert far_task(app, task_id)["status"] == "running"
        # The host drops while the page is open: it says so, and nothing breaks.
        problems = page.problems  # the fixture's: checked when the test ends
        page = page.context.new_page()
        page.on("pageerror", lambda exc: problems.errors.append(str(exc)))
        page.goto(server.open_url(f"/terminal/{task_id}?host=box"))
        page.wait_for_selector("body[data-output='true']")
        assert page.locator("#host-lost").is_hidden()
        for proc in far_pids(far):
            proc.send_signal(signal.SIGKILL)
        page.wait_for_selector("body[data-host='unreachable']")
        said = page.inner_text("#host-lost")
        assert "box is unreachable" in said and "connection" in said, said
        wait_for(
            lambda: page.locator("#live-status").text_content() == "host unreachable",
            20,
            "the status",
        )


def test_the_board_lists_a_host_s_tasks_each_opening_its_terminal_there(
    tmp_path: Path, page: Any
) -> None:
    """The board's task panel lists a connected host's running tasks beside this machine's
    (here, one that launches none: the list without the launcher), each naming its host and
    opening its terminal page with ``?host=``; a stopped one leaves the list, and a host that
    drops takes its tasks with it."""
    with far_host(tmp_path) as (far, _app, server, link):
        launch = {"agent": "claude", "project": str(far.root / "proj"), "prompt": None}
        kept_task = link.call("launch", launch)
        kept = kept_task["task_id"]
        stopped = link.call("launch", launch)["task_id"]
        link.call("stop", {"task_id": stopped, "graceful": False}, 60)
        page.goto(server.open_url("/"))
        item = page.locator(f".tasks-panel li[data-task='{kept}'][data-host='box']")
        item.wait_for()
        assert page.locator(f".tasks-panel li[data-task='{stopped}']").count() == 0
        assert page.locator(".tasks-panel .launch-form").is_hidden()  # none here
        link_text = item.locator("a").inner_text()
        assert link_text.startswith("claude in ") and link_text.endswith("proj on box")
        assert item.locator("a").get_attribute("href") == f"/terminal/{kept}?host=box"
        item.locator("a").click()
        page.wait_for_url(f"**/terminal/{kept}?host=box")
        page.wait_for_selector("body[data-output='true']")
        wait_terminal(page, "Fake Claude Code")
        assert "on box" in page.inner_text("#task-header")
        # The host drops: its tasks leave the board's list (they cannot be reached).
        page.goto(server.open_url("/"))
        item.wait_for()
        for proc in far_pids(far):
            proc.send_signal(signal.SIGKILL)
        item.wait_for(state="detached")
        assert page.locator(".tasks-panel").is_hidden()


def test_a_remote_task_s_terminal_page_approves_its_prompt_there(tmp_path: Path, page: Any) -> None:
    """A remote task's terminal page (``?host=``) offers Approve when its screen there shows an
    approval prompt (heard of through its terminal's stream, after the page opened), and
    clicking it has the host's own manager answer it (``POST .../approve?host=``): the command
    runs there, and the banner goes."""
    with far_host(tmp_path) as (far, _app, server, link):
        launch = {"agent": "claude", "project": str(far.root / "proj"), "prompt": None}
        task = link.call("launch", launch)
        task_id = task["task_id"]
        page.goto(server.open_url(f"/terminal/{task_id}?host=box"))
        page.wait_for_selector("body[data-ready='true'][data-output='true']")
        wait_terminal(page, "Fake Claude Code")
        assert page.locator("#task-waiting").is_hidden()
        # Typed a key at a time, as a person types (the far side applies them in order).
        page.locator(".xterm-helper-textarea").focus()
        page.keyboard.type("run: touch from-web.txt")
        page.keyboard.press("Enter")
        approve = page.locator("#task-waiting button.approve")
        approve.wait_for()
        assert "touch from-web.txt" in page.inner_text("#task-waiting")
        # Clicked at once: the banner has just taken rows from the terminal, and the task
        # there is resized while its dialog settles; it is answered all the same.
        with page.expect_response(lambda r: "/approve?host=box" in r.url) as answered:
            approve.click()
        reply = answered.value
        assert reply.status == 200, reply.text()
        answer = reply.json()["answer"]
        assert answer["cleared"] is True, answer
        assert (answer["answer"], answer["question"]) == ("approve", "Do you want to proceed?")
        assert reply.json()["task"]["host"] == "box"
        wait_for((far.root / "proj" / "from-web.txt").exists, SLOW, "the approved command")
        page.wait_for_selector("#task-waiting", state="hidden")
        page.locator("button.stop").click()
        page.wait_for_selector("body[data-status='exited']")
