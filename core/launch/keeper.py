"""Keep launched agents running after agentbar quits, and hand them back to the next agentbar
(``keep`` and ``reclaim`` run in agentbar, on the quitting thread and at start; ``serve`` is the
keeper process's own single thread).

An agent's PTY master is what keeps its terminal alive: when the last holder closes it, the
kernel hangs the terminal up and sends SIGHUP to the agent (its session leader) and the
foreground process group, and the agent exits. So "keep" hands every running task's master, as
a duplicated descriptor, to a small keeper process that has left agentbar's session (double
fork, ``setsid``: no signal to agentbar reaches it, and init reaps it): it keeps the masters
open, drains their output (an agent blocked on a full PTY would stall) into a short scrollback,
and waits on a Unix socket in the data folder (0600, this user only). The next agentbar
connects, gets the descriptors back over the socket (SCM_RIGHTS) with each task's record and
scrollback, and the keeper exits; the tasks are listed, approvable and attachable again
(``AdoptedTerminal``). A keeper whose agents have all exited exits too. POSIX only: on Windows
a ConPTY cannot outlive its owner, and "keep" falls back to stopping.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..privacy import DIR_MODE, private_dir, set_private_umask, write_private

if TYPE_CHECKING:
    from ..config import Settings
    from .task import Task
    from .terminal import Terminal

# Type checkers skip the rest of this module on Windows; the task manager never imports it there.
assert sys.platform != "win32", "POSIX only: a Windows ConPTY cannot outlive agentbar"

KEEPER_DIR = "tasks"
KEPT_SCROLLBACK = 256 * 1024  # per task, what the keeper passes back
CONNECT_TIMEOUT = 5.0
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
POLL_SECONDS = 1.0  # how often the keeper checks its agents are alive (no pidfd)
HEADER = struct.Struct("!Q")


def keeper_dir(settings: Settings) -> Path:
    return settings.data_dir / KEEPER_DIR


def socket_path(folder: Path, pid: int) -> str:
    """Where a keeper listens: in the data folder, or (a long path) in the temp folder under a
    name derived from it."""
    path = str(folder / f"keeper-{pid}.sock")
    if len(path.encode()) <= MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"agentbar-{os.getuid()}-{digest}-{pid}.sock")


# -- in agentbar: keep ---------------------------------------------------------------------------


def keep(settings: Settings, tasks: Sequence[Task]) -> None:
    """Hand ``tasks`` to a new keeper process; raises ``OSError`` when that cannot be done (the
    tasks are then still ours)."""
    folder = private_dir(keeper_dir(settings))
    with contextlib.suppress(OSError):
        os.chmod(folder, DIR_MODE)  # one an older agentbar made wider
    records, fds = [], []
    try:
        for task in tasks:
            info = task.info()
            scrollback = task.scrollback()[-KEPT_SCROLLBACK:]
            fd = task.mark_detached()
            fds.append(fd)
            records.append(
                {
                    "task_id": info.task_id,
                    "agent": str(info.agent),
                    "project": info.project,
                    "mode": str(info.mode),
                    "source": info.source,
                    "prompt": info.prompt,
                    "pid": info.pid,
                    "create_time": info.create_time,
                    "started_at": info.started_at,
                    "session_id": info.session_id,
                    "path": None if info.binding is None else str(info.binding.path),
                    "rows": info.rows,
                    "cols": info.cols,
                    "fd": fd,
                    "scrollback": base64.b64encode(scrollback).decode(),
                }
            )
        manifest = folder / f".manifest-{os.getpid()}-{time.monotonic_ns()}.json"
        descriptor = os.open(manifest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as fh:
            json.dump({"tasks": records}, fh)
        launcher = subprocess.Popen(
            [sys.executable, "-m", "agentbar.core.launch.keeper", str(manifest), str(folder)],
            pass_fds=fds,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        # The launcher forks the keeper and exits at once: reap it here (no zombie).
        if launcher.wait(30) != 0:
            raise OSError(f"the keeper did not start (status {launcher.returncode})")
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)  # the keeper has its own copies now


# -- in agentbar: reclaim ------------------------------------------------------------------------

MakeTask = Callable[[Mapping[str, Any], "Terminal", bytes], "Task"]


def reclaim(settings: Settings, make_task: MakeTask) -> list[Task]:
    """Take back every task a keeper holds (at start); the keepers exit."""
    from .terminal_posix import AdoptedTerminal  # noqa: PLC0415

    folder = keeper_dir(settings)
    found: list[Task] = []
    for pointer in sorted(folder.glob("keeper-*.json")):
        try:
            where = json.loads(pointer.read_text())
            path = str(where["socket"])
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                pointer.unlink()
            continue
        try:
            records, fds = _fetch(path)
        except OSError:
            # Gone without a word (killed): nothing to take back.
            with contextlib.suppress(OSError):
                pointer.unlink()
            continue
        by_number = dict(zip(records_fds(records), fds, strict=False))
        for record in records:
            fd = by_number.pop(int(record["fd"]), None)
            if fd is None:
                continue
            term = AdoptedTerminal(fd, int(record["pid"]), float(record["create_time"]))
            if term.poll_exit() is not None:
                term.close()
                continue
            scrollback = base64.b64decode(record.get("scrollback") or "")
            found.append(make_task(record, term, scrollback))
        for fd in by_number.values():
            with contextlib.suppress(OSError):
                os.close(fd)
    return found


def records_fds(records: list[dict[str, Any]]) -> list[int]:
    """The descriptor numbers the records name, in the order the keeper sends them."""
    return [int(record["fd"]) for record in records]


def _fetch(path: str) -> tuple[list[dict[str, Any]], list[int]]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(path)
        sock.sendall(b"reclaim\n")
        head, fds, _flags, _addr = socket.recv_fds(sock, HEADER.size, 64)
        if len(head) != HEADER.size:
            raise OSError("the keeper sent no header")
        (length,) = HEADER.unpack(head)
        body = bytearray()
        while len(body) < length:
            chunk = sock.recv(min(1 << 20, length - len(body)))
            if not chunk:
                raise OSError("the keeper hung up")
            body += chunk
        records = json.loads(body)["tasks"]
        sock.sendall(b"ok\n")
        return list(records), list(fds)


# -- the keeper process --------------------------------------------------------------------------


def _daemonize() -> bool:
    """Fork; the parent (the launcher agentbar waits for) returns False and exits. The child
    leaves the session, so no signal meant for agentbar's terminal reaches it."""
    if os.fork() != 0:
        return False
    os.setsid()
    if os.fork() != 0:
        os._exit(0)  # the session leader goes: the keeper can never get a terminal again
    return True


class _Kept:
    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record
        self.fd = int(record["fd"])
        self.pid = int(record["pid"])
        self.create_time = float(record["create_time"])
        self.scrollback = bytearray(base64.b64decode(record.get("scrollback") or ""))
        self.pidfd = -1
        with contextlib.suppress(AttributeError, OSError):
            self.pidfd = os.pidfd_open(self.pid)  # type: ignore[attr-defined,unused-ignore]
        os.set_blocking(self.fd, False)

    def drain(self) -> bool:
        """Read what the agent wrote; False at the end of its output."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            self.scrollback += data
            if len(self.scrollback) > KEPT_SCROLLBACK:
                del self.scrollback[: len(self.scrollback) - KEPT_SCROLLBACK]

    def alive(self) -> bool:
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
            return state != b"Z"
        except (OSError, IndexError):
            pass
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def close(self) -> None:
        for fd in (self.fd, self.pidfd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


def serve(manifest: Path, folder: Path) -> None:
    """The keeper: hold the masters, drain them, hand them back to the first agentbar that
    asks; exit when they are handed back or their agents have all exited."""
    with contextlib.suppress(OSError):
        os.chdir("/")
    data = json.loads(manifest.read_text())
    with contextlib.suppress(OSError):
        manifest.unlink()
    kept = [_Kept(record) for record in data["tasks"]]
    pid = os.getpid()
    path = socket_path(folder, pid)
    pointer = folder / f"keeper-{pid}.json"
    with contextlib.suppress(OSError):
        os.unlink(path)
    old_mask = os.umask(0o177)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(path)
    finally:
        os.umask(old_mask)
    server.listen(4)
    write_private(pointer, json.dumps({"socket": path, "pid": pid}).encode())
    try:
        _keep_until_reclaimed(server, kept)
    finally:
        for item in kept:
            item.close()
        server.close()
        for leftover in (path, str(pointer)):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


def _keep_until_reclaimed(server: socket.socket, kept: list[_Kept]) -> None:
    while kept:
        waits = [server.fileno()]
        for item in kept:
            waits.append(item.fd)
            if item.pidfd >= 0:
                waits.append(item.pidfd)
        ready, _, _ = select.select(waits, [], [], POLL_SECONDS)
        for item in list(kept):
            ended = not item.drain() if item.fd in ready else False
            if ended or (item.pidfd in ready) or not item.alive():
                item.close()
                kept.remove(item)
        if server.fileno() in ready and kept and _hand_back(server, kept):
            for item in kept:
                item.close()
            return


def _hand_back(server: socket.socket, kept: list[_Kept]) -> bool:
    conn, _ = server.accept()
    with conn:
        conn.settimeout(CONNECT_TIMEOUT)
        try:
            if not _same_user(conn) or conn.recv(16) != b"reclaim\n":
                return False
            for item in kept:
                item.drain()
            records = []
            for item in kept:
                record = dict(item.record)
                record["scrollback"] = base64.b64encode(bytes(item.scrollback)).decode()
                records.append(record)
            body = json.dumps({"tasks": records}).encode()
            socket.send_fds(conn, [HEADER.pack(len(body))], [item.fd for item in kept])
            conn.sendall(body)
            return conn.recv(16) == b"ok\n"
        except OSError:
            return False


def _same_user(conn: socket.socket) -> bool:
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return True  # the socket file's 0600 mode keeps others out
    creds = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def running_keepers(settings: Settings) -> Iterator[int]:
    """The pids of the keepers holding tasks for this data folder."""
    for pointer in keeper_dir(settings).glob("keeper-*.json"):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            yield int(json.loads(pointer.read_text())["pid"])


def main(argv: list[str]) -> int:
    set_private_umask()  # what the keeper writes (its socket, its pointer) is this user's alone
    if len(argv) != 3:
        return 2
    if not _daemonize():
        return 0
    try:
        serve(Path(argv[1]), Path(argv[2]))
    finally:
        os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
