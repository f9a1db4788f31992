"""Can a tray icon show here: no display, no pystray, and a Linux desktop with or without a
system tray (the private desktop has trayer; the window tests' bare Xvfb has none)."""

from __future__ import annotations

import pytest
from desktop import Desktop

from agentbar.tray import host


def test_no_display_means_no_icon() -> None:
    assert host.no_icon_reason({}, "linux") == (
        "no display (DISPLAY and WAYLAND_DISPLAY are unset), so no tray icon"
    )
    assert host.no_icon_reason({"DISPLAY": ":3"}, "linux") is None
    assert host.no_icon_reason({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert host.no_icon_reason({}, "darwin") is None  # macOS and Windows always have a display
    assert host.no_icon_reason({}, "win32") is None


def test_a_desktop_with_a_system_tray(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desktop.env["DBUS_SESSION_BUS_ADDRESS"])
    assert host.tray_host_missing({"DISPLAY": desktop.display}) is False


def test_a_display_without_any_tray(
    desktop: Desktop, xvfb: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The desktop's bus has no StatusNotifierWatcher, and this display no XEmbed tray.
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desktop.env["DBUS_SESSION_BUS_ADDRESS"])
    assert host.tray_host_missing({"DISPLAY": xvfb["DISPLAY"]}) is True
    assert host.tray_host_missing({"WAYLAND_DISPLAY": "wayland-0"}) is True  # only SNI there
    assert host.tray_host_missing({"DISPLAY": ":9999"}) is False  # cannot tell: do not claim
