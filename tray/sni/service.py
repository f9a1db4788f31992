"""The StatusNotifier tray icon: an asyncio loop on a thread of its own ("agentbar-sni") that
joins the session bus, exports the item and its menu, and keeps them registered with the
StatusNotifierWatcher; the main thread only waits in ``run`` until ``stop``.

``show(view)`` may be called from any thread: the view is handed to the loop, which signals the
host only about what changed. Clicks arrive on the loop's thread and only hand their ``Action``
to ``on_action`` (the tray's worker does the work).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable

from dbus_fast.aio import MessageBus

from .. import actions
from ..actions import Action
from ..view import TrayView
from . import bus as session
from . import dbusmenu, item
from .watcher import WatcherLink

log = logging.getLogger(__name__)

START_SECONDS = 10.0
WAIT_STEP = 0.5  # the main thread wakes this often, so Python's signal handlers run


class SniIcon:
    backend = "sni"
    has_menu = True

    def __init__(self, view: TrayView, say: Callable[[str], None]) -> None:
        self.on_action: Callable[[Action], None] = lambda _action: None
        self.say = say
        self._view = view
        self._loop = asyncio.new_event_loop()
        self._started: concurrent.futures.Future[bool] = concurrent.futures.Future()
        self._done = threading.Event()
        self._stopping: asyncio.Event | None = None
        self.item: item.StatusNotifierItem | None = None
        self.menu: dbusmenu.DBusMenu | None = None
        self.link: WatcherLink | None = None
        self._thread = threading.Thread(target=self._serve, name="agentbar-sni", daemon=True)

    def start(self) -> bool:
        """Join the bus and show the icon (returns once it is on the bus): True when a
        watcher took it now, False when it waits for one. ``session.NoBus`` without a bus."""
        self._thread.start()
        return self._started.result(START_SECONDS)

    def show(self, view: TrayView) -> None:
        """Show ``view`` (any thread)."""
        self._loop.call_soon_threadsafe(self._apply, view)

    def run(self) -> None:
        """The main thread's part: wait until ``stop``."""
        while not self._done.wait(WAIT_STEP):
            pass
        self._thread.join(START_SECONDS)

    def stop(self) -> None:
        """Any thread: leave the bus and end ``run``."""
        if self._stopping is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._done.set()

    # -- on the loop's thread --------------------------------------------------------------

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        except Exception as exc:
            if not self._started.done():
                self._started.set_exception(exc)
            else:
                log.exception("the tray icon's D-Bus loop failed")
        finally:
            self._loop.close()

    async def _main(self) -> None:
        self._stopping = asyncio.Event()
        bus = await session.connect()
        try:
            await self._export(bus)
        except BaseException:
            bus.disconnect()
            raise
        self._started.set_result(self.link.registered if self.link else False)
        stopping = asyncio.ensure_future(self._stopping.wait())
        gone = asyncio.ensure_future(bus.wait_for_disconnect())  # type: ignore[no-untyped-call]
        await asyncio.wait((stopping, gone), return_when=asyncio.FIRST_COMPLETED)
        if gone.done() and not stopping.done():
            self.say("the session D-Bus went away: no tray icon until agentbar starts again")
            stopping.cancel()
            return
        gone.cancel()
        bus.disconnect()

    async def _export(self, bus: MessageBus) -> None:
        self.item = item.StatusNotifierItem(self._view, self._activate)
        self.menu = dbusmenu.DBusMenu(self._view.menu, self._chosen)
        bus.export(item.PATH, self.item)
        bus.export(dbusmenu.PATH, self.menu)
        self.link = WatcherLink(bus, self.say)
        await self.link.start()

    def _apply(self, view: TrayView) -> None:
        if self.item is None or self.menu is None:
            self._view = view
            return
        try:
            self.item.show(view)
            if view.menu != self._view.menu:
                self.menu.show(view.menu)
        except Exception:
            log.exception("a tray update failed")
        self._view = view

    def _activate(self) -> None:
        self.on_action(actions.BOARD)

    def _chosen(self, action: Action) -> None:
        self.on_action(action)
