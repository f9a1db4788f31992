"""A task launched on the far side, its terminal attached through the channel: the far side's
half (a thread per attached terminal, writing frames as the task's reader thread hands it
output) (far side only).

``attach {task_id, watch}`` answers with ``chunk`` frames (base64 of the output: the scrollback
first, then each chunk as it comes, at most ``PIECE`` bytes each) until ``detach {watch}`` or
the task's end, then a ``reply`` with the task. Asked with ``tasks: true``, it also sends the
task as a JSON chunk (``{...}``: never base64) whenever its status or its waiting approval
prompt changes, so the near side's page shows the prompt as a local one does.
``term_input {task_id, data}`` and ``term_resize {task_id, rows, cols}`` type into it and size
it.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from ..launch.manager import TaskManager
    from ..launch.task import TaskInfo

PIECE = 192 * 1024  # output bytes in one frame (base64: 256 KiB, far under a frame's bound)
MAX_INPUT_CHARS = 100_000

Send = Callable[[dict[str, Any]], None]


class Terminals:
    def __init__(self, tasks: TaskManager | None, send: Send) -> None:
        self._tasks = tasks
        self._send = send
        self._lock = threading.Lock()
        self._watching: dict[str, threading.Event] = {}

    def _manager(self) -> TaskManager:
        if self._tasks is None:
            raise LookupError("this agentbar launches no agents")
        return self._tasks

    def attach(self, call_id: int, args: dict[str, Any]) -> None:
        """Stream a task's output as ``call_id``'s chunks until detached or ended (on a thread
        of its own: it waits)."""
        tasks = self._manager()
        task_id, watch = str(args.get("task_id")), str(args.get("watch"))
        task = tasks.task(task_id)  # NoSuchTask: the caller answers with the error
        ended = threading.Event()
        with self._lock:
            self._watching[watch] = ended

        def output(data: bytes) -> None:  # the task's reader thread
            for start in range(0, len(data), PIECE):
                piece = base64.b64encode(data[start : start + PIECE]).decode()
                self._send({"t": "chunk", "id": call_id, "text": piece})

        told, telling = [_told(task.info())], threading.Lock()

        def on_task(info: TaskInfo) -> None:  # any thread
            if info.task_id != task_id:
                return
            if not info.alive:
                ended.set()
                return
            with telling:  # one at a time: the page sees its changes in order
                if args.get("tasks") is True and _told(info) != told[0]:
                    told[0] = _told(info)
                    doc = orjson.dumps(info.to_json()).decode()
                    self._send({"t": "chunk", "id": call_id, "text": doc})

        unsubscribe = tasks.subscribe(on_task)
        backlog, detach = task.attach(output)
        try:
            # The scrollback, or one empty chunk: the near side knows at once it is attached.
            if backlog:
                output(backlog)
            else:
                self._send({"t": "chunk", "id": call_id, "text": ""})
            if not task.info().alive:
                ended.set()
            ended.wait()
        finally:
            detach()
            unsubscribe()
            with self._lock:
                self._watching.pop(watch, None)
        self._send({"t": "reply", "id": call_id, "result": {"task": task.info().to_json()}})

    def detach(self, args: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            ended = self._watching.get(str(args.get("watch")))
        if ended is not None:
            ended.set()
        return {"detached": ended is not None}

    def type_in(self, args: dict[str, Any]) -> dict[str, Any]:
        data = args.get("data")
        if not isinstance(data, str):
            raise ValueError("data is text")
        self._manager().send_bytes(
            str(args.get("task_id")), data[:MAX_INPUT_CHARS].encode("utf-8", "replace")
        )
        return {}

    def resize(self, args: dict[str, Any]) -> dict[str, Any]:
        rows, cols = args.get("rows"), args.get("cols")
        if not isinstance(rows, int) or not isinstance(cols, int):
            raise ValueError("rows and cols are integers")
        self._manager().resize(str(args.get("task_id")), rows, cols)
        return {}


def _told(info: TaskInfo) -> tuple[str, str | None]:
    """What of a task the near side's page is told of as it changes: its status, and the
    question of the approval prompt on its screen (if any)."""
    return str(info.status), None if info.waiting is None else info.waiting.question
