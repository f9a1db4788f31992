"""The session window's place and its reuse: it opens inside the screen's work area (a real
Xvfb of 1280x800 whose root window carries a panel's ``_NET_WORKAREA``, measured with
``xwininfo``), says "opening agentbar…" at once and shows a loading page, and a second
``agentbar window`` brings the open window to the front on its page instead of opening another
(counted on the X server and in the server's own list of windows)."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import ClaudeTranscript, write_lines
from cli_runner import agentbar, kill_left_behind, start_agentbar
from desktop import start_xvfb
from polling import end_process, wait_for
from test_window import WINDOW_TIMEOUT, base_env

from agentbar.core.launch.client import api_call
from agentbar.tray import work_area
from agentbar.tray.work_area import Area, fit, workarea_of_desktop

SCREEN = (1280, 800)
PANEL = 28  # a panel along the top: the work area starts below it
WORK = Area(0, PANEL, SCREEN[0], SCREEN[1] - PANEL - 40)  # and a dock of 40 px along the bottom
RECENT = "c1000000-0000-4000-8000-0000000000a1"
OTHER = "c1000000-0000-4000-8000-0000000000b2"

# -- the arithmetic ----------------------------------------------------------------------------


def test_the_window_fits_inside_the_work_area_centred() -> None:
    placed = fit(WORK)
    assert WORK.contains(placed)
    assert placed.width == 1152 and placed.height == int(WORK.height * 0.9)  # 90 % of it
    assert placed.x == (WORK.width - placed.width) // 2
    assert abs((placed.y - WORK.y) - (WORK.y + WORK.height - placed.y - placed.height)) <= 1


def test_a_big_screen_gets_the_designed_size_and_a_small_one_the_smallest() -> None:
    assert fit(Area(0, 0, 3840, 2160)) == Area(1320, 650, 1200, 860)
    assert fit(Area(0, 0, 440, 500)) == Area(10, 10, 420, 480)  # 90 % would be too small
    tiny = Area(10, 20, 400, 300)  # smaller than the smallest: the whole area, never beyond
    assert fit(tiny) == tiny
    second_monitor = Area(1920, 0, 1280, 1024)
    assert second_monitor.contains(fit(second_monitor))


def test_a_work_area_over_two_monitors_is_cut_to_the_primary_one() -> None:
    # Panels of 32 px at the top of both monitors: _NET_WORKAREA is one box over both.
    both = Area(0, 32, 1920 + 1280, 1024 - 32)
    primary = Area(1920, 0, 1280, 1024)
    assert work_area.clip(both, primary) == Area(1920, 32, 1280, 992)
    assert primary.contains(fit(work_area.clip(both, primary)))
    assert work_area.clip(Area(0, 0, 100, 100), primary) == primary  # they do not meet


def test_the_current_desktops_work_area_is_read_from_the_list() -> None:
    values = [0, 0, 1280, 800, 0, 28, 1280, 732]
    assert workarea_of_desktop(values, 1) == Area(0, 28, 1280, 732)
    assert workarea_of_desktop(values, 0) == Area(0, 0, 1280, 800)
    assert workarea_of_desktop(values, 2) is None
    assert workarea_of_desktop([0, 0, 0, 0], 0) is None
    assert work_area.from_screen(object()) is None


# -- a real X server ---------------------------------------------------------------------------


@pytest.fixture
def screen(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Xvfb at 1280x800 whose root window says, as a panel's window manager would, that the
    work area leaves 28 px at the top and 40 px at the bottom."""
    from Xlib import X, Xatom
    from Xlib import display as xdisplay

    server, name = start_xvfb(SCREEN)
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    env = {
        "DISPLAY": name,
        "GDK_BACKEND": "x11",
        "NO_AT_BRIDGE": "1",
        "PYWEBVIEW_GUI": "gtk",
        "XDG_RUNTIME_DIR": str(runtime),
        "WEBKIT_DISABLE_COMPOSITING_MODE": "1",
    }
    d: Any = wait_for(lambda: _open(xdisplay, name), 20, "Xvfb")
    try:
        root = d.screen().root
        workarea = [0, 0, *SCREEN, WORK.x, WORK.y, WORK.width, WORK.height]
        root.change_property(d.intern_atom("_NET_WORKAREA"), Xatom.CARDINAL, 32, workarea)
        root.change_property(d.intern_atom("_NET_CURRENT_DESKTOP"), Xatom.CARDINAL, 32, [1])
        d.sync()
        assert X.NONE == 0
        yield env
    finally:
        d.close()
        end_process(server)


def _open(xdisplay: Any, name: str) -> Any:
    try:
        return xdisplay.Display(name)
    except Exception:
        return None


def test_the_work_area_is_read_from_the_x_server(screen: dict[str, str]) -> None:
    assert work_area.x11_work_area(screen["DISPLAY"]) == WORK


def shown_windows(env: dict[str, str]) -> list[Area]:
    """The windows big enough to be agentbar's that are on the screen (the toolkit's helper
    windows are 1x1 or unmapped)."""
    tree = subprocess.run(
        ["xwininfo", "-root", "-children"], env=env, capture_output=True, text=True, check=True
    ).stdout
    found = []
    for window in re.findall(r"^\s+(0x[0-9a-f]+) ", tree, re.MULTILINE):
        info = subprocess.run(
            ["xwininfo", "-id", window], env=env, capture_output=True, text=True, check=False
        ).stdout
        if "Map State: IsViewable" not in info:
            continue
        values = {
            key: int(value)
            for key, value in re.findall(r"^\s+(Absolute upper-left [XY]|Width|Height):\s+(-?\d+)",
                                         info, re.MULTILINE)
        }  # fmt: skip
        if values.get("Width", 0) >= 300:
            found.append(
                Area(
                    values["Absolute upper-left X"],
                    values["Absolute upper-left Y"],
                    values["Width"],
                    values["Height"],
                )
            )
    return found


def windows_reported(data: Path) -> list[dict[str, Any]]:
    info = orjson.loads((data / "server.json").read_bytes())
    doc = api_call(f"http://127.0.0.1:{info['port']}", info["token"], "GET", "/api/window", None)
    return list(doc[1]["windows"])


@pytest.mark.parametrize("server", ["its own", "agentbar serve"])
def test_the_window_opens_inside_the_work_area_and_a_second_open_reuses_it(
    server: str, screen: dict[str, str], tmp_path: Path, artifacts: Path
) -> None:
    """``its own``: the first ``agentbar window`` runs the server (and hands it an opener);
    ``agentbar serve``: a headless server, which passes the page to the window that reports."""
    home, data = tmp_path / "home", tmp_path / "data"
    for session, prompt in ((RECENT, "Tidy the README"), (OTHER, "Fix the build")):
        t = ClaudeTranscript(session, "/work/recent", start=time.time() - 300)
        write_lines(
            home / ".claude" / "projects" / "-work-recent" / f"{session}.jsonl",
            [t.prompt(prompt), t.text("Done.", stop_reason="end_turn"), t.turn_duration()],
        )
    env = {**base_env(home, data), **screen}
    serving = None
    if server == "agentbar serve":
        serving = start_agentbar(env, "serve")
        wait_for((data / "server.json").exists, 60, "the server")
    first = start_agentbar(env, "window")
    try:
        assert first.stderr is not None
        said = first.stderr.readline()
        assert said == "agentbar: opening agentbar…\n"  # at once, before anything else
        windows = wait_for(lambda: shown_windows(env), WINDOW_TIMEOUT, "the window")
        assert len(windows) == 1
        assert WORK.contains(windows[0]), windows[0]
        assert windows[0] == fit(WORK)
        assert first.stderr.readline() == "agentbar: opened in pywebview (GTK)\n"
        wait_for(lambda: [w for w in windows_reported(data) if w["path"] == "/"], 60, "board")
        subprocess.run(
            ["import", "-window", "root", str(artifacts / "window-in-work-area.png")],
            env=env,
            check=False,
        )

        started = time.monotonic()
        second = agentbar(env, "window", OTHER, timeout=WINDOW_TIMEOUT)
        assert second.returncode == 0, second.stderr
        runs = first.pid if serving is None else serving.pid
        assert second.stderr.splitlines() == [
            "agentbar: opening agentbar…",
            f"agentbar: shown in the window of the running agentbar (pid {runs})",
        ]
        assert time.monotonic() - started < 10  # it handed over, it did not start a window
        replay = f"/session/claude/{OTHER}"
        reported = wait_for(
            lambda: [w for w in windows_reported(data) if w["path"] == replay], 60, "the replay"
        )
        assert len(windows_reported(data)) == 1 and len(reported) == 1
        assert len(shown_windows(env)) == 1  # the same window, on the new page
        assert first.poll() is None
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGINT)  # Ctrl-C: the window closes (and its server stops)
        status = first.wait(30)
        if serving is not None:
            end_process(serving)
        kill_left_behind(data, home)
    assert status in (0, 130)
    assert not (data / "server.json").exists()
    wait_for(lambda: not shown_windows(env), 20, "the window to close")


def test_the_window_shows_a_light_loading_page_until_it_has_an_address(
    screen: dict[str, str], artifacts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's child started with no address yet (as ``agentbar window`` starts it while
    its engine and server start): the loading page fills the window placed in the work area;
    closing before any address ends the child and the window."""
    from agentbar.tray import window

    for key, value in screen.items():
        monkeypatch.setenv(key, value)  # the spawned child takes the environment from here
    started = window.StartedWindow()
    try:
        kind, backend = window.first_report(started.reports, started.child)
        assert (kind, backend) == ("ok", "GTK")
        (shown,) = wait_for(lambda: shown_windows(screen), WINDOW_TIMEOUT, "the window")
        assert shown == fit(WORK)
        shot = artifacts / "loading-page.png"

        def light() -> bool:
            subprocess.run(
                ["import", "-window", "root", str(shot)], env=screen, check=True, timeout=30
            )
            from PIL import Image

            image = Image.open(shot).convert("RGB")
            box = (shown.x, shown.y, shown.x + shown.width, shown.y + shown.height)
            colours = image.crop(box).getcolors(maxcolors=1 << 20) or []
            most = max(colours)[1]
            # The loading page's light ground fills most of the window, with its line of text.
            return most == (0xF6, 0xF7, 0xF9) and len(colours) > 2

        wait_for(light, 60, "the loading page", step=0.5)
        assert started.child.is_alive()
    finally:
        started.close()
    assert not started.child.is_alive()
    wait_for(lambda: not shown_windows(screen), 20, "the window to close")
