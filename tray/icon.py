"""The tray icon on macOS and Windows: pystray on the main thread (its native backends), changed
only through a dispatcher that runs code on that thread. (Linux has its own: ``tray/sni/`` and
``tray/xembed.py``, no GTK.)

``show(view)`` may be called from any thread: it hands the view to the main thread, which
redraws the badge only if it changed, sets the tooltip, and rebuilds the menu only if its
entries changed. A menu choice runs on the main thread and only hands its ``Action`` to
``on_action`` (the tray's worker thread does the work), so the icon never waits.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from . import badge
from .actions import Action
from .view import Entry, TrayView

log = logging.getLogger(__name__)

NAME = "agentbar"
ICON_PX = 32  # what the image is drawn at; the panel scales it to its own size


class Dispatcher(Protocol):
    def call(self, func: Callable[[], None]) -> None:
        """Run ``func`` on the main thread, soon; returns at once."""
        ...


class AppKitDispatcher:
    """macOS: AppKit's main run loop, which pystray's darwin backend runs."""

    def call(self, func: Callable[[], None]) -> None:
        from PyObjCTools import AppHelper  # type: ignore[import-not-found]  # noqa: PLC0415

        AppHelper.callAfter(func)


class SerialDispatcher:
    """Windows: pystray's win32 backend hands every change to its own loop itself; calls are
    only kept from overlapping."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def call(self, func: Callable[[], None]) -> None:
        with self._lock:
            try:
                func()
            except Exception:
                log.exception("a tray update failed")


class TrayIcon:
    def __init__(self, on_action: Callable[[Action], None], view: TrayView) -> None:
        import pystray  # noqa: PLC0415  (imported only where an icon is shown)

        self._pystray = pystray
        self.on_action = on_action
        self.backend = pystray.Icon.__module__.rsplit(".", 1)[-1].lstrip("_")
        self.dispatcher = _dispatcher_for(self.backend)
        self._shown = view
        self._icon: Any = pystray.Icon(
            NAME,
            icon=badge.render(view.badge, ICON_PX),
            title=view.tooltip,
            menu=self._menu(view.menu),
        )

    @property
    def has_menu(self) -> bool:
        return bool(getattr(self._icon, "HAS_MENU", True))

    def show(self, view: TrayView) -> None:
        """Show ``view`` (any thread)."""
        self.dispatcher.call(lambda: self._apply(view))

    def _apply(self, view: TrayView) -> None:
        """On the main thread: change only what changed."""
        shown, self._shown = self._shown, view
        if view.badge != shown.badge:
            self._icon.icon = badge.render(view.badge, ICON_PX)
        if view.tooltip != shown.tooltip:
            self._icon.title = view.tooltip
        if view.menu != shown.menu:
            self._icon.menu = self._menu(view.menu)

    def run(self) -> None:
        """pystray's loop, on the main thread, until ``stop``."""

        def setup(icon: Any) -> None:
            icon.visible = True

        self._icon.run(setup=setup)

    def stop(self) -> None:
        """Any thread: ends ``run``."""
        self.dispatcher.call(self._icon.stop)

    # -- the menu --------------------------------------------------------------------------

    def _menu(self, entries: tuple[Entry, ...]) -> Any:
        return self._pystray.Menu(*(self._item(e) for e in entries))

    def _item(self, entry: Entry) -> Any:
        pystray = self._pystray
        if entry.separator:
            return pystray.Menu.SEPARATOR
        if entry.submenu:
            return pystray.MenuItem(entry.label, self._menu(entry.submenu))
        action = entry.action
        checked = entry.checked

        def chosen(_icon: Any, _item: Any) -> None:
            if action is not None:
                self.on_action(action)

        return pystray.MenuItem(
            entry.label,
            chosen,
            checked=None if checked is None else (lambda _item: checked),
            radio=entry.radio,
            default=entry.default,
            enabled=entry.enabled,
        )


if sys.platform == "darwin":

    def _dispatcher_for(backend: str) -> Dispatcher:
        """AppKit owns the main thread on macOS, whatever pystray's backend is called."""
        return AppKitDispatcher()

else:

    def _dispatcher_for(backend: str) -> Dispatcher:
        """Windows (and a forced darwin backend elsewhere, in tests): pystray's own thread."""
        return AppKitDispatcher() if backend == "darwin" else SerialDispatcher()
