"""Can this session show a tray icon: a display, pystray, and someone to show it (main thread, at
start).

On Linux an icon is only visible with a host: a StatusNotifierWatcher on the session bus
(appindicator registers there) or an XEmbed system tray on the display (appindicator falls back
to one). With neither, the icon still runs, so it appears when a panel starts after agentbar
(both libraries watch for one); the tray only says so.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from collections.abc import Mapping

log = logging.getLogger(__name__)

WATCHER = "org.kde.StatusNotifierWatcher"


def no_icon_reason(env: Mapping[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why no tray icon can run here (one line), or None."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    if (platform.startswith("linux") or "bsd" in platform) and not (
        env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")
    ):
        return "no display (DISPLAY and WAYLAND_DISPLAY are unset), so no tray icon"
    if importlib.util.find_spec("pystray") is None:
        return "pystray is not installed, so no tray icon"
    return None


def tray_host_missing(env: Mapping[str, str] | None = None) -> bool:
    """True when it is certain that nothing on this Linux desktop would show the icon."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux"):
        return False
    if _has_watcher():
        return False
    display = env.get("DISPLAY")
    if not display:
        return True  # Wayland alone: only a StatusNotifierWatcher could show it
    owned = _xembed_tray_owned(display)
    return owned is False


def _has_watcher() -> bool:
    try:
        from gi.repository import Gio, GLib  # noqa: PLC0415  (Linux desktop only)

        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        reply = bus.call_sync(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "NameHasOwner",
            GLib.Variant("(s)", (WATCHER,)),
            GLib.VariantType.new("(b)"),
            Gio.DBusCallFlags.NONE,
            2000,
            None,
        )
        return bool(reply.unpack()[0])
    except Exception as exc:  # no bus, no gi: then there is no watcher to find
        log.debug("cannot ask the session bus for a StatusNotifierWatcher: %s", exc)
        return False


def _xembed_tray_owned(display: str) -> bool | None:
    """Whether an XEmbed system tray owns its selection on ``display`` (None: cannot tell)."""
    try:
        from Xlib import display as xdisplay  # noqa: PLC0415  (pystray's X11 dependency)

        conn = xdisplay.Display(display)
    except Exception as exc:
        log.debug("cannot open the display %s to look for a tray: %s", display, exc)
        return None
    try:
        atom = conn.intern_atom(f"_NET_SYSTEM_TRAY_S{conn.get_default_screen()}")
        return bool(conn.get_selection_owner(atom))
    finally:
        conn.close()
