"""``agentbar status`` and ``agentbar watch``: what the engine knows, for people and scripts
(main thread; ``watch`` prints from the engine thread through its subscription).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import logging
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeAlias

import orjson

from . import answers_cli, jsonsafe, limits_cli, limits_text, logs, presence, privacy
from .agents import registry
from .app import Agentbar
from .config import Settings
from .hooks import cli as hooks_cli
from .launch import cli as launch_cli
from .listing import diagnostics, select
from .model import LOCAL_HOST, SessionSnapshot, StateChange
from .progress_bar import ProgressBar
from .progress_text import progress_json
from .remote import cli as remote_cli
from .remote.hosts import HostState
from .server import cli as server_cli
from .text import ago, natural_widths, short_path, table
from .usage import cli as usage_cli

log = logging.getLogger(__name__)


# (A string: argparse's class takes no subscript at run time, only in the type stubs.)
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def build_parser(prog: str = "agentbar") -> argparse.ArgumentParser:
    return parser_and_commands(prog)[0]


def parser_and_commands(prog: str = "agentbar") -> tuple[argparse.ArgumentParser, Commands]:
    """The headless commands' parser, and its subcommands for a front end to add its own."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Which of your coding agents' sessions needs you.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr too")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    status = commands.add_parser("status", help="live and recent sessions and their state")
    status.add_argument("--all", action="store_true", help="every session on disk")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    watch = commands.add_parser("watch", help="one line per state change, as it happens")
    watch.add_argument("--json", action="store_true", help="one JSON object per line")
    usage_cli.add_parser(commands)
    hooks_cli.add_parser(commands, [kit.agent for kit in registry.KITS if kit.hooks is not None])
    server_cli.add_parsers(commands)
    launch_cli.add_parsers(commands, [kit.agent for kit in registry.KITS if kit.launch is not None])
    answers_cli.add_parsers(commands)
    remote_cli.add_parsers(commands)
    return parser, commands


def version() -> str:
    """The installed distribution's version ("unknown" when run from a bare source tree)."""
    try:
        return importlib.metadata.version("agentbar")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    settings = Settings.from_env()
    prepare(settings, verbose=args.verbose, detached=getattr(args, "detached", False))
    if args.command == "status":
        return status(settings, show_all=args.all, as_json=args.json, out=out)
    if args.command == "watch":
        return watch(settings, as_json=args.json, out=out)
    if args.command in usage_cli.COMMANDS:
        return usage_cli.run(args, settings, out)
    if args.command == "hooks" and args.status_line:
        return limits_cli.run(args, settings, out, hooks_cli.ask)
    if args.command == "hooks":
        return hooks_cli.run(args, settings, out)
    if args.command in server_cli.COMMANDS:
        return server_cli.run(args, settings, out)
    if args.command in launch_cli.COMMANDS:
        return launch_cli.run(args, settings, out)
    if args.command in answers_cli.COMMANDS:
        return answers_cli.run(args, settings, out)
    if args.command in remote_cli.COMMANDS:
        return remote_cli.run(args, settings, out, sys.stderr, version())
    raise SystemExit(f"unknown command {args.command!r}")


def main(argv: Sequence[str] | None = None) -> int:
    """The headless commands alone (``python -m agentbar.core.cli``: how ``agentbar launch``
    starts a background ``serve``; the ``agentbar`` entry point is ``agentbar.tray``)."""
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 2
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130


def prepare(settings: Settings, *, verbose: bool, detached: bool = False) -> None:
    """What every entry point does first: make what this process writes private, narrow what
    an older agentbar left open (saying so in one line), and set up the logs."""
    privacy.set_private_umask()
    with contextlib.suppress(OSError):
        privacy.private_dir(settings.data_dir)
    tightened = privacy.tighten(settings.data_dir, settings.config_dir)
    setup_logging(settings, verbose=verbose, detached=detached)
    if tightened:
        if not verbose:  # with --verbose the log's own line reaches stderr
            print(f"agentbar: {tightened.line()}", file=sys.stderr, flush=True)
        log.warning("%s", tightened.line())


def setup_logging(settings: Settings, *, verbose: bool, detached: bool = False) -> None:
    """Everything INFO and up goes to a rotating log in the data dir (bad input is logged and
    counted there); stderr gets errors only, or everything with ``--verbose``. A detached
    process has no terminal: its stderr is ``serve.log`` in the data dir, rotated like the
    log. Both are 0600 and bounded (``core/logs.py``)."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    to_stderr_level = logging.INFO if verbose else logging.ERROR
    try:
        root.addHandler(logs.file_log(settings.data_dir / logs.LOG_FILE))
        if detached:
            path = settings.data_dir / logs.SERVE_LOG
            root.addHandler(logs.file_log(path, level=to_stderr_level, as_stderr=True))
            return
    except OSError as exc:
        print(f"agentbar: cannot write a log in {settings.data_dir}: {exc}", file=sys.stderr)
    root.addHandler(logs.stream_log(to_stderr_level))


# -- status --------------------------------------------------------------------------------


def status(
    settings: Settings, *, show_all: bool, as_json: bool, out: TextIO, err: TextIO | None = None
) -> int:
    """The sessions once read. A long first reading draws a progress bar on ``err`` (stderr)
    when it is a terminal; ``out`` gets the same either way."""
    app = Agentbar.open(settings, tasks=False)
    try:
        with ProgressBar(app.progress, sys.stderr if err is None else err):
            app.catch_up()
        snapshots = app.sessions()
        stats = app.stats()
        problems = app.problems()
        progress = app.progress()
        limits = app.limits()
        heard = app.limits_heard()
        hosts = app.hosts()
    finally:
        app.close()
    now = time.time()
    rows = select(snapshots, now=now, show_all=show_all)
    if as_json:
        document = {
            "sessions": [s.to_json() for s in rows],
            "diagnostics": diagnostics(stats),
            "problems": [fault.to_json() for fault in problems],
            "progress": progress_json(progress),
            "limits": limits_text.to_json(limits, now, heard),
            "hosts": [host.to_json() for host in hosts],
        }
        out.write(jsonsafe.dumps(document, orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    out.write(render_table(rows, now=now, width=shutil.get_terminal_size((120, 24)).columns))
    hidden = len(snapshots) - len(rows)
    if hidden and not show_all:
        out.write(f"({hidden} older ended sessions not shown; --all lists them)\n")
    skipped = diagnostics(stats)
    if any(skipped.values()):
        parts = ", ".join(f"{n} {what}" for what, n in skipped.items() if n)
        out.write(f"(skipped input: {parts}; see {settings.data_dir / logs.LOG_FILE})\n")
    for fault in problems:
        out.write(f"({fault.line()})\n")
    for host in hosts:
        if host.state is not HostState.CONNECTED:
            out.write(f"({host.name}: {host.state}{': ' + host.detail if host.detail else ''})\n")
    if limits or rows:  # (nothing at all on disk: no agent to say anything of)
        out.write(f"Limits: {'; '.join(limits_text.lines(limits, now, heard))}\n")
    return 0


def render_table(rows: Sequence[SessionSnapshot], *, now: float, width: int) -> str:
    if not rows:
        return "No agent sessions found.\n"
    header = ("STATE", "AGENT", "PROJECT", "TITLE", "DETAIL", "ACTIVE")
    rows_text = [
        (
            state_label(s),
            str(s.key.agent) + ("" if s.key.host == LOCAL_HOST else f"@{s.key.host}"),
            short_path(s.project),
            s.title or "",
            s.state.detail,
            ago(s.last_activity, now),
        )
        for s in rows
    ]
    fixed = natural_widths(header, rows_text)
    # Squeeze the free-text columns (project, title, detail) to the terminal width.
    budget = max(width - sum(fixed[i] for i in (0, 1, 5)) - 2 * (len(header) - 1), 30)
    caps = {2: budget // 4, 3: budget * 3 // 8, 4: budget * 3 // 8}
    widths = [min(fixed[i], caps.get(i, fixed[i])) for i in range(len(header))]
    return table(header, rows_text, widths)


def state_label(s: SessionSnapshot) -> str:
    if s.state.waiting_for is not None:
        return f"{s.state.state} ({s.state.waiting_for})"
    return str(s.state.state)


# -- watch ---------------------------------------------------------------------------------


def watch(settings: Settings, *, as_json: bool, out: TextIO, err: TextIO | None = None) -> int:
    """Print each change until interrupted. Once the start's silent catch-up is done, one line
    on ``err`` says so: from then on every change is printed (a script can wait for it). A long
    catch-up draws the progress bar on ``err`` meanwhile when it is a terminal."""
    err = sys.stderr if err is None else err
    app = Agentbar.open(settings, tasks=False)
    finished = threading.Event()
    printer = _Printer(out, as_json, on_broken_pipe=finished.set)
    here = contextlib.ExitStack()
    here.enter_context(presence.present(settings.data_dir, "watch"))  # a background serve stays
    app.subscribe(printer)
    app.subscribe_faults(lambda fault: print(f"agentbar: {fault.line()}", file=err, flush=True))
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: finished.set())
    try:
        app.start()
        with ProgressBar(app.progress, err):  # a long first reading, on a terminal
            while not app.engine.ready.is_set() and not finished.wait(0.05):
                pass
        if not finished.is_set():
            count = len(app.sessions())
            print(f"agentbar: watching {count} sessions; changes from now on", file=err)
            err.flush()
        while not finished.wait(0.5):
            pass
    finally:
        app.close()
        here.close()
    return 0


class _Printer:
    """Writes each change as it comes (on the engine thread: one short write and a flush)."""

    def __init__(self, out: TextIO, as_json: bool, on_broken_pipe: Callable[[], None]) -> None:
        self._out = out
        self._as_json = as_json
        self._on_broken_pipe = on_broken_pipe

    def __call__(self, change: StateChange) -> None:
        line = (
            orjson.dumps(change.to_json()).decode()
            if self._as_json
            else human_change(change.to_json())
        )
        try:
            self._out.write(line + "\n")
            self._out.flush()
        except (BrokenPipeError, ValueError):
            self._on_broken_pipe()


def human_change(event: dict[str, Any]) -> str:
    when = time.strftime("%H:%M:%S", time.localtime())
    state = event["state"] + (f" ({event['waiting_for']})" if event["waiting_for"] else "")
    prev = event["prev_state"] or "new"
    project = short_path(event["project"])
    detail = f"  {event['detail']}" if event["detail"] else ""
    return f"{when}  {event['agent']:<6}  {project}  {prev} → {state}{detail}"


if __name__ == "__main__":
    sys.exit(main())
