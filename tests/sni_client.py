"""A separate D-Bus client for the tray tests (dbus-fast, a connection per call on the test's
thread): what the StatusNotifierWatcher has registered, an item's properties, its dbusmenu
layout, and clicks sent the way a host sends them (``Event`` "clicked")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

WATCHER = "org.kde.StatusNotifierWatcher"
ITEM = "org.kde.StatusNotifierItem"
MENU = "com.canonical.dbusmenu"
T = TypeVar("T")


class CallFailed(Exception):
    pass


@dataclass
class MenuNode:
    id: int
    props: dict[str, Any]
    children: list[MenuNode] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.props.get("label", "")).replace("__", "_")

    def walk(self) -> list[MenuNode]:
        found = [self]
        for child in self.children:
            found += child.walk()
        return found

    def find(self, label: str) -> MenuNode:
        for node in self.walk():
            if node.label == label:
                return node
        raise KeyError(f"no menu entry {label!r} in {[n.label for n in self.walk()]}")


def _run(address: str, work: Callable[[MessageBus], Awaitable[T]]) -> T:
    async def go() -> T:
        bus = await MessageBus(bus_address=address, bus_type=BusType.SESSION).connect()
        try:
            return await asyncio.wait_for(work(bus), 10)
        finally:
            bus.disconnect()

    return asyncio.run(go())


async def _call(bus: MessageBus, **kw: Any) -> list[Any]:
    reply = await bus.call(Message(**kw))
    if reply.message_type is MessageType.ERROR:
        raise CallFailed(f"{reply.error_name}: {reply.body}")
    return reply.body


def _unwrap(value: Any) -> Any:
    return value.value if isinstance(value, Variant) else value


def registered_items(address: str) -> list[str]:
    """The watcher's ``RegisteredStatusNotifierItems`` ([] without a watcher)."""

    async def work(bus: MessageBus) -> list[str]:
        try:
            body = await _call(
                bus, destination=WATCHER, path="/StatusNotifierWatcher",
                interface="org.freedesktop.DBus.Properties", member="Get", signature="ss",
                body=[WATCHER, "RegisteredStatusNotifierItems"],
            )  # fmt: skip
        except CallFailed:
            return []
        return list(_unwrap(body[0]))

    return _run(address, work)


def item_properties(address: str, service: str) -> dict[str, Any]:
    """Every property of the item ``service`` (a bus name, or "name/path" as a watcher lists
    it) as plain values."""
    name, path = _split(service)

    async def work(bus: MessageBus) -> dict[str, Any]:
        body = await _call(
            bus, destination=name, path=path, interface="org.freedesktop.DBus.Properties",
            member="GetAll", signature="s", body=[ITEM],
        )  # fmt: skip
        return {key: _unwrap(value) for key, value in body[0].items()}

    return _run(address, work)


def layout(address: str, service: str, menu_path: str) -> tuple[int, MenuNode]:
    """The whole menu (``GetLayout 0 -1 []``): its revision and its root."""
    name, _path = _split(service)

    async def work(bus: MessageBus) -> tuple[int, MenuNode]:
        revision, root = await _call(
            bus, destination=name, path=menu_path, interface=MENU, member="GetLayout",
            signature="iias", body=[0, -1, []],
        )  # fmt: skip
        return revision, _node(root)

    return _run(address, work)


def click(address: str, service: str, menu_path: str, item_id: int) -> None:
    """What a host sends when an entry is chosen."""
    name, _path = _split(service)

    async def work(bus: MessageBus) -> None:
        await _call(
            bus, destination=name, path=menu_path, interface=MENU, member="Event",
            signature="isvu", body=[item_id, "clicked", Variant("i", 0), 0],
        )  # fmt: skip

    _run(address, work)


def call_menu(address: str, service: str, menu_path: str, member: str, signature: str,
              body: list[Any]) -> list[Any]:  # fmt: skip
    name, _path = _split(service)

    async def work(bus: MessageBus) -> list[Any]:
        return await _call(
            bus, destination=name, path=menu_path, interface=MENU, member=member,
            signature=signature, body=body,
        )  # fmt: skip

    return _run(address, work)


def _node(raw: Any) -> MenuNode:
    item_id, props, children = _unwrap(raw)
    return MenuNode(
        item_id,
        {key: _unwrap(value) for key, value in props.items()},
        [_node(child) for child in children],
    )


def _split(service: str) -> tuple[str, str]:
    if "/" in service:
        name, _, path = service.partition("/")
        return name, "/" + path
    return service, "/StatusNotifierItem"
