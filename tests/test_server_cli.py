"""``agentbar serve`` and ``agentbar export`` as a user runs them: real subprocesses, a
throwaway HOME of fixture sessions."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest
from replay_rig import SYNTHETIC, V21


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    shutil.copytree(SYNTHETIC / "claude" / "v2.1" / "projects", home / ".claude" / "projects")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    clean.update(HOME=str(home), AGENTBAR_DATA_DIR=str(tmp_path / "data"))
    clean.pop("XDG_DATA_HOME", None)
    clean.pop("XDG_CONFIG_HOME", None)
    return clean


def agentbar(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentbar.tray", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


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


def test_serve_prints_its_url_first_and_the_url_works(env: dict[str, str], tmp_path: Path):
    server = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline().strip()
        assert first.startswith("http://127.0.0.1:") and "/?token=" in first
        token = first.split("token=", 1)[1]
        origin = first.split("/?", 1)[0]
        info_path = tmp_path / "data" / "server.json"
        info = orjson.loads(info_path.read_bytes())
        assert info == {
            "url": first,
            "port": int(origin.rsplit(":", 1)[1]),
            "token": token,
            "pid": server.pid,
        }
        assert info_path.stat().st_mode & 0o777 == 0o600
        status, _ = get(first)
        assert status == 303  # into a cookie, out of the address bar
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


def test_serve_on_a_taken_port_fails_cleanly(env: dict[str, str]):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = agentbar(env, "serve", "--port", str(taken.getsockname()[1]))
    assert result.returncode == 1 and "cannot listen" in result.stderr


def test_export_in_each_format(env: dict[str, str], tmp_path: Path):
    md = agentbar(env, "export", V21[:6])
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("# Slow build investigation")
    target = tmp_path / "out.html"
    html = agentbar(env, "export", V21, "--format", "html", "-o", str(target))
    assert html.returncode == 0 and html.stdout == ""
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    doc = orjson.loads(agentbar(env, "export", V21, "--format", "json").stdout)
    assert doc["session"]["session_id"] == V21 and doc["threads"][0]["thread"] == "a4c2d9"
    no_thinking = agentbar(env, "export", V21, "--no-thinking")
    assert no_thinking.returncode == 0
    missing = agentbar(env, "export", "ffff")
    assert missing.returncode == 1 and "no session 'ffff'" in missing.stderr
    ambiguous = agentbar(env, "export", "", "--format", "md")
    assert ambiguous.returncode == 1
