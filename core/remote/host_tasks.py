"""A host's running tasks as the channel carries them, and back (pure; any thread).

The far side sends the agents its own task manager runs (``tasks`` frame) with its session list
and whenever one of them changes (started, bound, asking, stopping, gone); the near side keeps
the last list of a connected host, so the tray's "Launched agents" menu lists them without a
call. A task that does not read is left out, never shown as something else. A far side from
before this frame sends none: the near side then lists no task of it, and nothing fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model import Agent
from .wire import WireError

if TYPE_CHECKING:
    from ..launch.task import TaskInfo

MAX_TASKS = 64  # running agents on one machine: a few; more is not a matching agentbar
MAX_TEXT_CHARS = 4096  # a project's path, a prompt's question
# A far stop answers once the task is gone: its agent's exit keys first, then signals.
STOP_SECONDS = 60.0
TASK_ID = re.compile(r"^[0-9a-f]{1,32}$")  # as the task manager makes them (a URL's part)
AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")  # a kit's name
SENT = ("task_id", "agent", "project", "status", "session_id", "waiting")
ALIVE = ("running", "stopping")


@dataclass(frozen=True, slots=True, kw_only=True)
class HostTask:
    """A task a remote host's agentbar runs, as it last told: ``waiting`` is the approval
    prompt's question on its screen then (None: none asks)."""

    host: str
    task_id: str
    agent: Agent
    project: str
    status: str  # running, or stopping
    session_id: str | None
    waiting: str | None


def tasks_to_wire(infos: Iterable[TaskInfo]) -> list[dict[str, Any]]:
    """The running tasks' fields the near side shows (``TaskInfo.to_json``'s names), newest
    first; their size, clients and screen stay here (a terminal attached is no news)."""
    docs = (info.to_json() for info in infos if info.alive)
    return [{name: doc[name] for name in SENT} for doc in docs][:MAX_TASKS]


def tasks_from_wire(docs: object, host: str) -> tuple[HostTask, ...]:
    """The tasks a far side sent, each of ``host``; one that does not read is left out."""
    if not isinstance(docs, list) or len(docs) > MAX_TASKS:
        raise WireError(f"tasks is a list of at most {MAX_TASKS}")
    return tuple(task for task in (_task(doc, host) for doc in docs) if task is not None)


def _task(doc: object, host: str) -> HostTask | None:
    if not isinstance(doc, dict):
        return None
    task_id, agent, project = doc.get("task_id"), doc.get("agent"), _text(doc.get("project"))
    status, session_id, waiting = doc.get("status"), doc.get("session_id"), doc.get("waiting")
    if not (isinstance(task_id, str) and TASK_ID.match(task_id)):
        return None
    if not (isinstance(agent, str) and AGENT_NAME.match(agent)) or project is None:
        return None
    if status not in ALIVE or (session_id is not None and _text(session_id) is None):
        return None
    question = None if waiting is None else _question(waiting)
    if waiting is not None and question is None:
        return None
    return HostTask(host=host, task_id=task_id, agent=Agent(agent), project=project,
                    status=str(status), session_id=session_id, waiting=question)  # fmt: skip


def _question(waiting: object) -> str | None:
    return _text(waiting.get("question")) if isinstance(waiting, dict) else None


def _text(value: object) -> str | None:
    if not isinstance(value, str) or len(value) > MAX_TEXT_CHARS:
        return None
    return value
