"""The far side of a channel (``agentbar channel``, hidden): a headless agentbar whose only way
in is its standard input, and only way out its standard output (the main thread reads calls;
the engine's and the book's subscribers write; calls run on a small pool).

It runs the engine, the decision book and the task manager as usual, and its own loopback server
for the hooks of this machine (announced in its data dir as ``agentbar serve`` does); it opens
no other socket. It says hello (protocol, version, a boot id), sends the full session list once
the live sessions are read, then every change with a sequence number, the sessions' other
updates, the decision book's changes; its own usage windows and its first reading's progress
with the list and whenever they change (``gauges.py``), and so the tasks its manager runs
(``host_tasks.py``); it answers calls by id. It ends when its input closes.
Nothing it sends holds a token: the server's token stays in its own ``server.json``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any

from ..decisions import BookChange, Decision, StaleRequest, Verdict
from ..errors import AgentbarError, ReplayError
from ..model import Agent, SessionKey, SessionSnapshot, StateChange
from ..replay.export import Format, Options, export
from ..replay.files import AgentRoots
from ..replay.model import MAIN_THREAD
from ..replay.pages import PAGE_ITEMS, Replay
from ..search import Searcher, hits_json
from . import frames
from .frames import CHUNK_CHARS, PROTOCOL, Closed, FrameError, Writer
from .gauges import heard_to_wire, limits_to_wire, progress_to_wire
from .host_tasks import tasks_to_wire
from .terminal import Terminals
from .wire import request_to_wire, snapshot_to_wire

if TYPE_CHECKING:
    from ..app import Agentbar
    from ..launch.manager import TaskManager

log = logging.getLogger(__name__)

UPDATE_SECONDS = 2.0  # how often sessions' other changes (title, usage, activity) are sent
LIST_BYTES = 512 * 1024  # sessions per frame of the full list, by size
WORKERS = 4
# A terminal's keys and sizes are applied in the order they came, on one thread of their own:
# the pool answers the other calls in any order (a line typed a key at a time came scrambled).
IN_ORDER = frozenset({"term_input", "term_resize"})
MAX_SEARCH = 200


class CallError(AgentbarError):
    """A call the far side cannot answer (no such session, a stale request); ``kind`` is what
    the near side is told (``remote_routes`` makes it an HTTP status)."""

    title = "The remote cannot do it"

    def __init__(self, message: str, kind: str = "not_found") -> None:
        super().__init__(message)
        self.kind = kind


class FarSide:
    def __init__(self, app: Agentbar, writer: Writer, version: str) -> None:
        self.app = app
        # The replay and search of this machine's sessions, read through the agents' roots.
        roots = AgentRoots(app.settings.agent_roots)
        self.replay = Replay(roots, app.settings.replay_adapters())
        self.searcher: Searcher | None = Searcher(app.settings.index_path, roots=roots)
        self.writer = writer
        self.version = version
        self.boot = secrets.token_hex(8)
        self._seq = 0
        self._seq_lock = threading.Lock()
        self._sent: dict[SessionKey, SessionSnapshot] = {}
        self._gauges: dict[str, Any] = {}  # the limits, progress and tasks frames last sent
        self._gauges_lock = threading.Lock()
        self._listed = threading.Event()
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="agentbar-channel-call")
        self._in_order = ThreadPoolExecutor(1, thread_name_prefix="agentbar-channel-typing")
        self.terminals = Terminals(app.tasks, self._send)
        self._ops: dict[str, Callable[[dict[str, Any]], Any]] = {
            "ping": lambda _args: {"at": time.time()},
            "resync": self._resync,
            "threads": self._threads,
            "page": self._page,
            "item": self._item,
            "search": self._search,
            "decide": self._decide,
            "launch": self._launch,
            "relaunch": self._relaunch,
            "handoff": self._handoff,
            "type": self._type,
            "task": self._task,
            "tasks": self._task_list,
            "stop": self._stop_task,
            "approve": lambda args: self._answer_task(args, approve=True),
            "deny": lambda args: self._answer_task(args, approve=False),
            "detach": self.terminals.detach,
            "term_input": self.terminals.type_in,
            "term_resize": self.terminals.resize,
            "usage": self._usage,
            "hooks_plan": self._hooks("plan"),
            "hooks_apply": self._hooks("apply"),
            "hooks_status": self._hooks("status"),
            "status_line_plan": self._hooks("status_line_plan"),
            "status_line_apply": self._hooks("status_line_apply"),
            "status_line_status": self._hooks("status_line_status"),
        }

    # -- out ---------------------------------------------------------------------------------

    def _send(self, frame: dict[str, Any]) -> None:
        try:
            self.writer.send(frame)
        except Closed:
            self._stop.set()
        except FrameError:
            log.exception("a frame too large was not sent")

    def _numbered(self, frame: dict[str, Any]) -> None:
        """(With ``_seq_lock`` held: numbered and written in one order.)"""
        self._seq += 1
        frame["seq"] = self._seq
        self._send(frame)

    def hello(self) -> None:
        self._send({"t": "hello", "protocol": PROTOCOL, "version": self.version,
                    "boot": self.boot, "pid": os.getpid()})  # fmt: skip

    def send_list(self) -> None:
        """Every session, in frames of bounded size, then the book's open requests."""
        with self._seq_lock:
            sessions = self.app.sessions()
            self._sent = {s.key: s for s in sessions}
            part: list[dict[str, Any]] = []
            size = 0
            for snap in sessions:
                doc = snapshot_to_wire(snap)
                part.append(doc)
                size += len(frames.encode(doc))
                if size >= LIST_BYTES:
                    self._send({"t": "sessions", "sessions": part, "last": False})
                    part, size = [], 0
            pending = [request_to_wire(r) for r in self.app.decisions.pending()]
            # Before the list's end: a near side connected with it knows them too (``status``).
            self.send_gauges(again=True)
            self._send({"t": "sessions", "sessions": part, "last": True, "decisions": pending,
                        "seq": self._seq})  # fmt: skip
            self._listed.set()

    def send_gauges(self, *, again: bool = False) -> None:
        """This machine's own usage windows and first reading's progress, each when it changed
        since last sent (``again``: with a list, whatever was sent before); its tasks too.
        Never a remote's windows: a far side has none, and they are not this machine's to
        tell."""
        frames_now: dict[str, dict[str, Any]] = {
            "limits": {
                "t": "limits",
                "limits": limits_to_wire(self.app.engine.limits()),
                "heard": heard_to_wire(self.app.engine.limits_heard()),
            },
            "progress": {"t": "progress", "progress": progress_to_wire(self.app.progress())},
        }
        with self._gauges_lock:
            for kind, frame in frames_now.items():
                self._send_changed(kind, frame, again=again)
        self.send_tasks(again=again)

    def send_tasks(self, *, again: bool = False) -> None:
        """The agents this machine's task manager runs, when they changed since last sent (the
        manager's subscriber: any thread); none when it launches nothing. Read and sent under
        one lock, so a later list is never overtaken by an earlier one."""
        if self.app.tasks is None:
            return
        with self._gauges_lock:
            frame = {"t": "tasks", "tasks": tasks_to_wire(self.app.tasks.running())}
            self._send_changed("tasks", frame, again=again)

    def _send_changed(self, kind: str, frame: dict[str, Any], *, again: bool) -> None:
        """(With ``_gauges_lock`` held.)"""
        if again or self._gauges.get(kind) != frame:
            self._gauges[kind] = frame
            self._send(frame)

    def on_change(self, change: StateChange) -> None:
        """The engine's subscriber (engine thread): one numbered frame, written at once."""
        snap = change.snapshot
        prev = change.prev
        with self._seq_lock:
            if not self._listed.is_set():
                return  # the list, sent once the live sessions are read, holds it
            self._sent[snap.key] = snap
            self._numbered({
                "t": "change",
                "ts": change.ts,
                "session": snapshot_to_wire(snap),
                "prev": None if prev is None else [str(prev.state), prev.detail,
                    None if prev.waiting_for is None else str(prev.waiting_for),
                    str(prev.source)],
            })  # fmt: skip

    def on_book(self, change: BookChange) -> None:
        frame: dict[str, Any] = {"t": "decision", "opened": change.opened,
                                 "request": request_to_wire(change.request)}  # fmt: skip
        if change.decision is not None:
            frame["verdict"] = str(change.decision.verdict)
        if change.reason is not None:
            frame["reason"] = change.reason
        self._send(frame)

    def send_updates(self) -> None:
        """The sessions whose other fields changed since last sent (no state change: no
        notice), and those gone."""
        now = {s.key: s for s in self.app.sessions()}
        with self._seq_lock:
            changed = [s for key, s in now.items() if self._sent.get(key) != s]
            # A new state is the engine's change to tell (it may hold a provisional one back
            # until its detail is known): left to ``on_change``, looked at again next time.
            changed = [s for s in changed if not _moved(self._sent.get(s.key), s)]
            gone = [key for key in self._sent if key not in now]
            for key in gone:
                del self._sent[key]
            for snap in changed:
                self._sent[snap.key] = snap
            for snap in changed:
                self._numbered({"t": "update", "session": snapshot_to_wire(snap)})
            for key in gone:
                self._numbered({"t": "gone", "agent": str(key.agent), "id": key.session_id})
        self.send_gauges()

    # -- in ----------------------------------------------------------------------------------

    def serve(self, stdin: IO[bytes]) -> None:
        """Read calls until the near side closes the channel."""
        updater = threading.Thread(target=self._update_loop, name="agentbar-channel-updates",
                                   daemon=True)  # fmt: skip
        updater.start()
        try:
            while not self._stop.is_set():
                try:
                    frame = frames.read_frame(stdin)
                except FrameError as exc:
                    log.warning("channel: %s", exc)
                    continue
                if frame.get("t") == "call" and frame.get("op") == "attach":
                    # An attached terminal waits as long as it is watched: a thread each, so
                    # the pool's workers stay free for calls.
                    threading.Thread(target=self._answer, args=(frame,), daemon=True,
                                     name="agentbar-channel-terminal").start()  # fmt: skip
                elif frame.get("t") == "call" and frame.get("op") in IN_ORDER:
                    self._in_order.submit(self._answer, frame)
                elif frame.get("t") == "call":
                    self._pool.submit(self._answer, frame)
        except Closed:
            pass
        finally:
            self._stop.set()
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._in_order.shutdown(wait=False, cancel_futures=True)

    def _update_loop(self) -> None:
        self.app.wait_live()
        if not self._stop.is_set():
            self.send_list()
        while not self._stop.wait(UPDATE_SECONDS):
            try:
                self.send_updates()
            except Exception:
                log.exception("channel: sending updates failed")

    def _answer(self, frame: dict[str, Any]) -> None:
        call_id = frame.get("id")
        op = self._ops.get(str(frame.get("op")))
        args = frame.get("args")
        if not isinstance(call_id, int) or not isinstance(args, dict):
            return
        try:
            if frame.get("op") == "attach":
                self.terminals.attach(call_id, args)
                return
            if frame.get("op") == "export":
                for text in self._export(args):
                    self._send({"t": "chunk", "id": call_id, "text": text})
                self._send({"t": "reply", "id": call_id, "result": {"done": True}})
                return
            if op is None:
                raise CallError(f"unknown call {frame.get('op')!r}", "unsupported")
            self._send({"t": "reply", "id": call_id, "result": op(args)})
        except (AgentbarError, ValueError, LookupError, TypeError) as exc:
            kind = _kind(exc)
            self._send({"t": "reply", "id": call_id, "error": {"kind": kind,
                        "message": str(exc)}})  # fmt: skip
        except Exception as exc:
            log.exception("channel: call %s failed", frame.get("op"))
            self._send({"t": "reply", "id": call_id, "error": {"kind": "failed",
                        "message": f"the remote failed: {type(exc).__name__}"}})  # fmt: skip

    # -- calls (pool threads) ----------------------------------------------------------------

    def _session(self, args: dict[str, Any]) -> SessionSnapshot:
        key = SessionKey(Agent(str(args["agent"])), str(args["id"]))
        found = next((s for s in self.app.sessions() if s.key == key), None)
        if found is None:
            raise CallError("no such session on the remote")
        return found

    def _resync(self, _args: dict[str, Any]) -> dict[str, Any]:
        self.send_list()
        return {"listed": True}

    def _threads(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        snap = self._session(args)
        return [t.to_json() for t in self.replay.threads(snap)]

    def _page(self, args: dict[str, Any]) -> dict[str, Any]:
        snap = self._session(args)
        before, after = _offset(args.get("before")), _offset(args.get("after"))
        limit = _offset(args.get("limit")) or PAGE_ITEMS
        page = self.replay.page(snap, _thread(args), before=before, after=after,
                                           limit=limit)  # fmt: skip
        doc: dict[str, Any] = page.to_json()
        return doc

    def _item(self, args: dict[str, Any]) -> dict[str, Any]:
        snap = self._session(args)
        offset, index = _offset(args.get("offset")), _offset(args.get("index"))
        if offset is None or index is None:
            raise CallError("no such item")
        found = self.replay.item(snap, _thread(args), offset, index)
        doc: dict[str, Any] = found.to_json()
        return doc

    def _search(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        searcher = self.searcher
        if searcher is None:
            raise CallError("search is not available on the remote")
        agent = args.get("agent")
        session = args.get("session")
        hits = searcher.search(
            str(args.get("q", "")),
            limit=min(_offset(args.get("limit")) or 50, MAX_SEARCH),
            agent=None if agent is None else Agent(str(agent)),
            session_id=None if session is None else str(session),
        )
        return hits_json(hits, self.app.sessions())

    def _export(self, args: dict[str, Any]) -> Iterator[str]:
        snap = self._session(args)
        fmt = Format(str(args.get("format", "md")))
        options = Options(thinking=bool(args.get("thinking", True)),
                          notes=bool(args.get("notes", False)))  # fmt: skip
        buffer: list[str] = []
        size = 0
        for chunk in export(self.replay, snap, fmt, options):
            rest = chunk
            while len(rest) > CHUNK_CHARS:
                yield rest[:CHUNK_CHARS]
                rest = rest[CHUNK_CHARS:]
            if size + len(rest) > CHUNK_CHARS:
                yield "".join(buffer)
                buffer, size = [], 0
            buffer.append(rest)
            size += len(rest)
        if buffer:
            yield "".join(buffer)

    def _usage(self, args: dict[str, Any]) -> dict[str, Any]:
        """What ``agentbar usage --json`` would print here (``agentbar usage --host``)."""
        from ..usage import far_side  # noqa: PLC0415 - usage reports only

        return far_side.answer(self.app, args)

    def _hooks(self, call: str) -> Callable[[dict[str, Any]], Any]:
        """``agentbar hooks ... --host``: this machine's installer (``hooks/far_side.py``)."""

        def answer(args: dict[str, Any]) -> Any:
            from ..hooks import far_side  # noqa: PLC0415 - hooks calls only

            return getattr(far_side, call)(self.app.settings, args)

        return answer

    def _tasks(self) -> TaskManager:
        """This machine's task manager; a refusal (503 ``no_tasks`` on the near side, as every
        task route answers without one) when this agentbar launches nothing."""
        if self.app.tasks is None:
            raise CallError("this agentbar launches no agents", "no_tasks")
        return self.app.tasks

    def _launch(self, args: dict[str, Any]) -> dict[str, Any]:
        """An agent started in a project of this machine, as ``POST /api/tasks`` would."""
        from ..launch.request import LaunchRequest  # noqa: PLC0415 - launching only

        tasks = self._tasks()
        prompt = args.get("prompt")
        request = LaunchRequest(
            self.app.settings.kit(str(args.get("agent"))).agent,
            str(args.get("project")),
            prompt=None if prompt is None else str(prompt),
        )
        doc: dict[str, Any] = tasks.launch(request).to_json()
        return doc

    def _relaunch(self, args: dict[str, Any]) -> dict[str, Any]:
        """A session of this machine resumed or forked (``mode``), in the folder it ran in, as
        ``POST /api/sessions/ID/resume`` or ``/fork`` would here."""
        from ..launch.manager import AlreadyRunning  # noqa: PLC0415 - launching only
        from ..launch.request import BadLaunch, Mode  # noqa: PLC0415

        tasks = self._tasks()
        mode = Mode(str(args.get("mode")))
        if mode not in (Mode.RESUME, Mode.FORK):
            raise CallError(f"mode must be resume or fork, not {mode}", "bad")
        snap = self._session(args)
        prompt = args.get("prompt")
        try:
            info = tasks.launch_from(snap, mode, prompt=None if prompt is None else str(prompt))
        except AlreadyRunning as exc:
            raise CallError(str(exc), "already_running") from None
        except BadLaunch as exc:
            raise CallError(str(exc), "bad_launch") from None
        doc: dict[str, Any] = info.to_json()
        return doc

    def _handoff(self, args: dict[str, Any]) -> dict[str, Any]:
        """The last answer or the brief of a session of this machine, read from its transcript
        here (the near side hands it on)."""
        from ..agents.base import tool_vocabularies  # noqa: PLC0415 - hand-offs only
        from ..launch.handoff import NothingToHandOff, What, handoff_text  # noqa: PLC0415

        snap = self._session(args)
        what = What(str(args.get("what") or "brief"))
        tools = tool_vocabularies(self.app.settings.kits).get(snap.key.agent)
        try:
            text = handoff_text(self.replay, snap, what, tools)
        except NothingToHandOff as exc:
            raise CallError(str(exc), "nothing_to_hand_off") from None
        return {"what": str(what), "text": text, "project": snap.project}

    def _type(self, args: dict[str, Any]) -> dict[str, Any]:
        """Text typed into a task of this machine (a paste, then Enter): a hand-off to it."""
        tasks = self._tasks()
        with _task_refusals():
            info = tasks.send_text(str(args["task_id"]), str(args["text"]))
        doc: dict[str, Any] = info.to_json()
        return doc

    def _task(self, args: dict[str, Any]) -> dict[str, Any]:
        """A task of this machine as ``GET /api/tasks/TASK_ID`` shows it (no such task: the
        manager's ``NoSuchTask``, a lookup error: ``not_found``)."""
        doc: dict[str, Any] = self._tasks().get(str(args.get("task_id"))).to_json()
        return doc

    def _task_list(self, _args: dict[str, Any]) -> dict[str, Any]:
        """This machine's tasks as ``GET /api/tasks`` lists them (the near side adds each
        one's host and its session as seen from there)."""
        return {"tasks": [info.to_json() for info in self._tasks().tasks()]}

    def _stop_task(self, args: dict[str, Any]) -> dict[str, Any]:
        """A task of this machine stopped by its own manager, as ``POST /api/tasks/ID/stop``
        stops it here (the agent's exit keys unless ``graceful`` is false, then signals);
        answered once it is gone."""
        tasks = self._tasks()
        with _task_refusals():
            info = tasks.stop(str(args.get("task_id")), graceful=args.get("graceful") is not False)
        doc: dict[str, Any] = info.to_json()
        return doc

    def _answer_task(self, args: dict[str, Any], *, approve: bool) -> dict[str, Any]:
        """The approval prompt on a task's own screen answered by its own manager, as ``POST
        /api/tasks/ID/approve`` (or ``/deny``) answers it here; none waiting: ``not_waiting``."""
        tasks, task_id = self._tasks(), str(args.get("task_id"))
        with _task_refusals():
            answer = tasks.approve(task_id) if approve else tasks.deny(task_id)
        return {"answer": answer.to_json(), "task": tasks.get(task_id).to_json()}

    def _decide(self, args: dict[str, Any]) -> dict[str, Any]:
        replies = args.get("replies") or []
        message = args.get("message")
        request = self.app.decisions.decide(
            Decision(
                request_id=str(args["request_id"]),
                verdict=Verdict(str(args["verdict"])),
                origin=f"channel:{args.get('origin', 'remote')}",
                message=None if message is None else str(message),
                replies=tuple(str(r) for r in replies),
            )
        )
        return {"request_id": request.request_id}


@contextlib.contextmanager
def _task_refusals() -> Iterator[None]:
    """The task manager's refusals as the near side is told them (its own routes' codes): no
    prompt waiting, a task not running (or its process gone)."""
    from ..launch.manager import NotRunning, NotWaiting  # noqa: PLC0415 - launching only

    try:
        yield
    except NotWaiting as exc:
        raise CallError(str(exc), "not_waiting") from None
    except (NotRunning, ProcessLookupError) as exc:
        raise CallError(str(exc), "not_running") from None


def _kind(exc: Exception) -> str:
    """What kind of refusal a failed call is, for the near side."""
    if isinstance(exc, CallError):
        return exc.kind
    if isinstance(exc, StaleRequest):
        return "stale"
    if isinstance(exc, ReplayError | LookupError):
        return "not_found"
    return "bad"


def _moved(sent: SessionSnapshot | None, now: SessionSnapshot) -> bool:
    """Whether ``now`` is in another state than what was sent (or one still provisional)."""
    if sent is None:  # a session read from the history (silent), or a new one: shown
        return False
    return now.state.provisional or not now.state.same_transition(sent.state)


def _offset(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 50:
        raise CallError("offsets are non-negative integers")
    return value


def _thread(args: dict[str, Any]) -> str:
    thread = args.get("thread") or MAIN_THREAD
    if not isinstance(thread, str):
        raise CallError("no such thread")
    return thread


def run(app: Agentbar, version: str, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Serve the channel on ``stdin``/``stdout`` until ``stdin`` closes."""
    far = FarSide(app, Writer(stdout), version)
    far.hello()
    app.subscribe(far.on_change)
    app.decisions.subscribe(far.on_book)
    if app.tasks is not None:
        app.tasks.subscribe(lambda _info: far.send_tasks())
    try:
        if _another_serves(app):
            # A tray or serve of this user here holds this machine's hooks (and its
            # server.json): it keeps them; this side reports the sessions, replay and search.
            log.info("channel: another agentbar serves here; its hooks stay with it")
            app.start()
            far.serve(stdin)
            return 0
        with app.serving():
            app.start()
            far.serve(stdin)
        return 0
    finally:
        if far.searcher is not None:
            far.searcher.close()


def _another_serves(app: Agentbar) -> bool:
    from ..launch.client import Client, NoServer  # noqa: PLC0415 - an HTTP client, once

    try:
        Client.find(app.settings, timeout=2.0)
    except NoServer:
        return False
    return True


def main_channel(settings: Any, version: str) -> int:
    """``agentbar channel``: frames go out on the real standard output alone; anything else
    this process would print there goes to standard error instead."""
    from ..app import Agentbar  # noqa: PLC0415 - the app imports this package

    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    app = Agentbar.open(settings, remotes=False)
    try:
        return run(app, version, sys.stdin.buffer, out)
    finally:
        with contextlib.suppress(Exception):
            app.close(keep_tasks=True)
