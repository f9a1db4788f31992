"""The tray icon for XEmbed-only system trays (trayer, stalonetray, old panels): a small X
client in python-xlib, on a thread of its own ("agentbar-xembed"); the main thread only waits
in ``run`` until ``stop``.

It asks the tray that owns ``_NET_SYSTEM_TRAY_S<screen>`` to dock its window
(``_NET_SYSTEM_TRAY_OPCODE``, ``SYSTEM_TRAY_REQUEST_DOCK``), draws the badge over the tray's own
background (the window's background is ParentRelative; the badge is blended onto what the tray
painted, so its round edges keep their transparency), and opens the window on a click: it
selects ``ButtonPressMask`` itself (pystray's xorg backend never did, so trayer's clicks were
lost). A tray that starts later or restarts announces itself with a ``MANAGER`` message on the
root window: the icon docks again then. There is no menu here: the window has everything.

``show(view)`` may be called from any thread: the view is queued and the X thread woken (all X
requests are made on that thread; python-xlib is not thread-safe).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import select
import threading
from collections.abc import Callable
from typing import Any

from PIL import Image

from . import actions, badge
from .actions import Action
from .view import Badge, TrayView

log = logging.getLogger(__name__)

NAME = "agentbar"
REQUEST_DOCK = 0
SIZE = 24  # before the tray gives the icon its own size
SMALLEST = 12  # badge.render's smallest icon
WAIT_STEP = 0.5


# The characters outside Latin-1 the tray's own words use, spelled in it (others become "?").
_IN_LATIN1 = str.maketrans({"…": "...", "—": "-", "–": "-", "‘": "'", "’": "'", "“": '"',
                            "”": '"', "→": "->"})  # fmt: skip


def latin1(text: str) -> str:
    """``text`` as ``WM_NAME`` can hold it."""
    return text.translate(_IN_LATIN1).encode("latin-1", "replace").decode("latin-1")


class NoDisplay(Exception):
    """The X display cannot be opened; the message is one line."""


class XEmbedIcon:
    backend = "xembed"
    has_menu = False

    def __init__(
        self, view: TrayView, say: Callable[[str], None], display: str | None = None
    ) -> None:
        self.on_action: Callable[[Action], None] = lambda _action: None
        self.say = say
        self.view = view
        self.docked = False
        self._display_name = display
        self._views: queue.SimpleQueue[TrayView] = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="agentbar-xembed", daemon=True)
        self._drawn: tuple[Badge, int, int] | None = None
        self._ever_docked = False
        self._waited = False

    def start(self) -> bool:
        """Open the display, make the icon's window and ask the tray to dock it (if one runs):
        True when a tray was asked. ``NoDisplay`` when the display cannot be opened."""
        from Xlib import X, Xutil, error  # noqa: PLC0415  (Linux X11 only)
        from Xlib import display as xdisplay  # noqa: PLC0415

        try:
            self.d: Any = xdisplay.Display(self._display_name)
        except (error.DisplayError, OSError) as exc:
            raise NoDisplay(f"cannot open the X display ({exc})") from exc
        self.X = X
        screen = self.d.screen()
        self.root = screen.root
        atom = self.d.intern_atom
        self.selection = atom(f"_NET_SYSTEM_TRAY_S{self.d.get_default_screen()}")
        self.opcode = atom("_NET_SYSTEM_TRAY_OPCODE")
        self.manager = atom("MANAGER")
        self.win = self.root.create_window(
            0, 0, SIZE, SIZE, 0, screen.root_depth,
            X.InputOutput, X.CopyFromParent,
            background_pixmap=X.ParentRelative,
            event_mask=X.ButtonPressMask | X.ExposureMask | X.StructureNotifyMask,
        )  # fmt: skip
        self.win.set_wm_class(NAME, NAME)
        # A tray sizes its socket from these (trayer gave a window without them 1 px).
        self.win.set_wm_normal_hints(
            flags=Xutil.PMinSize | Xutil.PBaseSize, min_width=SIZE, min_height=SIZE,
            base_width=SIZE, base_height=SIZE,
        )  # fmt: skip
        self._net_wm_name, self._utf8 = atom("_NET_WM_NAME"), atom("UTF8_STRING")
        self._name(self.view.tooltip)
        xembed_info = atom("_XEMBED_INFO")
        self.win.change_property(xembed_info, xembed_info, 32, [0, 1])  # version 0, mapped
        self.gc = self.win.create_gc()
        # The tray's MANAGER announcement goes to the root window's StructureNotify listeners.
        self.root.change_attributes(event_mask=X.StructureNotifyMask)
        asked = self._dock()
        self._waited = not asked
        self._thread.start()
        return asked

    def show(self, view: TrayView) -> None:
        """Show ``view`` (any thread)."""
        self._views.put(view)
        self._wake()

    def run(self) -> None:
        """The main thread's part: wait until ``stop``."""
        while not self._done.wait(WAIT_STEP):
            pass
        self._thread.join(5)

    def stop(self) -> None:
        """Any thread: remove the icon and end ``run``."""
        self._done.set()
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # closed: the icon has stopped
            os.write(self._wake_w, b"x")

    # -- on the X thread -------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            fd = self.d.fileno()
            while not self._done.is_set():
                ready, _, _ = select.select([fd, self._wake_r], [], [], WAIT_STEP)
                if self._wake_r in ready:
                    os.read(self._wake_r, 512)
                self._take_views()
                while self.d.pending_events():
                    self._handle(self.d.next_event())
        except Exception:
            log.exception("the XEmbed tray icon failed")
        finally:
            try:
                self.win.destroy()
                self.d.close()
            except Exception:
                log.debug("closing the X display", exc_info=True)
            os.close(self._wake_r)
            os.close(self._wake_w)

    def _take_views(self) -> None:
        latest: TrayView | None = None
        while True:
            try:
                latest = self._views.get_nowait()
            except queue.Empty:
                break
        if latest is None:
            return
        if latest.tooltip != self.view.tooltip:
            self._name(latest.tooltip)
        self.view = latest
        self._draw()

    def _name(self, text: str) -> None:
        """The icon's name (what a tray shows as its tooltip): whole in ``_NET_WM_NAME``
        (UTF-8), which trays and tools read first; in Latin-1 words in ``WM_NAME``, a STRING
        that holds nothing else (python-xlib raises on "…" and the like)."""
        self.win.change_property(self._net_wm_name, self._utf8, 8, text.encode("utf-8"))
        self.win.set_wm_name(latin1(text))

    def _dock(self) -> bool:
        from Xlib.protocol import event  # noqa: PLC0415

        owner = self.d.get_selection_owner(self.selection)
        if not owner:
            return False
        message = event.ClientMessage(
            window=owner,
            client_type=self.opcode,
            data=(32, [self.X.CurrentTime, REQUEST_DOCK, self.win.id, 0, 0]),
        )
        owner.send_event(message, event_mask=self.X.NoEventMask)
        self.d.flush()
        return True

    def _handle(self, ev: Any) -> None:
        X = self.X
        if ev.type == X.ButtonPress and ev.window.id == self.win.id:
            self.on_action(actions.BOARD)
        elif ev.type == X.Expose and ev.window.id == self.win.id and ev.count == 0:
            self._draw(force=True)
        elif ev.type == X.ConfigureNotify and ev.window.id == self.win.id:
            self._draw()
        elif ev.type == X.ReparentNotify and ev.window.id == self.win.id:
            self._reparented(ev.parent.id != self.root.id)
        elif (
            ev.type == X.ClientMessage
            and ev.client_type == self.manager
            and ev.data[1][1] == self.selection
        ):
            self._dock()  # a tray took the selection: dock there

    def _reparented(self, docked: bool) -> None:
        self.docked = docked
        if docked:
            if self._ever_docked:
                self.say("the system tray restarted (XEmbed); the icon is back in it")
            elif self._waited:
                self.say("a system tray started (XEmbed); the icon is in it now")
            self._ever_docked = True
            return
        # The tray went away and handed the window back to the root: hide it until the next.
        self.win.unmap()
        self._drawn = None
        self.d.flush()

    def _draw(self, force: bool = False) -> None:
        X = self.X
        geometry = self.win.get_geometry()
        width, height = geometry.width, geometry.height
        key = (self.view.badge, width, height)
        if (not force and key == self._drawn) or min(width, height) < SMALLEST:
            return
        self.win.clear_area(0, 0, width, height)
        try:
            raw = self.win.get_image(0, 0, width, height, X.ZPixmap, 0xFFFFFFFF).data
            background = Image.frombytes("RGB", (width, height), raw, "raw", "BGRX")
        except Exception:  # not viewable yet: the next Expose draws it
            return
        side = min(width, height)
        icon = badge.render(self.view.badge, side)
        background.paste(icon, ((width - side) // 2, (height - side) // 2), icon)
        self.win.put_image(
            self.gc, 0, 0, width, height, X.ZPixmap, geometry.depth, 0,
            background.tobytes("raw", "BGRX"),
        )  # fmt: skip
        self.d.flush()
        self._drawn = key
