"""Words a person reads in place of raw values: durations in minutes and seconds, terminal text
without its escape codes (pure; any thread)."""

from __future__ import annotations

import math

from ..launch.status_scrape import strip_ansi

__all__ = ["human_duration", "plain", "strip_ansi"]


def human_duration(seconds: float) -> str:
    """``1528.5`` -> ``"25 min 28 s"``; ``0.4`` -> ``"0.4 s"``; ``7260`` -> ``"2 h 1 min"``."""
    if math.isnan(seconds) or seconds < 0:  # NaN or negative: nothing honest to say
        return "?"
    if seconds < 10:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    whole = round(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def plain(text: str) -> str:
    """``text`` without terminal escape codes (colours, cursor moves), untouched when it has
    none (the common case costs one scan)."""
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return strip_ansi(text)
