"""Can this session show a tray icon, and which kind (main thread, at start; the choice itself
is pure).

macOS and Windows: pystray, always. Linux (and the BSDs) needs someone to show the icon:
- a StatusNotifierWatcher on the session bus (KDE, GNOME's AppIndicator extension, XFCE,
  Cinnamon, MATE, LXQt, waybar...): the StatusNotifierItem, menu included;
- else an XEmbed system tray on the X display (trayer, stalonetray): the XEmbed icon, badge
  and click, no menu;
- else nothing yet: the StatusNotifierItem all the same (it registers when a watcher appears),
  or, without a session bus, the XEmbed icon (it docks when a tray appears); one line says so.
No session bus and no X display: one line, no icon; the engine, server and window work as ever.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

WATCHER = "org.kde.StatusNotifierWatcher"
SNI = "sni"
XEMBED = "xembed"
MEANWHILE = "notifications and 'agentbar window' work meanwhile"


def no_icon_reason(env: Mapping[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why no tray icon can run here (one line), or None."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    if linux_like(platform):
        if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
            return "no display (DISPLAY and WAYLAND_DISPLAY are unset), so no tray icon"
        return None
    if importlib.util.find_spec("pystray") is None:
        return "pystray is not installed, so no tray icon"
    return None


def linux_like(platform: str) -> bool:
    return platform.startswith("linux") or "bsd" in platform


@dataclass(frozen=True, slots=True)
class Facts:
    """What a Linux session offers a tray icon."""

    x11: bool  # DISPLAY is set
    bus: str | None  # why there is no session bus to use (None: there is one)
    watcher: bool  # a StatusNotifierWatcher owns its name on that bus
    xembed: bool | None  # an XEmbed tray owns its selection on the display (None: cannot tell)


@dataclass(frozen=True, slots=True)
class Choice:
    backend: str | None  # SNI, XEMBED, or None: no icon
    note: str | None = None  # the one line to print at start, if any


def choose(facts: Facts) -> Choice:
    if facts.bus is None and facts.watcher:
        return Choice(SNI)
    if facts.xembed:
        return Choice(XEMBED)
    if facts.bus is None:
        trays = "no StatusNotifierWatcher on the session bus" + (
            ", no XEmbed tray on the display" if facts.x11 else ""
        )
        return Choice(
            SNI,
            f"no system tray on this desktop yet ({trays}); the icon appears once one starts, "
            f"{MEANWHILE}",
        )
    if facts.x11:
        return Choice(
            XEMBED,
            f"{facts.bus}, and no XEmbed tray on the display yet; the icon appears once one "
            f"starts, {MEANWHILE}",
        )
    return Choice(None, f"{facts.bus}, and no X display: no tray icon")


def linux_facts(env: Mapping[str, str] | None = None) -> Facts:
    """Ask the session bus and the X display (a few milliseconds each)."""
    from .sni import bus  # noqa: PLC0415  (dbus-fast: Linux only)

    env = os.environ if env is None else env
    display = env.get("DISPLAY")
    problem: str | None = None
    watcher = False
    try:
        watcher = bus.has_owner_now(env, WATCHER)
    except bus.NoBus as exc:
        problem = str(exc)
    except Exception as exc:  # a bus that answers nonsense: treat as none, say why
        problem = f"the session D-Bus did not answer ({exc})"
    return Facts(
        x11=bool(display),
        bus=problem,
        watcher=watcher,
        xembed=_xembed_tray_owned(display) if display and not watcher else None,
    )


def _xembed_tray_owned(display: str) -> bool | None:
    """Whether an XEmbed system tray owns its selection on ``display`` (None: cannot tell)."""
    try:
        from Xlib import display as xdisplay  # noqa: PLC0415  (Linux X11 only)

        conn = xdisplay.Display(display)
    except Exception as exc:
        log.debug("cannot open the display %s to look for a tray: %s", display, exc)
        return None
    try:
        atom = conn.intern_atom(f"_NET_SYSTEM_TRAY_S{conn.get_default_screen()}")
        return bool(conn.get_selection_owner(atom))
    finally:
        conn.close()
