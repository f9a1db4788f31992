"""The menu on the bus: ``com.canonical.dbusmenu`` served from a ``menu.Menu`` (the tray's D-Bus
thread: dbus-fast calls these methods on its asyncio loop, and ``show`` runs there too).

A click (``Event`` or ``EventGroup`` with "clicked") hands the entry's ``Action`` to
``on_action``, which only posts it to the tray's worker. ``AboutToShow`` never needs an update:
the menu is always current, rebuilt by the worker as things change.
"""

# No "from __future__ import annotations": dbus-fast reads these annotations at run time, and
# a method that returns nothing must carry a real None, not the string "None".

import logging
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from dbus_fast import DBusError, PropertyAccess, Variant
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property, dbus_signal

from ..actions import Action
from ..view import Entry
from .menu import (
    Change,
    Layout,
    Menu,
    Props,
    PropValue,
    group_properties,
    property_of,
)
from .menu import layout as layout_of

log = logging.getLogger(__name__)

INTERFACE = "com.canonical.dbusmenu"
PATH = "/MenuBar"
VERSION = 3
UNKNOWN_ITEM = "org.freedesktop.DBus.Error.InvalidArgs"
LAYOUT = "(ia{sv}av)"


def variant(value: PropValue) -> Variant:
    if isinstance(value, bool):
        return Variant("b", value)
    if isinstance(value, int):
        return Variant("i", value)
    return Variant("s", value)


def props_variant(props: Props) -> dict[str, Variant]:
    return {name: variant(value) for name, value in props.items()}


def layout_body(node: Layout) -> list[Any]:
    """A ``(ia{sv}av)`` for dbus-fast: the children are variants of the same."""
    item_id, props, children = node
    return [
        item_id,
        props_variant(props),
        [Variant(LAYOUT, layout_body(child)) for child in children],
    ]


class DBusMenu(ServiceInterface):
    def __init__(self, entries: Sequence[Entry], on_action: Callable[[Action], None]) -> None:
        super().__init__(INTERFACE)
        self.menu = Menu(entries)
        self.on_action = on_action

    def show(self, entries: Sequence[Entry]) -> Change | None:
        """Replace the menu and tell clients what changed."""
        change = self.menu.replace(entries)
        if change is None:
            return None
        if change.layout:
            self.LayoutUpdated(change.revision, 0)
        else:
            self.ItemsPropertiesUpdated(
                [[item_id, props_variant(props)] for item_id, props in change.updated],
                [[item_id, list(names)] for item_id, names in change.removed],
            )
        return change

    # -- properties ------------------------------------------------------------------------

    @dbus_property(access=PropertyAccess.READ)
    def Version(self) -> Annotated[int, DBusSignature("u")]:
        return VERSION

    @dbus_property(access=PropertyAccess.READ)
    def TextDirection(self) -> Annotated[str, DBusSignature("s")]:
        return "ltr"

    @dbus_property(access=PropertyAccess.READ)
    def Status(self) -> Annotated[str, DBusSignature("s")]:
        return "normal"

    @dbus_property(access=PropertyAccess.READ)
    def IconThemePath(self) -> Annotated[list[str], DBusSignature("as")]:
        return []

    # -- methods ---------------------------------------------------------------------------

    @dbus_method()
    def GetLayout(
        self,
        parent_id: Annotated[int, DBusSignature("i")],
        recursion_depth: Annotated[int, DBusSignature("i")],
        property_names: Annotated[list[str], DBusSignature("as")],
    ) -> Annotated[list[Any], DBusSignature("u" + LAYOUT)]:
        try:
            node = layout_of(self.menu.tree, parent_id, recursion_depth, property_names)
        except KeyError:
            raise DBusError(UNKNOWN_ITEM, f"no menu item {parent_id}") from None
        return [self.menu.revision, layout_body(node)]

    @dbus_method()
    def GetGroupProperties(
        self,
        ids: Annotated[list[int], DBusSignature("ai")],
        property_names: Annotated[list[str], DBusSignature("as")],
    ) -> Annotated[list[Any], DBusSignature("a(ia{sv})")]:
        found = group_properties(self.menu.tree, ids, property_names)
        return [[item_id, props_variant(props)] for item_id, props in found]

    @dbus_method()
    def GetProperty(
        self,
        item_id: Annotated[int, DBusSignature("i")],
        name: Annotated[str, DBusSignature("s")],
    ) -> Annotated[Variant, DBusSignature("v")]:
        try:
            return variant(property_of(self.menu.tree, item_id, name))
        except KeyError:
            raise DBusError(UNKNOWN_ITEM, f"no property {name!r} on item {item_id}") from None

    @dbus_method()
    def Event(
        self,
        item_id: Annotated[int, DBusSignature("i")],
        event_id: Annotated[str, DBusSignature("s")],
        data: Annotated[Variant, DBusSignature("v")],
        timestamp: Annotated[int, DBusSignature("u")],
    ) -> None:
        if item_id not in self.menu.tree.items:
            raise DBusError(UNKNOWN_ITEM, f"no menu item {item_id}")
        self._event(item_id, event_id)

    @dbus_method()
    def EventGroup(
        self, events: Annotated[list[Any], DBusSignature("a(isvu)")]
    ) -> Annotated[list[int], DBusSignature("ai")]:
        unknown = [event[0] for event in events if event[0] not in self.menu.tree.items]
        if unknown and len(unknown) == len(events):
            raise DBusError(UNKNOWN_ITEM, f"no menu items {unknown}")
        for item_id, event_id, _data, _timestamp in events:
            if item_id not in unknown:
                self._event(item_id, event_id)
        return unknown

    @dbus_method()
    def AboutToShow(
        self, item_id: Annotated[int, DBusSignature("i")]
    ) -> Annotated[bool, DBusSignature("b")]:
        return False  # always current: nothing to refresh before it opens

    @dbus_method()
    def AboutToShowGroup(
        self, ids: Annotated[list[int], DBusSignature("ai")]
    ) -> Annotated[list[Any], DBusSignature("aiai")]:
        return [[], [i for i in ids if i not in self.menu.tree.items]]

    def _event(self, item_id: int, event_id: str) -> None:
        if event_id != "clicked":
            return  # "hovered", "opened", "closed": nothing to do
        action = self.menu.action_of(item_id)
        if action is not None:
            self.on_action(action)

    # -- signals ---------------------------------------------------------------------------

    @dbus_signal()
    def ItemsPropertiesUpdated(
        self, updated: list[Any], removed: list[Any]
    ) -> Annotated[list[Any], DBusSignature("a(ia{sv})a(ias)")]:
        return [updated, removed]

    @dbus_signal()
    def LayoutUpdated(
        self, revision: int, parent: int
    ) -> Annotated[list[int], DBusSignature("ui")]:
        return [revision, parent]

    @dbus_signal()
    def ItemActivationRequested(
        self, item_id: int, timestamp: int
    ) -> Annotated[list[int], DBusSignature("iu")]:
        return [item_id, timestamp]
