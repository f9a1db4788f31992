"""``agentbar serve`` and ``agentbar export`` as a user runs them: real subprocesses, a
throwaway HOME of fixture sessions."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest
from cli_runner import agentbar
from replay_rig import SYNTHETIC, V21
from test_cli import env  # noqa: F401 - env: a fixture


@pytest.fixture
def sessions_env(env: dict[str, str]) -> dict[str, str]:  # noqa: F811 - the fixture
    """``agentbar``'s environment over a HOME holding the Claude 2.1 fixture session."""
    projects = Path(env["HOME"]) / ".claude" / "projects"
    shutil.copytree(SYNTHETIC / "claude" / "v2.1" / "projects", projects)
    return env


def get(url: str, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_serve_prints_its_url_first_and_the_url_works(sessions_env: dict[str, str], tmp_path: Path):
    server = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "serve"],
        env=sessions_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline().strip()
        assert first.startswith("http://127.0.0.1:") and "/?code=" in first
        origin = first.split("/?", 1)[0]
        info_path = tmp_path / "data" / "server.json"
        info = orjson.loads(info_path.read_bytes())
        token = info["token"]
        assert token not in first  # a one-time code, never the token
        assert info == {
            "url": f"{origin}/",
            "port": int(origin.rsplit(":", 1)[1]),
            "token": token,
            "pid": server.pid,
            "tasks": True,  # it launches agents (/api/tasks)
        }
        assert info_path.stat().st_mode & 0o777 == 0o600
        status, _ = get(first)
        assert status == 303  # into a cookie, out of the address bar
        assert get(first)[0] == 403  # once
        status, body = get(f"{origin}/api/health", Authorization=f"Bearer {token}")
        assert status == 200 and orjson.loads(body)["ok"] is True
        for _ in range(100):  # the engine catches up after the URL is out
            status, body = get(f"{origin}/api/sessions?all=1", Authorization=f"Bearer {token}")
            if orjson.loads(body)["sessions"]:
                break
            subprocess.run(["sleep", "0.1"], check=True)
        assert [s["session_id"] for s in orjson.loads(body)["sessions"]] == [V21]
        assert get(f"{origin}/api/health")[0] == 401
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
    assert server.returncode == 0
    assert not (tmp_path / "data" / "server.json").exists()


def test_serve_on_a_taken_port_fails_cleanly(sessions_env: dict[str, str]):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = agentbar(sessions_env, "serve", "--port", str(taken.getsockname()[1]))
    assert result.returncode == 1 and "cannot listen" in result.stderr


def test_export_in_each_format(sessions_env: dict[str, str], tmp_path: Path):
    md = agentbar(sessions_env, "export", V21[:6])
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("# Slow build investigation")
    target = tmp_path / "out.html"
    html = agentbar(sessions_env, "export", V21, "--format", "html", "-o", str(target))
    assert html.returncode == 0 and html.stdout == ""
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    doc = orjson.loads(agentbar(sessions_env, "export", V21, "--format", "json").stdout)
    assert doc["session"]["session_id"] == V21 and doc["threads"][0]["thread"] == "a4c2d9"
    no_thinking = agentbar(sessions_env, "export", V21, "--no-thinking")
    assert no_thinking.returncode == 0
    missing = agentbar(sessions_env, "export", "ffff")
    assert missing.returncode == 1 and "no session 'ffff'" in missing.stderr
    ambiguous = agentbar(sessions_env, "export", "", "--format", "md")
    assert ambiguous.returncode == 1


def test_export_format_follows_the_files_extension(sessions_env: dict[str, str], tmp_path: Path):
    page = tmp_path / "Session.HTML"
    assert agentbar(sessions_env, "export", V21, "-o", str(page)).returncode == 0
    assert page.read_text().startswith("<!DOCTYPE html>")
    data = tmp_path / "session.json"
    assert agentbar(sessions_env, "export", V21, "-o", str(data)).returncode == 0
    assert orjson.loads(data.read_bytes())["format"] == "agentbar-replay"
    text = tmp_path / "notes.md"
    assert agentbar(sessions_env, "export", V21, "-o", str(text)).returncode == 0
    assert text.read_text().startswith("# Slow build investigation")
    # --format decides where the name says nothing, and must not contradict what it says.
    plain = tmp_path / "session-copy"
    done = agentbar(sessions_env, "export", V21, "--format", "json", "-o", str(plain))
    assert done.returncode == 0 and orjson.loads(plain.read_bytes())["items"]
    clash = agentbar(sessions_env, "export", V21, "--format", "md", "-o", str(tmp_path / "x.html"))
    assert clash.returncode == 2 and "names html but --format says md" in clash.stderr
    assert not (tmp_path / "x.html").exists()
    unknown = agentbar(sessions_env, "export", V21, "-o", str(tmp_path / "x.pdf"))
    assert unknown.returncode == 2 and "cannot tell the format" in unknown.stderr
    assert ".html" in unknown.stderr and not (tmp_path / "x.pdf").exists()


@pytest.mark.slow
def test_a_flood_and_odd_requests_leave_serves_log_small(sessions_env: dict[str, str], tmp_path):
    """What made ``serve.log`` grow 12 MB in 5 s: 2,000 idle connections (as many as the old
    server could not even accept), then a few hundred odd requests. The server answers its owner
    throughout, and what it wrote (standard error and ``agentbar.log``) stays a few lines, with
    no traceback."""
    import itertools
    import random

    from peer_scripts import FLOOD
    from test_server_odd_input import odd_requests, status_of

    stderr = tmp_path / "serve.err"
    with stderr.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "agentbar.tray", "serve", "--on-exit", "stop"],
            env=sessions_env,
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
        )
    flood = None
    try:
        assert server.stdout is not None
        origin = server.stdout.readline().split("/?", 1)[0]
        port = int(origin.rsplit(":", 1)[1])
        token = orjson.loads((tmp_path / "data" / "server.json").read_bytes())["token"]
        flood = subprocess.Popen(
            [sys.executable, "-I", "-c", FLOOD, str(port), "2000"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert flood.stdout is not None and flood.stdout.readline().startswith("ready")
        for request in itertools.islice(odd_requests(port, token, random.Random(7)), 200):
            status = status_of(port, request)
            assert status is None or status < 500
        assert get(f"{origin}/api/health", Authorization=f"Bearer {token}")[0] == 200
    finally:
        if flood is not None:
            flood.kill()
            flood.wait(10)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    written = stderr.read_bytes()
    log = tmp_path / "data" / "agentbar.log"
    if log.exists():
        written += log.read_bytes()
    assert b"Traceback" not in written and b"Task was destroyed" not in written, written
    assert len(written) < 5_000, written[-2000:]
