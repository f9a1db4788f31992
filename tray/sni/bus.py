"""Finding and joining the session bus with dbus-fast (pure address lookup; the connection is
made on the caller's asyncio loop): ``DBUS_SESSION_BUS_ADDRESS``, else the user bus systemd
and dbus-broker put at ``$XDG_RUNTIME_DIR/bus``. No X11 autolaunch: a session without a bus
gets one sentence saying so, never a bus started behind its back.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

from ..bus_address import session_bus_address

DBUS = "org.freedesktop.DBus"
DBUS_PATH = "/org/freedesktop/DBus"
CONNECT_SECONDS = 5.0


class NoBus(Exception):
    """No session bus to join; the message is one line for the person reading stderr."""


def session_address(env: Mapping[str, str] | None = None) -> str:
    address = session_bus_address(os.environ if env is None else env)
    if address is None:
        raise NoBus(
            "no session D-Bus (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus is "
            "absent)"
        )
    return address


async def connect(env: Mapping[str, str] | None = None) -> MessageBus:
    """A connection to the session bus, or ``NoBus`` saying why not."""
    address = session_address(env)
    try:
        return await asyncio.wait_for(
            MessageBus(bus_address=address, bus_type=BusType.SESSION).connect(), CONNECT_SECONDS
        )
    except (OSError, TimeoutError, ValueError, Exception) as exc:
        raise NoBus(
            f"cannot join the session D-Bus at {address} ({exc or type(exc).__name__})"
        ) from exc


async def _ask_bus(bus: MessageBus, member: str, text: str) -> Message | None:
    """Call ``member`` of the bus daemon itself with one string argument."""
    return await bus.call(
        Message(
            destination=DBUS,
            path=DBUS_PATH,
            interface=DBUS,
            member=member,
            signature="s",
            body=[text],
        )
    )


async def name_has_owner(bus: MessageBus, name: str) -> bool:
    reply = await _ask_bus(bus, "NameHasOwner", name)
    return (
        reply is not None
        and reply.message_type is MessageType.METHOD_RETURN
        and bool(reply.body[0])
    )


async def watch_owner(bus: MessageBus, name: str) -> None:
    """Have the bus send this connection ``NameOwnerChanged`` for ``name``."""
    rule = (
        f"type='signal',sender='{DBUS}',interface='{DBUS}',member='NameOwnerChanged',arg0='{name}'"
    )
    await _ask_bus(bus, "AddMatch", rule)


def has_owner_now(env: Mapping[str, str] | None, name: str) -> bool:
    """Whether ``name`` has an owner on the session bus (a short connection of its own; any
    thread without a running asyncio loop). ``NoBus`` when there is no bus."""

    async def ask() -> bool:
        bus = await connect(env)
        try:
            return await asyncio.wait_for(name_has_owner(bus, name), CONNECT_SECONDS)
        finally:
            bus.disconnect()

    return asyncio.run(ask())
