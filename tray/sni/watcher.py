"""Keeps the item registered with the StatusNotifierWatcher (the tray's D-Bus thread, on its
asyncio loop): at start when a watcher runs, and again whenever one appears on the bus (a
panel that starts after agentbar, or a watcher that restarts), seen through
``NameOwnerChanged``. The host reads the item from the watcher, so a host that restarts finds
the icon again by itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from . import bus as session

log = logging.getLogger(__name__)

WATCHER = "org.kde.StatusNotifierWatcher"
WATCHER_PATH = "/StatusNotifierWatcher"
RETRIES = 25
RETRY_SECONDS = 0.2


class WatcherLink:
    def __init__(self, bus: MessageBus, say: Callable[[str], None]) -> None:
        self.bus = bus
        self.say = say
        self.registered = False  # with the watcher that runs now
        self.registrations = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> bool:
        """Watch for watchers; register with the one that runs. True if registered."""
        self.bus.add_message_handler(self._on_message)
        await session.watch_owner(self.bus, WATCHER)
        if await session.name_has_owner(self.bus, WATCHER):
            await self.register()
        return self.registered

    async def register(self, *, quiet: bool = False) -> None:
        reply = await self.bus.call(
            Message(
                destination=WATCHER,
                path=WATCHER_PATH,
                interface=WATCHER,
                member="RegisterStatusNotifierItem",
                signature="s",
                body=[self.bus.unique_name],
            )
        )
        if reply.message_type is MessageType.ERROR:
            self.registered = False
            say = log.debug if quiet else log.warning
            say("the StatusNotifierWatcher refused the icon: %s %s", reply.error_name, reply.body)
            return
        self.registered = True
        self.registrations += 1

    def _on_message(self, message: Message) -> None:
        if (
            message.message_type is not MessageType.SIGNAL
            or message.member != "NameOwnerChanged"
            or message.sender != session.DBUS
            or not message.body
            or message.body[0] != WATCHER
        ):
            return
        if message.body[2]:  # a new owner: a watcher started
            task = asyncio.get_running_loop().create_task(self._appeared())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            self.registered = False
            log.info("the StatusNotifierWatcher left the bus; the icon waits for the next one")

    async def _appeared(self) -> None:
        again = self.registrations > 0
        # A watcher may own its name a moment before it serves its object (the Haskell one
        # does: UnknownObject): try again for a few seconds.
        for attempt in range(RETRIES):
            await self.register(quiet=attempt < RETRIES - 1)
            if self.registered:
                break
            await asyncio.sleep(RETRY_SECONDS)
        if self.registered:
            self.say(
                "the system tray restarted (a new StatusNotifierWatcher); the icon is back in it"
                if again
                else "a system tray started (a StatusNotifierWatcher); the icon is in it now"
            )
