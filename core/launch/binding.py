"""Which session a launched task runs: bind each task to its session id, fastest way first (the
binder thread; the manager adds and removes tasks from any thread).

In the order Nezha uses, each tried on every poll until one answers:

1. ``resume``: a resumed session keeps its id, known before the start.
2. ``session-id``: we gave a new Claude session its id (``commands.preassigned_id``); the task
   is bound from the start and *confirmed* once the agent shows it uses it (any of the paths
   below naming the same id). Should one of them name another id, that one wins.
3. ``hook``: agentbar's SessionStart hook from the per-launch layer appends a line to
   ``<data>/events/<agent>/<session id>.jsonl`` naming the agent's pid. Only lines written
   after the launch count (the folder's sizes are taken before the spawn), and only from our
   child or a direct child of it (``node codex.js`` runs the native Codex as its child).
4. ``registry``: Claude's ``sessions/<pid>.json`` for our child's pid.
5. ``process``: the engine matched our child's process to a session it found on disk.
6. ``status``: ``/status`` typed into our own PTY (never anyone else's) once the others had
   their chance, the answer read off the output (``status_scrape.py``), a few tries at most.

Once bound, a task is still looked at now and then: Claude's ``/clear`` starts a new session in
the same process, which its SessionStart (source ``clear``) and its registry both tell.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import psutil

from ..agents.base import LaunchProfile
from ..model import Agent, SessionSnapshot
from ..sources.base import is_uuid
from . import status_scrape
from .request import Mode
from .task import Binding, BindPath, Status, Task

log = logging.getLogger(__name__)

POLL_SECONDS = 0.02  # while some task is unbound
EAGER_SECONDS = 60.0  # a task not bound by then is looked at every FOLLOW_SECONDS / 4 only
FOLLOW_SECONDS = 1.0  # once every task is bound
PIDS_SECONDS = 0.25  # how often a task's process family is re-read
TYPE_TO_ENTER_SECONDS = 0.3  # a TUI takes text and Enter in one read for a paste
CLOSE_PANEL_AFTER_SECONDS = 0.3
PROCESS_START_SLACK = 5.0
# The engine's match of a process to a session (by folder and start time) is the weakest of the
# fast ways: the hook and the registry get this long to speak first.
PROCESS_AFTER = 1.5
# A task whose agent runs agentbar's hooks is named by its SessionStart, which a busy machine
# delivers seconds late: the folder match waits longer for it.
PROCESS_AFTER_HOOKED = 5.0
MAX_EVENT_READ = 1 << 20
FOLLOWED_SOURCES = frozenset({"clear", "startup"})  # a new session in the same process


@dataclass(frozen=True, slots=True)
class Places:
    """Where the binder looks."""

    events_dirs: Mapping[Agent, Path]  # agentbar's hook events, per agent
    profiles: Mapping[Agent, LaunchProfile]  # how each agent is launched (its registry, /status)
    homes: Mapping[Agent, tuple[Path, ...]]  # each agent's folders (``Settings.homes``)
    sessions: Callable[[], list[SessionSnapshot]] | None = None  # the engine's, if one runs


def events_snapshot(folder: Path) -> dict[str, int]:
    """Each events file's size now (taken before a launch: what is there is not ours)."""
    sizes: dict[str, int] = {}
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".jsonl"):
                with contextlib.suppress(OSError):
                    sizes[entry.name] = entry.stat().st_size
    return sizes


@dataclass(eq=False)
class _Watch:
    task: Task
    offsets: dict[str, int]  # events files: bytes already read (or there before the launch)
    pids: frozenset[int] = frozenset()
    pids_at: float = 0.0
    bound_pid: int | None = None  # the process the binding came from (follow it exactly)
    followed_at: float = 0.0
    # /status typing: the text is typed, then Enter after a pause; Claude's panel is closed.
    enter_due: float | None = None
    close_due: float | None = None
    scraped: bool = False
    registry_sid: str | None = None
    hook_sids: list[tuple[str, int, str]] = field(default_factory=list)  # (sid, pid, source)


class Binder:
    def __init__(
        self,
        places: Places,
        on_bound: Callable[[Task, Binding], None],
        *,
        scrape: bool = True,
    ) -> None:
        self.places = places
        self._on_bound = on_bound
        self._scrape = scrape
        self._watches: dict[str, _Watch] = {}
        self._lock = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- control (any thread) ------------------------------------------------------------------

    def snapshot(self, agent: Agent) -> dict[str, int]:
        folder = self.places.events_dirs.get(agent)
        return {} if folder is None else events_snapshot(folder)

    def add(self, task: Task, offsets: dict[str, int], known: Binding | None = None) -> None:
        watch = _Watch(task=task, offsets=dict(offsets))
        if known is not None:
            task.bind(known)
            self._on_bound(task, known)
        with self._lock:
            self._watches[task.task_id] = watch
            self._lock.notify_all()

    def remove(self, task_id: str) -> None:
        with self._lock:
            self._watches.pop(task_id, None)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agentbar-binder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(2.0)

    # -- the binder thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopping and not self._watches:
                    self._lock.wait()
                if self._stopping:
                    return
                watches = list(self._watches.values())
            unbound = False
            for watch in watches:
                try:
                    self.poll(watch)
                except Exception:
                    log.exception("binding task %s failed; trying again", watch.task.task_id)
                binding = watch.task.binding
                eager = watch.task.since_start() < EAGER_SECONDS  # then only now and then
                unbound = unbound or (eager and (binding is None or not binding.confirmed))
                unbound = unbound or watch.enter_due is not None or watch.close_due is not None
            with self._lock:
                if not self._stopping:
                    self._lock.wait(POLL_SECONDS if unbound else FOLLOW_SECONDS / 4)

    def poll(self, watch: _Watch) -> None:
        """Look once, every way still worth trying, for this task's session."""
        task = watch.task
        if task.status not in (Status.RUNNING, Status.STOPPING):
            self.remove(task.task_id)
            return
        now = time.monotonic()
        self._type_status(watch, now)
        binding = task.binding
        if binding is not None and binding.confirmed:
            if now - watch.followed_at >= FOLLOW_SECONDS:
                watch.followed_at = now
                self._follow(watch)
            return
        pids = self._pids(watch, now)
        agent = task.request.agent
        found = self._from_hooks(watch, pids) or self._from_registry(watch, pids)
        if found is not None:
            self._settle(watch, *found)
            return
        after = PROCESS_AFTER_HOOKED if task.expects_hook else PROCESS_AFTER
        engine_sid = self._from_engine(watch, pids) if task.since_start() >= after else None
        if engine_sid is not None:
            self._settle(watch, engine_sid, BindPath.PROCESS, None)
            return
        # A pre-assigned id needs no typing unless nothing has confirmed it by the time
        # /status would be typed (the plan's first delay: ample for any other path).
        if self._scrape:
            sid = self._from_status(watch, now)
            if sid is not None:
                self._settle(watch, sid, BindPath.STATUS, None)
                screen = self.places.profiles[agent].status
                if screen is not None and screen.close_after:
                    watch.close_due = time.monotonic() + CLOSE_PANEL_AFTER_SECONDS

    def _settle(self, watch: _Watch, sid: str, path: BindPath, pid: int | None) -> None:
        task = watch.task
        seconds = task.since_start()
        current = task.binding
        watch.bound_pid = pid if pid is not None else task.terminal.pid
        if current is not None and current.session_id == sid:
            task.confirm(seconds)
            return
        binding = Binding(session_id=sid, path=path, seconds=seconds, confirmed=True)
        if task.bind(binding):
            self._on_bound(task, binding)

    def _pids(self, watch: _Watch, now: float) -> frozenset[int]:
        if now - watch.pids_at < PIDS_SECONDS and watch.pids:
            return watch.pids
        pid = watch.task.terminal.pid
        family = {pid}
        with contextlib.suppress(psutil.Error, OSError):
            family |= {child.pid for child in psutil.Process(pid).children()}
        watch.pids, watch.pids_at = frozenset(family), now
        return watch.pids

    # -- 3. hooks ------------------------------------------------------------------------------

    def _from_hooks(self, watch: _Watch, pids: frozenset[int]) -> tuple[str, BindPath, int] | None:
        self._read_hooks(watch, pids)
        if not watch.hook_sids:
            return None
        sid, pid, _source = watch.hook_sids[0]  # the first session to speak is the task's own
        return sid, BindPath.HOOK, pid

    def _read_hooks(self, watch: _Watch, pids: frozenset[int]) -> None:
        folder = self.places.events_dirs.get(watch.task.request.agent)
        if folder is None:
            return
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            name = entry.name
            if not name.endswith(".jsonl"):
                continue
            try:
                size = entry.stat().st_size
            except OSError:
                continue
            start = watch.offsets.get(name, 0)
            if size <= start:
                if size < start:
                    watch.offsets[name] = size  # truncated: what comes is new
                continue
            data = _read_range(Path(entry.path), start, min(size, start + MAX_EVENT_READ))
            complete = data.rfind(b"\n") + 1
            watch.offsets[name] = start + complete
            sid = name[: -len(".jsonl")]
            for line in data[:complete].splitlines():
                event = _event(line)
                if event is None:
                    continue
                pid, kind, source = event
                if pid in pids and (kind == "SessionStart" or not watch.hook_sids):
                    watch.hook_sids.append((sid, pid, source))

    # -- 4. the registry -----------------------------------------------------------------------

    def _from_registry(
        self, watch: _Watch, pids: frozenset[int]
    ) -> tuple[str, BindPath, int] | None:
        sid = self._registry_sid(watch)
        if sid is None:
            return None
        return sid, BindPath.REGISTRY, watch.task.terminal.pid

    def _registry_sid(self, watch: _Watch) -> str | None:
        request = watch.task.request
        profile = self.places.profiles.get(request.agent)
        if profile is None:
            return None
        homes = tuple(self.places.homes.get(request.agent, ()))
        sid = profile.registry_session(homes, watch.task.terminal.pid)
        if sid is not None:
            watch.registry_sid = sid
        return sid

    # -- 5. the engine -------------------------------------------------------------------------

    def _from_engine(self, watch: _Watch, pids: frozenset[int]) -> str | None:
        sessions = self.places.sessions
        task = watch.task
        if sessions is None or task.request.mode is Mode.RESUME:
            return None
        earliest = task.started_at - PROCESS_START_SLACK
        for snap in sessions():
            if (
                snap.key.agent == task.request.agent
                and snap.process is not None
                and snap.process.pid in pids
                and snap.task_id in (None, task.task_id)
                and (snap.last_activity or snap.started_at or 0.0) >= earliest
            ):
                return snap.key.session_id
        return None

    # -- 6. /status ----------------------------------------------------------------------------

    def _from_status(self, watch: _Watch, now: float) -> str | None:
        task = watch.task
        profile = self.places.profiles.get(task.request.agent)
        screen = None if profile is None else profile.status
        if screen is None:
            return None
        if task.expects_hook and task.request.prompt is None and task.last_input_at is None:
            # Its SessionStart hook comes with the first prompt (Codex starts its session then):
            # no need to type anything before someone has.
            return None
        with task.lock:
            output = bytes(task.scrape.buffer) if task.scrape.sends else b""
            first_output, last_input = task.first_output_at, task.last_input_at
            sends, last_send = task.scrape.sends, task.scrape.last_send_at
        if output:
            sid = screen.session_id_in(status_scrape.plain_text(output.decode("utf-8", "replace")))
            if sid is not None and is_uuid(sid):
                watch.scraped = True
                return sid
        if watch.enter_due is None and status_scrape.should_send(
            screen.plan,
            now=now,
            first_output_at=first_output,
            sends=sends,
            last_send_at=last_send,
            last_input_at=last_input,
        ):
            with task.lock:
                task.scrape.buffer.clear()
                task.scrape.sends += 1
                task.scrape.last_send_at = now
            with contextlib.suppress(OSError, ProcessLookupError):
                task.write(b"/status", person=False)
                watch.enter_due = now + TYPE_TO_ENTER_SECONDS
        return None

    def _type_status(self, watch: _Watch, now: float) -> None:
        """The second half of typing ``/status`` (Enter), and closing Claude's panel (Esc)."""
        task = watch.task
        for due, keys in ((watch.enter_due, b"\r"), (watch.close_due, b"\x1b")):
            if due is None or now < due:
                continue
            if keys == b"\r":
                watch.enter_due = None
            else:
                watch.close_due = None
            with contextlib.suppress(OSError, ProcessLookupError):
                task.write(keys, person=False)

    # -- once bound ----------------------------------------------------------------------------

    def _follow(self, watch: _Watch) -> None:
        """A new session in the same process (Claude's ``/clear``): bind that one."""
        bound = watch.bound_pid or watch.task.terminal.pid
        before = len(watch.hook_sids)
        self._read_hooks(watch, frozenset({bound}))
        current = watch.task.binding
        for sid, pid, source in watch.hook_sids[before:]:
            if current is not None and sid != current.session_id and source in FOLLOWED_SOURCES:
                self._rebind(watch, sid, BindPath.HOOK, pid)
                return
        previous = watch.registry_sid
        now_sid = self._registry_sid(watch)
        if (
            now_sid is not None
            and previous is not None
            and now_sid != previous
            and current is not None
            and now_sid != current.session_id
        ):
            self._rebind(watch, now_sid, BindPath.REGISTRY, watch.task.terminal.pid)

    def _rebind(self, watch: _Watch, sid: str, path: BindPath, pid: int) -> None:
        task = watch.task
        binding = Binding(session_id=sid, path=path, seconds=task.since_start(), confirmed=True)
        watch.bound_pid = pid
        if task.bind(binding):
            log.info("task %s now runs session %s (%s)", task.task_id, sid, path)
            self._on_bound(task, binding)


def _read_range(path: Path, start: int, end: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            return fh.read(end - start)
    except OSError:
        return b""


def _event(line: bytes) -> tuple[int, str, str] | None:
    """(pid, event, source) of one hook-events line, or None."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    pid, kind = obj.get("pid"), obj.get("event")
    if not isinstance(pid, int) or isinstance(pid, bool) or not isinstance(kind, str):
        return None
    source = obj.get("source")
    return pid, kind, source if isinstance(source, str) else ""
