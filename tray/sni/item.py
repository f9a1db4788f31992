"""The icon on the bus: ``org.kde.StatusNotifierItem`` at ``/StatusNotifierItem`` (the tray's
D-Bus thread: dbus-fast calls these on its asyncio loop, ``show`` runs there too).

What a host reads: the badge as pixmaps (``IconPixmap``, no icon theme needed), the tooltip,
``Status`` (``NeedsAttention`` while a session needs you, which some hosts mark), and the menu's
object path with ``ItemIsMenu`` false. A left click (``Activate``) opens the window; a middle
click (``SecondaryActivate``) too; ``ContextMenu`` (a host that will not draw a dbusmenu itself)
opens the window as well, since the whole menu is in it.
"""

# No "from __future__ import annotations": dbus-fast reads these annotations at run time, and
# a method that returns nothing must carry a real None, not the string "None".

from collections.abc import Callable
from typing import Annotated, Any

from dbus_fast import PropertyAccess
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property, dbus_signal

from ..view import Badge, TrayView
from . import dbusmenu
from .pixmaps import pixmaps

INTERFACE = "org.kde.StatusNotifierItem"
PATH = "/StatusNotifierItem"
NAME = "agentbar"

Int = Annotated[int, DBusSignature("i")]
Str = Annotated[str, DBusSignature("s")]
PixmapList = Annotated[list[Any], DBusSignature("a(iiay)")]


def status_of(shown: Badge) -> str:
    return "NeedsAttention" if shown.needs else "Active"


class StatusNotifierItem(ServiceInterface):
    def __init__(self, view: TrayView, on_activate: Callable[[], None]) -> None:
        super().__init__(INTERFACE)
        self.view = view
        self.on_activate = on_activate

    def show(self, view: TrayView) -> None:
        """Show ``view``'s badge and tooltip; signal only what changed."""
        shown, self.view = self.view, view
        if view.badge != shown.badge:
            self.NewIcon()
            self.NewAttentionIcon()
            if status_of(view.badge) != status_of(shown.badge):
                self.NewStatus(status_of(view.badge))
        if view.tooltip != shown.tooltip:
            self.NewToolTip()

    def _pixmaps(self) -> list[Any]:
        return [p.as_dbus() for p in pixmaps(self.view.badge)]

    # -- properties ------------------------------------------------------------------------

    @dbus_property(access=PropertyAccess.READ)
    def Category(self) -> Str:
        return "ApplicationStatus"

    @dbus_property(access=PropertyAccess.READ)
    def Id(self) -> Str:
        return NAME

    @dbus_property(access=PropertyAccess.READ)
    def Title(self) -> Str:
        return NAME  # the application's name; what it has to say is in the tooltip

    @dbus_property(access=PropertyAccess.READ)
    def Status(self) -> Str:
        return status_of(self.view.badge)

    @dbus_property(access=PropertyAccess.READ)
    def WindowId(self) -> Int:
        return 0

    @dbus_property(access=PropertyAccess.READ)
    def IconThemePath(self) -> Str:
        return ""

    @dbus_property(access=PropertyAccess.READ)
    def IconName(self) -> Str:
        return ""  # the pixmaps are the icon: a theme icon would hide the badge

    @dbus_property(access=PropertyAccess.READ)
    def IconPixmap(self) -> PixmapList:
        return self._pixmaps()

    @dbus_property(access=PropertyAccess.READ)
    def OverlayIconName(self) -> Str:
        return ""

    @dbus_property(access=PropertyAccess.READ)
    def OverlayIconPixmap(self) -> PixmapList:
        return []

    @dbus_property(access=PropertyAccess.READ)
    def AttentionIconName(self) -> Str:
        return ""

    @dbus_property(access=PropertyAccess.READ)
    def AttentionIconPixmap(self) -> PixmapList:
        return self._pixmaps()  # the badge already says it: the same picture

    @dbus_property(access=PropertyAccess.READ)
    def AttentionMovieName(self) -> Str:
        return ""

    @dbus_property(access=PropertyAccess.READ)
    def ToolTip(self) -> Annotated[list[Any], DBusSignature("(sa(iiay)ss)")]:
        return ["", [], NAME, self.view.tooltip]

    @dbus_property(access=PropertyAccess.READ)
    def ItemIsMenu(self) -> Annotated[bool, DBusSignature("b")]:
        return False

    @dbus_property(access=PropertyAccess.READ)
    def Menu(self) -> Annotated[str, DBusSignature("o")]:
        return dbusmenu.PATH

    # -- methods ---------------------------------------------------------------------------

    @dbus_method()
    def Activate(self, x: Int, y: Int) -> None:
        self.on_activate()

    @dbus_method()
    def SecondaryActivate(self, x: Int, y: Int) -> None:
        self.on_activate()

    @dbus_method()
    def ContextMenu(self, x: Int, y: Int) -> None:
        self.on_activate()

    @dbus_method()
    def Scroll(self, delta: Int, orientation: Str) -> None:
        pass  # nothing to scroll through

    # -- signals ---------------------------------------------------------------------------

    @dbus_signal()
    def NewTitle(self) -> None:
        pass

    @dbus_signal()
    def NewIcon(self) -> None:
        pass

    @dbus_signal()
    def NewAttentionIcon(self) -> None:
        pass

    @dbus_signal()
    def NewOverlayIcon(self) -> None:
        pass

    @dbus_signal()
    def NewToolTip(self) -> None:
        pass

    @dbus_signal()
    def NewStatus(self, status: str) -> Str:
        return status
