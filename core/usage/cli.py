"""``agentbar usage``: tokens and cost per session, project and day, from the index (main thread).

Reads what ``agentbar status`` reads (the engine caught up over the index), so a warm index
answers without re-reading transcripts. Quiet when its reader goes away (``| head``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import TextIO

import orjson

from .. import jsonsafe
from ..app import Agentbar
from ..config import Settings
from ..progress_bar import ProgressBar
from ..text import cut, short_path
from . import report as report_mod
from .prices import shipped

COMMANDS = ("usage",)
NUMBER_HEADERS = ("INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = commands.add_parser("usage", help="tokens and cost per session, project and day")
    usage.add_argument("--json", action="store_true", help="machine-readable output")
    usage.add_argument("--since", metavar="DATE", help="only days from DATE (YYYY-MM-DD) on")
    usage.add_argument("--project", metavar="P", help="only sessions whose folder holds P")
    usage.add_argument("--agent", metavar="A", help="only this agent's sessions (claude, codex...)")


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    try:
        since = None if args.since is None else report_mod.parse_day(args.since)
    except ValueError as exc:
        print(f"agentbar usage: {exc}", file=sys.stderr)
        return 2
    filters = report_mod.Filters(since=since, project=args.project, agent=args.agent)
    app = Agentbar.open(settings, tasks=False, remotes=False)  # this machine's usage
    try:
        with ProgressBar(app.progress, sys.stderr):
            app.catch_up()
        snapshots = app.sessions()
    finally:
        app.close()
    built = report_mod.build(snapshots, filters)
    table = shipped()
    if args.json:
        doc = report_mod.to_json(built, source=table.source, date=table.date)
        text = jsonsafe.dumps(doc, orjson.OPT_INDENT_2).decode() + "\n"
    else:
        width = shutil.get_terminal_size((120, 24)).columns
        text = render(built, width=width, prices=f"{table.source}, {table.date}")
    return write_quietly(out, text)


def write_quietly(out: TextIO, text: str) -> int:
    """Write ``text``; a reader that went away ends the command quietly (no traceback)."""
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):  # nothing more reaches the closed pipe
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, out.fileno())
    return 0


def render(built: report_mod.Report, *, width: int, prices: str) -> str:
    """The three tables; counts shortened (302.1M) when written out they would not fit."""
    if not built.sessions:
        return "No token usage found.\n"
    text = tables(built, width=width, prices=prices, short=False)
    if max(len(line) for line in text.splitlines()) > width:
        text = tables(built, width=width, prices=prices, short=True)
    return text


def tables(built: report_mod.Report, *, width: int, prices: str, short: bool) -> str:
    def numbers(total: report_mod.Total) -> tuple[str, ...]:
        return figures(total, short=short)

    sessions = [
        (
            str(r.snapshot.key.agent),
            short_path(r.snapshot.project),
            r.snapshot.title or r.snapshot.key.session_id,
            *numbers(r.total),
        )
        for r in built.sessions
    ]
    projects = [
        (short_path(p) or "(unknown)", str(t.sessions), *numbers(t))
        for p, t in built.projects.items()
    ]
    days = [(d or "(unknown)", str(t.sessions), *numbers(t)) for d, t in built.days.items()]
    days.append(("total", str(built.total.sessions), *numbers(built.total)))
    parts = [
        fit(("AGENT", "PROJECT", "TITLE", *NUMBER_HEADERS), sessions, free=(1, 2), width=width),
        fit(("PROJECT", "SESSIONS", *NUMBER_HEADERS), projects, free=(0,), width=width),
        fit(("DAY", "SESSIONS", *NUMBER_HEADERS), days, free=(), width=width),
    ]
    note = textwrap.fill(f"(prices: {prices})", width=max(width, 40))
    return "\n".join(parts) + note + "\n"


def figures(total: report_mod.Total, *, short: bool) -> tuple[str, ...]:
    u = total.usage
    count = tokens_short if short else "{:,}".format
    cost = "unknown" if total.cost is None else f"${total.cost:,.{0 if short else 2}f}"
    return (
        count(u.input_tokens),
        count(u.output_tokens),
        count(u.cache_read_tokens),
        count(u.cache_creation_tokens),
        cost,
    )


def tokens_short(n: int) -> str:
    for unit, size in (("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def fit(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, free: Sequence[int], width: int
) -> str:
    """Columns two spaces apart, numbers right-aligned; the ``free`` (text) columns share what
    the terminal's ``width`` leaves, cut with an ellipsis."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fixed = sum(w for i, w in enumerate(widths) if i not in free) + 2 * (len(header) - 1)
    room = max(width - fixed, 6 * len(free))
    for i in free:
        widths[i] = min(widths[i], max(room // len(free), 6))
    right = [name in NUMBER_HEADERS or name == "SESSIONS" for name in header]
    lines = []
    for row in [header, *rows]:
        cells = [
            cut(cell, widths[i]).rjust(widths[i])
            if right[i]
            else cut(cell, widths[i]).ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"
