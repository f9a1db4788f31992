"""Text cut to fit the tray's narrow places: a menu entry, a button, a notification (pure)."""

from __future__ import annotations

LABEL_CHARS = 72


def shorten(text: str, most: int = LABEL_CHARS) -> str:
    """One line, at most ``most`` characters (an ellipsis says it was cut)."""
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 1].rstrip() + "…"
