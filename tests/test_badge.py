"""The tray icon's badge, one family of marks drawn at every size from 16 to 64 px: golden images,
and checks that each stays legible on light and dark panels (contrast, the number's own pixels
present and centred inside the disc, nothing drawn outside the shape, anti-aliased edges,
distinct states), and a contact sheet of every mark at every size on both panels, kept as an
artefact for a person to look at.

Golden images live in tests/data/golden/badge; after a deliberate change to the drawing,
``AGENTBAR_UPDATE_GOLDEN=1 pytest tests/test_badge.py`` rewrites them (then look at them).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from agentbar.tray import badge
from agentbar.tray.badge import SIZES, halo_width, render, text_for
from agentbar.tray.sni import pixmaps
from agentbar.tray.view import Badge, Mark

GOLDEN = Path(__file__).parent / "data" / "golden" / "badge"
LIGHT = (242, 242, 242, 255)  # a light panel
DARK = (43, 43, 43, 255)  # a dark one
CASES = {
    "calm": Badge(),
    "needs-1": Badge(needs=1),
    "needs-7": Badge(needs=7),
    "needs-8": Badge(needs=8),
    "needs-many": Badge(needs=150),
    "failed": Badge(failed=True),
    "needs-3-and-failed": Badge(needs=3, failed=True),
}
HIDPI = (20, 36, 40, 44, 56)  # sizes a host may ask for at 1.25x, 1.5x, 2x ... scales


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


def pixels(image: Image.Image) -> dict[tuple[int, int], tuple[int, int, int, int]]:
    return {
        (x, y): image.getpixel((x, y))  # type: ignore[misc]
        for x in range(image.width)
        for y in range(image.height)
    }


def ink_inside_the_disc(image: Image.Image) -> list[tuple[int, int]]:
    """The number's pixels: near-white, well inside the halo (whose white is not ink)."""
    size = image.width
    centre = (size - 1) / 2
    inside = size / 2 - halo_width(size) - 1.5
    return [
        (x, y)
        for (x, y), p in pixels(image).items()
        if math.hypot(x - centre, y - centre) < inside and min(p[:3]) >= 200 and p[3] == 255
    ]


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
    # FreeType may place an edge a fraction of a pixel apart between versions; a changed
    # drawing moves far more than that on average.
    assert max(ImageStat.Stat(diff).mean) <= 3.0, f"{path.name} changed"


def test_the_three_marks_differ_and_many_shows_as_nine_plus() -> None:
    assert Badge().mark is Mark.CALM
    assert Badge(failed=True).mark is Mark.FAILED
    assert Badge(needs=2, failed=True).mark is Mark.NEEDS  # what needs you comes first
    assert [text_for(Badge(needs=n)) for n in (1, 9, 10, 150)] == ["1", "9", "9+", "9+"]
    for size in (*SIZES, *HIDPI):
        images = [render(b, size).tobytes() for b in (Badge(), Badge(needs=1), Badge(failed=True))]
        assert len(set(images)) == 3
        assert render(Badge(needs=150), size).tobytes() == render(Badge(needs=10), size).tobytes()
        numbers = {render(Badge(needs=n), size).tobytes() for n in range(1, 11)}
        assert len(numbers) == 10, size  # every number looks different from every other


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("panel", [LIGHT, DARK], ids=["light", "dark"])
def test_every_mark_stands_out_on_light_and_dark_panels(
    size: int, panel: tuple[int, int, int, int]
) -> None:
    # Some of the mark's pixels must contrast with the panel (WCAG's 3:1 for graphics), where
    # the halo or the fill is: the shape is visible on any panel.
    for b in CASES.values():
        image = on_panel(render(b, size), panel)
        best = max(contrast(p, panel) for p in pixels(image).values())
        assert best >= 3.0, (b, size, panel)
        fill = {Mark.CALM: badge.CALM, Mark.NEEDS: badge.NEEDS, Mark.FAILED: badge.FAILED}[b.mark]
        assert contrast(fill, LIGHT) >= 3.0 or contrast(badge.HALO, panel) >= 3.0


def test_the_number_is_white_on_a_fill_dark_enough_for_small_text() -> None:
    assert contrast(badge.INK, badge.NEEDS) >= 4.5
    assert contrast(badge.INK, badge.FAILED) >= 4.5


@pytest.mark.parametrize("size", (*SIZES, *HIDPI))
@pytest.mark.parametrize("needs", [1, 4, 7, 8, 12])
def test_the_number_is_inside_the_disc_centred_and_large_enough(size: int, needs: int) -> None:
    image = render(Badge(needs=needs), size)
    ink = ink_inside_the_disc(image)
    # Enough solid white pixels to make a glyph: more than a stroke's worth at every size.
    assert len(ink) >= max(5, size * size // 50), (size, needs, len(ink))
    xs, ys = [x for x, _ in ink], [y for _, y in ink]
    middle = (size - 1) / 2
    # Centred: the ink's bounding box sits on the disc's centre, within a pixel (or 4 %).
    allowed = max(1.0, size * 0.04)
    assert abs((min(xs) + max(xs)) / 2 - middle) <= allowed, (size, needs)
    assert abs((min(ys) + max(ys)) / 2 - middle) <= allowed, (size, needs)
    # Large: near half the disc's height ("9+" a little less: it needs the width).
    share = 0.45 if needs <= badge.MOST else 0.36
    assert max(ys) - min(ys) + 1 >= share * (size - 2 * halo_width(size)), (size, needs)
    # Nothing white leaks into the fill's edge: the text keeps clear of the halo.
    inner = size / 2 - halo_width(size)
    assert all(math.hypot(x - middle, y - middle) < inner - 0.5 for x, y in ink)


@pytest.mark.parametrize("size", (*SIZES, *HIDPI))
@pytest.mark.parametrize("name", CASES)
def test_nothing_is_drawn_outside_the_shape_and_its_edges_are_smooth(name: str, size: int) -> None:
    image = render(CASES[name], size)
    middle = (size - 1) / 2
    alphas = pixels(image)
    if CASES[name].mark is not Mark.FAILED:  # round marks
        # Clear outside the circle (the scaling filter may leave a trace a pixel beyond it).
        for (x, y), p in alphas.items():
            if math.hypot(x - middle, y - middle) > size / 2 + 1:
                assert p[3] <= 8, (name, size, x, y, p)
        # The circle touches the image's edge only where it is tangent: never clipped flat.
        border = [p[3] for (x, y), p in alphas.items() if x in (0, size - 1) or y in (0, size - 1)]
        assert sum(1 for a in border if a == 255) <= 4 * max(1, size // 8), (name, size)
    # Anti-aliased: the edge has pixels between clear and opaque (a bitmap edge would not).
    partial = sum(1 for p in alphas.values() if 0 < p[3] < 255)
    assert partial >= size, (name, size, partial)


@pytest.mark.parametrize("size", SIZES)
def test_the_failure_mark_has_its_bar_and_dot(size: int) -> None:
    image = render(Badge(failed=True), size)
    middle = size // 2
    column = [image.getpixel((x, y)) for y in range(size) for x in (middle - 1, middle)]
    white = [p for p in column if min(p[:3]) >= 220 and p[3] == 255]  # type: ignore[index]
    assert len(white) >= size // 2, size
    # A gap of fill between the bar and the dot.
    rows = [
        any(min(image.getpixel((x, y))[:3]) >= 200 for x in range(middle - 1, middle + 1))  # type: ignore[index]
        for y in range(halo_width(size) + 1, size - halo_width(size) - 1)
    ]
    runs = "".join("#" if r else "." for r in rows).strip(".")
    assert "#." in runs and ".#" in runs, (size, runs)


def test_the_statusnotifier_pixmaps_come_at_every_size() -> None:
    shown = pixmaps.pixmaps(Badge(needs=3))
    assert [(p.width, p.height) for p in shown] == [(s, s) for s in SIZES]
    assert SIZES == (16, 22, 24, 32, 48, 64)
    for p in shown:  # each drawn at its own size, not one image scaled
        assert p.argb == pixmaps.argb32(render(Badge(needs=3), p.width))


def test_the_shipped_app_icon_is_the_calm_mark() -> None:
    icons = Path(__file__).parents[1] / "assets" / "icons"
    for size in (64, 128):
        shipped = Image.open(icons / f"agentbar-{size}.png").convert("RGBA")
        diff = ImageChops.difference(shipped, badge.app_icon(size))
        assert max(ImageStat.Stat(diff).mean) <= 1.0


def test_a_too_small_icon_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot hold a badge"):
        render(Badge(needs=1), 8)


def test_a_contact_sheet_of_every_mark_at_every_size(artifacts: Path) -> None:
    """Every mark at every size on a light and a dark panel, twice as large (nearest
    neighbour: the pixels as drawn), kept for a person to look at."""
    sizes = (*SIZES, 40)
    row = sum(sizes) + 8 * (len(sizes) + 1)
    height = max(sizes) + 8
    sheet = Image.new("RGBA", (2 * row, len(CASES) * height), (0, 0, 0, 0))
    for column, panel in enumerate((LIGHT, DARK)):
        sheet.paste(Image.new("RGBA", (row, sheet.height), panel), (column * row, 0))
        for line, shown in enumerate(CASES.values()):
            x = column * row + 8
            for size in sizes:
                sheet.alpha_composite(render(shown, size), (x, line * height + 4))
                x += size + 8
    sheet = sheet.resize((sheet.width * 2, sheet.height * 2), Image.Resampling.NEAREST)
    path = artifacts / "badge-contact-sheet.png"
    sheet.save(path)
    assert Image.open(path).size == sheet.size
