"""Who is on the other end of a loopback connection: the user (and, where it is cheap, the
process) that owns the peer's socket (server thread; one short read per connection).

The server accepts a connection only from a process of its own user. TCP on the loopback
address carries no credentials, but the kernel knows whose socket the other end is:

- Linux: the kernel's socket table, asked for the one socket whose local address is the
  peer's address and port and whose remote address is ours, with its owner's uid and inode:
  through ``NETLINK_SOCK_DIAG`` (what ``ss`` uses; an exact lookup, a few microseconds, no
  privileges), else from ``/proc/net/tcp`` and ``/proc/net/tcp6`` (the same table as text:
  milliseconds once thousands of sockets are open, so only where netlink is refused). The
  process, when the connection cap needs it, comes from the socket's inode among the file
  descriptors of this user's processes.
- Windows: ``psutil``'s view of the system's TCP table (``GetExtendedTcpTable`` with each
  socket's owning process, no privileges needed) maps the peer's port to its process, whose
  user is compared with ours.
- macOS: the system-wide table needs root there, so this user's processes are asked for their
  own sockets (libproc through ``psutil``), those that connected lately first: tens of
  milliseconds for a new client, far less for one seen before.

A peer that cannot be found (it closed already, or the table could not be read) owns nothing:
the connection is refused. ``FakePeers`` stands in for unit tests of the gate.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

Address = tuple[str, int]

PID_RESCAN_SECONDS = 0.25  # the inode-to-process map is rebuilt at most this often


@dataclass(frozen=True, slots=True)
class Peer:
    """The owner of a connection's other end: ``same_user`` decides; ``client`` groups the
    connections one process (or, where that is unknown, one user) holds."""

    same_user: bool
    uid: int | None = None
    pid: int | None = None

    @property
    def client(self) -> str:
        if self.pid is not None:
            return f"pid:{self.pid}"
        return f"uid:{self.uid}"


NOBODY = Peer(same_user=False)


class PeerOwners(Protocol):
    """Who owns the socket at ``peer`` connected to our ``local`` address (server thread)."""

    def owner(self, peer: Address, local: Address, *, want_pid: bool = False) -> Peer: ...

    def close(self) -> None: ...


# -- Linux: /proc/net/tcp ------------------------------------------------------------------------


def proc_hex(address: Address) -> tuple[str, bool]:
    """``address`` as ``/proc/net/tcp*`` writes it (each 32-bit word of the address in host
    order, then the port), and whether it is in ``tcp6``. An IPv4 peer may also sit in
    ``tcp6`` as an IPv4-mapped address (``proc_hex_mapped``)."""
    host, port = address
    six = ":" in host
    packed = socket.inet_pton(socket.AF_INET6 if six else socket.AF_INET, host)
    words = struct.unpack(f"={len(packed) // 4}I", packed)
    return "".join(f"{w:08X}" for w in words) + f":{port:04X}", six


def mapped(address: Address) -> Address:
    """An IPv4 address as an IPv6 socket sees it (``::ffff:127.0.0.1``)."""
    return f"::ffff:{address[0]}", address[1]


def proc_hex_mapped(address: Address) -> str:
    return proc_hex(mapped(address))[0]


@dataclass(frozen=True, slots=True)
class ProcEntry:
    uid: int
    inode: int


def find_in_table(table: bytes, peer_hex: str, local_hex: str) -> ProcEntry | None:
    """The line of ``table`` (a ``/proc/net/tcp*`` file) for the socket at ``peer_hex``
    connected to ``local_hex``: its uid and inode."""
    needle = f" {peer_hex} {local_hex} ".encode()
    at = table.find(needle)
    if at < 0:
        return None
    end = table.find(b"\n", at)
    fields = table[at : end if end >= 0 else len(table)].split()
    # local rem st tx:rx tr:when retrnsmt uid timeout inode
    try:
        return ProcEntry(uid=int(fields[6]), inode=int(fields[8]))
    except (IndexError, ValueError):
        return None


NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
ALL_STATES = 0xFFFFFFFF
NO_COOKIE = 0xFFFFFFFF
DIAG_UID_AT = 16 + 64  # nlmsghdr, then inet_diag_msg's uid and inode after its sockid


class SockDiag:
    """One exact lookup in the kernel's TCP socket table over ``NETLINK_SOCK_DIAG`` (Linux);
    ``OSError`` where the kernel or a sandbox refuses it."""

    def __init__(self) -> None:
        self._sock = socket.socket(
            socket.AF_NETLINK,  # type: ignore[attr-defined,unused-ignore]
            socket.SOCK_DGRAM,
            NETLINK_SOCK_DIAG,
        )
        self._sock.settimeout(1.0)
        self._seq = 0
        self._lock = threading.Lock()

    def find(self, peer: Address, local: Address) -> ProcEntry | None:
        six = ":" in peer[0]
        family = socket.AF_INET6 if six else socket.AF_INET
        src = socket.inet_pton(family, peer[0]).ljust(16, b"\0")
        dst = socket.inet_pton(family, local[0]).ljust(16, b"\0")
        request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, ALL_STATES)
        request += struct.pack(">HH", peer[1], local[1]) + src + dst
        request += struct.pack("=III", 0, NO_COOKIE, NO_COOKIE)
        with self._lock:
            self._seq = (self._seq + 1) & 0xFFFFFFFF
            header = struct.pack(
                "=IHHII", 16 + len(request), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, self._seq, 0
            )
            self._sock.send(header + request)
            while True:
                reply = self._sock.recv(65536)
                if len(reply) < 20:
                    raise OSError("a short sock_diag reply")
                _length, kind, _flags, seq = struct.unpack_from("=IHHI", reply)
                if seq == self._seq:
                    break  # an answer to an earlier lookup that timed out is skipped
        if kind == NLMSG_ERROR:
            errno = -struct.unpack_from("=i", reply, 16)[0]
            if errno == 2:  # ENOENT: no such socket (it closed already)
                return None
            raise OSError(errno, "sock_diag refused the lookup")
        if len(reply) < DIAG_UID_AT + 8:
            raise OSError("a short sock_diag reply")
        uid, inode = struct.unpack_from("=II", reply, DIAG_UID_AT)
        return ProcEntry(uid=uid, inode=inode)

    def close(self) -> None:
        self._sock.close()


class ProcNetPeers:
    """The Linux way: the peer's socket through ``SockDiag``, or its line in
    ``/proc/net/tcp`` (or ``tcp6``) where netlink is refused (``diag=False``: always)."""

    def __init__(self, proc: str = "/proc", uid: int | None = None, *, diag: bool = True) -> None:
        self.proc = proc
        self.uid = my_uid() if uid is None else uid
        self._pids = _InodePids(proc, self.uid)
        self._diag: SockDiag | None = None
        if diag:
            try:
                self._diag = SockDiag()
            except OSError:
                self._diag = None

    def owner(self, peer: Address, local: Address, *, want_pid: bool = False) -> Peer:
        entry = self.entry(peer, local)
        if entry is None:
            return NOBODY
        if entry.uid != self.uid:
            return Peer(same_user=False, uid=entry.uid)
        pid = self._pids.pid_of(entry.inode) if want_pid else None
        return Peer(same_user=True, uid=entry.uid, pid=pid)

    def entry(self, peer: Address, local: Address) -> ProcEntry | None:
        if self._diag is not None:
            try:
                found = self._diag.find(peer, local)
                if found is None and ":" not in peer[0]:  # an IPv6 socket, IPv4-mapped
                    found = self._diag.find(mapped(peer), mapped(local))
                return found
            except OSError:
                self._diag = None  # refused once: the text tables from now on
        return self.table_entry(peer, local)

    def close(self) -> None:
        if self._diag is not None:
            self._diag.close()
            self._diag = None

    def table_entry(self, peer: Address, local: Address) -> ProcEntry | None:
        peer_hex, six = proc_hex(peer)
        local_hex, _ = proc_hex(local)
        tables = [("tcp6", peer_hex, local_hex)] if six else [("tcp", peer_hex, local_hex)]
        if not six:  # an IPv6 socket that reached 127.0.0.1 shows as ::ffff:127.0.0.1
            tables.append(("tcp6", proc_hex_mapped(peer), proc_hex_mapped(local)))
        for name, p, q in tables:
            try:
                table = _read(f"{self.proc}/net/{name}")
            except OSError:
                continue
            found = find_in_table(table, p, q)
            if found is not None:
                return found
        return None


if sys.platform == "win32":

    def my_uid() -> int:
        raise OSError("Windows has no uids")

else:

    def my_uid() -> int:
        return os.getuid()


def _read(path: str) -> bytes:
    with open(path, "rb", buffering=0) as fh:
        chunks = []
        while chunk := fh.read(1 << 16):
            chunks.append(chunk)
    return b"".join(chunks)


class _InodePids:
    """Socket inode to the pid of this user's process that holds it, from the file
    descriptors in ``/proc/PID/fd``; rebuilt when an inode is missing (not more often than
    ``PID_RESCAN_SECONDS``), since a scan reads every descriptor of every process of ours."""

    def __init__(self, proc: str, uid: int) -> None:
        self.proc, self.uid = proc, uid
        self._map: dict[int, int] = {}
        self._at = float("-inf")
        self._lock = threading.Lock()

    def pid_of(self, inode: int) -> int | None:
        with self._lock:
            pid = self._map.get(inode)
            if pid is None and time.monotonic() - self._at >= PID_RESCAN_SECONDS:
                self._map = self._scan()
                self._at = time.monotonic()
                pid = self._map.get(inode)
            return pid

    def _scan(self) -> dict[int, int]:
        found: dict[int, int] = {}
        try:
            names = os.listdir(self.proc)
        except OSError:
            return found
        for name in names:
            if not name.isdigit():
                continue
            fd_dir = f"{self.proc}/{name}/fd"
            try:
                if os.stat(f"{self.proc}/{name}").st_uid != self.uid:
                    continue
                fds = os.listdir(fd_dir)
            except OSError:
                continue
            for fd in fds:
                with contextlib.suppress(OSError):
                    target = os.readlink(f"{fd_dir}/{fd}")
                    if target.startswith("socket:["):
                        found[int(target[8:-1])] = int(name)
        return found


# -- macOS and Windows: psutil -------------------------------------------------------------------


RECENT_PIDS = 8  # processes that connected lately, asked first (a browser, the tray, the CLI)


class PsutilPeers:
    """The way where ``/proc`` is missing, through psutil.

    - Windows: the system's TCP table (``GetExtendedTcpTable``, which names each socket's
      owning process, readable without privileges) gives the peer's pid; that process's user
      must be ours.
    - macOS (and any other system): the system-wide table needs root there, so the processes
      of this user are asked for their own sockets (libproc), those that connected lately
      first; a socket not found among them belongs to someone else.
    """

    def __init__(self, platform: str = sys.platform) -> None:
        import psutil  # noqa: PLC0415 - only where /proc is missing

        self._psutil = psutil
        self._by_table = platform == "win32"
        self._recent: list[int] = []
        try:
            self._me: str | None = psutil.Process().username()
        except psutil.Error:
            self._me = None

    def owner(self, peer: Address, local: Address, *, want_pid: bool = False) -> Peer:
        if self._me is None:
            return NOBODY
        if self._by_table:
            return self._from_table(peer, local)
        return self._from_processes(peer, local)

    def _from_table(self, peer: Address, local: Address) -> Peer:
        psutil = self._psutil
        try:
            table = psutil.net_connections(kind="tcp")
        except (psutil.Error, OSError):
            return NOBODY
        for conn in table:
            if conn.pid and _same(conn.laddr, peer) and _same(conn.raddr, local):
                try:
                    user = psutil.Process(conn.pid).username()
                except psutil.Error:
                    return NOBODY  # gone, or not ours to ask about
                return Peer(same_user=user == self._me, pid=conn.pid)
        return NOBODY

    def _from_processes(self, peer: Address, local: Address) -> Peer:
        psutil = self._psutil
        for pid in list(self._recent):
            try:
                if self._holds(psutil.Process(pid), peer, local):
                    return Peer(same_user=True, pid=pid)
            except (psutil.Error, OSError):
                self._recent.remove(pid)
        for proc in psutil.process_iter(["username"]):
            try:
                if proc.pid in self._recent or proc.info.get("username") != self._me:
                    continue
                if self._holds(proc, peer, local):
                    self._recent = [proc.pid, *self._recent][:RECENT_PIDS]
                    return Peer(same_user=True, pid=proc.pid)
            except (psutil.Error, OSError):
                continue
        return NOBODY

    def _holds(self, proc: Any, peer: Address, local: Address) -> bool:
        """Whether ``proc`` (one of ours) holds the socket at ``peer`` connected to ``local``."""
        if proc.username() != self._me:
            return False
        return any(
            _same(conn.laddr, peer) and _same(conn.raddr, local)
            for conn in proc.net_connections(kind="tcp")
        )

    def close(self) -> None:
        pass


def _same(address: object, wanted: Address) -> bool:
    if not address:
        return False
    try:
        host, port = address[0], address[1]  # type: ignore[index]
    except (TypeError, IndexError):
        return False
    return int(port) == wanted[1] and _plain(str(host)) == _plain(wanted[0])


def _plain(host: str) -> str:
    return host.removeprefix("::ffff:")


# -- the fake ------------------------------------------------------------------------------------


class FakePeers:
    """For unit tests: owners by the peer's port (anyone else: nobody)."""

    def __init__(self, owners: dict[int, Peer] | None = None) -> None:
        self.owners = dict(owners or {})
        self.asked: list[Address] = []

    def owner(self, peer: Address, local: Address, *, want_pid: bool = False) -> Peer:
        self.asked.append(peer)
        return self.owners.get(peer[1], NOBODY)

    def close(self) -> None:
        pass


def for_platform() -> PeerOwners:
    """The real check for this system."""
    if sys.platform.startswith("linux") and os.path.exists("/proc/net/tcp"):
        return ProcNetPeers()
    return PsutilPeers()
