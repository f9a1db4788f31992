"""Draws the tray icon for a badge with Pillow, at the size it is shown: the calm ring, the
number of sessions that need you, or the failure mark (pure; the tray's worker and D-Bus
threads call it).

One family: the three marks share one outer circle, one white halo and one stroke weight, so
they read as one icon changing state; they differ in shape as well as colour (an open ring, a
filled disc with a number, a rounded square with "!"), for people who do not tell the colours
apart. Made to read from 16 to 64 px and at HiDPI scales on light and dark panels alike, since
the icon cannot know the panel's colour: every mark is a mid-tone shape inside a thin white halo
(the shape carries the contrast on a light panel, the halo on a dark one), and the number is
white on a fill dark enough for small text.

Everything is drawn four times larger and scaled down, at the size asked for (never a small
image scaled up): the edges are anti-aliased and the shapes keep their proportions at every
size. The digits are Pillow's own scalable font (Aileron, bundled with Pillow, so the same on
every machine), thickened by a stroke that grows with the size, fitted into the disc; more
than nine shows as "9+" (the number only has to say "many"). The "!" is drawn, not typed.
"""

from __future__ import annotations

import functools
import threading

from PIL import Image, ImageDraw, ImageFont

from .view import Badge, Mark

SIZES = (16, 22, 24, 32, 48, 64)
SUPERSAMPLE = 4
SMALLEST = 12

# Colours (RGBA). The contrast of each against light and dark panels is checked in the tests.
HALO = (255, 255, 255, 255)
CALM = (88, 104, 128, 255)  # slate
NEEDS = (194, 65, 12, 255)  # deep orange: white digits on it read at 16 px
FAILED = (185, 28, 28, 255)  # red
INK = (255, 255, 255, 255)
CLEAR = (0, 0, 0, 0)

# FreeType faces are not safe to share between threads: one drawing at a time.
_DRAWING = threading.Lock()

MOST = 9  # more than this shows as "9+"
RING = 0.15  # the calm ring's width, as a share of the icon's side
TEXT_HEIGHT = 0.56  # the number's height, as a share of the disc inside the halo
TEXT_WIDTH = 0.8  # and at most this share of its width ("9+")
WEIGHT = 0.022  # the stroke that thickens the digits, as a share of the side


def text_for(badge: Badge) -> str:
    """What the needs-you disc says: the number, or "9+"."""
    return str(badge.needs) if badge.needs <= MOST else f"{MOST}+"


def render(badge: Badge, size: int = 32) -> Image.Image:
    """The icon for ``badge`` as a ``size`` x ``size`` RGBA image (a new one: callers may
    change it)."""
    if size < SMALLEST:
        raise ValueError(f"an icon of {size} px cannot hold a badge")
    with _DRAWING:
        drawn = _render(badge.mark, text_for(badge) if badge.mark is Mark.NEEDS else "", size)
        return drawn.copy()


@functools.lru_cache(maxsize=64)
def _render(mark: Mark, text: str, size: int) -> Image.Image:
    big = size * SUPERSAMPLE
    image = Image.new("RGBA", (big, big), CLEAR)
    draw = ImageDraw.Draw(image)
    halo = halo_width(size) * SUPERSAMPLE
    match mark:
        case Mark.NEEDS:
            _disc(draw, big, halo)
            _number(draw, big, halo, text)
        case Mark.FAILED:
            _square(draw, big, halo)
            _exclamation(draw, big)
        case Mark.CALM:
            _ring(draw, big, halo)
    return image.resize((size, size), Image.Resampling.LANCZOS)


def halo_width(size: int) -> int:
    """The white halo's width in pixels at ``size``: one pixel per 16."""
    return max(1, round(size / 16))


def _outer(big: int) -> tuple[int, int, int, int]:
    return (0, 0, big - 1, big - 1)


def _inset(box: tuple[float, float, float, float], by: float) -> tuple[float, float, float, float]:
    return (box[0] + by, box[1] + by, box[2] - by, box[3] - by)


def _ring(draw: ImageDraw.ImageDraw, big: int, halo: int) -> None:
    box = _outer(big)
    ring = max(2 * SUPERSAMPLE, round(big * RING))
    draw.ellipse(box, fill=HALO)
    draw.ellipse(_inset(box, halo), fill=CALM)
    draw.ellipse(_inset(box, halo + ring), fill=HALO)
    draw.ellipse(_inset(box, 2 * halo + ring), fill=CLEAR)


def _disc(draw: ImageDraw.ImageDraw, big: int, halo: int) -> None:
    draw.ellipse(_outer(big), fill=HALO)
    draw.ellipse(_inset(_outer(big), halo), fill=NEEDS)


def _square(draw: ImageDraw.ImageDraw, big: int, halo: int) -> None:
    radius = big * 0.24
    draw.rounded_rectangle(_outer(big), radius=radius, fill=HALO)
    draw.rounded_rectangle(_inset(_outer(big), halo), radius=radius - halo, fill=FAILED)


def _number(draw: ImageDraw.ImageDraw, big: int, halo: int, text: str) -> None:
    """``text`` in white, as large as fits the disc, its ink centred on the disc's centre. The
    characters are set one by one, a stroke's width apart (the font's own spacing is made for
    words, and would shrink "9+" at 16 px)."""
    inner = big - 2 * halo
    stroke = max(1.0, big * WEIGHT)
    font, boxes = _fitted(text, inner * TEXT_HEIGHT, inner * TEXT_WIDTH, stroke)
    gap = stroke
    width = sum(right - left for left, _, right, _ in boxes) + gap * (len(text) - 1)
    top = min(box[1] for box in boxes)
    bottom = max(box[3] for box in boxes)
    # Centred, the ink's top-left corner on a pixel of the final size.
    baseline = _on_pixel((big - (bottom - top)) / 2) - top
    x = _on_pixel((big - width) / 2)
    for char, (left, _, right, _) in zip(text, boxes, strict=True):
        draw.text(
            (x - left, baseline), char, font=font, anchor="ls", fill=INK,
            stroke_width=stroke, stroke_fill=INK,
        )  # fmt: skip
        x += right - left + gap


Box = tuple[float, float, float, float]


def _on_pixel(at: float) -> float:
    return round(at / SUPERSAMPLE) * SUPERSAMPLE


@functools.lru_cache(maxsize=64)
def _fitted(
    text: str, height: float, width: float, stroke: float
) -> tuple[ImageFont.FreeTypeFont, list[Box]]:
    """The bundled font at the largest size whose ink for ``text``, set a stroke apart, fits
    ``width`` x ``height``; and each character's ink box on the baseline. The ink grows with
    the size: one measure gives the size, a few smaller steps absorb the rounding."""
    reference = _font(REFERENCE_SIZE)
    wide, high = _ink(reference, text, stroke)
    size = max(4.0, REFERENCE_SIZE * min(height / high, width / wide))
    while True:
        font = _font(size)
        wide, high = _ink(font, text, stroke)
        if (wide <= width and high <= height) or size <= 4:
            break
        size = max(4.0, size * 0.97)
    # Whole pixels high at the final size: the top and bottom edges fall on pixel boundaries
    # (sharp, as hinting would make them), never taller than what fitted.
    whole = (high // SUPERSAMPLE) * SUPERSAMPLE
    while whole >= SUPERSAMPLE and high > whole and size > 4:
        size = max(4.0, size * min(0.995, whole / high))
        font = _font(size)
        wide, high = _ink(font, text, stroke)
    return font, [font.getbbox(c, stroke_width=stroke, anchor="ls") for c in text]


REFERENCE_SIZE = 100.0


def _ink(font: ImageFont.FreeTypeFont, text: str, stroke: float) -> tuple[float, float]:
    """The width and height of ``text``'s ink set one character a stroke apart."""
    boxes = [font.getbbox(c, stroke_width=stroke, anchor="ls") for c in text]
    wide = sum(box[2] - box[0] for box in boxes) + stroke * (len(text) - 1)
    high = max(box[3] for box in boxes) - min(box[1] for box in boxes)
    return max(wide, 1.0), max(high, 1.0)


@functools.lru_cache(maxsize=1)
def _bundled() -> ImageFont.FreeTypeFont:
    """Pillow's bundled scalable font, decoded once (later sizes are variants of it)."""
    font = ImageFont.load_default(size=REFERENCE_SIZE)
    assert isinstance(font, ImageFont.FreeTypeFont)  # Pillow >= 10.1 with FreeType
    return font


def _font(size: float) -> ImageFont.FreeTypeFont:
    return _bundled().font_variant(size=size)


def _exclamation(draw: ImageDraw.ImageDraw, big: int) -> None:
    """A bar with a rounded top tapering a little, and a round dot: "!" at any size."""
    centre = big / 2
    wide = big * 0.15
    top, bar_end = big * 0.18, big * 0.56
    draw.rounded_rectangle(
        (centre - wide / 2, top, centre + wide / 2, bar_end), radius=wide / 2, fill=INK
    )
    dot = wide * 0.58
    dot_y = big * 0.72
    draw.ellipse((centre - dot, dot_y - dot, centre + dot, dot_y + dot), fill=INK)


def app_icon(size: int = 128) -> Image.Image:
    """agentbar's own icon (menus, notifications, the autostart entry): the calm mark."""
    return render(Badge(), size)
