"""The background ``agentbar serve`` that ``agentbar launch`` starts by itself ends a while after
nothing uses it any more, and never while something does (issue 17 part 7): real processes (the
CLI, the detached serve, the fake agent, ``agentbar watch``, a WebSocket client) with a short
idle setting in settings.toml; ``Lifetime`` and the presence marks on their own."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import orjson
import psutil
import pytest
from cli_runner import agentbar, kill_left_behind, start_agentbar
from engine_harness import make_rig
from launch_rig import FAKE_AGENT
from polling import end_process, wait_for

from agentbar.core import presence
from agentbar.core.app import Agentbar
from agentbar.core.decisions import PendingRequest, RequestKind, Route, new_request_id
from agentbar.core.launch.client import api_call
from agentbar.core.logs import LOG_FILE
from agentbar.core.server.cli import LIFETIME_CHECK_SECONDS
from agentbar.core.server.lifetime import RECENT_SECONDS, Lifetime, Uses, uses_of

IDLE = 1.5  # seconds, in the test's settings.toml
# More than a recent request counts (RECENT_SECONDS), the idle time and serve's check interval.
LONGER = RECENT_SECONDS + IDLE + LIFETIME_CHECK_SECONDS + 1.5


# -- the state machine and the marks -----------------------------------------------------------


def test_lifetime_ends_only_after_the_idle_time_since_the_last_use() -> None:
    life = Lifetime(10.0, now=0.0)
    assert not life.step(5.0, Uses())
    assert life.step(10.0, Uses())  # nothing came since the start
    life = Lifetime(10.0, now=0.0)
    for used in (Uses(tasks=1), Uses(pages=1), Uses(watches=2), Uses(decisions=1)):
        assert not life.step(100.0, used)
    assert not life.step(105.0, Uses())
    assert not life.step(114.9, Uses())
    assert life.step(115.0, Uses())
    assert "the last: 1 pending decision(s)" in life.reason(115.0)


def test_when_unsure_it_stays() -> None:
    life = Lifetime(1.0, now=0.0)
    for now in (5.0, 50.0, 500.0):
        assert not life.step(now, None)
    assert not life.step(500.5, Uses())  # idle counts from the first time it is sure
    assert not life.step(501.0, Uses())
    assert life.step(501.5, Uses())


def test_presence_marks_count_live_processes_and_clear_dead_ones(tmp_path: Path) -> None:
    assert presence.count(tmp_path) == 0
    with presence.present(tmp_path, "watch"):
        assert presence.count(tmp_path) == 1
        mark = tmp_path / "users" / f"watch-{os.getpid()}"
        assert oct(mark.stat().st_mode & 0o777) == "0o600"
        dead = psutil.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        (tmp_path / "users" / f"watch-{dead.pid}").write_bytes(b"")
        assert presence.count(tmp_path) == 1
        assert not (tmp_path / "users" / f"watch-{dead.pid}").exists()
    assert presence.count(tmp_path) == 0


def test_uses_of_a_real_app_count_a_pending_decision_and_a_watch(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    app = Agentbar.open(rig.settings, tasks=False)
    try:
        assert uses_of(app) is None  # not serving: nobody can tell, so it stays
        with app.serving() as server:
            assert uses_of(app) == Uses()
            api_call(server.origin, server.token, "GET", "/api/health")
            assert uses_of(app) == Uses(talking=1)  # e.g. a launch on its way
            server.guard.last_request -= RECENT_SECONDS
            assert uses_of(app) == Uses()
            waiting = PendingRequest(
                request_id=new_request_id(), agent="codex", session_id="s1",
                kind=RequestKind.APPROVAL, route=Route.HOOK, tool="Bash", summary="make",
                opened_at=time.time(),
            )  # fmt: skip
            app.decisions.open(waiting)
            assert uses_of(app) == Uses(decisions=1)
            with presence.present(rig.settings.data_dir, "watch"):
                assert uses_of(app) == Uses(decisions=1, watches=1)
            app.decisions.withdraw(waiting.request_id, "answered in the terminal")
            assert uses_of(app) == Uses()
    finally:
        app.close()


# -- real processes ----------------------------------------------------------------------------


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    home, project, config = tmp_path / "home", tmp_path / "project", tmp_path / "config"
    for folder in (home, project, config):
        folder.mkdir()
    (config / "settings.toml").write_text(f"[serve]\nbackground_idle_seconds = {IDLE}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.pop("XDG_DATA_HOME", None)
    env.update(HOME=str(home), AGENTBAR_DATA_DIR=str(tmp_path / "data"),
               AGENTBAR_CONFIG_DIR=str(config))  # fmt: skip
    env["AGENTBAR_CODEX"] = shlex.join([sys.executable, str(FAKE_AGENT), "--agent", "codex"])
    yield env, project
    kill_left_behind(tmp_path / "data", home)


def launch(env: dict[str, str], project: Path) -> tuple[str, psutil.Process, dict[str, object]]:
    done = agentbar(env, "launch", "codex", "--project", str(project), "--prompt", "hi", "--json")
    assert done.returncode == 0, done.stderr
    task_id = str(orjson.loads(done.stdout)["task"]["task_id"])
    info = orjson.loads((Path(env["AGENTBAR_DATA_DIR"]) / "server.json").read_bytes())
    return task_id, psutil.Process(info["pid"]), info


def stop(env: dict[str, str], task_id: str) -> None:
    done = agentbar(env, "stop", task_id)
    assert done.returncode == 0, done.stderr


def ended_saying_why(env: dict[str, str], serve: psutil.Process) -> None:
    wait_for(lambda: not serve.is_running() or serve.status() == psutil.STATUS_ZOMBIE, 20,
             "the background serve to end")  # fmt: skip
    data = Path(env["AGENTBAR_DATA_DIR"])
    said = (data / "serve.log").read_text()
    assert "nothing has used this background agentbar for" in said, said
    assert not (data / "server.json").exists()


@pytest.mark.slow
def test_a_launched_task_keeps_it_and_it_ends_after_the_last(shell) -> None:
    env, project = shell
    task_id, serve, _ = launch(env, project)
    time.sleep(LONGER)
    assert serve.is_running(), "it ended while its launched agent ran"
    stop(env, task_id)
    ended_saying_why(env, serve)
    data = Path(env["AGENTBAR_DATA_DIR"])
    said = (data / "serve.log").read_text()
    assert "(the last: 1 client that just spoke to it)" in said, said  # `agentbar stop`
    logged = (data / LOG_FILE).read_text()
    assert "background agentbar in use: 1 launched agent(s)" in logged, logged


@pytest.mark.slow
def test_a_connected_window_keeps_it(shell) -> None:
    env, project = shell
    task_id, serve, info = launch(env, project)
    connected, close = threading.Event(), threading.Event()

    async def window() -> None:
        origin = f"http://127.0.0.1:{info['port']}"
        headers = {"Authorization": f"Bearer {info['token']}", "Origin": origin}
        async with (
            aiohttp.ClientSession() as client,
            client.ws_connect(f"{origin}/api/events", headers=headers) as ws,
        ):
            await ws.receive_json(timeout=10)  # the hello
            connected.set()
            while not close.is_set():
                await asyncio.sleep(0.05)

    thread = threading.Thread(target=asyncio.run, args=(window(),), daemon=True)
    thread.start()
    assert connected.wait(15)
    stop(env, task_id)
    time.sleep(LONGER)
    assert serve.is_running(), "it ended while a window was connected"
    close.set()
    thread.join(10)
    ended_saying_why(env, serve)


@pytest.mark.slow
def test_a_watch_keeps_it(shell) -> None:
    env, project = shell
    task_id, serve, _ = launch(env, project)
    watch = start_agentbar(env, "watch", "--json")
    try:
        assert watch.stderr is not None
        wait_for(lambda: "watching" in watch.stderr.readline(), 30, "the watch to catch up")
        stop(env, task_id)
        time.sleep(LONGER)
        assert serve.is_running(), "it ended while a watch ran"
    finally:
        end_process(watch)
    ended_saying_why(env, serve)


@pytest.mark.slow
def test_a_serve_a_person_started_stays(shell) -> None:
    env, _ = shell
    serve = start_agentbar(env, "serve")
    try:
        data = Path(env["AGENTBAR_DATA_DIR"])
        wait_for((data / "server.json").exists, 30, "the serve to start")
        time.sleep(LONGER)
        assert serve.poll() is None, "a serve a person started ended by itself"
    finally:
        assert end_process(serve) == 0
