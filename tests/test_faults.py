"""Runtime faults reach the person, not only the log: a folder the engine cannot watch (the
real inotify watch limit, hit in a user namespace of its own) and a damaged index, through the
real engine, watchdog and index to ``agentbar watch``, ``status`` and the application object's
subscribers and ``problems()``."""

from __future__ import annotations

import dataclasses
import errno
import queue
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import orjson
from cli_runner import agentbar
from engine_harness import make_rig
from polling import end_process, wait_for
from user_namespace import need_user_namespaces, set_watch_limit, with_watch_limit

from agentbar.core.app import Agentbar
from agentbar.core.config import Settings
from agentbar.core.engine_messages import Faulted
from agentbar.core.errors import AgentbarError, Fault, FaultKind, watch_fault
from agentbar.core.index import IndexUnusable
from agentbar.core.launch.manager import NoSuchTask, NotWaiting

SYSCTL = "fs.inotify.max_user_watches"


def home_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    for folder in (".claude/projects/-work-a", ".claude/sessions", ".codex/sessions/2026"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "AGENTBAR_DATA_DIR": str(tmp_path / "data"),
    }


def test_watch_says_when_the_watch_limit_is_reached_how_to_raise_it_and_when_it_was(
    tmp_path: Path,
) -> None:
    need_user_namespaces()
    env = home_env(tmp_path)
    argv = with_watch_limit([sys.executable, "-m", "agentbar.tray", "watch"], watches=1)
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True)
    reader.start()
    try:
        line = wait_for(
            lambda: next((line for line in said if "File watch limit reached" in line), None),
            30,
            "the watch-limit fault on stderr",
        )
        # The person raises the limit: the next tick watches the folders, the problem is over.
        set_watch_limit(proc.pid, 524288)
        over = wait_for(
            lambda: next((line for line in said if "no longer: File watch limit" in line), None),
            30,
            "the fault over",
        )
        assert str(tmp_path / "home") in over
    finally:
        end_process(proc)
        reader.join(5)
    assert f"sudo sysctl {SYSCTL}=" in line, said
    assert str(tmp_path / "home") in line  # it names the folder it cannot watch


def damaged_index(tmp_path: Path) -> Settings:
    env = home_env(tmp_path)
    settings = Settings.from_env(env)
    settings.index_path.parent.mkdir(parents=True)
    settings.index_path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 4096)
    return settings


def test_a_damaged_index_is_a_problem_the_app_reports(tmp_path: Path) -> None:
    settings = damaged_index(tmp_path)
    app = Agentbar.open(settings, tasks=False, tick_seconds=0.2)
    heard: queue.Queue[Fault] = queue.Queue()
    app.subscribe_faults(heard.put)
    try:
        app.start()
        fault = heard.get(timeout=20)
        assert fault.kind is FaultKind.INDEX
        assert fault.title == "The session index was damaged and is rebuilt"
        assert "untouched" in fault.message
        assert app.problems() == (fault,)
        assert app.wait_ready(20)
        with app.serving() as server:  # and the API says so, for a browser or a script
            request = urllib.request.Request(
                f"{server.origin}/api/health", headers={"Authorization": f"Bearer {server.token}"}
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                health = orjson.loads(response.read())
        assert health["problems"] == [fault.to_json()]
        assert health["problems"][0]["kind"] == "index"
    finally:
        app.close()
    # Set aside and rebuilt: the next start finds nothing wrong.
    assert list(settings.index_path.parent.glob("*.unusable-*"))
    again = Agentbar.open(settings, tasks=False)
    try:
        again.catch_up()
        assert again.problems() == ()
    finally:
        again.close()


def test_status_lists_the_problems_it_met(tmp_path: Path) -> None:
    settings = damaged_index(tmp_path)
    env = home_env(tmp_path)
    done = agentbar(env, "status")
    assert done.returncode == 0, done.stderr
    assert "(The session index was damaged and is rebuilt: " in done.stdout
    assert str(settings.index_path) not in done.stderr  # a sentence, not a traceback
    settings.index_path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 4096)
    done = agentbar(env, "status", "--json")
    assert done.returncode == 0, done.stderr
    (problem,) = orjson.loads(done.stdout)["problems"]
    assert (problem["kind"], problem["subject"]) == ("index", str(settings.index_path))


def test_watch_faults_say_what_to_do_for_each_cause() -> None:
    folder = Path("/home/me/.claude/projects")
    full = watch_fault(folder, OSError(errno.ENOSPC, "inotify watch limit reached"))
    assert full.kind is FaultKind.WATCH_LIMIT and f"sysctl {SYSCTL}=" in full.message
    many = watch_fault(folder, OSError(errno.EMFILE, "inotify instance limit reached"))
    assert "fs.inotify.max_user_instances" in many.message
    denied = watch_fault(folder, PermissionError(errno.EACCES, "Permission denied"))
    assert denied.kind is FaultKind.UNREADABLE and "read access" in denied.message
    odd = watch_fault(folder, OSError(errno.ENODEV, "No such device"))
    assert odd.kind is FaultKind.CANNOT_WATCH and "polling" in odd.message
    again = watch_fault(folder, OSError(errno.ENOSPC, "inotify watch limit reached"))
    assert again.key == full.key  # the same folder and cause: one problem, seen again


def test_every_error_has_a_title_and_a_message_and_keeps_its_old_base() -> None:
    assert issubclass(NoSuchTask, AgentbarError) and issubclass(NoSuchTask, LookupError)
    assert issubclass(NotWaiting, RuntimeError)
    error = NotWaiting("no approval prompt on task t1's screen")
    assert error.title == "The agent is not asking for approval"
    assert error.message == str(error) == "no approval prompt on task t1's screen"
    assert IndexUnusable("x", outdated=True).outdated


def test_the_engine_tells_each_problem_once_and_when_it_is_over(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    engine = rig.open()
    heard: list[Fault] = []
    engine.subscribe_faults(heard.append)
    fault = watch_fault(rig.claude / "projects", OSError(errno.ENOSPC, "limit"))
    over = dataclasses.replace(fault, over=True)
    for message in (over, fault, fault, over, over):  # over before it began: nothing
        engine.post(Faulted(message))
    engine.drain()
    assert heard == [fault, over]
    assert engine.faults() == ()
    rig.close()
