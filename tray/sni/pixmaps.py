"""The badge as StatusNotifierItem pixmaps: ARGB32 in network byte order at a few sizes, drawn
by ``tray/badge.py`` (pure; called on the tray's D-Bus thread, cached per badge).

The host picks the size nearest its panel's and scales it; sending several keeps the digits
sharp at the common panel sizes instead of letting a host shrink a 32 px image to 16 px.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from PIL import Image

from .. import badge
from ..view import Badge

SIZES = badge.SIZES  # 16 to 64 px: panels at 1x and HiDPI scales


@dataclass(frozen=True, slots=True)
class Pixmap:
    width: int
    height: int
    argb: bytes  # width * height pixels, each A, R, G, B (network byte order)

    def as_dbus(self) -> list[object]:
        """One ``(iiay)`` of the ``IconPixmap`` property."""
        return [self.width, self.height, self.argb]


def argb32(image: Image.Image) -> bytes:
    """``image``'s pixels as ARGB32, big-endian: the byte order the specification asks for."""
    red, green, blue, alpha = image.convert("RGBA").split()
    return Image.merge("RGBA", (alpha, red, green, blue)).tobytes()


@functools.lru_cache(maxsize=16)
def pixmaps(shown: Badge, sizes: tuple[int, ...] = SIZES) -> tuple[Pixmap, ...]:
    """The icon for ``shown`` at every size in ``sizes``."""
    return tuple(Pixmap(size, size, argb32(badge.render(shown, size))) for size in sizes)
