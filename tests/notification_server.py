"""A notification server that offers inline replies ("inline-reply", as KDE's Plasma does), for
the tests: the freedesktop Notifications interface served over dbus-fast on a private
dbus-daemon, on a thread of its own. It records what it is asked (Notify's actions and hints,
CloseNotification), and sends what a person's reply would (``NotificationReplied``). dunst, the
desktop's server, has no inline replies: this is the one way to see a reply field used."""

# No "from __future__ import annotations": dbus-fast reads the annotations at run time.

import asyncio
import contextlib
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from dbus_fast import Variant
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method, dbus_signal

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


@dataclass
class Shown:
    notification_id: int
    summary: str
    body: str
    actions: list[str]
    hints: dict[str, Any]


@dataclass
class Seen:
    shown: list[Shown] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)


class _Notifications(ServiceInterface):
    def __init__(self, seen: Seen) -> None:
        super().__init__(NAME)
        self.seen = seen
        self.next_id = 1

    @dbus_method()
    def GetCapabilities(self) -> Annotated[list[str], DBusSignature("as")]:
        return ["actions", "body", "inline-reply"]

    @dbus_method()
    def GetServerInformation(self) -> Annotated[list[str], DBusSignature("ssss")]:
        return ["test-inline-reply", "agentbar tests", "1.0", "1.2"]

    @dbus_method()
    def Notify(
        self,
        app_name: Annotated[str, DBusSignature("s")],
        replaces_id: Annotated[int, DBusSignature("u")],
        app_icon: Annotated[str, DBusSignature("s")],
        summary: Annotated[str, DBusSignature("s")],
        body: Annotated[str, DBusSignature("s")],
        actions: Annotated[list[str], DBusSignature("as")],
        hints: Annotated[dict[str, Variant], DBusSignature("a{sv}")],
        expire_timeout: Annotated[int, DBusSignature("i")],
    ) -> Annotated[int, DBusSignature("u")]:
        notification_id = self.next_id
        self.next_id += 1
        values = {key: value.value for key, value in hints.items()}
        self.seen.shown.append(Shown(notification_id, summary, body, list(actions), values))
        return notification_id

    @dbus_method()
    def CloseNotification(self, notification_id: Annotated[int, DBusSignature("u")]) -> None:
        self.seen.closed.append(notification_id)
        self.NotificationClosed(notification_id, 3)

    @dbus_signal()
    def NotificationClosed(
        self, notification_id: int, reason: int
    ) -> Annotated[list[int], DBusSignature("uu")]:
        return [notification_id, reason]

    @dbus_signal()
    def ActionInvoked(
        self, notification_id: int, key: str
    ) -> Annotated[list[Any], DBusSignature("us")]:
        return [notification_id, key]

    @dbus_signal()
    def NotificationReplied(
        self, notification_id: int, text: str
    ) -> Annotated[list[Any], DBusSignature("us")]:
        return [notification_id, text]


class InlineReplyServer:
    def __init__(self, address: str) -> None:
        self.address = address
        self.seen = Seen()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._interface = _Notifications(self.seen)
        self._bus: MessageBus | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        self._bus = await MessageBus(bus_address=self.address).connect()
        self._bus.export(PATH, self._interface)
        await self._bus.request_name(NAME)

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10), "the notification server did not start"

    def reply(self, notification_id: int, text: str) -> None:
        """What the server sends when the person types ``text`` into the reply field."""
        self._loop.call_soon_threadsafe(self._interface.NotificationReplied, notification_id, text)

    def close(self) -> None:
        if self._bus is not None:
            self._loop.call_soon_threadsafe(self._bus.disconnect)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@contextlib.contextmanager
def private_bus(root: Path) -> Iterator[str]:
    """A dbus-daemon of its own with nothing to activate; yields its address."""
    config = root / "bus.conf"
    config.write_text(
        "<busconfig><type>session</type><listen>unix:tmpdir=" + str(root) + "</listen>"
        "<auth>EXTERNAL</auth><policy context='default'><allow send_destination='*'/>"
        "<allow eavesdrop='true'/><allow own='*'/></policy></busconfig>"
    )
    done = subprocess.run(
        ["dbus-daemon", f"--config-file={config}", "--fork", "--print-address=1", "--print-pid=1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    )
    address, pid = done.stdout.split()
    try:
        yield address
    finally:
        subprocess.run(["kill", pid], check=False)


@contextlib.contextmanager
def inline_reply_server(root: Path) -> Iterator[tuple[str, InlineReplyServer]]:
    """The server on a private bus: yields the bus address and the server."""
    with private_bus(root) as address:
        server = InlineReplyServer(address)
        server.start()
        try:
            yield address, server
        finally:
            server.close()
