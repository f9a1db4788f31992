"""Text cut to fit the tray's narrow places: a menu entry, a button, a notification (pure)."""

from __future__ import annotations

import time

from ..core.model import LOCAL_HOST
from ..core.remote.hosts import HostState, HostStatus

LABEL_CHARS = 72


def shorten(text: str, most: int = LABEL_CHARS) -> str:
    """One line, at most ``most`` characters (an ellipsis says it was cut)."""
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 1].rstrip() + "…"


def host_line(status: HostStatus) -> str | None:
    """A remote host's menu line when it is unreachable ("devbox: unreachable since 14:02
    (connection dropped)"); None while it is connected or connecting."""
    if status.state is not HostState.UNREACHABLE:
        return None
    since = time.strftime("%H:%M", time.localtime(status.since))
    why = f" ({status.detail})" if status.detail else ""
    return shorten(f"{status.name}: unreachable since {since}{why}", LABEL_CHARS * 2)


def on_host(host: str) -> str:
    """`` on devbox`` for a remote host's session, nothing for this machine's."""
    return "" if host == LOCAL_HOST else f" on {host}"
