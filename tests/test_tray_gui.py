"""The real tray (``agentbar`` in a process of its own: engine, server, icon, desktop-notifier)
on the private desktop, with trayer as its only system tray (XEmbed, no StatusNotifierWatcher):
the icon docks, its badge follows a session that starts waiting (a real transcript and
registry, this test's process playing the agent), a real notification reaches dunst with the
right text, a click on the icon and on the notification open the window, a second ``agentbar``
hands over to the first; and on odd machines (no display, no session bus, no tray yet) it says
so in one line and keeps serving. (The StatusNotifier host and the menu: test_tray_sni.py.)
Screenshots are kept as artefacts (``$AGENTBAR_TEST_ARTIFACTS`` or the test's tmp dir)."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import pytest
from desktop import Desktop, wait_until
from tray_rig import A, B, Tray, colour_count, tray_on

from agentbar.tray import badge
from agentbar.tray.notify import NO_BUS
from agentbar.tray.view import Badge, TrayView
from agentbar.tray.xembed import XEmbedIcon, latin1

pytestmark = pytest.mark.slow


def test_the_icon_docks_in_an_xembed_tray_its_badge_follows_and_a_click_opens_the_window(
    tray: Tray, artifacts: Path
) -> None:
    tray.run_tray()
    tray.wait_ready()
    tray.wait_for_title("agentbar: nothing needs you")
    calm = tray.icon_image(artifacts / "docked-icon-calm.png")
    assert colour_count(calm, badge.CALM) > 20 and colour_count(calm, badge.NEEDS) == 0
    tray.start_waiting(A, "/work/live")
    tray.wait_for_title("agentbar: 1 needs you")
    needs = wait_until(
        "the badge to be drawn",
        lambda: (
            image
            if colour_count(
                image := tray.icon_image(artifacts / "docked-icon-needs.png"), badge.NEEDS
            )
            > 100
            else None
        ),
    )
    assert colour_count(needs, badge.INK, tolerance=8) > 10  # the digit
    shown = tray.desktop.wait_notification(lambda n: "live" in n["summary"])
    assert shown["summary"] == "Claude Code in live needs your approval"
    assert shown["body"] == "Bash: rm -rf build"
    assert shown["appname"] == "agentbar"
    time.sleep(3)  # ticks and polls: still that one notification
    assert [n["summary"] for n in tray.desktop.notifications()] == [shown["summary"]]
    tray.click_icon()
    tray.wait_window_on("/")
    status, err = tray.stop()
    assert status == 0, err
    assert (
        "agentbar: this system tray (xembed) has no menus: the icon shows the badge and a click "
        "opens the window, which has everything"
    ) in err.splitlines()
    assert "Traceback" not in err
    assert not (tray.data / "server.json").exists()


def test_the_xembed_icon_takes_any_name_its_tooltip_has(desktop: Desktop) -> None:
    """The tooltip is the icon's name: a cold start's "reading live sessions…", a shortened
    tooltip's "…", a host or project named in any script. ``WM_NAME`` holds Latin-1 only, so the
    whole name goes in ``_NET_WM_NAME`` (what xdotool and the trays read first) and a Latin-1
    spelling in ``WM_NAME``; before, python-xlib raised on the first "…" and the icon died."""
    said: list[str] = []
    first = "agentbar: nothing needs you; reading live sessions…"
    icon = XEmbedIcon(TrayView(Badge(), first, ()), said.append, desktop.display)
    assert icon.start(), said
    window = str(icon.win.id)

    def named(name: str) -> bool:
        return desktop.name_of(window) == name

    try:
        wait_until("the first name", functools.partial(named, first))
        for name in (
            "agentbar: 1 needs you; Codex on 東京-box 5 h 62 % left — the week 93 % left…",
            "agentbar: nothing needs you",
        ):
            icon.show(TrayView(Badge(needs=1), name, ()))
            wait_until(f"the name {name!r}", functools.partial(named, name))
        legacy = desktop.run("xprop", "-id", window, "WM_NAME").stdout
        assert legacy.strip() == 'WM_NAME(STRING) = "agentbar: nothing needs you"'
        assert icon._thread.is_alive()
    finally:
        icon.stop()
    assert latin1("reading… — “東京” → 5 %") == 'reading... - "??" -> 5 %'
    assert latin1("Größe · 2× ½") == "Größe · 2× ½"  # Latin-1 already: kept


def test_a_notification_click_opens_its_session(tray: Tray) -> None:
    tray.launch()
    tray.told_waiting(A, "/work/live")
    tray.start_waiting(B, "/work/other")  # the first was closed to read it: a new one
    wait_until(
        "the second notification to show",
        lambda: tray.desktop.run("dunstctl", "count", "displayed").stdout.strip() == "1",
    )
    assert tray.desktop.run("dunstctl", "action", "0").returncode == 0
    tray.wait_window_on(f"/session/claude/{B}")  # its replay, at what needs the user


def test_a_second_agentbar_hands_over_to_the_first(tray: Tray) -> None:
    tray.launch()
    second = tray.start()
    _out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    pid = tray.server()["pid"]
    assert err.strip().splitlines()[-1] == (
        f"agentbar: agentbar already runs (pid {pid}); opened its window"
    )
    tray.wait_window_on("/")
    assert tray.proc is not None and tray.proc.poll() is None


def test_without_a_display_it_says_so_and_keeps_serving_and_notifying(tray: Tray) -> None:
    headless = {k: v for k, v in tray.env.items() if k != "DISPLAY"}
    tray.run_tray(env=headless)
    tray.wait_ready()
    line = tray.wait_said("agentbar: no display")
    assert line.startswith(
        "agentbar: no display (DISPLAY and WAYLAND_DISPLAY are unset), so no tray icon; "
        "running the engine, notifications and the server at http://127.0.0.1:"
    )
    assert "token=" not in line  # stderr is no terminal here: a log may keep it
    assert tray.api("/api/health")["ok"] is True
    tray.start_waiting(A, "/work/headless")
    shown = tray.desktop.wait_notification(lambda n: "headless" in n["summary"])
    assert shown["body"] == "Bash: rm -rf build"
    # A second one cannot open a window there: it says where the pages are instead.
    second = tray.start(env=headless)
    _out, err = second.communicate(timeout=60)
    assert second.returncode == 0
    assert "without a display; open http://127.0.0.1:" in err
    assert "/?code=" in err and "token" not in err  # a one-time address, never the token
    status, _err = tray.stop()
    assert status == 0


def test_without_a_session_bus_the_xembed_icon_still_docks(tray: Tray, artifacts: Path) -> None:
    busless = {k: v for k, v in tray.env.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    tray.run_tray(env=busless)
    tray.wait_ready()
    tray.icon()
    tray.click_icon()
    tray.wait_window_on("/")
    tray.start_waiting(A, "/work/busless")
    wait_until(
        "the badge",
        lambda: colour_count(tray.icon_image(artifacts / "busless.png"), badge.NEEDS) > 100,
    )
    # No notification without a bus: said once, in words, in the log (no autolaunch attempt).
    log = tray.data / "agentbar.log"
    wait_until("the notice's turn", lambda: "not shown, no session bus" in log.read_text())
    tray.start_waiting(B, "/work/busless-too")
    wait_until(
        "the second badge", lambda: tray.desktop.name_of(tray.icon()) == "agentbar: 2 need you"
    )
    time.sleep(2)  # past the coalescing window: the second notice was not shown either
    status, err = tray.stop()
    assert status == 0, err
    assert "Traceback" not in err
    logged = log.read_text()
    assert logged.count(NO_BUS) == 1, logged  # said once; each notice then a short line
    assert "Traceback" not in logged and "autolaunch" not in logged


def test_no_bus_and_no_tray_yet_one_line_then_the_icon_docks_when_a_tray_starts_and_restarts(
    bare_desktop: Desktop, tmp_path: Path
) -> None:
    with tray_on(bare_desktop, tmp_path) as t:
        busless = {k: v for k, v in t.env.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
        t.run_tray(env=busless)
        t.wait_ready()
        line = t.wait_said("no session D-Bus")
        assert line == (
            "agentbar: no session D-Bus (DBUS_SESSION_BUS_ADDRESS is unset and "
            "$XDG_RUNTIME_DIR/bus is absent), and no XEmbed tray on the display yet; the icon "
            "appears once one starts, notifications and 'agentbar window' work meanwhile"
        )
        trayer = bare_desktop.start_trayer()
        t.icon()
        t.wait_said("agentbar: a system tray started (XEmbed); the icon is in it now")
        # The tray restarts: the icon docks in the new one.
        bare_desktop.stop(trayer)
        wait_until("the icon to leave the tray", lambda: not t.desktop.docked_icon("agentbar"))
        bare_desktop.start_trayer()
        t.icon()
        t.wait_said("agentbar: the system tray restarted (XEmbed); the icon is back in it")
        t.click_icon()
        t.wait_window_on("/")
        status, err = t.stop()
        assert status == 0, err
        assert "Traceback" not in err
        assert len([line for line in err.splitlines() if "D-Bus" in line]) == 1


def test_no_notification_for_the_session_whose_window_is_in_front(tray: Tray) -> None:
    tray.launch()
    tray.start_waiting(A, "/work/front")
    wait_until(
        "its notification to show",
        lambda: tray.desktop.run("dunstctl", "count", "displayed").stdout.strip() == "1",
    )
    assert tray.desktop.run("dunstctl", "action", "0").returncode == 0  # A's replay, in front
    shown = tray.wait_window_on(f"/session/claude/{A}")
    tray.desktop.clear_notifications()
    # The user clicks into it (there is no window manager to give it the focus).
    window = wait_until("the window", lambda: tray.desktop.windows_named(" — agentbar$"))[0]
    assert tray.desktop.run("xdotool", "windowfocus", "--sync", window).returncode == 0
    wait_until("the window to have the focus", lambda: tray.windows()[0]["focused"])
    assert shown["path"] == f"/session/claude/{A}"
    tray.start_waiting(A, "/work/front", "ls -la")  # approved, then the next approval
    wait_until("the badge", lambda: tray.desktop.name_of(tray.icon()) == "agentbar: 1 needs you")
    tray.start_waiting(B, "/work/behind")  # another session: told
    tray.desktop.wait_notification(lambda n: "behind" in n["summary"])
    assert [n["summary"] for n in tray.desktop.notifications()] == [
        "Claude Code in behind needs your approval"
    ]
    # The window loses the focus (the tray icon takes it): A is told again.
    tray.desktop.clear_notifications()
    assert tray.desktop.run("xdotool", "windowfocus", "--sync", tray.icon()).returncode == 0
    wait_until("the window to lose the focus", lambda: not tray.windows()[0]["focused"])
    tray.start_waiting(A, "/work/front", "git push")
    shown_a = tray.desktop.wait_notification(lambda n: "front" in n["summary"])
    assert shown_a["body"] == "Bash: git push"
