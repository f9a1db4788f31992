"""``agentbar serve`` and ``agentbar export`` (main thread; the server runs on its own thread).

``serve`` prints an address that opens the web UI as its first line (a one-time code in it,
good for ``MAX_SECONDS``; never the token; a detached one prints nothing), then runs the
engine and the server until interrupted; ``<data dir>/server.json`` (0600) says where it is
meanwhile.
``export`` writes one session as Markdown, JSON or HTML to a file or standard output; the
session is named by its id or a unique prefix of it, in either agent.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..app import Agentbar
from ..config import Settings
from ..errors import Fault
from ..model import SessionSnapshot
from ..privacy import open_private
from ..replay.export import Format, Options, export
from ..replay.files import AgentRoots
from ..replay.pages import NotFound, Replay
from .codes import MAX_SECONDS
from .lifetime import Lifetime, uses_of

if TYPE_CHECKING:
    from ..launch.manager import TaskManager

COMMANDS = ("serve", "export")
log = logging.getLogger(__name__)
LIFETIME_CHECK_SECONDS = 2.0  # what uses a background serve, looked at this often (cheap)


def add_parsers(commands: Any) -> None:
    serve_cmd = commands.add_parser(
        "serve", help="run the engine and the loopback server (web UI and API), no tray"
    )
    serve_cmd.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: free)")
    serve_cmd.add_argument(
        "--on-exit",
        choices=["ask", "keep", "stop"],
        default="ask",
        help="launched agents still running when it exits: keep them running without agentbar,"
        " stop them, or ask (the default; keep when there is no terminal to ask in)",
    )
    # Started by ``agentbar launch`` with no terminal: the address goes to server.json alone.
    serve_cmd.add_argument("--detached", action="store_true", help=argparse.SUPPRESS)
    export_cmd = commands.add_parser("export", help="write one session as Markdown, JSON or HTML")
    export_cmd.add_argument("session_id", metavar="SESSION_ID", help="the id or a unique prefix")
    export_cmd.add_argument("--format", choices=[f.value for f in Format], default="md")
    export_cmd.add_argument("-o", "--output", metavar="FILE", help="default: standard output")
    export_cmd.add_argument("--no-thinking", action="store_true", help="leave thinking out")
    export_cmd.add_argument("--notes", action="store_true", help="every note, not just the telling")


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    if args.command == "serve":
        return serve(
            settings, port=args.port, out=out, on_exit=args.on_exit, detached=args.detached
        )
    options = Options(thinking=not args.no_thinking, notes=args.notes)
    return export_session(
        settings, args.session_id, Format(args.format), args.output, options, out=out
    )


def serve(
    settings: Settings, *, port: int, out: TextIO, on_exit: str = "ask", detached: bool = False
) -> int:
    """Engine, server and the launched agents' task manager until SIGINT, SIGTERM or
    ``POST /api/quit``; then the agents still running are kept or stopped (``on_exit``).
    The address to open is printed first, except ``detached`` (no person to read it: it is in
    ``server.json`` alone). A ``detached`` serve (the one ``agentbar launch`` started by itself)
    also ends once nothing has used it for ``[serve] background_idle_seconds`` (``lifetime.py``);
    one a person started runs until told to stop."""
    app = Agentbar.open(settings)
    finished = threading.Event()
    chosen: list[str] = []

    def quit_with(choice: str) -> None:
        chosen.append(choice)
        finished.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: finished.set())
    app.subscribe_faults(say_fault)  # a detached serve's stderr is its serve.log
    try:
        with app.serving(port=port, quit=quit_with) as server:
            if not detached:  # no person reads a detached serve's output
                out.write(server.open_url(seconds=MAX_SECONDS) + "\n")
                out.flush()
            app.start()
            options = settings.options()
            for problem in options.problems:
                log.warning("%s", problem)
            idle = options.background_idle_seconds
            lifetime = Lifetime(idle, time.monotonic()) if detached else None
            next_check = 0.0
            while not finished.wait(0.5):
                now = time.monotonic()
                if lifetime is None or now < next_check:
                    continue
                next_check = now + LIFETIME_CHECK_SECONDS
                if lifetime.step(now, uses_of(app)):
                    say_ending(lifetime.reason(now))
                    break
    except OSError as exc:
        print(f"agentbar: cannot listen on 127.0.0.1:{port}: {exc.strerror}", file=sys.stderr)
        return 1
    finally:
        keep = app.tasks is None or keep_tasks(app.tasks, chosen[0] if chosen else on_exit, out)
        app.close(keep_tasks=keep)
    return 0


def say_ending(reason: str) -> None:
    """Why a background serve ends, in its log and on its stderr (``serve.log``)."""
    log.info("%s", reason)
    print(f"agentbar: {reason}", file=sys.stderr, flush=True)


def say_fault(fault: Fault) -> None:
    """A runtime fault, in one line on stderr (on the engine thread: one short write)."""
    print(f"agentbar: {fault.line()}", file=sys.stderr, flush=True)


def keep_tasks(tasks: TaskManager, choice: str, out: TextIO) -> bool:
    """Whether the agents still running go on without agentbar: as chosen, or asked on the
    terminal (kept when there is none to ask on)."""
    running = tasks.running()
    if not running or choice != "ask":
        return choice != "stop"
    if not sys.stdin.isatty():
        return True
    out.write(f"{len(running)} launched agent(s) still running:\n")
    for info in running:
        out.write(f"  {info.task_id}  {info.agent}  {info.project}\n")
    out.write("Keep them running without agentbar (k), or stop them (s)? [K/s] ")
    out.flush()
    try:
        answer = sys.stdin.readline().strip().lower()
    except (OSError, KeyboardInterrupt):
        answer = ""
    return not answer.startswith("s")


def find_session(snapshots: list[SessionSnapshot], wanted: str) -> SessionSnapshot:
    """The session whose id is ``wanted`` or starts with it; raises ``LookupError``."""
    exact = [s for s in snapshots if s.key.session_id == wanted]
    found = exact or [s for s in snapshots if wanted and s.key.session_id.startswith(wanted)]
    if not found:
        raise LookupError(f"no session {wanted!r}")
    if len(found) > 1:
        names = ", ".join(sorted(f"{s.key.agent}:{s.key.session_id}" for s in found)[:5])
        raise LookupError(f"{wanted!r} names {len(found)} sessions ({names}): give more of it")
    return found[0]


def export_session(
    settings: Settings,
    wanted: str,
    fmt: Format,
    output: str | None,
    options: Options,
    *,
    out: TextIO,
) -> int:
    # This machine's sessions: a remote's is exported through its channel (the window's
    # export), never from a local file that happens to have its path.
    app = Agentbar.open(settings, tasks=False, remotes=False)
    try:
        app.catch_up()
        snapshots = app.sessions()
    finally:
        app.close()
    try:
        snap = find_session(snapshots, wanted)
    except LookupError as exc:
        print(f"agentbar: {exc}", file=sys.stderr)
        return 1
    chunks = export(
        Replay(AgentRoots(settings.agent_roots), settings.replay_adapters()), snap, fmt, options
    )
    try:
        if output is None:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
        else:
            # A transcript's text: private like everything agentbar writes, unless the file
            # exists already (then it keeps the mode its owner gave it).
            fd = open_private(Path(output), os.O_WRONLY | os.O_TRUNC)
            with open(fd, "w", encoding="utf-8", newline="\n") as fh:
                for chunk in chunks:
                    fh.write(chunk)
    except NotFound as exc:
        print(f"agentbar: cannot read the session: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"agentbar: cannot write {output}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0
