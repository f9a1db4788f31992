"""``agentbar window``: a real pywebview GTK window under Xvfb, in the child process the command
starts, on the running server or on one of its own; where pywebview cannot be imported, the
default browser (a recording ``$BROWSER``, then real Chromium opening what it got) with a
one-time code, or an address to open by hand; and what it says without a display."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import ClaudeTranscript, write_lines
from cli_runner import agentbar
from web_harness import RICH, World

from agentbar.core.config import Settings
from agentbar.core.model import Agent
from agentbar.core.server.runner import write_server_file
from agentbar.tray import window

WINDOW_TIMEOUT = 180
RECENT = "c1000000-0000-4000-8000-000000000001"


def base_env(home: Path, data: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE_", "CODEX_", "XDG_", "WAYLAND_")) and k != "DISPLAY"
    }
    env.update(HOME=str(home), AGENTBAR_DATA_DIR=str(data))
    return env


def test_the_window_opens_a_replay_on_the_running_server_and_closing_it_leaves_the_server(
    world: World, xvfb: dict[str, str], tmp_path: Path
) -> None:
    assert world.server is not None
    write_server_file(world.settings.server_path, world.server.info())
    watch = CommandLines(world.token)
    try:
        probe = tmp_path / "probe.json"
        env = {**base_env(world.home, world.settings.data_dir), **xvfb}
        with watch:
            done = agentbar(env, "window", RICH[:8], "--probe", str(probe), timeout=WINDOW_TIMEOUT)
        assert done.returncode == 0, done.stderr
        assert done.stderr == (f"agentbar: {window.OPENING}\nagentbar: opened in pywebview (GTK)\n")
        result = json.loads(probe.read_text())
    finally:
        world.settings.server_path.unlink()
    assert watch.seen > 0 and watch.found == []  # no process showed the token in its arguments
    assert result["loaded"] is True
    page = result["page"]
    assert page["view"] == "replay"
    assert page["ready"] == "true"
    assert page["url"] == f"{world.origin}/session/claude/{RICH}"  # the token went to a cookie
    assert "Profile the **build**" in page["title"]  # as text, with the needs-you count
    assert page["items"] > 5
    assert page["live"] == "live"  # the WebSocket connected from WebKit too
    # Closing the window left the server running.
    assert world.api("/api/health")["ok"] is True


class CommandLines:
    """Reads every process's arguments (``/proc/PID/cmdline``) every 20 ms while in use, and
    keeps those that hold ``secret``."""

    def __init__(self, secret: str) -> None:
        self.secret = secret.encode()
        self.found: list[str] = []
        self.seen = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> CommandLines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    line = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                self.seen += 1
                if self.secret in line:
                    self.found.append(line.replace(b"\0", b" ").decode(errors="replace"))


def test_without_a_server_the_window_runs_one_until_it_closes(
    xvfb: dict[str, str], tmp_path: Path
) -> None:
    home, data = tmp_path / "home", tmp_path / "data"
    # A session from a few minutes ago (ended: no process), so the board shows it whatever
    # today's date is (it lists ended sessions of the last 24 hours).
    t = ClaudeTranscript(RECENT, "/work/recent", start=time.time() - 300)
    write_lines(
        home / ".claude" / "projects" / "-work-recent" / f"{RECENT}.jsonl",
        [t.prompt("Tidy the README"), t.text("Tidied.", stop_reason="end_turn"), t.turn_duration()],
    )
    probe = tmp_path / "probe.json"
    started = time.monotonic()
    done = agentbar(
        {**base_env(home, data), **xvfb}, "window", "--probe", str(probe), timeout=WINDOW_TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    page = json.loads(probe.read_text())["page"]
    assert page["view"] == "board"
    assert page["cards"] >= 1
    assert "token=" not in page["url"]
    assert not (data / "server.json").exists()  # its server stopped with the window
    assert time.monotonic() - started < WINDOW_TIMEOUT


def test_without_a_display_it_says_so_in_one_line(tmp_path: Path) -> None:
    done = agentbar(
        base_env(tmp_path / "home", tmp_path / "data"), "window", timeout=WINDOW_TIMEOUT
    )
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1
    assert "no display" in done.stderr
    assert not (tmp_path / "data" / "server.json").exists()


def test_an_unknown_session_is_refused_before_a_window_opens(
    world: World, xvfb: dict[str, str], tmp_path: Path
) -> None:
    assert world.server is not None
    write_server_file(world.settings.server_path, world.server.info())
    try:
        env = {**base_env(world.home, world.settings.data_dir), **xvfb}
        done = agentbar(env, "window", "zzzz-no-such-session", timeout=WINDOW_TIMEOUT)
    finally:
        world.settings.server_path.unlink()
    assert done.returncode == 1
    assert "no session 'zzzz-no-such-session'" in done.stderr


# -- the pieces, without a window ---------------------------------------------------------------


def test_target_path_takes_an_id_or_a_unique_prefix() -> None:
    known = [("claude", "abc-1"), ("codex", "abd-2"), ("claude", "xyz")]
    assert window.target_path(lambda: known, None) == "/"
    assert window.target_path(lambda: known, "xyz") == "/session/claude/xyz"
    assert window.target_path(lambda: known, "abd") == "/session/codex/abd-2"
    with pytest.raises(LookupError, match="names 2 sessions"):
        window.target_path(lambda: known, "ab")
    with pytest.raises(LookupError, match="no session"):
        window.target_path(lambda: known, "q")


def test_webview_problem_and_backend() -> None:
    assert window.webview_problem(lambda name: None) == "pywebview not installed"
    assert window.webview_problem(lambda name: object()) is None
    # The test venv has pywebview and PyGObject with WebKit2: GTK is found, and asking for a
    # backend this platform lacks says which failed.
    assert window.webview_backend({}, "linux") == ("gtk", "GTK")
    with pytest.raises(window.NoBackend, match="no pywebview backend"):
        window.webview_backend({"PYWEBVIEW_GUI": "qt"}, "linux")
    with pytest.raises(window.NoBackend, match="Cocoa"):
        window.webview_backend({}, "darwin")


def test_display_problem() -> None:
    assert "no display" in (window.display_problem({}, "linux") or "")
    assert window.display_problem({"DISPLAY": ":1"}, "linux") is None
    assert window.display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert window.display_problem({}, "darwin") is None


def test_a_stale_server_file_is_ignored(tmp_path: Path) -> None:
    settings = Settings(
        homes={Agent("claude"): (tmp_path / "c",), Agent("codex"): (tmp_path / "x",)},
        data_dir=tmp_path,
    )
    assert window.running_server(settings) is None  # no file
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    info = {"url": "http://127.0.0.1:9/?token=t", "port": 9, "token": "t", "pid": int(dead.stdout)}
    settings.server_path.write_bytes(orjson.dumps(info))
    assert window.running_server(settings) is None  # its process is gone
    info["pid"] = os.getpid()
    settings.server_path.write_bytes(orjson.dumps(info))
    assert window.running_server(settings) is None  # alive, but nothing answers there
    settings.server_path.write_text("{not json")
    assert window.running_server(settings) is None


def test_a_window_of_its_own_can_launch_agents_and_they_outlive_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own server has a task manager (Resume, Fork and the board's launch form work), and
    closing the window hands what runs to a keeper instead of stopping it. (The window itself is
    the other tests' business: here the server is asked what the window would ask.)"""
    import urllib.parse
    import urllib.request

    from agentbar.core.config import Settings

    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data)})
    seen: dict[str, object] = {}

    def instead_of_the_window(
        url: str,
        token: str,
        *,
        probe: Path | None = None,
        on_open: object = None,
        started: object = None,
    ) -> window.WindowOutcome:
        parts = urllib.parse.urlsplit(url)
        assert "code" in urllib.parse.parse_qs(parts.query) and token not in url
        request = urllib.request.Request(
            f"http://{parts.netloc}/api/tasks", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            seen["status"] = response.status
            seen["tasks"] = orjson.loads(response.read())
        seen["announced"] = settings.server_path.exists()
        return window.WindowOutcome("GTK")

    class NoChild:  # the loading page's child would need a display
        def __init__(self, *, probe: Path | None = None) -> None:
            pass

        def point(self, url: str, token: str) -> None:
            pass

        def send(self, url: str) -> bool:
            return True

        def close(self) -> None:
            pass

    monkeypatch.setattr(window, "open_window", instead_of_the_window)
    monkeypatch.setattr(window, "StartedWindow", NoChild)
    assert window.serve_and_open(settings, None, probe=None, err=sys.stderr) == 0
    assert seen["status"] == 200 and seen["tasks"] == {"tasks": []}
    assert seen["announced"] is True and not settings.server_path.exists()


# -- no pywebview: the default browser ---------------------------------------------------------


def hidden_pywebview(root: Path) -> str:
    """A folder to put first on PYTHONPATH whose ``webview`` fails to import, as it does where
    pywebview or its dependencies are missing (the window's child tries it and gives up)."""
    shadow = root / "no-webview" / "webview"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("pywebview hidden by the test")\n')
    return str(shadow.parent)


def recording_browser(root: Path, *, works: bool = True) -> tuple[str, Path]:
    """A ``$BROWSER`` that writes the address it is given to a file (and fails, unless
    ``works``): what ``webbrowser`` runs as the user's default browser."""
    record = root / "opened.txt"
    script = root / "browser.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {record}\nexit {0 if works else 1}\n')
    script.chmod(0o755)
    return f"{script} %s", record


def test_without_pywebview_the_page_opens_in_the_browser_with_a_code_that_works_once(
    world: World, xvfb: dict[str, str], tmp_path: Path, browser: Any
) -> None:
    assert world.server is not None
    write_server_file(world.settings.server_path, world.server.info())
    command, record = recording_browser(tmp_path)
    try:
        env = {
            **base_env(world.home, world.settings.data_dir),
            **xvfb,
            "PYTHONPATH": hidden_pywebview(tmp_path),
            "BROWSER": command,
        }
        done = agentbar(env, "window", RICH[:8], timeout=WINDOW_TIMEOUT)
    finally:
        world.settings.server_path.unlink()
    assert done.returncode == 0, done.stderr
    opening, said = done.stderr.split("\n", 1)
    assert opening == f"agentbar: {window.OPENING}"
    assert said.count("\n") == 1, done.stderr
    assert said.startswith("agentbar: opened in your browser (pywebview cannot be imported")
    opened = record.read_text().split()
    assert len(opened) == 1
    url = opened[0]
    assert url.startswith(f"{world.origin}/session/claude/{RICH}?code=")
    assert world.token not in url and "token" not in url
    first = browser.new_context()
    try:
        page = first.new_page()
        page.goto(url)
        page.wait_for_selector("#app[data-ready='true']")
        assert page.url == f"{world.origin}/session/claude/{RICH}"  # the code is gone
    finally:
        first.close()
    second = browser.new_context()
    try:
        response = second.new_page().goto(url)
        assert response is not None and response.status == 403  # spent
        assert "bad_code" in response.text()
    finally:
        second.close()


def test_without_pywebview_or_a_browser_it_prints_an_address_that_opens_once(
    world: World, xvfb: dict[str, str], tmp_path: Path, browser: Any
) -> None:
    assert world.server is not None
    write_server_file(world.settings.server_path, world.server.info())
    command, tried = recording_browser(tmp_path, works=False)
    try:
        env = {
            **base_env(world.home, world.settings.data_dir),
            **xvfb,
            "PYTHONPATH": hidden_pywebview(tmp_path),
            "BROWSER": command,
        }
        done = agentbar(env, "window", timeout=WINDOW_TIMEOUT)
    finally:
        world.settings.server_path.unlink()
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"agentbar: {window.OPENING}\n")
    assert done.stderr.count("\n") == 2, done.stderr
    assert "no browser to open it in: open http://127.0.0.1:" in done.stderr
    url = done.stderr.split(" in a browser (it works once")[0].rsplit(" ", 1)[1]
    assert "?code=" in url and world.token not in done.stderr
    assert tried.read_text().count("?code=") == 1  # the browser was tried, with another code
    assert_board_opens(browser, url)
    another = browser.new_context()  # anyone else with the address: it is spent
    try:
        response = another.new_page().goto(url)
        assert response is not None and response.status == 403
    finally:
        another.close()


def test_without_pywebview_and_a_server_it_serves_the_browser_until_interrupted(
    xvfb: dict[str, str], tmp_path: Path, browser: Any
) -> None:
    import signal

    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    command, record = recording_browser(tmp_path)
    env = {
        **base_env(home, data),
        **xvfb,
        "PYTHONPATH": hidden_pywebview(tmp_path),
        "BROWSER": command,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "window"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        said = [proc.stderr.readline(), proc.stderr.readline(), proc.stderr.readline()]
        assert said.pop(0) == f"agentbar: {window.OPENING}\n"
        assert said[0].startswith("agentbar: opened in your browser (pywebview cannot be imported")
        assert said[1] == "agentbar: serving it until you press Ctrl-C\n"
        url = record.read_text().strip()
        assert "?code=" in url and (data / "server.json").exists()
        assert_board_opens(browser, url)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert not (data / "server.json").exists()  # its server stopped at Ctrl-C


def test_the_trays_window_falls_back_to_the_browser_for_this_page_and_the_next(
    tmp_path: Path,
) -> None:
    """The tray's WindowHost with pywebview failing to import in its child: the page it was
    asked for, and every later one, opens in the browser (a code in each address)."""
    command, record = recording_browser(tmp_path)
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from agentbar.tray.window_host import WindowHost\n"
        "host = WindowHost(lambda p, s: f'http://127.0.0.1:9{p}?code=c{int(s)}', 'tok')\n"
        "host.open('/board')\n"
        "deadline = time.monotonic() + 60\n"
        "while host.no_window is None and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "host.open('/search')\n"
        "record = Path(sys.argv[1])\n"  # the first page goes to the browser on another thread
        "while len(record.read_text().split()) < 2 and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "print(host.no_window)\n"
        "host.close()\n"
    )
    env = {
        **base_env(tmp_path / "home", tmp_path / "data"),
        "PYTHONPATH": hidden_pywebview(tmp_path),
        "BROWSER": command,
    }
    done = subprocess.run(
        [sys.executable, "-c", script, str(record)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pywebview cannot be imported: pywebview hidden by the test")
    assert sorted(record.read_text().split()) == [
        "http://127.0.0.1:9/board?code=c60",
        "http://127.0.0.1:9/search?code=c60",
    ]


def test_a_running_agentbar_that_gives_no_codes_is_named_in_one_line(tmp_path: Path) -> None:
    """An agentbar from before one-time codes (``POST /api/codes`` is a 404 there) answers its
    health check but gives no address to open: one line says so and what to do."""
    import http.server

    class OldServer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(200 if self.path == "/api/health" else 404)

        def do_POST(self) -> None:
            self._answer(404)

        def _answer(self, status: int) -> None:
            body = b'{"ok": true}' if status == 200 else b'{"error": {"code": "not_found"}}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    old = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OldServer)
    threading.Thread(target=old.serve_forever, daemon=True).start()
    data = tmp_path / "data"
    data.mkdir(mode=0o700)  # as agentbar makes it: the one line below is the test's
    port = old.server_address[1]
    info = {"url": f"http://127.0.0.1:{port}/", "port": port, "token": "t", "pid": os.getpid()}
    write_server_file(data / "server.json", info)
    try:
        env = {**base_env(tmp_path / "home", data), "DISPLAY": ":99"}
        done = agentbar(env, "window", timeout=WINDOW_TIMEOUT)
    finally:
        old.shutdown()
    assert done.returncode == 1
    assert done.stderr.startswith(f"agentbar: {window.OPENING}\n")
    assert done.stderr.count("\n") == 2, done.stderr
    assert "gave no address to open" in done.stderr and "restart it" in done.stderr


def assert_board_opens(browser: Any, url: str) -> None:
    """``url`` opens the board in a fresh browser context (its own cookies)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("#app[data-ready='true']")
        assert page.evaluate("document.body.dataset.view") == "board"
    finally:
        context.close()
