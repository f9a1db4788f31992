"""Text for terminals and menus: shortening, home-relative paths, ages and plain tables (pure;
any thread). Shared by ``agentbar status``, ``agentbar tasks`` and the tray's menu."""

from __future__ import annotations

import os
from collections.abc import Sequence


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, an ellipsis marking a cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def short_path(path: str | None) -> str:
    """``path`` with the home folder written as ``~``."""
    if not path:
        return ""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def ago(epoch: float | None, now: float) -> str:
    if epoch is None:
        return ""
    seconds = max(0, int(now - epoch))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int]) -> str:
    """Left-aligned columns of the given widths (cells cut to fit), two spaces apart."""
    lines = []
    for row in [header, *rows]:
        cells = [cut(cell, widths[i]).ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def natural_widths(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's widest cell."""
    return [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
