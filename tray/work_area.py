"""Where the session window goes: the screen's work area (the screen less its panels and docks)
and a size and place inside it (pure, except ``x11_work_area``, which asks the X server; the
window's child process calls both on its main thread, before the window exists).

On X11 the work area is the root window's ``_NET_WORKAREA`` for the current desktop, which the
window manager or panel sets from their struts; without one it is the root window's own size.
Elsewhere (Wayland, macOS, Windows) pywebview's screens give the area (``from_screen``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

WANTED = (1200, 860)  # what the board and the replay are designed for
SHARE = 0.9  # at most this share of the work area's width and height
SMALLEST = (420, 480)  # narrower than this the board's layout breaks (unless the area is)


@dataclass(frozen=True, slots=True)
class Area:
    """A rectangle on the screen, in the window system's coordinates."""

    x: int
    y: int
    width: int
    height: int

    def contains(self, other: Area) -> bool:
        return (
            other.x >= self.x
            and other.y >= self.y
            and other.x + other.width <= self.x + self.width
            and other.y + other.height <= self.y + self.height
        )


def fit(
    work: Area,
    wanted: tuple[int, int] = WANTED,
    share: float = SHARE,
    smallest: tuple[int, int] = SMALLEST,
) -> Area:
    """The window's place: ``wanted`` shrunk to ``share`` of the work area, never below
    ``smallest`` unless the work area itself is smaller, centred in the work area."""
    width = _side(wanted[0], work.width, share, smallest[0])
    height = _side(wanted[1], work.height, share, smallest[1])
    return Area(
        work.x + (work.width - width) // 2, work.y + (work.height - height) // 2, width, height
    )


def _side(wanted: int, room: int, share: float, smallest: int) -> int:
    return max(1, min(room, max(smallest, min(wanted, int(room * share)))))


def workarea_of_desktop(values: list[int], desktop: int) -> Area | None:
    """``_NET_WORKAREA`` holds x, y, width, height for each desktop in turn: the current one's,
    or None when the list is short or the area is empty."""
    start = 4 * desktop
    if desktop < 0 or len(values) < start + 4:
        return None
    x, y, width, height = values[start : start + 4]
    if width <= 0 or height <= 0:
        return None
    return Area(x, y, width, height)


def x11_work_area(display: str | None = None) -> Area | None:
    """The current desktop's work area on the X server ``display`` (``$DISPLAY``), else the
    root window's size; None when the display cannot be opened (Wayland alone, no X)."""
    try:
        from Xlib import X, error  # noqa: PLC0415  (Linux X11 only)
        from Xlib import display as xdisplay  # noqa: PLC0415
    except ImportError:
        return None
    try:
        d: Any = xdisplay.Display(display)
    except (error.DisplayError, OSError):
        return None
    try:
        root = d.screen().root
        desktop = _cardinals(d, root, "_NET_CURRENT_DESKTOP", X)
        area = workarea_of_desktop(
            _cardinals(d, root, "_NET_WORKAREA", X), desktop[0] if desktop else 0
        )
        screen = Area(0, 0, d.screen().width_in_pixels, d.screen().height_in_pixels)
        # _NET_WORKAREA spans every monitor: the window goes on the primary one.
        monitor = _primary_monitor(d, root) or screen
        return clip(area or monitor, monitor)
    finally:
        with contextlib.suppress(Exception):
            d.close()


def _cardinals(d: Any, root: Any, name: str, x: Any) -> list[int]:
    prop = root.get_full_property(d.intern_atom(name), x.AnyPropertyType)
    if prop is None or prop.format != 32:
        return []
    return [int(v) for v in prop.value]


def _primary_monitor(d: Any, root: Any) -> Area | None:
    """The primary monitor (else the first) as RandR 1.5 lists them; None without RandR."""
    try:
        if not d.has_extension("RANDR"):
            return None
        monitors = root.xrandr_get_monitors().monitors
    except Exception:  # an X server without RandR 1.5, or one that refuses the request
        return None
    chosen = next((m for m in monitors if m.primary), monitors[0] if monitors else None)
    if chosen is None or chosen.width_in_pixels <= 0 or chosen.height_in_pixels <= 0:
        return None
    return Area(chosen.x, chosen.y, chosen.width_in_pixels, chosen.height_in_pixels)


def clip(area: Area, screen: Area) -> Area:
    """The part of ``area`` on ``screen``; ``screen`` itself when they do not meet."""
    x, y = max(area.x, screen.x), max(area.y, screen.y)
    right = min(area.x + area.width, screen.x + screen.width)
    bottom = min(area.y + area.height, screen.y + screen.height)
    if right <= x or bottom <= y:
        return screen
    return Area(x, y, right - x, bottom - y)


def from_screen(screen: Any) -> Area | None:
    """pywebview's ``Screen`` (x, y, width, height) as an area, if it has a size."""
    try:
        area = Area(int(screen.x), int(screen.y), int(screen.width), int(screen.height))
    except (AttributeError, TypeError, ValueError):
        return None
    return area if area.width > 0 and area.height > 0 else None
