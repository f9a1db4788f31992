"""Draws the tray icon for a badge with Pillow: the calm mark, the number of sessions that need
you, or the failed mark (pure; the tray's worker thread calls it).

Made to read at 16, 22, 24 and 32 px on light and dark panels alike, since the icon cannot know
the panel's colour: every mark is a mid-tone shape inside a thin white halo (the shape carries
the contrast on a light panel, the halo on a dark one), and the number is white on a fill dark
enough for small text. Shapes are drawn four times larger and scaled down (smooth edges); the
digits and the "!" come from a 3x5 pixel font scaled by whole pixels and drawn at the final size,
so they stay sharp at 16 px and come out the same on every machine (no font files, no hinting).

The three marks differ in shape as well as colour: a ring (calm), a round badge with a number
(needs you), a rounded square with "!" (failed).
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from .view import Badge, Mark

SIZES = (16, 22, 24, 32)
SUPERSAMPLE = 4

# Colours (RGBA). The contrast of each against light and dark panels is checked in the tests.
HALO = (255, 255, 255, 255)
CALM = (88, 104, 128, 255)  # slate
NEEDS = (194, 65, 12, 255)  # deep orange: white digits on it read at 16 px
FAILED = (185, 28, 28, 255)  # red
INK = (255, 255, 255, 255)

# A 3x5 pixel font: each glyph is five rows of three columns.
GLYPHS: dict[str, tuple[str, ...]] = {
    "0": ("###", "#.#", "#.#", "#.#", "###"),
    "1": (".#.", "##.", ".#.", ".#.", "###"),
    "2": ("###", "..#", "###", "#..", "###"),
    "3": ("###", "..#", "###", "..#", "###"),
    "4": ("#.#", "#.#", "###", "..#", "..#"),
    "5": ("###", "#..", "###", "..#", "###"),
    "6": ("###", "#..", "###", "#.#", "###"),
    "7": ("###", "..#", "..#", "..#", "..#"),
    "8": ("###", "#.#", "###", "#.#", "###"),
    "9": ("###", "#.#", "###", "..#", "###"),
    "!": (".#.", ".#.", ".#.", "...", ".#."),
}
GLYPH_W, GLYPH_H = 3, 5
MOST = 99  # more than this shows as 99: the number only has to say "many"


def render(badge: Badge, size: int = 32) -> Image.Image:
    """The icon for ``badge`` as a ``size`` x ``size`` RGBA image."""
    if size < 12:
        raise ValueError(f"an icon of {size} px cannot hold a badge")
    match badge.mark:
        case Mark.NEEDS:
            text = str(min(badge.needs, MOST))
            image = _shape(size, "pill" if len(text) > 1 else "circle", NEEDS)
            _text(image, text, INK)
        case Mark.FAILED:
            image = _shape(size, "square", FAILED)
            _text(image, "!", INK)
        case Mark.CALM:
            image = _shape(size, "ring", CALM)
    return image


def digit_scale(size: int, chars: int) -> tuple[int, int]:
    """How many pixels wide and high one cell of the pixel font is: the largest whole numbers
    that keep the text inside the shape with a pixel to spare. Cells are square when there is
    room, else up to twice as high as wide (two digits at 16 px: tall, narrow, still legible)."""
    inner = size - 2 * halo_width(size)
    width = chars * GLYPH_W + (chars - 1)  # a blank column between characters
    high = max(1, (inner * 3 // 4) // GLYPH_H)
    wide = max(1, min((inner - 2) // width, high))
    return wide, min(high, 2 * wide)


def halo_width(size: int) -> int:
    return max(1, round(size / 16))


def _shape(size: int, kind: str, fill: tuple[int, int, int, int]) -> Image.Image:
    big = size * SUPERSAMPLE
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    halo = halo_width(size) * SUPERSAMPLE
    outer = (0, 0, big - 1, big - 1)
    inner = (halo, halo, big - 1 - halo, big - 1 - halo)
    match kind:
        case "circle":
            draw.ellipse(outer, fill=HALO)
            draw.ellipse(inner, fill=fill)
        case "pill":
            # Two digits need the width: a rounded square, nearly a circle.
            draw.rounded_rectangle(outer, radius=big * 0.42, fill=HALO)
            draw.rounded_rectangle(inner, radius=big * 0.42 - halo, fill=fill)
        case "square":
            draw.rounded_rectangle(outer, radius=big * 0.22, fill=HALO)
            draw.rounded_rectangle(inner, radius=big * 0.22 - halo, fill=fill)
        case "ring":
            ring = max(2, round(size / 7)) * SUPERSAMPLE
            pad = big // 8
            box = (pad, pad, big - 1 - pad, big - 1 - pad)
            draw.ellipse(box, fill=HALO)
            draw.ellipse(_inset(box, halo), fill=fill)
            draw.ellipse(_inset(box, halo + ring), fill=HALO)
            draw.ellipse(_inset(box, 2 * halo + ring), fill=(0, 0, 0, 0))
            dot = big * 3 // 16
            centre = big / 2
            around = dot + halo
            draw.ellipse(
                (centre - around, centre - around, centre + around, centre + around), fill=HALO
            )
            draw.ellipse((centre - dot, centre - dot, centre + dot, centre + dot), fill=fill)
        case _:
            raise ValueError(f"unknown shape {kind!r}")
    return image.resize((size, size), Image.Resampling.LANCZOS)


def _inset(box: tuple[int, int, int, int], by: int) -> tuple[int, int, int, int]:
    return (box[0] + by, box[1] + by, box[2] - by, box[3] - by)


def _text(image: Image.Image, text: str, ink: tuple[int, int, int, int]) -> None:
    size = image.width
    sx, sy = digit_scale(size, len(text))
    width = (len(text) * GLYPH_W + len(text) - 1) * sx
    height = GLYPH_H * sy
    left = (size - width) // 2
    top = (size - height) // 2
    draw = ImageDraw.Draw(image)
    for n, char in enumerate(text):
        x0 = left + n * (GLYPH_W + 1) * sx
        for row, bits in enumerate(GLYPHS[char]):
            for col, bit in enumerate(bits):
                if bit == "#":
                    x, y = x0 + col * sx, top + row * sy
                    draw.rectangle((x, y, x + sx - 1, y + sy - 1), fill=ink)


def app_icon(size: int = 128) -> Image.Image:
    """agentbar's own icon (menus, notifications, the autostart entry): the calm mark."""
    return render(Badge(), size)
