"""The near side of one remote: spawns its channel, reads its frames, keeps its sessions and
its status, and reconnects with backoff (one thread per remote, ``agentbar-remote-NAME``;
``call`` from any thread).

A remote's sessions are mirrored with ``SessionKey(agent, id, host=NAME)``. A change is
reported once: the far side's changes are compared with what was last shown, and after a
reconnect the fresh list is compared with what was shown before the link dropped, so only
what really changed meanwhile is reported (never a transition twice).

Its usage windows are kept as the far side last sent them (still shown, as last known, while
it is unreachable: an account's windows go on whether or not the link is up); its first
reading's progress is part of its status while connected, and goes with the connection; so
do the tasks its agentbar runs (as last sent: a host down lists none, none shown stale as live).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import IO, Any, Protocol

from ..errors import AgentbarError
from ..limits import LimitWindow
from ..model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
    StateChange,
    WaitingFor,
)
from . import frames
from .frames import PROTOCOL, Closed, FrameError, Writer
from .gauges import heard_from_wire, limits_from_wire, progress_from_wire
from .host_tasks import HostTask, tasks_from_wire
from .hosts import HostState, HostStatus
from .remotes import Remote
from .wire import WireError, snapshot_from_wire

log = logging.getLogger(__name__)

FIRST_BACKOFF = 1.0
MAX_BACKOFF = 60.0
HELLO_SECONDS = 20.0  # ssh's own connect timeout is shorter; a hello later than this is a hang
CALL_SECONDS = 30.0
SSH_OPTIONS = (("BatchMode", "yes"), ("ServerAliveInterval", "15"), ("ServerAliveCountMax", "3"))
INSTALL_HINT = "pipx install agentbar (or python3 -m pip install --user agentbar)"
UPGRADE_HINT = "pipx upgrade agentbar (or python3 -m pip install --user -U agentbar)"
NOT_FOUND = 127  # the shell's "command not found"


class RemoteError(AgentbarError):
    """A call through a channel failed: the host is not connected, the far side refused."""

    title = "The remote host cannot answer"

    def __init__(self, message: str, kind: str = "failed") -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def older_far_side(self) -> bool:
        """The far side has no such call: an older agentbar (one from before unknown calls had
        their own kind called them not found)."""
        return self.kind == "unsupported" or (
            self.kind == "not_found" and str(self).startswith("unknown call ")
        )


def refused_there(host: str, exc: RemoteError, cannot: str) -> str:
    """What a call's error says, an older far side told what to do (``cannot``: what it
    cannot do, as in "cannot report its usage")."""
    if exc.older_far_side:
        return (f"the agentbar on {host} is older than this one and {cannot}: "
                f"upgrade agentbar there ({UPGRADE_HINT})")  # fmt: skip
    return f"{host}: {exc}"


def channel_argv(remote: Remote) -> list[str]:
    """The command that runs the far side: the person's command, ``agentbar channel`` at its
    end; for ssh, options that make a password prompt an error and a dead link noticed, unless
    the person's command sets them."""
    command = list(remote.command)
    if _is_ssh(command[0]):
        said = " ".join(command).lower()
        extra = [f"-o{key}={value}" for key, value in SSH_OPTIONS if key.lower() not in said]
        command[1:1] = extra
    return [*command, remote.program, "channel"]


def _is_ssh(program: str) -> bool:
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name in ("ssh", "ssh.exe")


def why_not(code: int | None, errors: str, remote: Remote) -> str:
    """What a channel that ended before its hello means, in one line."""
    text = errors.lower()
    if "permission denied" in text or "password" in text or "passphrase" in text:
        return "asks for a password (set up key login: ssh-copy-id, or an ssh agent)"
    if "host key verification failed" in text:
        return "its host key is not known yet (connect once with ssh to accept it)"
    if (
        code == NOT_FOUND
        or "command not found" in text
        or ("not found" in text and remote.program in errors)
    ):
        return (f"agentbar is not installed on {remote.name}: install it there with: "
                f"{INSTALL_HINT}")  # fmt: skip
    if any(w in text for w in ("could not resolve", "connection refused", "no route", "timed out",
                               "connection closed", "network is unreachable")):  # fmt: skip
        last = errors.strip().splitlines()[-1] if errors.strip() else ""
        return f"host down ({last.strip()[:120]})"
    last = errors.strip().splitlines()[-1].strip()[:160] if errors.strip() else ""
    return f"the channel ended (exit {code}){': ' + last if last else ''}"


class Listener(Protocol):
    """What a link tells (on its thread: return quickly)."""

    def changed(self, change: StateChange) -> None: ...

    def status(self, status: HostStatus) -> None:
        """The host's status changed (its state, its progress), or its usage windows or its
        running tasks did."""

    def decisions(self, host: str, requests: list[dict[str, Any]]) -> None: ...

    def decision(self, host: str, frame: dict[str, Any]) -> None: ...


@dataclass
class _Call:
    done: threading.Event
    result: Any = None
    error: dict[str, Any] | None = None
    chunks: list[str] | None = None
    more: threading.Condition | None = None


Spawn = Callable[[list[str]], subprocess.Popen[bytes]]


def spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    """The channel's process: its input a pipe (never the terminal), errors kept for saying
    why it ended, in a session of its own (a terminal's signals are not its business)."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


class Link:
    def __init__(
        self,
        remote: Remote,
        listener: Listener,
        *,
        spawner: Spawn = spawn,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.remote = remote
        self.name = remote.name
        self._listener = listener
        self._spawn = spawner
        self._clock = clock
        self._lock = threading.Lock()
        self._shown: dict[SessionKey, SessionSnapshot] = {}
        # What was last told (listed or reported as a change) of each session: a change
        # frame is reported unless it tells the same again.
        self._told: dict[SessionKey, tuple[str, str | None, str, float]] = {}
        self._limits: tuple[LimitWindow, ...] = ()  # as the far side last sent them
        self._tasks: tuple[HostTask, ...] = ()  # as this connection's far side last sent them
        self._listed_once = False
        self._lost_at: float | None = None
        self._status = HostStatus(name=remote.name, state=HostState.CONNECTING, since=clock())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._writer: Writer | None = None
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count(1)
        self._seq = 0
        self.hello: dict[str, Any] = {}
        self.bytes_read = 0

    # -- values (any thread) -----------------------------------------------------------------

    def sessions(self) -> list[SessionSnapshot]:
        with self._lock:
            return list(self._shown.values())

    def status(self) -> HostStatus:
        with self._lock:
            return self._status

    def limits(self) -> tuple[LimitWindow, ...]:
        """The far side's usage windows as last sent (``host`` its name); none from a far side
        that does not send them."""
        with self._lock:
            return self._limits

    def tasks(self) -> tuple[HostTask, ...]:
        """The tasks the far side runs, as last sent while connected; none while it is not
        (or from a far side that does not send them)."""
        with self._lock:
            connected = self._status.state is HostState.CONNECTED
            return self._tasks if connected else ()

    @property
    def connected(self) -> bool:
        return self.status().state is HostState.CONNECTED

    # -- running -----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"agentbar-remote-{self.name}",
                                        daemon=True)  # fmt: skip
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._end_process()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        backoff = FIRST_BACKOFF
        while not self._stop.is_set():
            started = self._clock()
            try:
                detail = self._connect_once()
            except Exception as exc:  # never the end of the link: it says so and tries again
                log.exception("remote %s: the link failed", self.name)
                detail = f"the link failed ({type(exc).__name__})"
            if self._stop.is_set():
                break
            if self._clock() - started > MAX_BACKOFF:  # it had been up a while: try again soon
                backoff = FIRST_BACKOFF
            self._set_status(HostState.UNREACHABLE, detail)
            # Unreachable it stays, since it became so, while it is tried again.
            self._stop.wait(backoff * random.uniform(0.8, 1.2))
            backoff = min(backoff * 2, MAX_BACKOFF)

    def _connect_once(self) -> str:
        """One life of the channel; what ended it, in the person's words."""
        try:
            process = self._spawn(channel_argv(self.remote))
        except OSError as exc:
            return f"cannot run {self.remote.command[0]}: {exc.strerror or exc}"
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        errors = _ErrorTail(process.stderr)
        late = threading.Event()  # set when the hello did not come in time

        def give_up() -> None:
            late.set()
            _kill(process)

        timer = threading.Timer(HELLO_SECONDS, give_up)
        timer.start()
        try:
            try:
                hello, _banner = frames.read_hello(process.stdout)
            finally:
                timer.cancel()
            problem = self._check_hello(hello)
            if problem:
                return problem
            self.hello = hello
            self._writer = Writer(process.stdin)
            self._read(process.stdout)
            return "connection dropped"
        except Closed:
            code = _wait(process)
            errors.join()
            if late.is_set():
                return f"timed out (no answer in {HELLO_SECONDS:.0f} s)"
            if self.status().state is HostState.CONNECTED:
                return "connection dropped" + (f" (exit {code})" if code else "")
            return why_not(code, errors.text(), self.remote)
        except FrameError as exc:
            return f"the far side is not a matching agentbar ({exc})"
        finally:
            self._lost()
            self._end_process()

    def _check_hello(self, hello: dict[str, Any]) -> str:
        if hello.get("protocol") != PROTOCOL:
            return (f"the far side speaks protocol {hello.get('protocol')}, this agentbar "
                    f"{PROTOCOL}: install the same version on both")  # fmt: skip
        return ""

    def _end_process(self) -> None:
        process, self._process = self._process, None
        self._writer = None
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()  # the far side ends when its input closes
        try:
            process.wait(3.0)
        except subprocess.TimeoutExpired:
            _kill(process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(3.0)

    def _lost(self) -> None:
        """The channel ended: its calls fail, its sessions stay shown as last seen, its tasks
        are no longer known (the next far process tells them anew)."""
        with self._lock:
            calls, self._calls = self._calls, {}
            self._tasks = ()
            if self._status.state is HostState.CONNECTED:
                self._lost_at = self._clock()
        for call in calls.values():
            call.error = {"kind": "unreachable", "message": f"{self.name} is unreachable"}
            call.done.set()
            if call.more is not None:
                with call.more:
                    call.more.notify_all()

    def _set_status(self, state: HostState, detail: str = "") -> None:
        with self._lock:
            old = self._status
            if old.state is state and old.detail == detail:
                return
            since = old.since if old.state is state else self._clock()
            # The progress of the far side's reading is that process's: gone with it.
            progress = old.progress if state is HostState.CONNECTED else None
            self._status = HostStatus(name=self.name, state=state, since=since, detail=detail,
                                      sessions=len(self._shown), progress=progress,
                                      heard=old.heard)  # fmt: skip
            status = self._status
        if state is HostState.UNREACHABLE:
            log.info("remote %s unreachable: %s", self.name, detail)
        self._listener.status(status)

    # -- frames (the link's thread) ----------------------------------------------------------

    def _read(self, stream: IO[bytes]) -> None:
        pending: list[SessionSnapshot] = []
        while not self._stop.is_set():
            line = frames.read_line(stream)
            self.bytes_read += len(line) + 1
            frame = frames.decode(line)
            kind = frame.get("t")
            try:
                if kind == "sessions":
                    pending += self._snapshots(frame.get("sessions"))
                    if frame.get("last"):
                        self._seq = int(frame.get("seq") or 0)
                        self._take_list(pending)
                        pending = []
                        self._listener.decisions(self.name, list(frame.get("decisions") or []))
                        self._set_status(HostState.CONNECTED)
                elif kind in ("change", "update", "gone"):
                    self._take_numbered(frame)
                elif kind == "decision":
                    self._listener.decision(self.name, frame)
                elif kind == "limits":
                    self._take_limits(limits_from_wire(frame.get("limits"), self.name),
                                      heard_from_wire(frame.get("heard")))  # fmt: skip
                elif kind == "progress":
                    self._take_progress(frame.get("progress"))
                elif kind == "tasks":
                    self._take_tasks(tasks_from_wire(frame.get("tasks"), self.name))
                elif kind in ("reply", "chunk"):
                    self._take_reply(frame)
            except (WireError, ValueError, TypeError, KeyError) as exc:  # one frame: skipped
                log.warning("remote %s: a %s frame that does not read: %s", self.name, kind, exc)

    def _take_limits(self, windows: tuple[LimitWindow, ...], heard: frozenset[str] | None) -> None:
        with self._lock:
            changed = windows != self._limits or heard != self._status.heard
            self._limits = windows
            # The host's notes' makings: kept while it is away, as its windows are.
            self._status = replace(self._status, heard=heard)
            status = self._status
        if changed and status.state is HostState.CONNECTED:  # (else: told once it is)
            self._listener.status(status)

    def _take_tasks(self, tasks: tuple[HostTask, ...]) -> None:
        with self._lock:
            changed = tasks != self._tasks
            self._tasks = tasks
            status = self._status
        if changed and status.state is HostState.CONNECTED:  # (else: told once it is)
            self._listener.status(status)

    def _take_progress(self, doc: object) -> None:
        progress = progress_from_wire(doc)
        with self._lock:
            old = self._status
            if old.progress == progress:
                return
            self._status = replace(old, progress=progress)
            status = self._status
        if status.state is HostState.CONNECTED:
            self._listener.status(status)

    def _snapshots(self, docs: object) -> list[SessionSnapshot]:
        if not isinstance(docs, list):
            raise WireError("sessions is a list")
        found = []
        for doc in docs:
            try:
                found.append(snapshot_from_wire(doc, self.name))
            except WireError as exc:  # one bad session: the others are still shown
                log.warning("remote %s: %s", self.name, exc)
        return found

    def _take_list(self, fresh: list[SessionSnapshot]) -> None:
        """A full list: the first one is shown as it is (like the engine's own first reading);
        a later one (after a reconnect) reports only what changed since last shown."""
        reports: list[StateChange] = []
        now = self._clock()
        with self._lock:
            first = not self._listed_once
            self._listed_once = True
            lost_at = self._lost_at
            old = self._shown
            self._shown = {s.key: s for s in fresh}
            self._told = {s.key: _told(s) for s in fresh}
        if first:
            return
        for snap in fresh:
            was = old.get(snap.key)
            if was is None:
                began_meanwhile = lost_at is not None and snap.state_since >= lost_at
                if began_meanwhile and snap.state.state is not State.ENDED:
                    reports.append(StateChange(ts=now, snapshot=snap, prev=None))
            elif not snap.state.same_transition(was.state):
                reports.append(StateChange(ts=now, snapshot=snap, prev=was.state))
        for change in reports:
            self._listener.changed(change)

    def _take_numbered(self, frame: dict[str, Any]) -> None:
        seq = frame.get("seq")
        if isinstance(seq, int) and seq != self._seq + 1 and self._seq:
            log.warning("remote %s: frame %s after %s; asking for the list", self.name, seq,
                        self._seq)  # fmt: skip
            self.call_later("resync", {})
        if isinstance(seq, int):
            self._seq = seq
        if frame["t"] == "gone":
            key = SessionKey(Agent(str(frame.get("agent"))), str(frame.get("id")), self.name)
            with self._lock:
                self._shown.pop(key, None)
            return
        snap = snapshot_from_wire(frame.get("session"), self.name)
        with self._lock:
            was = self._shown.get(snap.key)
            self._shown[snap.key] = snap
            if frame["t"] != "change":
                return  # other fields: shown, never told (the far side sends moves as changes)
            told = self._told.get(snap.key)
            self._told[snap.key] = _told(snap)
        if told == _told(snap):
            return  # told already (sent again after a reconnect)
        # The far side's own previous state; ours when it sent none.
        prev = _prev(frame.get("prev")) or (was.state if was is not None else None)
        ts = frame.get("ts")
        when = float(ts) if isinstance(ts, int | float) else self._clock()
        self._listener.changed(StateChange(ts=when, snapshot=snap, prev=prev))

    # -- calls (any thread) ------------------------------------------------------------------

    def call(self, op: str, args: dict[str, Any], timeout: float = CALL_SECONDS) -> Any:
        """The far side's answer to one call; ``RemoteError`` when it cannot be had."""
        call_id, call = self._send_call(op, args)
        if not call.done.wait(timeout):
            with self._lock:
                self._calls.pop(call_id, None)
            raise RemoteError(f"{self.name} did not answer in {timeout:.0f} s", "timeout")
        if call.error is not None:
            raise RemoteError(str(call.error.get("message")), str(call.error.get("kind")))
        return call.result

    def call_later(self, op: str, args: dict[str, Any]) -> None:
        """A call whose answer nobody waits for (it is logged when it fails)."""
        with contextlib.suppress(RemoteError):
            self._send_call(op, args, keep=False)

    def stream(
        self, op: str, args: dict[str, Any], timeout: float | None = CALL_SECONDS
    ) -> Generator[str, None, Any]:
        """The chunks of a call that answers in parts (an export, an attached terminal: no
        ``timeout``), as they come; it returns the call's closing answer (an attached
        terminal's: the task as it ended)."""
        call_id, call = self._send_call(op, args, chunks=True)
        assert call.chunks is not None and call.more is not None
        try:
            while True:
                with call.more:
                    idle = not call.chunks and not call.done.is_set()
                    if idle and not call.more.wait(timeout) and not call.chunks:
                        raise RemoteError(f"{self.name} did not answer in time", "timeout")
                    taken, call.chunks[:] = list(call.chunks), []
                yield from taken
                if call.done.is_set() and not call.chunks:
                    if call.error is not None:
                        raise RemoteError(str(call.error.get("message")),
                                          str(call.error.get("kind")))  # fmt: skip
                    return call.result
        finally:
            with self._lock:
                self._calls.pop(call_id, None)

    def _send_call(
        self, op: str, args: dict[str, Any], *, chunks: bool = False, keep: bool = True
    ) -> tuple[int, _Call]:
        writer = self._writer
        if writer is None or not self.connected:
            raise RemoteError(f"{self.name} is {self.status().state}", "unreachable")
        call_id = next(self._ids)
        call = _Call(threading.Event())
        if chunks:
            call.chunks, call.more = [], threading.Condition()
        if keep:
            with self._lock:
                self._calls[call_id] = call
        try:
            writer.send({"t": "call", "id": call_id, "op": op, "args": args})
        except (Closed, FrameError) as exc:
            with self._lock:
                self._calls.pop(call_id, None)
            raise RemoteError(f"{self.name}: {exc}", "unreachable") from None
        return call_id, call

    def _take_reply(self, frame: dict[str, Any]) -> None:
        call_id = frame.get("id")
        with self._lock:
            if not isinstance(call_id, int):
                call = None
            elif frame["t"] == "reply":
                call = self._calls.pop(call_id, None)
            else:
                call = self._calls.get(call_id)
        if call is None:
            if frame["t"] == "reply" and "error" in frame:
                log.info("remote %s: call %s: %s", self.name, frame.get("id"), frame["error"])
            return
        if frame["t"] == "chunk":
            text = frame.get("text")
            if call.chunks is not None and call.more is not None and isinstance(text, str):
                with call.more:
                    call.chunks.append(text)
                    call.more.notify_all()
            return
        error = frame.get("error")
        call.error = error if isinstance(error, dict) else None
        call.result = frame.get("result")
        call.done.set()
        if call.more is not None:
            with call.more:
                call.more.notify_all()


def _told(snap: SessionSnapshot) -> tuple[str, str | None, str, float]:
    """What a change tells of a session: the same again is not told twice, a better detail
    of the same state (the tool named after "permission prompt") is, as the engine tells it."""
    state = snap.state
    waiting = None if state.waiting_for is None else str(state.waiting_for)
    return (str(state.state), waiting, state.detail, snap.state_since)


def _prev(raw: object) -> SessionState | None:
    if not isinstance(raw, list) or len(raw) != 4:
        return None
    state, detail, waiting, source = raw
    try:
        return SessionState(
            state=State(state),
            source=Source(source),
            detail=str(detail),
            waiting_for=None if waiting is None else WaitingFor(waiting),
        )
    except ValueError:
        return None


def _kill(process: subprocess.Popen[bytes]) -> None:
    """End the channel's command and what it started (its session's group: a shell's child
    would otherwise hold the pipe open)."""
    with contextlib.suppress(OSError):
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)


def _wait(process: subprocess.Popen[bytes]) -> int | None:
    try:
        return process.wait(5.0)
    except subprocess.TimeoutExpired:
        return None


class _ErrorTail:
    """The last few KB the channel's command wrote on stderr (read on a thread of its own, so
    a chatty ssh never blocks on a full pipe)."""

    MOST = 8192

    def __init__(self, stream: IO[bytes] | None) -> None:
        self._data = b""
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True,
                                        name="agentbar-remote-stderr")  # fmt: skip
        self._thread.start()

    def _drain(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
                self._data = (self._data + chunk)[-self.MOST :]
                if len(self._data) >= self.MOST:
                    log.debug("remote stderr: %s", chunk[-200:])

    def join(self) -> None:
        self._thread.join(2.0)

    def text(self) -> str:
        return self._data.decode("utf-8", "replace")
