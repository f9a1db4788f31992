"""The loopback server's routes for launched tasks: list, launch, type, answer, resize, stop,
resume, fork, hand off, quit, and each task's terminal over a WebSocket (server thread; the
task manager's blocking calls run in worker threads).

The contract is in ``docs/api.md``. Every route here changes something or streams a terminal,
so the guard (``security.py``) has already required the token and, for anything but GET, our
own ``Origin``. Tasks are named by the ids the manager hands out; keys only ever go to a task's
own PTY. A remote host's session is resumed, forked and read for a hand-off on that host, by
its own agentbar through the channel (``far.py``), never here in its place; a host's tasks
are listed, read, approved or denied and stopped by its own task manager there the same way
(``?host=NAME``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import re
import secrets
import threading
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import orjson
from aiohttp import WSMsgType, web

from ..launch.handoff import NothingToHandOff, What, handoff_text
from ..launch.manager import AlreadyRunning, NoSuchTask, NotRunning, NotWaiting, TaskManager
from ..launch.projects import recent_projects
from ..launch.request import BadLaunch, LaunchRequest, Mode
from ..launch.task import TaskInfo
from ..model import LOCAL_HOST, Agent, SessionKey, SessionSnapshot
from ..remote.host_tasks import STOP_SECONDS
from ..remote.link import CALL_SECONDS, Link, RemoteError
from .context import Context, find_session, session_json
from .remote_routes import is_remote
from .remote_routes import refused as remote_refusal
from .replies import Refused, guarded, json_reply, read_object

log = logging.getLogger(__name__)

TERMINAL_QUEUE = 2048  # output chunks waiting for one slow terminal before it is dropped
MAX_INPUT_CHARS = 100_000
# What a browser terminal answers on its own to the program's queries (cursor position, device
# attributes, status): the task's screen already answered them, a second answer would be typed.
_TERMINAL_REPORTS = re.compile(r"\x1b\[\d+;\d+R|\x1b\[[?>][\d;]*c|\x1b\[0n")
_TASK_ID = re.compile(r"^[0-9a-f]{1,32}$")


def routes(ctx_of: Callable[[web.Request], Context]) -> list[web.RouteDef]:
    handlers = _Handlers(ctx_of)
    return [
        web.get("/api/tasks", guarded(handlers.list_tasks)),
        web.post("/api/tasks", guarded(handlers.launch)),
        web.get("/api/tasks/{task_id}", guarded(handlers.one)),
        web.delete("/api/tasks/{task_id}", guarded(handlers.forget)),
        web.post("/api/tasks/{task_id}/input", guarded(handlers.type_into)),
        web.post("/api/tasks/{task_id}/approve", guarded(handlers.approve)),
        web.post("/api/tasks/{task_id}/deny", guarded(handlers.deny)),
        web.post("/api/tasks/{task_id}/resize", guarded(handlers.resize)),
        web.post("/api/tasks/{task_id}/stop", guarded(handlers.stop)),
        web.get("/api/tasks/{task_id}/terminal", guarded(handlers.terminal)),
        web.post("/api/sessions/{session_id}/resume", guarded(handlers.resume)),
        web.post("/api/sessions/{session_id}/fork", guarded(handlers.fork)),
        web.get("/api/sessions/{session_id}/handoff", guarded(handlers.preview_handoff)),
        web.post("/api/sessions/{session_id}/handoff", guarded(handlers.handoff)),
        web.post("/api/quit", guarded(handlers.quit)),
        web.get("/api/projects", guarded(handlers.projects)),
    ]


def launch_folder(raw: object, home: Path | None = None) -> str:
    """The folder a launch names: absolute, or ``~`` / ``~/sub`` for this user's home (never
    another user's ``~name``); 400 with what is wrong when it is none, or not there."""
    if not isinstance(raw, str) or not raw.strip():
        raise Refused(400, "bad_request", "project must be a folder (absolute, or ~/folder)")
    text = raw.strip()
    if text == "~" or text.startswith("~/"):
        mine = home or Path.home()
        text = str(mine / text[2:]) if len(text) > 1 else str(mine)
    elif text.startswith("~"):
        raise Refused(400, "bad_request", f"{text}: only ~ and ~/folder (your home) are expanded")
    folder = Path(text)
    if not folder.is_absolute():
        raise Refused(400, "bad_request", f"{text}: give an absolute folder, or ~/folder")
    if not folder.exists():
        named = raw.strip()
        shown = named if named == text else f"{named} ({text})"
        raise Refused(400, "no_such_folder", f"no such folder: {shown} does not exist")
    return text


def task_json(info: TaskInfo, sessions: dict[SessionKey, SessionSnapshot]) -> dict[str, Any]:
    """A task, with its session as the engine sees it (``session``: null until bound)."""
    doc = info.to_json()
    snap = None
    if info.session_id is not None:
        snap = sessions.get(SessionKey(info.agent, info.session_id))
    doc["session"] = None if snap is None else session_json(snap, None)
    return doc


class _Handlers:
    def __init__(self, ctx_of: Callable[[web.Request], Context]) -> None:
        self._ctx_of = ctx_of

    # -- plumbing --------------------------------------------------------------------------

    def _agent(self, request: web.Request, raw: object) -> Agent:
        """The agent a request names, one of the kits'; 400 for any other value."""
        known = [entry.agent for entry in self._ctx_of(request).agents if entry.launch]
        if not isinstance(raw, str) or raw not in known:
            raise Refused(400, "bad_request", f"agent must be one of {', '.join(known)}")
        return Agent(raw)

    def _tasks(self, request: web.Request) -> TaskManager:
        tasks = self._ctx_of(request).tasks
        if tasks is None:
            raise Refused(503, "no_tasks", "this agentbar does not launch agents")
        return tasks

    def _sessions(self, request: web.Request) -> dict[SessionKey, SessionSnapshot]:
        return {s.key: s for s in self._ctx_of(request).engine.sessions()}

    def _task_doc(self, request: web.Request, info: TaskInfo) -> dict[str, Any]:
        return task_json(info, self._sessions(request))

    async def _call(self, request: web.Request, work: Callable[[], Any]) -> Any:
        """Run the manager's (blocking) ``work`` in a worker thread, mapping its refusals."""
        try:
            return await asyncio.get_running_loop().run_in_executor(None, work)
        except NoSuchTask as exc:
            raise Refused(404, "not_found", str(exc)) from None
        except NotWaiting as exc:
            raise Refused(409, "not_waiting", str(exc)) from None
        except AlreadyRunning as exc:
            raise Refused(409, "already_running", str(exc)) from None
        except (NotRunning, ProcessLookupError) as exc:
            raise Refused(409, "not_running", str(exc)) from None
        except BadLaunch as exc:
            raise Refused(400, "bad_launch", str(exc)) from None
        except NothingToHandOff as exc:
            raise Refused(409, "nothing_to_hand_off", str(exc)) from None

    def _task_id(self, request: web.Request) -> str:
        task_id = request.match_info["task_id"]
        if not _TASK_ID.match(task_id):
            raise Refused(404, "not_found", "no such task")
        return task_id

    def _link(self, request: web.Request, host: str) -> Link:
        """The channel to a configured remote host; 404 for a name no remote has."""
        hub = self._ctx_of(request).hub
        if hub is None or host not in hub.links:
            raise Refused(404, "not_found", f"no remote host named {host!r}")
        return hub.link(host)

    async def _call_there(
        self,
        request: web.Request,
        host: str,
        op: str,
        args: dict[str, Any],
        timeout: float = CALL_SECONDS,
    ) -> Any:
        """The far side's answer to ``op`` (waited for in a worker thread); a host down or
        dropped is a 503 at once, never a wait (``remote_routes.refused``)."""
        link = self._link(request, host)
        try:
            return await asyncio.get_running_loop().run_in_executor(
                None, lambda: link.call(op, args, timeout)
            )
        except RemoteError as exc:
            raise remote_refusal(exc) from None

    def _task_there(
        self,
        request: web.Request,
        doc: dict[str, Any],
        host: str,
        sessions: dict[SessionKey, SessionSnapshot] | None = None,
    ) -> dict[str, Any]:
        """A task the far side started, as this server shows it: its host, and its session
        as the engine sees it there (null until bound; ``sessions``: the engine's, when a
        list of tasks has them already)."""
        session = None
        if isinstance(doc.get("session_id"), str) and isinstance(doc.get("agent"), str):
            key = SessionKey(Agent(doc["agent"]), doc["session_id"], host)
            snap = (self._sessions(request) if sessions is None else sessions).get(key)
            session = None if snap is None else session_json(snap, None)
        return {**doc, "host": host, "session": session}

    # -- tasks -----------------------------------------------------------------------------

    async def list_tasks(self, request: web.Request) -> web.StreamResponse:
        host = _host_of(request)
        if host != LOCAL_HOST:  # its manager is over there
            reply = await self._call_there(request, host, "tasks", {})
            found = reply.get("tasks") if isinstance(reply, dict) else None
            if not isinstance(found, list):
                raise Refused(502, "host_failed", f"{host} answered no task list")
            sessions = self._sessions(request)  # once for the list, not once a task
            docs = [doc for doc in found if isinstance(doc, dict)]
            there = [self._task_there(request, doc, host, sessions) for doc in docs]
            return json_reply({"tasks": there})
        tasks = self._tasks(request)
        sessions = self._sessions(request)
        return json_reply({"tasks": [task_json(t, sessions) for t in tasks.tasks()]})

    async def launch(self, request: web.Request) -> web.StreamResponse:
        body = await read_object(request)
        host = body.get("host", LOCAL_HOST)
        if host not in (None, LOCAL_HOST):  # launched there, never here in its place
            return await self._launch_there(request, body, str(host))
        tasks = self._tasks(request)
        agent = self._agent(request, body.get("agent"))
        project = launch_folder(body.get("project"))
        prompt = _optional_text(body, "prompt")
        info = await self._call(
            request, lambda: tasks.launch(LaunchRequest(agent, project, prompt=prompt))
        )
        return json_reply({"task": self._task_doc(request, info)}, status=201)

    async def one(self, request: web.Request) -> web.StreamResponse:
        host = _host_of(request)
        if host != LOCAL_HOST:  # its manager is over there
            args = {"task_id": self._task_id(request)}
            doc = await self._call_there(request, host, "task", args)
            return json_reply({"task": self._task_there(request, doc, host)})
        tasks, task_id = self._tasks(request), self._task_id(request)
        info = await self._call(request, lambda: tasks.get(task_id))
        return json_reply({"task": self._task_doc(request, info)})

    async def forget(self, request: web.Request) -> web.StreamResponse:
        tasks, task_id = self._tasks(request), self._task_id(request)
        await self._call(request, lambda: tasks.forget(task_id))
        return json_reply({"ok": True})

    async def type_into(self, request: web.Request) -> web.StreamResponse:
        tasks, task_id = self._tasks(request), self._task_id(request)
        body = await read_object(request)
        text = _optional_text(body, "text") or ""
        keys = body.get("keys")
        enter = body.get("enter", True)
        if keys is not None and (
            not isinstance(keys, list) or not all(isinstance(k, str) for k in keys)
        ):
            raise Refused(400, "bad_request", "keys must be a list of key names")
        if not isinstance(enter, bool):
            raise Refused(400, "bad_request", "enter must be true or false")
        if not text and not keys and not enter:
            raise Refused(400, "bad_request", "nothing to type")

        def work() -> TaskInfo:
            info = tasks.get(task_id)
            if text or enter:
                info = tasks.send_text(task_id, text, enter=enter and not keys)
            if keys:
                info = tasks.send_keys(task_id, keys)
            return info

        info = await self._call(request, work)
        return json_reply({"task": self._task_doc(request, info)})

    async def approve(self, request: web.Request) -> web.StreamResponse:
        return await self._answer(request, approve=True)

    async def deny(self, request: web.Request) -> web.StreamResponse:
        return await self._answer(request, approve=False)

    async def _answer(self, request: web.Request, *, approve: bool) -> web.StreamResponse:
        host, task_id = _host_of(request), self._task_id(request)
        if host != LOCAL_HOST:  # answered by its own manager, there, as it would be here
            op = "approve" if approve else "deny"
            reply = await self._call_there(request, host, op, {"task_id": task_id})
            if not isinstance(reply, dict) or not isinstance(reply.get("task"), dict):
                raise Refused(502, "host_failed", f"{host} answered no task")
            task = self._task_there(request, reply["task"], host)
            return json_reply({"answer": reply.get("answer"), "task": task})
        tasks = self._tasks(request)
        answer = await self._call(
            request, lambda: tasks.approve(task_id) if approve else tasks.deny(task_id)
        )
        info = await self._call(request, lambda: tasks.get(task_id))
        return json_reply({"answer": answer.to_json(), "task": self._task_doc(request, info)})

    async def resize(self, request: web.Request) -> web.StreamResponse:
        tasks, task_id = self._tasks(request), self._task_id(request)
        body = await read_object(request)
        rows, cols = body.get("rows"), body.get("cols")
        if not (_is_int(rows) and _is_int(cols)):
            raise Refused(400, "bad_request", "rows and cols must be integers")
        assert isinstance(rows, int) and isinstance(cols, int)
        info = await self._call(request, lambda: tasks.resize(task_id, rows, cols))
        return json_reply({"task": self._task_doc(request, info)})

    async def stop(self, request: web.Request) -> web.StreamResponse:
        host, task_id = _host_of(request), self._task_id(request)
        body = await read_object(request)
        graceful = body.get("graceful", True) is not False
        if host != LOCAL_HOST:  # stopped by its own manager, there
            args = {"task_id": task_id, "graceful": graceful}
            doc = await self._call_there(request, host, "stop", args, STOP_SECONDS)
            return json_reply({"task": self._task_there(request, doc, host)})
        tasks = self._tasks(request)
        info = await self._call(request, lambda: tasks.stop(task_id, graceful=graceful))
        return json_reply({"task": self._task_doc(request, info)})

    # -- sessions: resume, fork, hand off --------------------------------------------------

    async def resume(self, request: web.Request) -> web.StreamResponse:
        return await self._relaunch(request, Mode.RESUME)

    async def fork(self, request: web.Request) -> web.StreamResponse:
        return await self._relaunch(request, Mode.FORK)

    async def _relaunch(self, request: web.Request, mode: Mode) -> web.StreamResponse:
        snap = find_session(request)
        body = await read_object(request)
        prompt = _optional_text(body, "prompt")
        if is_remote(snap):  # resumed or forked where its files and its agent are
            host = snap.key.host
            args = {"agent": str(snap.key.agent), "id": snap.key.session_id,
                    "mode": str(mode), "prompt": prompt}  # fmt: skip
            doc = await self._call_there(request, host, "relaunch", args)
            return json_reply({"task": self._task_there(request, doc, host)}, status=201)
        tasks = self._tasks(request)
        info = await self._call(request, lambda: tasks.launch_from(snap, mode, prompt=prompt))
        return json_reply({"task": self._task_doc(request, info)}, status=201)

    async def _launch_there(
        self, request: web.Request, body: dict[str, Any], host: str
    ) -> web.StreamResponse:
        """A launch on a configured remote host, through its channel (its session, replay,
        approvals and terminal come back through it too)."""
        self._link(request, host)
        agent = self._agent(request, body.get("agent"))
        project = body.get("project")
        if not isinstance(project, str) or not project.startswith("/"):
            raise Refused(400, "bad_request", "project must be an absolute folder on that host")
        args = {"agent": str(agent), "project": project, "prompt": _optional_text(body, "prompt")}
        doc = await self._call_there(request, host, "launch", args)
        return json_reply({"task": self._task_there(request, doc, host)}, status=201)

    def _what(self, value: object) -> What:
        try:
            return What(str(value or "brief"))
        except ValueError:
            raise Refused(400, "bad_request", "what must be answer or brief") from None

    async def _handoff_text(self, request: web.Request, snap: SessionSnapshot, what: What) -> str:
        """The answer or brief of ``snap``, read where the session lives (a remote host's
        through its channel: its transcript is over there)."""
        if is_remote(snap):
            args = {"agent": str(snap.key.agent), "id": snap.key.session_id, "what": str(what)}
            doc = await self._call_there(request, snap.key.host, "handoff", args)
            if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
                raise Refused(502, "host_failed", f"{snap.key.host} answered no text")
            return str(doc["text"])
        ctx = self._ctx_of(request)
        return str(
            await self._call(
                request,
                lambda: handoff_text(ctx.replay, snap, what, ctx.tools.get(snap.key.agent)),
            )
        )

    async def preview_handoff(self, request: web.Request) -> web.StreamResponse:
        snap = find_session(request)
        what = self._what(request.query.get("what"))
        text = await self._handoff_text(request, snap, what)
        return json_reply({"what": str(what), "text": text})

    async def handoff(self, request: web.Request) -> web.StreamResponse:
        """The text read where the session lives, typed into a running task (``{"task": ID}``,
        with ``"host"`` for a remote host's) or given to a new agent launched where the
        session lives, in its folder (``{"agent": NAME}``)."""
        snap = find_session(request)
        body = await read_object(request)
        what = self._what(body.get("what"))
        target = body.get("to")
        if not isinstance(target, dict) or not (("task" in target) ^ ("agent" in target)):
            raise Refused(400, "bad_request", 'to must be {"task": ID} or {"agent": NAME}')
        target_host = target.get("host") or LOCAL_HOST
        if not isinstance(target_host, str):
            raise Refused(400, "bad_request", "to.host must be a host's name")
        if target_host != LOCAL_HOST:
            self._link(request, target_host)
        if "task" in target:
            task_id = str(target["task"])
            if not _TASK_ID.match(task_id):
                raise Refused(404, "not_found", "no such task")
            text = await self._handoff_text(request, snap, what)
            task, status = await self._type_handoff(request, target_host, task_id, text), 200
        else:
            agent = self._agent(request, target["agent"])
            if snap.project is None:
                raise Refused(409, "bad_launch", "the session's folder is not known")
            text = await self._handoff_text(request, snap, what)
            task, status = await self._launch_handoff(request, snap, agent, text), 201
        return json_reply(
            {"what": str(what), "chars": len(text), "task": task},
            status=status,
        )

    async def _type_handoff(
        self, request: web.Request, host: str, task_id: str, text: str
    ) -> dict[str, Any]:
        """``text`` typed into a running task of ``host`` (as a paste, then Enter)."""
        if host != LOCAL_HOST:
            doc = await self._call_there(request, host, "type", {"task_id": task_id, "text": text})
            return self._task_there(request, doc, host)
        tasks = self._tasks(request)
        info = await self._call(request, lambda: tasks.send_text(task_id, text))
        return self._task_doc(request, info)

    async def _launch_handoff(
        self, request: web.Request, snap: SessionSnapshot, agent: Agent, text: str
    ) -> dict[str, Any]:
        """A new ``agent`` given ``text``, launched where ``snap`` lives, in its folder."""
        assert snap.project is not None
        project = snap.project
        if is_remote(snap):
            host = snap.key.host
            args = {"agent": str(agent), "project": project, "prompt": text}
            doc = await self._call_there(request, host, "launch", args)
            return self._task_there(request, doc, host)
        tasks = self._tasks(request)
        info = await self._call(
            request, lambda: tasks.launch(LaunchRequest(agent, project, prompt=text))
        )
        return self._task_doc(request, info)

    async def projects(self, request: web.Request) -> web.StreamResponse:
        ctx = self._ctx_of(request)
        tasks = [] if ctx.tasks is None else ctx.tasks.tasks()
        sessions = ctx.engine.sessions()
        recent = await asyncio.get_running_loop().run_in_executor(
            None, lambda: recent_projects(sessions, tasks)
        )
        return json_reply({"recent": recent})

    async def quit(self, request: web.Request) -> web.StreamResponse:
        ctx = self._ctx_of(request)
        body = await read_object(request)
        choice = body.get("tasks", "keep")
        if choice not in ("keep", "stop"):
            raise Refused(400, "bad_request", "tasks must be keep or stop")
        if ctx.quit is None:
            raise Refused(503, "cannot_quit", "this agentbar quits from its own window")
        running = [] if ctx.tasks is None else ctx.tasks.running()
        ctx.quit(str(choice))
        return json_reply({"quitting": True, "tasks": choice, "running": len(running)})

    # -- the terminal ----------------------------------------------------------------------

    async def terminal(self, request: web.Request) -> web.StreamResponse:
        """The task's scrollback, then its output as it comes (binary frames); the client
        sends ``{"type": "input", "data": "..."}`` and ``{"type": "resize", "rows", "cols"}``
        (text frames)."""
        host = _host_of(request)
        if host != LOCAL_HOST:
            return await self._terminal_there(request, host, self._task_id(request))
        tasks, task_id = self._tasks(request), self._task_id(request)
        try:
            task = tasks.task(task_id)
        except NoSuchTask as exc:
            raise Refused(404, "not_found", str(exc)) from None
        ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=1 << 20)
        await ws.prepare(request)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=TERMINAL_QUEUE)

        def offer(data: bytes | None) -> None:
            try:
                queue.put_nowait(data)
            except asyncio.QueueFull:
                with contextlib.suppress(asyncio.QueueEmpty):
                    while True:
                        queue.get_nowait()
                queue.put_nowait(None)  # too slow: drop it; it reconnects and catches up

        def on_output(data: bytes) -> None:  # the task's reader thread
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(offer, data)

        backlog, detach = task.attach(on_output)

        def on_task(info: TaskInfo) -> None:  # any thread
            if info.task_id == task.task_id and not info.alive:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(offer, None)

        unsubscribe = tasks.subscribe(on_task)
        sender = asyncio.create_task(self._send_output(ws, queue, backlog, task.task_id, tasks))
        try:
            if not task.info().alive:
                offer(None)
            async for message in ws:
                if message.type is WSMsgType.TEXT:
                    await self._terminal_message(tasks, task.task_id, message.data)
                elif message.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                    break
        finally:
            detach()
            with contextlib.suppress(ValueError):
                unsubscribe()
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
        return ws

    async def _terminal_there(
        self, request: web.Request, host: str, task_id: str
    ) -> web.StreamResponse:
        """A task launched on a remote host: its output through the channel (``attach``), the
        client's input and size sent back the same way."""
        link = self._link(request, host)
        watch = secrets.token_hex(8)
        args = {"task_id": task_id, "watch": watch, "tasks": True}  # its changes too
        chunks = link.stream("attach", args, timeout=None)
        first = await asyncio.get_running_loop().run_in_executor(None, _first, chunks)
        if isinstance(first, RemoteError):
            raise remote_refusal(first)
        ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=1 << 20)
        await ws.prepare(request)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes | str | None] = asyncio.Queue()

        def put(item: bytes | str | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closing: nobody reads
                loop.call_soon_threadsafe(queue.put_nowait, item)

        def pump() -> None:  # a thread of its own: the stream blocks between outputs
            told = _relay(
                first, chunks, put, host, lambda doc: self._task_there(request, doc, host)
            )
            if told is not None:
                put(told)
            put(None)

        threading.Thread(target=pump, daemon=True, name="agentbar-remote-terminal").start()
        sender = asyncio.create_task(_send_remote_output(ws, queue))
        try:
            async for message in ws:
                if message.type is WSMsgType.TEXT:
                    _terminal_there_message(link, task_id, message.data)
                elif message.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                    break
        finally:
            link.call_later("detach", {"watch": watch})
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
        return ws

    async def _send_output(
        self,
        ws: web.WebSocketResponse,
        queue: asyncio.Queue[bytes | None],
        backlog: bytes,
        task_id: str,
        tasks: TaskManager,
    ) -> None:
        if backlog:
            await ws.send_bytes(backlog)
        while True:
            data = await queue.get()
            if data is None:
                with contextlib.suppress(NoSuchTask):
                    info = tasks.get(task_id)
                    await ws.send_str(
                        orjson.dumps({"type": "task", "task": info.to_json()}).decode()
                    )
                await ws.close()
                return
            chunks = [data]
            while not queue.empty() and len(chunks) < 64:
                more = queue.get_nowait()
                if more is None:
                    queue.put_nowait(None)
                    break
                chunks.append(more)
            await ws.send_bytes(b"".join(chunks))

    async def _terminal_message(self, tasks: TaskManager, task_id: str, raw: str) -> None:
        wanted = _terminal_request(raw)
        loop = asyncio.get_running_loop()
        try:
            if isinstance(wanted, str):
                await loop.run_in_executor(
                    None, tasks.send_bytes, task_id, wanted.encode("utf-8", "replace")
                )
            elif wanted is not None:
                await loop.run_in_executor(None, tasks.resize, task_id, *wanted)
        except (NoSuchTask, NotRunning, ProcessLookupError, OSError):
            pass  # the task went: the sender closes the socket


def _first(chunks: Iterator[str]) -> str | RemoteError | None:
    """The first chunk of an attached terminal (its scrollback; None: it ended at once), or
    the error the far side answered (no such task)."""
    try:
        return next(chunks, None)
    except RemoteError as exc:
        return exc


def _relay(
    first: str | None,
    chunks: Generator[str, None, Any],
    put: Callable[[bytes | str | None], None],
    host: str,
    task_there: Callable[[dict[str, Any]], dict[str, Any]],
) -> str | None:
    """An attached remote terminal's output handed to ``put`` (decoded) as it comes, and the
    task as it changes (a JSON chunk: its waiting prompt) as a text frame, as the local page
    hears of it; what to tell the client when it ends (text frames): the task as it ended, as a
    local terminal's last message; ``{"type": "unreachable", "host", "message"}`` when its host
    dropped (the client says so, and tries again); nothing when it was detached."""

    def relay(text: str) -> None:
        if text.startswith("{"):  # never base64
            doc = orjson.loads(text)
            if isinstance(doc, dict):
                put(orjson.dumps({"type": "task", "task": task_there(doc)}).decode())
        elif text:
            put(base64.b64decode(text))

    try:
        if first:
            relay(first)
        while True:
            relay(next(chunks))
    except StopIteration as end:
        result = end.value
        if isinstance(result, dict) and isinstance(result.get("task"), dict):
            return orjson.dumps({"type": "task", "task": task_there(result["task"])}).decode()
    except RemoteError as exc:
        if exc.kind == "unreachable":
            lost = {"type": "unreachable", "host": host, "message": str(exc)}
            return orjson.dumps(lost).decode()
    except ValueError:
        pass  # not base64 nor a task: a far side gone wrong; the socket closes
    return None


async def _send_remote_output(
    ws: web.WebSocketResponse, queue: asyncio.Queue[bytes | str | None]
) -> None:
    while True:
        data = await queue.get()
        if data is None:
            await ws.close()
            return
        if isinstance(data, str):
            await ws.send_str(data)
        else:
            await ws.send_bytes(data)


def _terminal_there_message(link: Link, task_id: str, raw: str) -> None:
    """A terminal client's text frame (input, resize) sent on to the far side's task."""
    wanted = _terminal_request(raw)
    if isinstance(wanted, str):
        link.call_later("term_input", {"task_id": task_id, "data": wanted})
    elif wanted is not None:
        rows, cols = wanted
        link.call_later("term_resize", {"task_id": task_id, "rows": rows, "cols": cols})


def _terminal_request(raw: str) -> str | tuple[int, int] | None:
    """What a terminal client's text frame asks: keys to type (the terminal's own reports
    taken out, bounded), a size (rows, columns), or nothing it can do."""
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(message, dict):
        return None
    kind = message.get("type")
    if kind == "input" and isinstance(message.get("data"), str):
        return _TERMINAL_REPORTS.sub("", message["data"][:MAX_INPUT_CHARS]) or None
    if kind == "resize":
        rows, cols = message.get("rows"), message.get("cols")
        if isinstance(rows, int) and isinstance(cols, int):
            return rows, cols
    return None


def _host_of(request: web.Request) -> str:
    """The host a task route's ``?host=NAME`` names (this machine without it)."""
    return request.query.get("host") or LOCAL_HOST


def _optional_text(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Refused(400, "bad_request", f"{name} must be text")
    if len(value) > MAX_INPUT_CHARS:
        raise Refused(400, "bad_request", f"{name} is longer than {MAX_INPUT_CHARS} characters")
    return value


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
