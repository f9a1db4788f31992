"""``agentbar status``: the sessions once read, filtered, as a table fitted to the terminal or as
JSON, with what the reading noticed said in words that are true (main thread).

The filters (``--project --agent --state --since --host --limit``) are ``listing``'s, the same
as ``GET /api/sessions``'s query parameters; a bad value is an argparse error (exit 2). After
the table come, each on a line of its own in parentheses: how many older ended sessions were
left out, how many matched beyond ``--limit``, the odd input the reading kept or skipped (the
log names each file: one line per file, bounded), the engine's faults and the limits. The very
first run (no index yet) adds one line on stderr, on a terminal only: what was found and what
to do next.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TextIO

import orjson

from . import jsonsafe, limits_text, logs
from .agents import registry
from .app import Agentbar
from .config import Settings
from .hooks import installer
from .hooks.errors import HooksFileError
from .listing import (
    Listing,
    SessionFilter,
    diagnostics,
    input_notes,
    listing,
    parse_limit,
    parse_since,
    parse_states,
)
from .model import LOCAL_HOST, Agent, SessionSnapshot, State
from .progress_bar import ProgressBar
from .progress_text import progress_json
from .remote.hosts import HostState, hosts_heard
from .status_table import render_table
from .text import short_path

log = logging.getLogger(__name__)

FILES_LOGGED = 20  # files named in the log per run for the odd input they hold


def add_parser(commands: Any) -> None:
    status = commands.add_parser(
        "status",
        help="live and recent sessions and their state",
        description="Live and recent sessions, those that need you first. --state and --since "
        "list older ended sessions too (they say which); --all lists every session on disk.",
    )
    status.add_argument("--all", action="store_true", help="every session on disk")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.add_argument(
        "--project", metavar="P", help="only sessions whose folder is named P or has P in its path"
    )
    status.add_argument(
        "--agent",
        metavar="A",
        type=_checked(agent_name),
        help=f"only this agent's sessions ({', '.join(known_agents())})",
    )
    status.add_argument(
        "--state",
        metavar="S[,S]",
        type=_checked(parse_states),
        help="only sessions in these states: "
        + ", ".join(s.value for s in State)
        + " (needs-you, finished also)",
    )
    status.add_argument(
        "--since",
        metavar="WHEN",
        type=_checked(lambda text: parse_since(text, now=time.time())),
        help="only sessions active since WHEN: 30m, 2h, 3d, 1w, today, yesterday or a date",
    )
    status.add_argument("--host", metavar="H", help="only sessions on this machine (local: here)")
    status.add_argument(
        "--limit", metavar="N", type=_checked(parse_limit), help="at most N sessions"
    )


def known_agents() -> list[str]:
    return [str(kit.agent) for kit in registry.KITS]


def agent_name(text: str) -> Agent:
    name = text.strip().lower()
    if name not in known_agents():
        raise ValueError(f"unknown agent {text!r} (one of: {', '.join(known_agents())})")
    return Agent(name)


def _checked(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` as an argparse type: its ValueError's words become argparse's error (exit 2)."""

    def check(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return check


def session_filter(args: argparse.Namespace) -> SessionFilter:
    return SessionFilter(
        project=args.project or None,
        agent=None if args.agent is None else str(args.agent),
        states=args.state,
        since=args.since,
        host=args.host or None,
    )


class _Counted(Protocol):
    """A stream's counters of odd input (``streams.Stream``)."""

    @property
    def path(self) -> str: ...

    malformed: int
    oversized: int
    unknown: int
    odd_times: int
    clamped: int


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    return status(
        settings,
        show_all=args.all,
        as_json=args.json,
        out=out,
        where=session_filter(args),
        limit=args.limit,
    )


def status(
    settings: Settings,
    *,
    show_all: bool,
    as_json: bool,
    out: TextIO,
    err: TextIO | None = None,
    where: SessionFilter | None = None,
    limit: int | None = None,
) -> int:
    """The sessions once read. A long first reading draws a progress bar on ``err`` (stderr)
    when it is a terminal; ``out`` gets the same either way."""
    err = sys.stderr if err is None else err
    first_run = not settings.index_path.exists()
    app = Agentbar.open(settings, tasks=False)
    try:
        with ProgressBar(app.progress, err):
            app.catch_up()
        snapshots = app.sessions()
        stats = app.stats()
        problems = app.problems()
        progress = app.progress()
        limits = app.limits()
        heard = app.limits_heard()
        hosts = app.hosts()
        log_input_notes(app.engine.streams, app.engine.ignored_files())
    finally:
        app.close()
    now = time.time()
    shown = listing(snapshots, now=now, show_all=show_all, where=where, limit=limit)
    if as_json:
        document = {
            "sessions": [s.to_json() for s in shown.rows],
            "total": shown.total,
            "diagnostics": diagnostics(stats),
            "problems": [fault.to_json() for fault in problems],
            "progress": progress_json(progress),
            "limits": limits_text.to_json(limits, now, heard, hosts_heard(hosts)),
            "hosts": [host.to_json() for host in hosts],
        }
        out.write(jsonsafe.dumps(document, orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    width = shutil.get_terminal_size((120, 24)).columns
    out.write(render_table(shown.rows, now=now, width=width))
    for line in notes(shown, snapshots, where=where or SessionFilter(), limit=limit):
        out.write(line + "\n")
    said = input_notes(diagnostics(stats))
    if said:
        where_log = short_path(str(settings.data_dir / logs.LOG_FILE))
        out.write(f"(noticed while reading: {said}; which files: {where_log})\n")
    for fault in problems:
        out.write(f"({fault.line()})\n")
    for host in hosts:
        if host.state is not HostState.CONNECTED:
            out.write(f"({host.name}: {host.state}{': ' + host.detail if host.detail else ''})\n")
        elif reading := host.reading():  # its older sessions may not all be listed yet
            out.write(f"({reading})\n")
    if limits or snapshots:  # (nothing at all on disk: no agent to say anything of)
        shown_limits = limits_text.lines(limits, now, heard, hosts_heard(hosts))
        out.write(f"Limits: {'; '.join(shown_limits)}\n")
    out.flush()
    if first_run and err.isatty():
        err.write(first_run_line(snapshots, unhooked(settings, snapshots)) + "\n")
    return 0


def notes(
    shown: Listing, snapshots: Sequence[SessionSnapshot], *, where: SessionFilter, limit: int | None
) -> list[str]:
    """What the table leaves out, and how to see it; why it is empty when it is."""
    lines = []
    filtered = where != SessionFilter()
    if not shown.rows:
        if not snapshots:
            return ["No agent sessions found."]
        if filtered and not shown.hidden_old:
            return [f"No sessions match {describe(where)}."]
        if shown.hidden_old:
            ones = "one" if shown.hidden_old == 1 else "ones"
            matching = f" matching {describe(where)}" if filtered else ""
            again = " ".join(["agentbar status --all", describe(where)]).rstrip()
            return [
                f"No live or recent sessions{matching}; {shown.hidden_old} older ended "
                f"{ones}: {again}"
            ]
    if limit is not None and shown.total > len(shown.rows):
        lines.append(f"({len(shown.rows)} of {shown.total} shown; a larger --limit shows more)")
    if shown.hidden_old:
        were = "session is" if shown.hidden_old == 1 else "sessions are"
        lines.append(f"({shown.hidden_old} older ended {were} not shown; --all lists them)")
    return lines


def describe(where: SessionFilter) -> str:
    """The filter as the options that made it (states and times in words)."""
    parts = []
    if where.project is not None:
        parts.append(f"--project {where.project}")
    if where.agent is not None:
        parts.append(f"--agent {where.agent}")
    if where.states is not None:
        parts.append("--state " + ",".join(sorted(s.value for s in where.states)))
    if where.since is not None:
        parts.append("--since " + time.strftime("%Y-%m-%d %H:%M", time.localtime(where.since)))
    if where.host is not None:
        parts.append(f"--host {where.host}")
    return " ".join(parts)


def log_input_notes(streams: Iterable[_Counted], ignored: Sequence[str] = ()) -> None:
    """Name in the log each file the reading noticed odd input in, with its counts, and each
    transcript it ignored (at most ``FILES_LOGGED`` files, then how many more): what the
    status line points to. One record, a line per file (the log lets only a few records of
    one kind through a minute)."""
    odd = [
        s for s in streams if s.malformed or s.oversized or s.unknown or s.odd_times or s.clamped
    ]
    lines = [f"{stream.path}: {input_notes(stream_counts(stream))}" for stream in odd]
    lines += [f"{path}: names no session in its lines; ignored" for path in ignored]
    if not lines:
        return
    if len(lines) > FILES_LOGGED:
        lines[FILES_LOGGED:] = [f"… and {len(lines) - FILES_LOGGED} more files"]
    log.info("odd input, by file:\n  %s", "\n  ".join(lines))


def stream_counts(stream: _Counted) -> dict[str, int]:
    """A stream's counters by ``diagnostics``' names."""
    return {
        "malformed_lines": stream.malformed,
        "oversized_lines": stream.oversized,
        "unknown_records": stream.unknown,
        "unrepresentable_timestamps": stream.odd_times,
        "clamped_numbers": stream.clamped,
    }


def first_run_line(snapshots: Sequence[SessionSnapshot], unhooked: Sequence[str]) -> str:
    """What a first ``status`` found and the next steps, in one line: the hooks for the
    agents found without them (``unhooked``), and starting with the desktop."""
    waiting = sum(1 for s in snapshots if s.state.state is State.INPUT_REQUIRED)
    found = f"{len(snapshots)} session{'' if len(snapshots) == 1 else 's'}, {waiting} need you"
    steps = []
    if unhooked:
        steps.append(f"`agentbar hooks install` for exact approvals ({', '.join(unhooked)})")
    steps.append("`agentbar autostart enable` to start with your desktop")
    return f"agentbar: first run: {found}. Next: {'; '.join(steps)}."


def unhooked(settings: Settings, snapshots: Sequence[SessionSnapshot]) -> list[str]:
    """The agents with sessions here whose settings lack agentbar's hooks (an agent whose
    settings cannot be read counts as without)."""
    found = sorted({str(s.key.agent) for s in snapshots if s.key.host == LOCAL_HOST})
    hookable = set(map(str, installer.hooked_agents(settings)))
    missing = []
    for name in found:
        if name not in hookable:
            continue
        try:
            installed = installer.status(Agent(name), settings).installed
        except (HooksFileError, OSError, ValueError):
            installed = False
        if not installed:
            missing.append(name)
    return missing
