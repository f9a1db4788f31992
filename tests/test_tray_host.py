"""Can a tray icon show here, and which: the choice itself (pure), and the facts read from a
real session bus and real X displays (the private desktop has trayer and no watcher; the window
tests' bare Xvfb has no tray at all; a watcher is started for one test)."""

from __future__ import annotations

import importlib.util

from desktop import Desktop

from agentbar.tray import host
from agentbar.tray.host import SNI, XEMBED, Choice, Facts

NO_BUS = "no session D-Bus (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus is absent)"
MEANWHILE = "notifications and 'agentbar window' work meanwhile"


def test_no_display_means_no_icon() -> None:
    assert host.no_icon_reason({}, "linux") == (
        "no display (DISPLAY and WAYLAND_DISPLAY are unset), so no tray icon"
    )
    assert host.no_icon_reason({"DISPLAY": ":3"}, "linux") is None
    assert host.no_icon_reason({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    # macOS and Windows always have a display; the icon is pystray's, a dependency there only.
    without = (
        None if importlib.util.find_spec("pystray") else "pystray is not installed, so no tray icon"
    )
    assert host.no_icon_reason({}, "darwin") == without
    assert host.no_icon_reason({}, "win32") == without


def test_a_watcher_wins_then_an_xembed_tray_then_waiting_for_one() -> None:
    assert host.choose(Facts(x11=True, bus=None, watcher=True, xembed=True)) == Choice(SNI)
    assert host.choose(Facts(x11=False, bus=None, watcher=True, xembed=None)) == Choice(SNI)
    assert host.choose(Facts(x11=True, bus=None, watcher=False, xembed=True)) == Choice(XEMBED)
    assert host.choose(Facts(x11=True, bus=NO_BUS, watcher=False, xembed=True)) == Choice(XEMBED)
    assert host.choose(Facts(x11=True, bus=None, watcher=False, xembed=False)) == Choice(
        SNI,
        "no system tray on this desktop yet (no StatusNotifierWatcher on the session bus, no "
        f"XEmbed tray on the display); the icon appears once one starts, {MEANWHILE}",
    )
    assert host.choose(Facts(x11=False, bus=None, watcher=False, xembed=None)) == Choice(
        SNI,
        "no system tray on this desktop yet (no StatusNotifierWatcher on the session bus); the "
        f"icon appears once one starts, {MEANWHILE}",
    )
    assert host.choose(Facts(x11=True, bus=NO_BUS, watcher=False, xembed=False)) == Choice(
        XEMBED,
        f"{NO_BUS}, and no XEmbed tray on the display yet; the icon appears once one starts, "
        f"{MEANWHILE}",
    )
    assert host.choose(Facts(x11=False, bus=NO_BUS, watcher=False, xembed=None)) == Choice(
        None, f"{NO_BUS}, and no X display: no tray icon"
    )


def test_the_facts_of_a_desktop_with_trayer_and_then_a_watcher(desktop: Desktop) -> None:
    env = {k: v for k, v in desktop.env.items() if k != "XDG_RUNTIME_DIR"}
    assert host.linux_facts(env) == Facts(x11=True, bus=None, watcher=False, xembed=True)
    watcher = desktop.start_sni_watcher()
    try:
        assert host.linux_facts(env) == Facts(x11=True, bus=None, watcher=True, xembed=None)
    finally:
        desktop.stop(watcher)


def test_the_facts_without_a_bus_or_a_tray(xvfb: dict[str, str], tmp_path) -> None:
    assert host.linux_facts({"DISPLAY": xvfb["DISPLAY"]}) == Facts(
        x11=True, bus=NO_BUS, watcher=False, xembed=False
    )
    dead = {"DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path / 'gone'}"}
    facts = host.linux_facts(dead)
    assert facts.bus is not None and facts.bus.startswith(
        f"cannot join the session D-Bus at unix:path={tmp_path / 'gone'} ("
    )
    assert (facts.x11, facts.watcher, facts.xembed) == (False, False, None)
    # $XDG_RUNTIME_DIR/bus (systemd's user bus) is found without the variable.
    assert host.linux_facts({"XDG_RUNTIME_DIR": str(tmp_path)}).bus == NO_BUS
    assert host.linux_facts({"DISPLAY": ":9999"}).xembed is None  # cannot tell: do not claim
