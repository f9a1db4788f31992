"""One launched agent: its PTY, the screen and scrollback of what it drew, who watches it, and
what it is bound to (its reader thread reads the PTY; any thread writes to it and reads its
state under its lock).

The reader thread is the only reader of the master. It waits on the master and, where there is
one, the process's pidfd, so an exit is seen at once; it feeds each chunk to the scrollback
(what a newly attached terminal is sent first), the screen (``screen.py``), the ``/status``
scraper's buffer and every attached listener, then re-reads the screen for a dialog (an approval
prompt or a question, as the agent's launch profile reads them) at most every
``PROMPT_CHECK_SECONDS`` (and once the output pauses). A task taken back from the keeper feeds
the scrollback it was handed to the screen first, so a dialog already up is seen at once. When
the program has exited it drains what is left, reaps it (``terminal.poll_exit``) and closes
the master.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from ..model import Agent, iso
from .prompts import DialogReader, Prompt, PromptKind, read_dialog
from .request import LaunchRequest, Mode
from .screen import Screen
from .terminal import KILL_SIGNAL, Exit, Terminal

log = logging.getLogger(__name__)

READ_BYTES = 64 * 1024
SCROLLBACK_BYTES = 2 * 1024 * 1024  # raw output kept for a terminal that attaches later
SCRAPE_BYTES = 64 * 1024  # output kept for the /status scraper since its last send
PROMPT_CHECK_SECONDS = 0.05
PROMPT_GONE_SECONDS = 0.25  # a prompt counts as gone once it stayed off the screen this long
IDLE_WAIT_SECONDS = 0.5  # the reader's wait without output (no pidfd: how often exit is polled)
DRAIN_SECONDS = 0.2  # after the exit, output still arriving (a child holding the PTY) this long
MIN_SIZE, MAX_SIZE = 2, 1000
PROMPT_TEXT_CHARS = 200


class Status(StrEnum):
    RUNNING = "running"
    STOPPING = "stopping"  # asked to stop; not gone yet
    EXITED = "exited"
    DETACHED = "detached"  # handed to the keeper: it runs on without agentbar


class BindPath(StrEnum):
    """How a task learnt its session id (``binding.py``), fastest first."""

    RESUME = "resume"  # resumed by id: the id is known from the start
    SESSION_ID = "session-id"  # we gave it the id (``claude --session-id``)
    HOOK = "hook"  # agentbar's SessionStart hook, from the per-launch layer
    REGISTRY = "registry"  # Claude's ``sessions/<pid>.json`` of our child
    PROCESS = "process"  # the engine matched our child's process to a session it found
    STATUS = "status"  # ``/status`` typed into our own PTY and read back


@dataclass(frozen=True, slots=True)
class Binding:
    session_id: str
    path: BindPath
    seconds: float  # from the launch to knowing it
    confirmed: bool  # the agent has shown it uses this id (always, except a pre-assigned one)
    confirmed_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "path": str(self.path),
            "seconds": round(self.seconds, 4),
            "confirmed": self.confirmed,
            "confirmed_seconds": None
            if self.confirmed_seconds is None
            else round(self.confirmed_seconds, 4),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskInfo:
    """A task at one moment: a row of ``agentbar tasks``."""

    task_id: str
    agent: Agent
    project: str
    mode: Mode
    source: str | None
    prompt: str | None
    pid: int
    create_time: float
    started_at: float
    status: Status
    exit: Exit | None
    ended_at: float | None
    binding: Binding | None
    waiting: Prompt | None  # an approval prompt on its screen now
    rows: int
    cols: int
    clients: int
    adopted: bool
    asking: Prompt | None = None  # a question dialog on its screen now

    @property
    def session_id(self) -> str | None:
        return None if self.binding is None else self.binding.session_id

    @property
    def alive(self) -> bool:
        return self.status in (Status.RUNNING, Status.STOPPING)

    def to_json(self) -> dict[str, Any]:
        prompt = self.prompt
        if prompt is not None and len(prompt) > PROMPT_TEXT_CHARS:
            prompt = prompt[: PROMPT_TEXT_CHARS - 1] + "…"
        return {
            "task_id": self.task_id,
            "agent": str(self.agent),
            "project": self.project,
            "mode": str(self.mode),
            "source": self.source,
            "prompt": prompt,
            "pid": self.pid,
            "started_at": iso(self.started_at),
            "status": str(self.status),
            "exit": None if self.exit is None else self.exit.to_json(),
            "ended_at": iso(self.ended_at),
            "session_id": self.session_id,
            "binding": None if self.binding is None else self.binding.to_json(),
            "waiting": None
            if self.waiting is None
            else {"for": "approval", "question": self.waiting.question},
            "asking": None
            if self.asking is None
            else {"question": self.asking.question, "options": list(self.asking.options)},
            "size": {"rows": self.rows, "cols": self.cols},
            "clients": self.clients,
            "adopted": self.adopted,
        }


Listener = Callable[[bytes], None]


@dataclass(eq=False)
class _Scrape:
    """The output since ``/status`` was last typed (for the scraper), and the typing times."""

    buffer: bytearray = field(default_factory=bytearray)
    sends: int = 0
    last_send_at: float | None = None


class Task:
    def __init__(
        self,
        task_id: str,
        request: LaunchRequest,
        terminal: Terminal,
        *,
        rows: int,
        cols: int,
        on_change: Callable[[Task], None],
        on_prompt: Callable[[Task, Prompt | None], None],
        dialogs: DialogReader,
        started_at: float | None = None,
        started_mono: float | None = None,
        adopted: bool = False,
        scrollback: bytes = b"",
        expects_hook: bool = False,
    ) -> None:
        self.task_id = task_id
        self.request = request
        self.terminal = terminal
        self.lock = threading.RLock()
        self.exited = threading.Event()
        self.started_at = time.time() if started_at is None else started_at
        self.started_mono = time.monotonic() if started_mono is None else started_mono
        self.adopted = adopted
        self.expects_hook = expects_hook  # agentbar's hooks run in it (its SessionStart binds it)
        self._on_change = on_change
        self._on_prompt = on_prompt
        self._dialogs = dialogs
        self._rows, self._cols = rows, cols
        self._replaying = False  # the screen is fed old output: it answers no query in it
        self._screen = Screen(rows, cols, answer=self._answer_query)
        self._scrollback = bytearray()
        self._listeners: list[Listener] = []
        self._status = Status.RUNNING
        self._exit: Exit | None = None
        self._ended_at: float | None = None
        self._binding: Binding | None = None
        self._prompt: Prompt | None = None
        self._prompt_since: float | None = None  # monotonic: when the current prompt appeared
        self._prompt_checked = 0.0
        self._gone_since: float | None = None  # monotonic: the prompt vanished from the screen
        self._unchecked = False  # output arrived since the screen was last read for a prompt
        self.first_output_at: float | None = None  # monotonic
        self.last_input_at: float | None = None  # monotonic: someone typed into it
        self.scrape = _Scrape()
        self._thread: threading.Thread | None = None
        # Wakes the reader out of its wait when it must let go of the PTY (detach).
        self._wake_r, self._wake_w = os.pipe() if terminal.fileno() >= 0 else (-1, -1)
        if scrollback:
            self._record(scrollback)
            # What the agent drew before it was taken back: a dialog already up is on the
            # screen from the start, as its own terminal shows it.
            # Queries in it were answered long ago: the program must not get the answers again.
            self._replaying = True
            self._screen.feed(scrollback)
            self._replaying = False
            self._prompt = read_dialog(dialogs, self._screen.lines())
            self._prompt_since = None if self._prompt is None else time.monotonic()

    # -- reading (the reader thread) -----------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"agentbar-task-{self.task_id}", daemon=True
        )
        self._thread.start()

    def join(self, timeout: float) -> None:
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            self._follow()
        except Exception:
            log.exception("task %s: the reader failed", self.task_id)
        finally:
            self._finish()

    def _follow(self) -> None:
        term = self.terminal
        master, exit_fd = term.fileno(), term.exit_fd()
        waits = [fd for fd in (master, exit_fd, self._wake_r) if fd >= 0]
        eof = False
        while True:
            if not waits:  # no descriptors (Windows): a blocking read is all there is
                try:
                    self._output(term.read(READ_BYTES))
                except (EOFError, OSError):
                    return
                continue
            # Idle, with a pidfd to wake it on exit: no timeout at all (no wake-ups).
            idle = None if exit_fd >= 0 else IDLE_WAIT_SECONDS
            timeout = PROMPT_CHECK_SECONDS if self._unchecked else idle
            try:
                ready, _, _ = select.select(waits, [], [], timeout)
            except (OSError, ValueError):
                return
            if self._wake_r in ready:
                return  # detached: the keeper reads it from now on
            if master in ready:
                try:
                    self._output(term.read(READ_BYTES))
                except EOFError:
                    eof = True
                    waits = [fd for fd in waits if fd != master]
                except OSError:
                    return
            elif self._unchecked:
                self._check_prompt(force=True)  # the output paused: read the final screen
            if eof or exit_fd in ready or exit_fd < 0:
                if term.poll_exit() is not None:
                    if not eof:
                        self._drain(master)
                    return
                if eof and exit_fd < 0:
                    time.sleep(0.05)  # no pidfd, output ended: poll for the exit

    def _drain(self, master: int) -> None:
        """Read what the program wrote just before it exited (or what a child of it still
        writes, briefly)."""
        deadline = time.monotonic() + DRAIN_SECONDS
        while time.monotonic() < deadline:
            try:
                ready, _, _ = select.select([master], [], [], 0.02)
                if not ready:
                    return
                self._output(self.terminal.read(READ_BYTES))
            except (EOFError, OSError, ValueError):
                return

    def _output(self, data: bytes) -> None:
        now = time.monotonic()
        with self.lock:
            if self.first_output_at is None:
                self.first_output_at = now
            self._record(data)
            self._screen.feed(data)
            scrape = self.scrape.buffer
            scrape += data
            if len(scrape) > SCRAPE_BYTES:
                del scrape[: len(scrape) - SCRAPE_BYTES // 2]
            listeners = list(self._listeners)
            self._unchecked = True
        for listener in listeners:
            try:
                listener(data)
            except Exception:
                log.exception("task %s: a terminal listener failed", self.task_id)
        self._check_prompt(force=False)

    def _record(self, data: bytes) -> None:
        back = self._scrollback
        back += data
        if len(back) > SCROLLBACK_BYTES + SCROLLBACK_BYTES // 4:
            cut = len(back) - SCROLLBACK_BYTES
            newline = back.find(b"\n", cut, cut + 64 * 1024)
            del back[: newline + 1 if newline >= 0 else cut]

    def _check_prompt(self, *, force: bool) -> None:
        now = time.monotonic()
        with self.lock:
            if not force and now - self._prompt_checked < PROMPT_CHECK_SECONDS:
                return
            self._prompt_checked = now
            self._unchecked = False
            prompt = read_dialog(self._dialogs, self._screen.lines())
            if prompt is None and self._prompt is not None:
                # Gone, or only between two frames of a redraw: believe it once it stays gone.
                if self._gone_since is None:
                    self._gone_since = now
                if now - self._gone_since < PROMPT_GONE_SECONDS:
                    self._unchecked = True  # look again shortly
                    return
            self._gone_since = None
            if prompt == self._prompt:
                return
            appeared = (
                self._prompt is None
                or prompt is None
                or (prompt.rows, prompt.context) != (self._prompt.rows, self._prompt.context)
            )
            self._prompt = prompt
            if prompt is None:
                self._prompt_since = None
            elif appeared:
                self._prompt_since = now
        self._on_prompt(self, prompt)
        self._on_change(self)

    def _answer_query(self, answer: bytes) -> None:
        """The screen answers a query the program made (cursor position, attributes)."""
        if self._replaying:
            return
        with contextlib.suppress(OSError):
            self.terminal.write(answer)

    def _finish(self) -> None:
        with self.lock:
            for fd in (self._wake_r, self._wake_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._wake_r = self._wake_w = -1
            detached = self._status is Status.DETACHED
        if detached:
            self.terminal.close()  # our descriptors only: the keeper holds its own
            self.exited.set()
            return
        exit_status = self.terminal.poll_exit()
        with self.lock:
            self._status = Status.EXITED
            self._exit = exit_status or Exit()
            self._ended_at = time.time()
            self._prompt = None
            self._prompt_since = None
        if exit_status is None:
            # The reader stopped while the program still runs (its master was closed): it
            # got SIGHUP; make sure it goes and is reaped.
            self._reap_after_hangup()
        self.terminal.close()
        self.exited.set()
        self._on_prompt(self, None)
        self._on_change(self)

    def _reap_after_hangup(self) -> None:
        deadline = time.monotonic() + 2.0
        while self.terminal.poll_exit() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if self.terminal.poll_exit() is None:
            self.terminal.send_signal(KILL_SIGNAL)
            while self.terminal.poll_exit() is None and time.monotonic() < deadline + 2.0:
                time.sleep(0.02)
        with self.lock:
            self._exit = self.terminal.poll_exit() or Exit()

    # -- driving (any thread) ------------------------------------------------------------------

    def write(self, data: bytes, *, person: bool = True) -> None:
        """Type ``data`` into the task. ``person``: a person typed it (the /status scraper then
        keeps out of the way for a while)."""
        with self.lock:
            if self._status not in (Status.RUNNING, Status.STOPPING):
                raise ProcessLookupError(f"task {self.task_id} is not running")
            if person:
                self.last_input_at = time.monotonic()
        self.terminal.write(data)

    @property
    def size(self) -> tuple[int, int]:
        """Its screen's rows and columns, as last sized."""
        return self._rows, self._cols

    def resize(self, rows: int, cols: int) -> None:
        rows = min(max(rows, MIN_SIZE), MAX_SIZE)
        cols = min(max(cols, MIN_SIZE), MAX_SIZE)
        with self.lock:
            if (rows, cols) == (self._rows, self._cols):
                return
            self._rows, self._cols = rows, cols
            self._screen.resize(rows, cols)
            if self._status in (Status.RUNNING, Status.STOPPING):
                self.terminal.resize(rows, cols)  # the program gets SIGWINCH and redraws
        self._on_change(self)

    def attach(self, listener: Listener) -> tuple[bytes, Callable[[], None]]:
        """The scrollback so far and, from then on, every chunk (``listener`` runs on the
        reader thread: it must hand the bytes on and return). Returns the scrollback and the
        function that detaches the listener."""
        with self.lock:
            self._listeners.append(listener)
            backlog = bytes(self._scrollback)

        def detach() -> None:
            with self.lock, contextlib.suppress(ValueError):
                self._listeners.remove(listener)
            self._on_change(self)

        self._on_change(self)
        return backlog, detach

    def screen_text(self) -> str:
        with self.lock:
            return self._screen.text()

    def bracketed_paste(self) -> bool:
        with self.lock:
            return self._screen.bracketed_paste

    def prompt(self) -> tuple[Prompt | None, float | None]:
        """The dialog (approval prompt or question) on screen now and since when (monotonic)."""
        with self.lock:
            return self._prompt, self._prompt_since

    def refresh_prompt(self) -> Prompt | None:
        self._check_prompt(force=True)
        return self.prompt()[0]

    def scrollback(self) -> bytes:
        with self.lock:
            return bytes(self._scrollback)

    # -- bookkeeping (the manager) -------------------------------------------------------------

    @property
    def binding(self) -> Binding | None:
        with self.lock:
            return self._binding

    def bind(self, binding: Binding) -> bool:
        """Record ``binding``; False when it changes nothing."""
        with self.lock:
            if self._binding == binding:
                return False
            self._binding = binding
        self._on_change(self)
        return True

    def confirm(self, seconds: float) -> None:
        with self.lock:
            if self._binding is None or self._binding.confirmed:
                return
            self._binding = replace(self._binding, confirmed=True, confirmed_seconds=seconds)
        self._on_change(self)

    @property
    def status(self) -> Status:
        with self.lock:
            return self._status

    def mark_stopping(self) -> None:
        with self.lock:
            if self._status is Status.RUNNING:
                self._status = Status.STOPPING
        self._on_change(self)

    def mark_detached(self) -> int:
        """Hand the PTY over: the master's duplicate for the keeper. The reader stops."""
        with self.lock:
            self._status = Status.DETACHED
            fd = self.terminal.detach()
            if self._wake_w >= 0:
                with contextlib.suppress(OSError):
                    os.write(self._wake_w, b"x")
        self.join(2.0)
        return fd

    def info(self) -> TaskInfo:
        with self.lock:
            return TaskInfo(
                task_id=self.task_id,
                agent=self.request.agent,
                project=self.request.project,
                mode=self.request.mode,
                source=self.request.source,
                prompt=self.request.prompt,
                pid=self.terminal.pid,
                create_time=self.terminal.create_time,
                started_at=self.started_at,
                status=self._status,
                exit=self._exit,
                ended_at=self._ended_at,
                binding=self._binding,
                waiting=self._prompt if _is(self._prompt, PromptKind.APPROVAL) else None,
                asking=self._prompt if _is(self._prompt, PromptKind.QUESTION) else None,
                rows=self._rows,
                cols=self._cols,
                clients=len(self._listeners),
                adopted=self.adopted,
            )

    def since_start(self) -> float:
        return time.monotonic() - self.started_mono


def _is(prompt: Prompt | None, kind: PromptKind) -> bool:
    return prompt is not None and prompt.kind is kind


def new_task_id() -> str:
    return os.urandom(4).hex()
