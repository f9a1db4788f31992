"""``agentbar remote add|list|remove|test`` and the hidden ``agentbar channel`` (the far side
a remote's command runs) (main thread).

    agentbar remote add devbox -- ssh devbox
    agentbar remote add box -- docker exec -i box
    agentbar remote add ubuntu --agentbar /home/me/.local/bin/agentbar -- wsl.exe -d Ubuntu
    agentbar remote test devbox
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any, TextIO

from ..config import Settings
from ..model import StateChange
from . import remotes as config
from .hosts import HostState, HostStatus
from .link import Link, RemoteError
from .remotes import Remote, RemoteConfigError

COMMANDS = ("remote", "channel")
TEST_SECONDS = 30.0
# Exit statuses of a command run on a host from here (``agentbar usage|hooks ... --host``):
# a host not configured or a refusal there; a host that cannot be reached or stops answering.
REFUSED, DOWN = 1, 2


def add_parsers(commands: Any) -> None:
    remote = commands.add_parser("remote", help="agents on other machines (ssh, containers, WSL)")
    actions = remote.add_subparsers(dest="remote_command", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="add a remote: NAME -- COMMAND that reaches it")
    add.add_argument("name", help="its name (letters, digits, - _ .): the sessions' host")
    add.add_argument("--agentbar", default=config.DEFAULT_PROGRAM,
                     help="the agentbar program on that side (default: agentbar)")  # fmt: skip
    add.add_argument(
        "remote_argv",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="e.g. -- ssh devbox, -- docker exec -i box, -- wsl.exe -d Ubuntu",
    )
    actions.add_parser("list", help="the remotes settings.toml configures")
    remove = actions.add_parser("remove", help="remove a remote")
    remove.add_argument("name")
    test = actions.add_parser("test", help="connect once: version, sessions, round trip")
    test.add_argument("name")
    test.add_argument("--timeout", type=float, default=TEST_SECONDS, help=argparse.SUPPRESS)
    # The far side of a channel: what a remote's command runs on the other machine.
    commands.add_parser("channel")


def run(
    args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO, version: str
) -> int:
    """``version``: this agentbar's, which the far side says in its hello."""
    if args.command == "channel":
        from .far import main_channel  # noqa: PLC0415 - the engine, only on the far side

        return main_channel(settings, version)
    path = settings.options_path
    if path is None:
        print("agentbar: no config folder (AGENTBAR_CONFIG_DIR)", file=err)
        return 2
    try:
        if args.remote_command == "add":
            return _add(args, path, out)
        if args.remote_command == "remove":
            config.remove(path, args.name)
            print(f"removed {args.name} from {path}", file=out)
            return 0
        if args.remote_command == "list":
            return _list(path, out, err)
        return _test(args, path, out, err)
    except RemoteConfigError as exc:
        print(f"agentbar: {exc}", file=err)
        return 2


def _add(args: argparse.Namespace, path: Any, out: TextIO) -> int:
    argv = list(args.remote_argv)
    program = args.agentbar
    # ``--agentbar X`` after NAME lands here too (argparse's remainder takes all after NAME),
    # before the ``--`` that starts the command (argparse drops a ``--`` right after NAME).
    while argv and argv[0].startswith("--agentbar"):
        option = argv.pop(0)
        if "=" in option:
            program = option.split("=", 1)[1]
        elif argv:
            program = argv.pop(0)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise RemoteConfigError("give the command that reaches it: remote add NAME -- ssh HOST")
    remote = Remote(config.check_name(args.name), config.check_command(argv), program)
    config.add(path, remote)
    print(f"added {remote.name}: {' '.join(remote.command)} (in {path})", file=out)
    print(f"check it with: agentbar remote test {remote.name}", file=out)
    return 0


def _list(path: Any, out: TextIO, err: TextIO) -> int:
    found = config.load(path)
    for problem in found.problems:
        print(f"agentbar: {problem}", file=err)
    if not found.remotes:
        print("No remotes (add one: agentbar remote add NAME -- ssh HOST)", file=out)
    for remote in found.remotes:
        program = "" if remote.program == config.DEFAULT_PROGRAM else f"  [{remote.program}]"
        print(f"{remote.name:<16} {' '.join(remote.command)}{program}", file=out)
    return 0


class _Watcher:
    """A test's listener: wakes when the link is connected or gave up once."""

    def __init__(self) -> None:
        self.settled = threading.Event()
        self.last: HostStatus | None = None

    def changed(self, change: StateChange) -> None:
        pass

    def status(self, status: HostStatus) -> None:
        if status.state is not HostState.CONNECTING:
            self.last = status
            self.settled.set()

    def decisions(self, host: str, requests: list[dict[str, Any]]) -> None:
        pass

    def decision(self, host: str, frame: dict[str, Any]) -> None:
        pass


def probe(remote: Remote, timeout: float = TEST_SECONDS) -> tuple[Link, float]:
    """A link to ``remote`` connected once (stop it after), and a call's round trip in
    seconds. Raises ``RemoteError`` with what went wrong, in one line."""
    watcher = _Watcher()
    link = Link(remote, watcher)
    link.start()
    try:
        if not watcher.settled.wait(timeout):
            raise RemoteError(f"{remote.name}: no answer in {timeout:.0f} s (timed out)", "timeout")
        if watcher.last is None or watcher.last.state is not HostState.CONNECTED:
            detail = watcher.last.detail if watcher.last is not None else "unreachable"
            raise RemoteError(f"{remote.name}: {detail}", "unreachable")
        started = time.perf_counter()
        link.call("ping", {}, timeout=timeout)
        return link, time.perf_counter() - started
    except BaseException:
        link.stop()
        raise


def open_host(host: str, settings: Settings, err: TextIO) -> Link | int:
    """A link of its own to the remote named ``host``, connected (stop it after); or, said on
    ``err``, the exit status of a command that cannot have one: ``REFUSED`` for a name not
    configured, ``DOWN`` for a host that does not answer."""
    path = settings.options_path
    remote = None if path is None else config.load(path).get(host)
    if remote is None:
        print(f"agentbar: no remote named {host!r} (see: agentbar remote list)", file=err)
        return REFUSED
    try:
        link, _round_trip = probe(remote)
    except RemoteError as exc:
        print(f"agentbar: {exc}", file=err)
        return DOWN
    return link


def host_down(exc: RemoteError) -> bool:
    """Whether a call's error means the host went (``DOWN``), not a refusal there."""
    return exc.kind in ("unreachable", "timeout")


def _test(args: argparse.Namespace, path: Any, out: TextIO, err: TextIO) -> int:
    remote = config.load(path).get(args.name)
    if remote is None:
        print(f"agentbar: no remote named {args.name!r} (see: agentbar remote list)", file=err)
        return 2
    try:
        link, rtt = probe(remote, args.timeout)
    except RemoteError as exc:
        print(f"agentbar: {exc}", file=err)
        return 1
    try:
        version = link.hello.get("version", "unknown")
        count = len(link.sessions())
        print(f"{remote.name}: agentbar {version}, {count} sessions, round trip "
              f"{rtt * 1000:.1f} ms", file=out)  # fmt: skip
    finally:
        link.stop()
    return 0
