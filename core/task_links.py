"""The launched tasks' hold on their sessions: which task runs which session in which process,
and what its screen shows (engine thread only; fed by the task manager's inbox messages).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .engine_messages import TaskBound, TaskExited, TaskScreen, TaskStarted
from .model import Process, SessionKey
from .session_record import SessionRecord, SessionTable
from .state import fusion


@dataclass(eq=False)
class TaskLink:
    """A launched task's hold on its session."""

    key: SessionKey
    process: Process
    pty: fusion.PtyView = field(default_factory=fusion.PtyView)


class TaskLinks:
    def __init__(
        self,
        sessions: SessionTable,
        *,
        exiting: Callable[[Process], None],
        reserved: Callable[[Process], None],
    ) -> None:
        """``exiting`` is told of a task's process once the task exited (it may linger a
        moment, and must not be matched to a session again); ``reserved``, of a task's process
        as it starts (its task alone says which session it runs)."""
        self._sessions = sessions
        self._exiting = exiting
        self._reserved = reserved
        self._links: dict[str, TaskLink] = {}  # by task id
        self._task_of: dict[SessionKey, str] = {}

    def task_of(self, key: SessionKey) -> str | None:
        return self._task_of.get(key)

    def pty_of(self, key: SessionKey) -> fusion.PtyView | None:
        task_id = self._task_of.get(key)
        return None if task_id is None else self._links[task_id].pty

    def on_new_session(self, session: SessionRecord) -> None:
        """A session just appeared: if a task already runs it, the task's process is its."""
        task_id = self._task_of.get(session.key)
        if task_id is not None:
            self._hold(session, self._links[task_id])

    def on_message(self, message: TaskStarted | TaskBound | TaskScreen | TaskExited) -> None:
        if isinstance(message, TaskStarted):
            self._reserved(message.process)
            return
        if isinstance(message, TaskBound):
            self._bind(message)
            return
        link = self._links.get(message.task_id)
        if link is None:
            return
        if isinstance(message, TaskScreen):
            link.pty = fusion.PtyView(
                waiting=message.waiting,
                changed_at=message.at,
                question=message.question,
            )
        else:
            link.pty = fusion.PtyView(
                changed_at=link.pty.changed_at, exited=True, detail=message.detail
            )
            self._exiting(link.process)
        session = self._sessions.get(link.key)
        if session is None:
            return
        if link.pty.exited and session.process is not None:
            session.process = None
            session.alive = False
        self._sessions.changed(session)

    def _bind(self, message: TaskBound) -> None:
        link = self._links.get(message.task_id)
        if link is not None and link.key != message.key:
            self._let_go(link)  # bound anew (``/clear``): the old session is over
        if link is None or link.key != message.key:
            link = TaskLink(key=message.key, process=message.process)
            self._links[message.task_id] = link
            self._task_of[message.key] = message.task_id
        link.process = message.process
        session = self._sessions.get(message.key)
        self._release(link.process, keep=session)
        if session is not None:
            self._hold(session, link)

    def _hold(self, session: SessionRecord, link: TaskLink) -> None:
        """The task's process is the session's (unless the task already exited)."""
        if link.pty.exited:
            return
        session.process = link.process
        session.alive = True
        session.had_process = True
        self._sessions.changed(session)

    def _release(self, process: Process, *, keep: SessionRecord | None) -> None:
        """The task's process runs the session its task names, no other: a session matched
        to it by folder before the task's start was read lets go."""
        for other in self._sessions:
            if other is not keep and other.process is not None and other.process.pid == process.pid:
                other.process, other.alive = None, False
                self._sessions.changed(other)

    def _let_go(self, link: TaskLink) -> None:
        self._task_of.pop(link.key, None)
        session = self._sessions.get(link.key)
        if session is not None and session.process == link.process:
            session.process = None
            session.alive = False
            self._sessions.changed(session)
