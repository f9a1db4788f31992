"""One tray per user: the first ``agentbar`` holds a lock; a second one asks the first, through
its server, to open its window, and exits (main thread).

The lock (``<data dir>/tray.lock``) is the engine's kind of lock file: the OS drops it when its
holder dies, so a crashed tray never blocks the next one.
"""

from __future__ import annotations

import time
from typing import TextIO

from ..core.config import Settings
from ..core.launch.client import ApiError
from ..core.lock import InstanceLock
from ..core.server.codes import MAX_SECONDS
from . import browser, window

LOCK_FILE = "tray.lock"
WAIT_SECONDS = 20.0  # the first one may still be starting its server


def tray_lock(settings: Settings) -> InstanceLock:
    return InstanceLock(settings.data_dir / LOCK_FILE)


def hand_over(
    settings: Settings,
    lock: InstanceLock,
    err: TextIO,
    *,
    path: str = "/",
    wait: float = WAIT_SECONDS,
) -> int:
    """Ask the running tray to open its window on ``path``; the exit status for this one."""
    pid = lock.holder_pid()
    deadline = time.monotonic() + wait
    server = window.running_server(settings)
    while server is None or (pid is not None and server.pid != pid):
        if time.monotonic() >= deadline:
            print(
                f"agentbar: agentbar already runs (pid {pid}) but its server does not answer; "
                f"see {settings.data_dir / 'agentbar.log'}",
                file=err,
            )
            return 1
        time.sleep(0.2)
        server = window.running_server(settings)
    status = window.ask_to_open(server, path)
    if status == 0:
        print(f"agentbar: agentbar already runs (pid {pid}); it did not answer", file=err)
        return 1
    if status in (409, 501):  # 501: an agentbar from before 409
        try:
            how = browser.open_this(server.open_url(seconds=MAX_SECONDS), int(MAX_SECONDS // 60))
        except (ApiError, OSError) as exc:
            how = f"it gave no address to open ({exc})"
        print(f"agentbar: agentbar already runs (pid {pid}) without a display; {how}", file=err)
        return 0
    print(f"agentbar: agentbar already runs (pid {pid}); opened its window", file=err)
    return 0
