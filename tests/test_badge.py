"""The tray icon's badge: golden images for every mark at 16, 22, 24 and 32 px, and checks that
each stays legible on light and dark panels (contrast, the number's own pixels, distinct
shapes).

Golden images live in tests/data/golden/badge; after a deliberate change to the drawing,
``AGENTBAR_UPDATE_GOLDEN=1 pytest tests/test_badge.py`` rewrites them (then look at them).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from agentbar.tray import badge
from agentbar.tray.badge import GLYPHS, SIZES, digit_scale, render
from agentbar.tray.view import Badge, Mark

GOLDEN = Path(__file__).parent / "data" / "golden" / "badge"
LIGHT = (242, 242, 242, 255)  # a light panel
DARK = (43, 43, 43, 255)  # a dark one
CASES = {
    "calm": Badge(),
    "needs-1": Badge(needs=1),
    "needs-7": Badge(needs=7),
    "needs-12": Badge(needs=12),
    "needs-99": Badge(needs=150),
    "failed": Badge(failed=True),
    "needs-3-and-failed": Badge(needs=3, failed=True),
}


def luminance(rgb: tuple[int, ...]) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def on_panel(image: Image.Image, panel: tuple[int, int, int, int]) -> Image.Image:
    ground = Image.new("RGBA", image.size, panel)
    ground.alpha_composite(image)
    return ground


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", CASES)
def test_the_badge_matches_its_golden_image(name: str, size: int) -> None:
    image = render(CASES[name], size)
    assert image.size == (size, size) and image.mode == "RGBA"
    path = GOLDEN / f"{name}-{size}.png"
    if os.environ.get("AGENTBAR_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        image.save(path)
    golden = Image.open(path).convert("RGBA")
    diff = ImageChops.difference(image, golden)
    # Pillow's scaling may round a channel by one between versions; anything more is a change.
    assert max(high for _low, high in diff.getextrema()) <= 2, f"{path.name} changed"


def test_the_three_marks_differ_and_the_number_shows_up_to_99() -> None:
    assert Badge().mark is Mark.CALM
    assert Badge(failed=True).mark is Mark.FAILED
    assert Badge(needs=2, failed=True).mark is Mark.NEEDS  # what needs you comes first
    for size in SIZES:
        images = [render(b, size).tobytes() for b in (Badge(), Badge(needs=1), Badge(failed=True))]
        assert len(set(images)) == 3
        assert render(Badge(needs=150), size).tobytes() == render(Badge(needs=99), size).tobytes()
        assert render(Badge(needs=4), size).tobytes() != render(Badge(needs=5), size).tobytes()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("panel", [LIGHT, DARK], ids=["light", "dark"])
def test_every_mark_stands_out_on_light_and_dark_panels(
    size: int, panel: tuple[int, int, int, int]
) -> None:
    # The mark's outermost ring of opaque pixels must contrast with the panel (WCAG's 3:1 for
    # graphics), at least where the halo or the fill is: the shape is visible on any panel.
    for b in CASES.values():
        image = on_panel(render(b, size), panel)
        pixels = [image.getpixel((x, y)) for x in range(size) for y in range(size)]
        best = max(contrast(p, panel) for p in pixels)  # type: ignore[arg-type]
        assert best >= 3.0, (b, size, panel)
        fill = {Mark.CALM: badge.CALM, Mark.NEEDS: badge.NEEDS, Mark.FAILED: badge.FAILED}[b.mark]
        assert contrast(fill, LIGHT) >= 3.0 or contrast(badge.HALO, panel) >= 3.0


def test_the_number_is_white_on_a_fill_dark_enough_for_small_text() -> None:
    assert contrast(badge.INK, badge.NEEDS) >= 4.5
    assert contrast(badge.INK, badge.FAILED) >= 4.5


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("needs", [1, 7, 12, 88])
def test_the_digits_are_drawn_pixel_exact_inside_the_badge(size: int, needs: int) -> None:
    # Read the digits back off the icon, cell by cell of the pixel font: every ink cell is
    # solid white and every blank one clearly not, so the number is as sharp at 16 px as at 32.
    image = render(Badge(needs=needs), size)
    text = str(needs)
    sx, sy = digit_scale(size, len(text))
    width = (len(text) * 4 - 1) * sx
    left, top = (size - width) // 2, (size - 5 * sy) // 2
    assert left >= badge.halo_width(size) and top >= badge.halo_width(size)
    for n, char in enumerate(text):
        for row, bits in enumerate(GLYPHS[char]):
            for col, bit in enumerate(bits):
                x, y = left + (n * 4 + col) * sx, top + row * sy
                cell = {image.getpixel((x + i, y + j)) for i in range(sx) for j in range(sy)}
                if bit == "#":
                    assert cell == {badge.INK}, (char, row, col)
                else:  # the fill (smoothed near the edge): never mistaken for ink
                    assert all(contrast(p, badge.INK) >= 4.0 for p in cell), (char, row, col)
    assert sy >= 2 and sx >= 1  # at least ten pixels high, even at 16 px


def test_the_shipped_app_icon_is_the_calm_mark() -> None:
    icons = Path(__file__).parents[1] / "assets" / "icons"
    for size in (64, 128):
        shipped = Image.open(icons / f"agentbar-{size}.png").convert("RGBA")
        assert shipped.tobytes() == badge.app_icon(size).tobytes()


def test_a_too_small_icon_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot hold a badge"):
        render(Badge(needs=1), 8)
