"""The tray icon this platform shows, behind one protocol (main thread, at start): on Linux the
StatusNotifierItem (``tray/sni/``) or the XEmbed icon (``tray/xembed.py``), chosen by
``tray/host.py``; pystray on macOS and Windows.

Every icon: ``show(view)`` from any thread; ``run()`` on the main thread until ``stop()``
(from any thread); ``on_action`` gets what a click chose.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Protocol

from . import host
from .actions import Action
from .view import TrayView


class Icon(Protocol):
    on_action: Callable[[Action], None]
    backend: str

    @property
    def has_menu(self) -> bool: ...

    def show(self, view: TrayView) -> None: ...

    def run(self) -> None: ...

    def stop(self) -> None: ...


class NoIcon(Exception):
    """No icon here; the message is one line for stderr."""


def open_icon(view: TrayView, say: Callable[[str], None]) -> Icon:
    """The icon for this session, showing ``view``; ``say`` prints one line to the person (a
    tray that is missing now, one that started later). ``NoIcon`` when none can show."""
    if not host.linux_like(sys.platform):
        from .icon import TrayIcon  # noqa: PLC0415  (pystray: macOS, Windows)

        return TrayIcon(lambda _action: None, view)
    choice = host.choose(host.linux_facts())
    if choice.note and choice.backend is not None:
        say(choice.note)
    if choice.backend == host.SNI:
        from .sni.bus import NoBus  # noqa: PLC0415
        from .sni.service import SniIcon  # noqa: PLC0415

        sni = SniIcon(view, say)
        try:
            sni.start()
        except (NoBus, TimeoutError) as exc:
            raise NoIcon(f"cannot show a tray icon ({exc})") from exc
        return sni
    if choice.backend == host.XEMBED:
        from .xembed import NoDisplay, XEmbedIcon  # noqa: PLC0415

        xembed = XEmbedIcon(view, say)
        try:
            xembed.start()
        except NoDisplay as exc:
            raise NoIcon(f"cannot show a tray icon ({exc})") from exc
        return xembed
    raise NoIcon(choice.note or "no tray icon")
