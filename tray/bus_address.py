"""Where the D-Bus session bus is, as libdbus looks for it (pure: the environment and one stat;
any thread). Shared by the notifier and the tray's StatusNotifierItem, which must agree on
whether there is a bus; never an X11 autolaunch behind the person's back.
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path


def session_bus_address(env: Mapping[str, str]) -> str | None:
    """``DBUS_SESSION_BUS_ADDRESS``, else the user bus socket systemd and dbus-broker make at
    ``$XDG_RUNTIME_DIR/bus``; None when neither."""
    named = env.get("DBUS_SESSION_BUS_ADDRESS")
    if named:
        return named
    runtime = env.get("XDG_RUNTIME_DIR")
    if not runtime:
        return None
    socket_path = Path(runtime) / "bus"
    try:
        is_socket = stat.S_ISSOCK(socket_path.stat().st_mode)
    except OSError:
        return None
    return f"unix:path={socket_path}" if is_socket else None
