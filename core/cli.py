"""The headless commands' parser and dispatch, and ``agentbar watch``: what the engine knows,
for people and scripts (main thread; ``watch`` prints from the engine thread through its
subscription). ``agentbar status`` is ``status_cli.py``; a reader of standard output that goes
away ends any command quietly (``closed_pipe.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeAlias

import orjson

from . import answers_cli, limits_cli, logs, presence, privacy, status_cli
from .agents import registry
from .app import Agentbar
from .closed_pipe import quiet_on_closed_pipe
from .config import Settings
from .hooks import cli as hooks_cli
from .launch import cli as launch_cli
from .model import LOCAL_HOST, StateChange
from .progress_bar import ProgressBar
from .remote import cli as remote_cli
from .server import cli as server_cli
from .text import short_path
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
    status_cli.add_parser(commands)
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
        return status_cli.run(args, settings, out)
    if args.command == "watch":
        return watch(settings, as_json=args.json, out=out)
    if args.command in usage_cli.COMMANDS and args.host not in (None, LOCAL_HOST):
        from .usage import remote as usage_remote  # noqa: PLC0415 - the channel, only then

        return usage_remote.run(args, settings, out)
    if args.command in usage_cli.COMMANDS:
        return usage_cli.run(args, settings, out)
    if args.command == "hooks" and args.host not in (None, LOCAL_HOST):
        from .hooks import remote as hooks_remote  # noqa: PLC0415 - the channel, only then

        return hooks_remote.run(args, settings, out)
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
        return quiet_on_closed_pipe(lambda: run(args))
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
