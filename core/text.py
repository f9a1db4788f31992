"""Text for terminals and menus: shortening (by the width a terminal draws, wide characters
counted twice), home-relative paths cut in the middle, ages, token counts and plain tables
(pure; any thread). Shared by ``agentbar status``, ``agentbar tasks`` and the tray's menu."""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from collections.abc import Sequence

from .records import Usage

ELLIPSIS = "…"
PATH_SLACK = 6  # columns a cut path may leave unused to end its start at a separator
# C0 and C1 controls (an escape sequence in a title would move the terminal's cursor).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_cell(text: str) -> str:
    """``text`` safe for one table cell: controls (tabs, newlines, escapes) as spaces."""
    return _CONTROLS.sub(" ", text)


@functools.lru_cache(maxsize=4096)  # titles repeat their characters: look each up once
def char_width(char: str) -> int:
    """Columns a terminal draws ``char`` in: 2 for East Asian wide and full-width characters,
    0 for combining marks and zero-width ones, else 1."""
    if char.isascii():
        return 1
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def width_of(text: str) -> int:
    """Columns ``text`` takes on a terminal."""
    if text.isascii():
        return len(text)
    return sum(map(char_width, text))


def _head(text: str, width: int) -> str:
    """The longest start of ``text`` that takes at most ``width`` columns."""
    used = 0
    for i, char in enumerate(text):
        used += char_width(char)
        if used > width:
            return text[:i]
    return text


def _tail(text: str, width: int) -> str:
    """The longest end of ``text`` that takes at most ``width`` columns."""
    used = 0
    for i in range(len(text) - 1, -1, -1):
        used += char_width(text[i])
        if used > width:
            return text[i + 1 :]
    return text


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, an ellipsis marking a cut."""
    if width_of(text) <= width:
        return text
    return _head(text, max(width - 1, 0)) + ELLIPSIS if width > 0 else ""


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` columns (as ``ljust`` does for narrow text)."""
    return text + " " * max(width - width_of(text), 0)


def cut_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` columns, cut in the middle so that its last folder's name
    stays whole (``~/projects/…/agentbar-wt3``): the part that tells worktrees apart. The
    start kept ends at a separator when that wastes little room; a name too long alone keeps
    its end."""
    if width_of(path) <= width:
        return path
    if width <= 1:
        return ELLIPSIS[:width]
    trimmed = path.rstrip("/\\") or path
    at = max(trimmed.rfind("/"), trimmed.rfind("\\"))
    tail = trimmed[at:] if at >= 0 else trimmed  # the separator and the last name
    if width_of(tail) + 1 > width:  # the name alone is too long: its end tells more
        return ELLIPSIS + _tail(tail.lstrip("/\\"), width - 1)
    room = width - 1 - width_of(tail)
    head = _head(trimmed[: max(at, 0)], room)
    at_sep = max(head.rfind("/"), head.rfind("\\"))
    if at_sep >= 0 and width_of(head[: at_sep + 1]) >= room - PATH_SLACK:
        head = head[: at_sep + 1]  # end at a separator: "~/projects/…" not "~/proj…"
    return head + ELLIPSIS + tail


def home_folder() -> str:
    """This user's home, as ``$HOME`` (or the password database) says; "" when unknown."""
    home = os.path.expanduser("~")
    return "" if home == "~" else os.path.normpath(home)


def short_path(path: str | None, home: str | None = None) -> str:
    """``path`` with this user's own home folder written as ``~`` (only that one: another
    user's home stays whole; ``/root`` is ``~`` for root)."""
    if not path:
        return ""
    home = home_folder() if home is None else os.path.normpath(home) if home else ""
    if home in ("", "/", os.sep, "."):
        return path
    if path == home or path.startswith(home + os.sep) or path.startswith(home + "/"):
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


def count_compact(n: int) -> str:
    """A count in two or three significant figures: 999, 3.8k, 38k, 380k, 1.0M, 17M, 2.1B."""
    if n < 1000:
        return str(n)
    for unit, size in (("k", 10**3), ("M", 10**6), ("B", 10**9)):
        scaled = n / size
        if scaled < 9.95:
            return f"{scaled:.1f}{unit}"
        if round(scaled) < 1000 or unit == "B":
            return f"{round(scaled)}{unit}"
    raise AssertionError("unreachable: the last unit always answers")


def tokens_text(usage: Usage, *, word: bool = True) -> str:
    """Tokens spent as input + output, cache reads and writes apart (they are re-reads of
    the same context, billed at a fraction: summed in they would drown the rest):
    ``38k tokens (+17M cache)``. "" when nothing was counted."""
    spent = usage.input_tokens + usage.output_tokens
    cache = usage.cache_read_tokens + usage.cache_creation_tokens
    if not spent and not cache:
        return ""
    text = count_compact(spent) + (" tokens" if word else "")
    return f"{text} (+{count_compact(cache)} cache)" if cache else text


def table(header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int]) -> str:
    """Left-aligned columns of the given widths (cells cut to fit), two spaces apart."""
    lines = []
    for row in [header, *rows]:
        cells = [pad(cut(one_cell(cell), widths[i]), widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def natural_widths(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's widest cell, in terminal columns."""
    return [max(width_of(one_cell(r[i])) for r in [header, *rows]) for i in range(len(header))]
