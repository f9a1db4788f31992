"""Everything agentbar writes is its user's alone: real ``agentbar launch`` (the detached
serve), a headless tray, ``agentbar serve``, the hooks and an export leave only 0600 files and
0700 folders in the data and config dirs, a second local user can read or list none of them,
no token reaches a log or any process's arguments, a folder an older agentbar left open is
narrowed with one line, and the logs stay bounded (rotated at their cap, 0600, a flood of one
fault written a few times)."""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import orjson
import psutil
import pytest
from cli_runner import agentbar, start_agentbar
from launch_rig import FAKE_AGENT
from other_user import OtherUser
from polling import wait_for

from agentbar.core import logs, privacy

CAN_REACH = """
import json, os, sys
reached = []
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as fh:
                fh.read(1)
        reached.append(path)
    except OSError:
        pass
print(json.dumps(reached))
"""


@pytest.fixture
def world(reachable_dir: Path) -> Iterator[dict[str, str]]:
    """A person's environment whose files another user could reach but for their modes: home,
    project, data dir and config dir all under a folder every user may enter; the fake agents;
    the user's umask 022."""
    os.umask(0o022)  # the user's: the agents' files get it (the fixture in conftest restores)
    for name in ("home", "project", "config"):
        (reachable_dir / name).mkdir(mode=0o755)
    # The person's own settings, written with their umask (0644 in a 0755 folder).
    (reachable_dir / "config" / "settings.toml").write_text("[menu]\nrecent_hours = 3\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    env.update(
        HOME=str(reachable_dir / "home"),
        AGENTBAR_DATA_DIR=str(reachable_dir / "data"),
        AGENTBAR_CONFIG_DIR=str(reachable_dir / "config"),
    )
    for agent in ("claude", "codex"):
        env[f"AGENTBAR_{agent.upper()}"] = shlex.join(
            [sys.executable, str(FAKE_AGENT), "--agent", agent]
        )
    yield env
    for proc in psutil.process_iter(["environ"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if (proc.info["environ"] or {}).get("HOME") == env["HOME"] and proc.pid != os.getpid():
                proc.kill()


def server_info(env: dict[str, str]) -> dict:
    return orjson.loads((Path(env["AGENTBAR_DATA_DIR"]) / "server.json").read_bytes())


def tasks(env: dict[str, str]) -> list[dict]:
    result = agentbar(env, "tasks", "--json")
    assert result.returncode == 0, result.stderr
    return orjson.loads(result.stdout)["tasks"]


def cmdlines_holding(secret: str) -> list[str]:
    """Every process's arguments (all users') that contain ``secret``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            raw = (entry / "cmdline").read_bytes()
            if secret.encode() in raw:
                words = raw.replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name}: {words}")
    return found


def umask_of(pid: int) -> int:
    """The process's umask, as Linux reports it."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    raise AssertionError(f"no Umask for {pid}")


def everything_below(*tops: Path) -> list[Path]:
    found = []
    for top in tops:
        found.append(top)
        for root, dirs, names in os.walk(top):
            found += [Path(root) / n for n in dirs + names]
    return found


def modes(paths: list[Path]) -> dict[str, str]:
    return {str(p): f"{stat.S_IMODE(p.lstat().st_mode):04o}" for p in paths}


def not_private(paths: list[Path]) -> dict[str, str]:
    """The paths (and their modes) that are not 0700 folders or 0600 files."""
    return {
        path: mode
        for path, mode in modes(paths).items()
        if mode != ("0700" if Path(path).is_dir() else "0600")
    }


def wait_done(env: dict[str, str], task_id: str) -> dict:
    return wait_for(
        lambda: next(
            (
                t
                for t in tasks(env)
                if t["task_id"] == task_id and t["session"] and t["session"]["state"] == "done"
            ),
            None,
        ),
        20,
        "the task's first turn",
    )


@pytest.mark.slow
def test_no_other_user_reads_anything_agentbar_writes_and_no_token_leaks(
    world: dict[str, str], other_user: OtherUser
) -> None:
    env = world
    data, config = Path(env["AGENTBAR_DATA_DIR"]), Path(env["AGENTBAR_CONFIG_DIR"])
    project = data.parent / "project"
    tokens = []

    # `agentbar launch` with nothing running starts the detached serve.
    launched = agentbar(
        env, "launch", "claude", "--project", str(project), "--prompt", "hi", "--json"
    )
    assert launched.returncode == 0, launched.stderr
    # The person's settings file was 0644 in a 0755 folder: narrowed, said once.
    assert launched.stderr.splitlines() == [
        f"agentbar: made {config} (was 0755) private; 1 file was readable by others"
    ]
    task = orjson.loads(launched.stdout)["task"]
    info = server_info(env)
    tokens.append(info["token"])
    wait_done(env, task["task_id"])
    assert cmdlines_holding(info["token"]) == []
    # agentbar's processes make private files; the agent it launched gets the user's umask.
    assert (umask_of(info["pid"]), umask_of(task["pid"])) == (0o077, 0o022)
    assert info["token"] not in (data / "serve.log").read_text()
    # The agent's own files are the user's: made with the user's umask, not agentbar's.
    transcripts = list((Path(env["HOME"]) / ".claude" / "projects").rglob("*.jsonl"))
    assert transcripts and {stat.S_IMODE(p.stat().st_mode) for p in transcripts} == {0o644}
    # Quit and keep the agent: a keeper holds it (its folder, socket and pointer: ours).
    assert agentbar(env, "quit").returncode == 0
    wait_for(lambda: not (data / "server.json").exists(), 20, "the serve to go")
    pointer = wait_for(lambda: list((data / "tasks").glob("keeper-*.json")), 10, "the keeper")
    assert umask_of(orjson.loads(pointer[0].read_bytes())["pid"]) == 0o077
    assert not_private(everything_below(data)) == {}

    # The tray without a display takes the agent back; its line names no token.
    tray = start_agentbar(env)
    try:
        assert tray.stderr is not None
        said = wait_for(tray.stderr.readline, 30, "the tray's line")
        while "running the engine" not in said:
            said = tray.stderr.readline()
            assert said, "the tray said nothing about running"
        info = server_info(env)
        assert "?token=" not in said, said
        assert umask_of(tray.pid) == 0o077
        tokens.append(info["token"])
        assert info["token"] not in said
        wait_for(lambda: any(t["adopted"] for t in tasks(env)), 15, "the agent taken back")
        assert cmdlines_holding(info["token"]) == []
        assert agentbar(env, "quit").returncode == 0
        assert tray.wait(30) == 0
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait(10)

    # `agentbar serve` in a terminal: its one line (the address that lets a browser in) is for
    # the person, and only there.
    serve = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "serve", "--on-exit", "stop"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        url = serve.stdout.readline()
        info = server_info(env)
        tokens.append(info["token"])
        assert url.startswith("http://127.0.0.1:") and umask_of(serve.pid) == 0o077
        shown = url.strip()
        wait_for(lambda: any(t["adopted"] for t in tasks(env)), 15, "the agent taken back")
        session_id = task["session_id"]
        out = data.parent / "exported.md"
        exported = agentbar(env, "export", session_id, "-o", str(out))
        assert exported.returncode == 0, exported.stderr
        assert stat.S_IMODE(out.stat().st_mode) == 0o600 and "hi" in out.read_text()
        assert cmdlines_holding(info["token"]) == []
        serve.send_signal(signal.SIGINT)
        assert serve.wait(30) == 0
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait(10)

    # The hooks wrote the agent's events; everything is private, out of the other user's reach.
    assert list((data / "events" / "claude").glob("*.jsonl"))
    assert (data / "index.sqlite3").exists() and (data / "agentbar.log").exists()
    assert not_private(everything_below(data, config)) == {}
    reach = other_user.python(CAN_REACH, *map(str, [*everything_below(data, config), out]))
    assert reach.returncode == 0, reach.stderr
    assert orjson.loads(reach.stdout) == []
    # The control: the same user reaches what is not agentbar's (the project, the agent's).
    control = other_user.python(CAN_REACH, str(project), *map(str, transcripts))
    assert len(orjson.loads(control.stdout)) == 1 + len(transcripts)
    logged = "".join(p.read_text() for p in data.glob("*.log*"))
    assert all(secret not in logged for secret in [*tokens, shown])


def test_an_open_data_dir_is_narrowed_with_one_line(tmp_path: Path) -> None:
    os.umask(0o022)
    data = tmp_path / "data"
    (data / "events" / "claude").mkdir(parents=True)
    data.chmod(0o755)
    for name in ("agentbar.log", "serve.log", "serve.log.1", "events/claude/s.jsonl"):
        (data / name).write_text("from an older agentbar\n")
    theirs = tmp_path / "transcript.jsonl"  # an agent's file, linked in: never ours to change
    theirs.write_text("{}\n")
    (data / "linked.jsonl").symlink_to(theirs)
    (data / "events" / "claude" / "linked.jsonl").symlink_to(theirs)
    (data / "notes.txt").write_text("the person's own\n")
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "AGENTBAR_DATA_DIR": str(data),
        "AGENTBAR_CONFIG_DIR": str(tmp_path / "config"),
    }

    first = agentbar(env, "status", "--json")
    assert first.returncode == 0, first.stderr
    line = (
        f"agentbar: made {data} (was 0755) private; 4 files and 2 folders were readable by others"
    )
    assert first.stderr.splitlines() == [line]
    assert line.removeprefix("agentbar: ") in (data / "agentbar.log").read_text()
    ours = [p for p in everything_below(data) if p.name not in ("notes.txt", "linked.jsonl")]
    assert not_private(ours) == {}
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o644
    assert stat.S_IMODE((data / "notes.txt").stat().st_mode) == 0o644
    assert not (tmp_path / "config").exists()  # nothing to look after: not made

    again = agentbar(env, "status", "--json")
    assert again.returncode == 0 and again.stderr == ""


def test_a_shared_folder_is_never_narrowed(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    (shared / "agentbar.log").write_text("x\n")
    (shared / "agentbar.log").chmod(0o644)
    assert not privacy.tighten(shared)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert stat.S_IMODE((shared / "agentbar.log").stat().st_mode) == 0o644


def test_the_log_rotates_at_its_cap_and_stays_private(tmp_path: Path) -> None:
    os.umask(0)  # the modes are agentbar's own choice, not the umask's
    path = tmp_path / "agentbar.log"
    path.write_text("an older, wider log\n")
    path.chmod(0o644)
    handler = logs.file_log(path, max_bytes=10_000, backups=2)
    logger = logging.getLogger("test.rotation")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        for i in range(600):  # each from a line of its own: none is held back as a flood
            record = logger.makeRecord(
                "test.rotation", logging.INFO, __file__, i, "line %d %s", (i, "x" * 60), None
            )
            handler.handle(record)
    finally:
        logger.removeHandler(handler)
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["agentbar.log", "agentbar.log.1", "agentbar.log.2"]
    assert all(stat.S_IMODE((tmp_path / f).stat().st_mode) == 0o600 for f in files)
    assert all((tmp_path / f).stat().st_size <= 10_000 for f in files)
    assert "line 599 " in path.read_text()


FLOOD = """
import logging, sys
from agentbar.core import cli
from agentbar.core.config import Settings
cli.prepare(Settings.from_env(), verbose=False, detached=sys.argv[1] == "detached")
log = logging.getLogger("agentbar.flood")
for i in range(10_000):
    try:
        raise ConnectionResetError(f"peer {i} went away")
    except ConnectionResetError:
        log.exception("Error handling request")
"""


@pytest.mark.parametrize("how", ["terminal", "detached"])
def test_a_flood_of_one_fault_writes_a_few_lines(tmp_path: Path, how: str) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "AGENTBAR_DATA_DIR": str(data), "AGENTBAR_CONFIG_DIR": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-c", FLOOD, how],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    logged = (data / "agentbar.log").read_text()
    errors = done.stderr if how == "terminal" else (data / "serve.log").read_text()
    for text in (logged, errors):
        assert text.count("ERROR agentbar.flood: Error handling request\n") == logs.BURST
        assert "… 9990 more like this suppressed" in text
        assert len(text.splitlines()) < 100, len(text.splitlines())
    assert stat.S_IMODE((data / "agentbar.log").stat().st_mode) == 0o600


def test_a_detached_process_stderr_follows_its_log_through_rotation(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import logging, os, sys
        from pathlib import Path
        from agentbar.core import logs
        handler = logs.file_log(Path(sys.argv[1]), max_bytes=2_000, as_stderr=True)
        log = logging.getLogger("x")
        log.addHandler(handler)
        for i in range(50):
            handler.handle(log.makeRecord("x", logging.WARNING, "f", i, "message %d", (i,), None))
        os.write(2, b"a last word on stderr\\n")
        """
    )
    path = tmp_path / "serve.log"
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    assert path.read_text().endswith("a last word on stderr\n")
    assert (tmp_path / "serve.log.1").exists()
    assert {stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()} == {0o600}


def test_the_throttle_writes_again_after_its_interval_and_says_how_many_it_left_out() -> None:
    now = [0.0]
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    throttled = logs.Throttled(Collect(), burst=2, interval=10.0, clock=lambda: now[0])
    make = logging.getLogger("t").makeRecord
    for i in range(5):
        throttled.handle(make("t", logging.ERROR, "f", 1, "fault %d", (i,), None))
    throttled.handle(make("t", logging.ERROR, "f", 2, "another kind", (), None))
    assert seen == ["fault 0", "fault 1", "another kind"]
    now[0] = 11.0
    throttled.handle(make("t", logging.ERROR, "f", 1, "fault %d", (5,), None))
    assert seen[3:] == ["… 3 more like this suppressed in 11 s: fault 0", "fault 5"]
    throttled.handle(make("t", logging.ERROR, "f", 1, "fault %d", (6,), None))
    throttled.handle(make("t", logging.ERROR, "f", 1, "fault %d", (7,), None))
    throttled.close()
    assert seen[5:] == ["fault 6", "… 1 more like this suppressed in 0 s: fault 5"]


def test_the_line_names_what_was_narrowed() -> None:
    data, config = Path("/h/.local/share/agentbar"), Path("/h/.config/agentbar")
    line = privacy.Tightened
    assert line().line("/h") == ""
    assert line(((data, 0o755),), (data,), 4).line("/h") == (
        "made ~/.local/share/agentbar (was 0755) private; 4 files were readable by others"
    )
    assert line(((data, 0o755), (config, 0o775))).line("/h") == (
        "made ~/.local/share/agentbar (was 0755) and ~/.config/agentbar (was 0775) private"
    )
    assert line((), (config,), 1).line("/h") == (
        "made ~/.config/agentbar private; 1 file was readable by others"
    )
    assert line((), (data,), 2, 1).line("/h") == (
        "made ~/.local/share/agentbar private; 2 files and 1 folder were readable by others"
    )


def test_what_agentbar_writes_is_private_whatever_the_umask(tmp_path: Path) -> None:
    """The modes are set where the files are made, not left to the umask: a library caller,
    or a process that never went through an entry point, writes private files too."""
    from agentbar.core.index import Index
    from agentbar.core.lock import InstanceLock
    from agentbar.core.server.runner import write_server_file
    from agentbar.tray.pause import Pause, PauseStore

    os.umask(0)
    data = tmp_path / "data"
    privacy.private_dir(data)
    index = Index.open(data / "index.sqlite3")  # WAL: -wal and -shm exist while it is open
    lock = InstanceLock(data / "engine.lock")
    assert lock.acquire()
    write_server_file(data / "server.json", {"port": 1, "token": "t", "pid": os.getpid()})
    PauseStore(data / "notifications-paused.json").save(Pause(until=None, off=True))
    privacy.private_dir(data / "events" / "claude")
    handler = logs.file_log(data / "agentbar.log")
    handler.close()
    try:
        made = sorted(p.name for p in data.iterdir())
        assert {"index.sqlite3-wal", "index.sqlite3-shm", "notifications-paused.json"} <= set(made)
        assert not_private(everything_below(data)) == {}
    finally:
        index.close()
        lock.release()
