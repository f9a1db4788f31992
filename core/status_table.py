"""``agentbar status``'s table: one row per session, fitted to the terminal's width (pure; any
thread).

The short columns (id, agent, age) keep their width; the free ones (state, project, title,
detail) share what is left by weight, none wider than its widest cell, so a wide terminal shows
everything and a narrow one cuts evenly. Paths are cut in the middle (the folder's own name
stays); the tokens column, then the detail, then the id are left out when even their least
would not fit.
A HOST column appears only when some session runs on another machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .listing import title_or_fallback
from .model import LOCAL_HOST, SessionSnapshot
from .text import ago, cut_path, one_cell, short_path, table, tokens_text, width_of

ID_CHARS = 8  # a unique prefix in practice; ``agentbar export`` takes any unique prefix
GAP = 2  # spaces between columns (``text.table``)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    weight: int = 0  # 0: keeps its natural width; else a share of what is left
    least: int = 0  # a free column is not narrowed below this (nor below its widest cell)
    path: bool = False  # cut in the middle, not at the end


STATE = Column("STATE", weight=1, least=14)
ID = Column("ID")
AGENT = Column("AGENT")
HOST = Column("HOST", weight=1, least=8)
PROJECT = Column("PROJECT", weight=3, least=14, path=True)
TITLE = Column("TITLE", weight=4, least=10)
DETAIL = Column("DETAIL", weight=3, least=8)
TOKENS = Column("TOKENS")  # never cut: a number half shown would mislead
ACTIVE = Column("ACTIVE")
# Left out in this order when the terminal is too narrow for every column's least.
OPTIONAL = (TOKENS, DETAIL, ID)


def render_table(
    rows: Sequence[SessionSnapshot], *, now: float, width: int, home: str | None = None
) -> str:
    """The sessions as a table at most ``width`` columns wide (as far as the columns' least
    widths allow); "" for no rows (the caller says why there are none)."""
    if not rows:
        return ""
    columns = [STATE, ID, AGENT, PROJECT, TITLE, DETAIL, TOKENS, ACTIVE]
    if any(s.key.host != LOCAL_HOST for s in rows):
        columns.insert(2, HOST)
    cells = [row_cells(s, now=now, home=home) for s in rows]
    natural = {
        c.name: max(width_of(c.name), *(width_of(r[c.name]) for r in cells)) for c in columns
    }
    for optional in OPTIONAL:
        if _least_width(columns, natural) <= width:
            break
        columns.remove(optional)
    if TOKENS in columns and not any(r[TOKENS.name] for r in cells):
        columns.remove(TOKENS)
    text_rows = [[r[c.name] for c in columns] for r in cells]
    widths = fit_widths(columns, [natural[c.name] for c in columns], width)
    for i, column in enumerate(columns):
        if column.path:
            for row in text_rows:
                row[i] = cut_path(row[i], widths[i])
            # A path cut at a separator may leave room unused: the title gets it.
            used = max(width_of(c) for c in [column.name, *(row[i] for row in text_rows)])
            if TITLE in columns:
                widths[columns.index(TITLE)] += widths[i] - used
            widths[i] = used
    return table([c.name for c in columns], text_rows, widths)


def row_cells(s: SessionSnapshot, *, now: float, home: str | None) -> dict[str, str]:
    """A row's cells by column name, each one line of text without controls."""
    cells = {
        STATE.name: state_label(s),
        ID.name: s.key.session_id[:ID_CHARS],
        AGENT.name: str(s.key.agent),
        HOST.name: s.key.host,
        PROJECT.name: short_path(s.project, home) or "(no folder)",
        TITLE.name: title_or_fallback(s),
        DETAIL.name: s.state.detail,
        TOKENS.name: tokens_text(s.usage, word=False),
        ACTIVE.name: ago(s.last_activity, now),
    }
    return {name: one_cell(text) for name, text in cells.items()}


def state_label(s: SessionSnapshot) -> str:
    if s.state.waiting_for is not None:
        return f"{s.state.state} ({s.state.waiting_for})"
    return str(s.state.state)


def fit_widths(columns: Sequence[Column], natural: Sequence[int], width: int) -> list[int]:
    """Each column's width, given its widest cell's (``natural``): the fixed ones that; the
    free ones share the rest by weight (water-filling: a column that needs less than its share
    gives the rest back), none below its least."""
    widths = list(natural)
    free = [i for i, c in enumerate(columns) if c.weight]
    fixed = sum(natural[i] for i in range(len(columns)) if i not in free)
    left = width - fixed - GAP * (len(columns) - 1)
    pending = sorted(free, key=lambda i: natural[i] / columns[i].weight)
    while pending:
        weights = sum(columns[i].weight for i in pending)
        i = pending.pop(0)
        share = max(left, 0) * columns[i].weight // weights
        widths[i] = max(min(natural[i], share), min(natural[i], columns[i].least))
        left -= widths[i]
    return widths


def _least_width(columns: Sequence[Column], natural: dict[str, int]) -> int:
    """The narrowest the table can be with these columns."""
    return sum(
        min(natural[c.name], c.least) if c.weight else natural[c.name] for c in columns
    ) + GAP * (len(columns) - 1)
