"""``agentbar usage``: tokens and cost per session, project and day, from the index (main thread).

Reads what ``agentbar status`` reads (the engine caught up over the index), so a warm index
answers without re-reading transcripts. Quiet when its reader goes away (``| head``).
``--host NAME``: a remote host's, computed by its agentbar (``remote.py``), printed the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

import orjson

from .. import jsonsafe
from ..app import Agentbar
from ..config import Settings
from ..progress_bar import ProgressBar
from ..text import cut, cut_path, natural_widths, one_cell, pad, short_path, width_of
from . import report as report_mod

COMMANDS = ("usage",)
NUMBER_HEADERS = ("INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = commands.add_parser("usage", help="tokens and cost per session, project and day")
    usage.add_argument("--json", action="store_true", help="machine-readable output")
    usage.add_argument("--since", metavar="DATE", help="only days from DATE (YYYY-MM-DD) on")
    usage.add_argument("--project", metavar="P", help="only sessions whose folder holds P")
    usage.add_argument("--agent", metavar="A", help="only this agent's sessions (claude, codex...)")
    usage.add_argument(
        "--host",
        metavar="NAME",
        help="a remote host's usage, as its own agentbar reports it (local: this machine's)",
    )


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """This machine's report (a remote host's, ``--host``: ``remote.py``)."""
    filters = filters_or_say(args, sys.stderr)
    if filters is None:
        return 2
    app = Agentbar.open(settings, tasks=False, remotes=False)  # this machine's usage
    try:
        with ProgressBar(app.progress, sys.stderr):
            app.catch_up()
        snapshots = app.sessions()
    finally:
        app.close()
    return show(report_mod.document(snapshots, filters), as_json=args.json, out=out)


def filters_or_say(args: argparse.Namespace, err: TextIO) -> report_mod.Filters | None:
    """The report's filters from the options; None, having said why, for a ``--since`` that
    is no date."""
    try:
        return report_mod.filters(args.since, args.project, args.agent)
    except ValueError as exc:
        print(f"agentbar usage: {exc}", file=err)
        return None


def show(doc: dict[str, Any], *, as_json: bool, out: TextIO) -> int:
    """The report as JSON, or as the tables for the terminal's width."""
    if as_json:
        text = jsonsafe.dumps(doc, orjson.OPT_INDENT_2).decode() + "\n"
    else:
        width = shutil.get_terminal_size((120, 24)).columns
        text = render(doc, width=width)
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


def render(doc: dict[str, Any], *, width: int) -> str:
    """The three tables of a report (``report.document``); counts shortened (302.1M) when written
    out they would not fit."""
    if not doc["sessions"]:
        return "No token usage found.\n"
    text = tables(doc, width=width, short=False)
    if max(width_of(line) for line in text.splitlines()) > width:
        text = tables(doc, width=width, short=True)
    return text


def tables(doc: dict[str, Any], *, width: int, short: bool) -> str:
    def numbers(total: dict[str, Any]) -> tuple[str, ...]:
        return figures(total, short=short)

    sessions = [
        (
            str(row["agent"]),
            short_path(row["project"]),
            row["title"] or row["session_id"],
            *numbers(row),
        )
        for row in doc["sessions"]
    ]
    projects = [
        (short_path(row["project"]) or "(unknown)", str(row["sessions"]), *numbers(row))
        for row in doc["projects"]
    ]
    days = [(row["day"] or "(unknown)", str(row["sessions"]), *numbers(row)) for row in doc["days"]]
    totals = doc["totals"]
    days.append(("total", str(totals["sessions"]), *numbers(totals)))
    parts = [
        fit(("AGENT", "PROJECT", "TITLE", *NUMBER_HEADERS), sessions, free=(1, 2), width=width),
        fit(("PROJECT", "SESSIONS", *NUMBER_HEADERS), projects, free=(0,), width=width),
        fit(("DAY", "SESSIONS", *NUMBER_HEADERS), days, free=(), width=width),
    ]
    prices = f"{doc['prices']['source']}, {doc['prices']['date']}"
    note = textwrap.fill(f"(prices: {prices})", width=max(width, 40))
    return "\n".join(parts) + note + "\n"


def figures(total: dict[str, Any], *, short: bool) -> tuple[str, ...]:
    """The counts and cost of one row of the report (``Total.to_json``)."""
    count = tokens_short if short else "{:,}".format
    cost = total["cost_usd"]
    shown = "unknown" if cost is None else f"${cost:,.{0 if short else 2}f}"
    return (
        count(total["input_tokens"]),
        count(total["output_tokens"]),
        count(total["cache_read_tokens"]),
        count(total["cache_creation_tokens"]),
        shown,
    )


def tokens_short(n: int) -> str:
    for unit, size in (("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _cut_cell(column: str, cell: str, width: int) -> str:
    """A path cut in the middle (its folder's name kept), other text at its end."""
    return cut_path(cell, width) if column == "PROJECT" else cut(cell, width)


def fit(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, free: Sequence[int], width: int
) -> str:
    """Columns two spaces apart, numbers right-aligned; the ``free`` (text) columns share what
    the terminal's ``width`` leaves, cut with an ellipsis."""
    widths = natural_widths(header, rows)
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
            else pad(_cut_cell(header[i], one_cell(cell), widths[i]), widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"
