"""opencode's messages and parts as agentbar records, with what each means for a turn's state
(pure, one instance per reader; engine thread).

opencode changes its objects in place: a tool part goes ``pending`` -> ``running`` ->
``completed`` or ``error``, an assistant message gets ``time.completed`` and ``finish`` when
its step ends, a text part grows while it streams. agentbar's records are a log, so the
``Translator`` remembers what it has already said about each object and says only what is new
when it sees the object again; feeding it the same rows twice says nothing the second time.

What the states come from (checked on opencode 1.1.65 and 1.18.33):

- a user message's own text part: the prompt, a turn starts;
- an assistant text part once it has ``time.end`` (it streams until then): answer text;
- a tool part ``pending`` with its input, or ``running``: a call in flight (the ``question``
  tool asks the person); ``completed``: its result; ``error``: a failed result, refused when
  the person rejected the permission;
- an assistant message with ``time.completed``: ``finish`` ``tool-calls`` means another step
  follows, unless the person rejected one of its calls (opencode stops the turn there); any
  other ``finish`` ends the turn with its last text; ``error``
  ``MessageAbortedError`` is an interrupt, any other error a failed turn;
- the session's title once opencode replaced its placeholder ("New session - <time>").

A waiting permission is not stored at all: the tool part stays ``running`` while opencode asks.
agentbar's plugin relays opencode's ``permission.asked`` event for that (``plugin.py``).
Sessions with a ``parent_id`` (the ``task`` tool's sub-agents) are told as sub-agent records
of their root session.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...records import (
    TITLE_RANK_AGENT,
    Activity,
    ApiError,
    Asks,
    AssistantText,
    Bookkeeping,
    Compaction,
    ModelSeen,
    Prompt,
    Record,
    SessionMeta,
    Thinking,
    TitleSet,
    ToolCall,
    ToolResult,
    TurnAborted,
    TurnEnded,
    Usage,
    UsageReport,
)
from ...sources.base import Owner, label, nonempty_str, one_line, token_count
from .rows import Json, MessageRow, PartRow, Rows, SessionRow

PLACEHOLDER_TITLES = ("New session - ", "Child session - ")
QUESTION_TOOLS = frozenset({"question"})
CONTINUES = frozenset({"tool-calls", "tool_calls"})  # the step called tools: another follows
ABORTED = "MessageAbortedError"
REJECTED = "rejected permission"  # in the error of a tool call the person refused
PENDING = frozenset({"pending", "running"})
# A search's pattern says more than the folder it searched.
TOOL_SUMMARY_KEYS = ("command", "pattern", "filePath", "file_path", "path", "url", "description",
                     "prompt", "query")  # fmt: skip


@dataclass(frozen=True, slots=True)
class SessionBatch:
    """New records of one session (or of one sub-agent of it, ``owner.agent_id``)."""

    owner: Owner
    records: list[Record]


@dataclass(slots=True)
class _Message:
    role: str
    created: float | None
    said: set[str] = field(default_factory=set)  # "model", "usage", "end"
    last_text: str | None = None
    refused: bool = False  # a call of this step was rejected: opencode stops the turn there


@dataclass(slots=True)
class _SessionMemory:
    root: str  # the session whose sub-agent this is, or itself
    meta_said: bool = False
    title: str | None = None


class Translator:
    """Rows in, per-session records out, each thing said once (see the module docstring)."""

    def __init__(self) -> None:
        self._sessions: dict[str, _SessionMemory] = {}
        self._parents: dict[str, str | None] = {}
        self._messages: dict[str, _Message] = {}
        self._parts: dict[str, set[str]] = {}  # what was said of each part: "call", "result"...
        self._waiting: dict[str, list[PartRow]] = {}  # parts whose message is not known yet
        self._unheard: dict[str, SessionRow] = {}  # sessions with no message yet: said later
        self._talking: set[str] = set()  # sessions with a message

    def translate(self, rows: Rows) -> list[SessionBatch]:
        out: dict[tuple[str, str | None], list[Record]] = {}
        for session in rows.sessions:
            self._parents[session.id] = session.parent_id
        changed = {m.id: m for m in rows.messages}
        for message in changed.values():
            self._message_seen(message)
        # A session is told once it has a message: opencode writes its row a moment (0.4 s
        # and more) before the prompt's, and a session with no turn yet would be reported as
        # waiting for a prompt in between.
        for session in rows.sessions:
            self._unheard[session.id] = session
        for session_id in [sid for sid in self._unheard if sid in self._talking]:
            self._session_records(self._unheard.pop(session_id), out)
        parts_of: dict[str, list[PartRow]] = {}
        for part in rows.parts:
            parts_of.setdefault(part.message_id, []).append(part)
        for message_id in list(self._waiting):
            if message_id in self._messages:
                parts_of.setdefault(message_id, []).extend(self._waiting.pop(message_id))
        # Message by message, in the order they were made: each one's parts (ids grow with
        # time), then its end, so a cold read of many turns keeps every turn in its place.
        order = sorted(
            set(changed) | set(parts_of),
            key=lambda mid: (
                (self._messages[mid].created or 0.0, mid)
                if mid in self._messages
                else (float("inf"), mid)
            ),
        )
        for message_id in order:
            for part in sorted(parts_of.get(message_id, ()), key=lambda p: p.id):
                self._part_records(part, out)
            if message_id in changed:
                self._message_records(changed[message_id], out)
        return [
            SessionBatch(Owner(root, agent_id), records)
            for (root, agent_id), records in out.items()
            if records
        ]

    # -- sessions ----------------------------------------------------------------------------

    def _root(self, session_id: str) -> str:
        seen: set[str] = set()
        current = session_id
        while True:
            parent = self._parents.get(current)
            if not parent or parent in seen:
                return current
            seen.add(current)
            current = parent

    def _bucket(
        self, out: dict[tuple[str, str | None], list[Record]], session_id: str
    ) -> tuple[list[Record], str | None]:
        root = self._root(session_id)
        agent_id = None if root == session_id else session_id
        return out.setdefault((root, agent_id), []), agent_id

    def _session_records(
        self, row: SessionRow, out: dict[tuple[str, str | None], list[Record]]
    ) -> None:
        memory = self._sessions.setdefault(row.id, _SessionMemory(root=self._root(row.id)))
        records, agent_id = self._bucket(out, row.id)
        ts = _seconds(row.created_ms)
        if not memory.meta_said:
            memory.meta_said = True
            records.append(
                SessionMeta(
                    ts=ts,
                    agent_id=agent_id,
                    session_id=row.id,
                    cwd=row.directory,
                    cli_version=row.version,
                    parent_session_id=row.parent_id,
                    originator="opencode",
                )
            )
        title = (row.title or "").strip()
        placeholder = not title or title.startswith(PLACEHOLDER_TITLES)
        if agent_id is None and not placeholder and title != memory.title:
            memory.title = title
            records.append(
                TitleSet(ts=_seconds(row.updated_ms), title=one_line(title), rank=TITLE_RANK_AGENT)
            )

    # -- messages ----------------------------------------------------------------------------

    def _message_seen(self, row: MessageRow) -> None:
        self._talking.add(row.session_id)
        if row.id not in self._messages:
            role = row.data.get("role")
            self._messages[row.id] = _Message(
                role=role if isinstance(role, str) else "", created=_time(row.data, "created")
            )

    def _message_records(
        self, row: MessageRow, out: dict[tuple[str, str | None], list[Record]]
    ) -> None:
        message = self._messages[row.id]
        if message.role != "assistant":
            return
        data = row.data
        records, agent_id = self._bucket(out, row.session_id)
        model = nonempty_str(data.get("modelID"))
        if model and "model" not in message.said:
            message.said.add("model")
            records.append(ModelSeen(ts=message.created, agent_id=agent_id, model=model))
        completed = _time(data, "completed")
        error = data.get("error")
        if (completed is None and not isinstance(error, dict)) or "end" in message.said:
            return
        message.said.add("end")
        usage = _usage(data.get("tokens"))
        if usage is not None:
            records.append(UsageReport(ts=completed, agent_id=agent_id, usage=usage, key=row.id))
        if isinstance(error, dict):
            name = label(error.get("name"))
            if name == ABORTED:
                records.append(TurnAborted(ts=completed, agent_id=agent_id, reason="interrupted"))
            else:
                records.append(TurnEnded(ts=completed, agent_id=agent_id, error=_error_text(error)))
            return
        finish = data.get("finish")
        if finish in CONTINUES and not message.refused:
            return
        records.append(TurnEnded(ts=completed, agent_id=agent_id, last_message=message.last_text))

    # -- parts -------------------------------------------------------------------------------

    def _part_records(self, row: PartRow, out: dict[tuple[str, str | None], list[Record]]) -> None:
        message = self._messages.get(row.message_id)
        if message is None:
            self._waiting.setdefault(row.message_id, []).append(row)
            return
        said = self._parts.setdefault(row.id, set())
        records, agent_id = self._bucket(out, row.session_id)
        data = row.data
        kind = data.get("type")
        if kind == "text":
            record = _text_record(row, message, said, agent_id)
        elif kind == "reasoning":
            record = _reasoning_record(data, said, agent_id)
        elif kind == "tool":
            message.refused |= self._tool_records(data, said, records, agent_id)
            return
        elif isinstance(kind, str) and kind not in said:
            said.add(kind)
            record = _marker_record(kind, data, agent_id)
        else:
            return
        if record is not None:
            records.append(record)

    def _tool_records(
        self, data: Json, said: set[str], records: list[Record], agent_id: str | None
    ) -> bool:
        """Records of one tool part; True when the person rejected the call."""
        state = data.get("state")
        if not isinstance(state, dict):
            return False
        status = state.get("status")
        call_id = nonempty_str(data.get("callID")) or "?"
        tool = nonempty_str(data.get("tool")) or "tool"
        tool_input = _obj(state.get("input"))
        times = _obj(state.get("time"))
        known = status in PENDING or (status in ("completed", "error") and "call" not in said)
        if known and "call" not in said and (status != "pending" or tool_input):
            said.add("call")
            records.append(
                ToolCall(
                    ts=_seconds(times.get("start")),
                    agent_id=agent_id,
                    call_id=call_id,
                    name=tool,
                    summary=_summary(tool, tool_input),
                    asks=Asks.QUESTION if tool in QUESTION_TOOLS else Asks.NOTHING,
                )
            )
        if status in ("completed", "error") and "result" not in said:
            said.add("result")
            error = state.get("error")
            denied = status == "error" and isinstance(error, str) and REJECTED in error
            records.append(
                ToolResult(
                    ts=_seconds(times.get("end")),
                    agent_id=agent_id,
                    call_id=call_id,
                    is_error=status == "error",
                    denied=denied,
                )
            )
            return denied
        return False


# -- one part, said once ---------------------------------------------------------------------


def _text_record(
    row: PartRow, message: _Message, said: set[str], agent_id: str | None
) -> Record | None:
    """A user message's text is its prompt; an assistant's, its answer once it stopped
    streaming (``time.end``). opencode's own synthetic text is neither."""
    data = row.data
    text = data.get("text")
    if not isinstance(text, str) or "text" in said or data.get("synthetic") is True:
        return None
    if message.role == "user":
        said.add("text")
        return Prompt(ts=message.created, agent_id=agent_id, text=text) if text.strip() else None
    end = _obj(data.get("time")).get("end")
    if message.role != "assistant" or end is None or not text.strip():
        return None
    said.add("text")
    message.last_text = text
    return AssistantText(ts=_seconds(end), agent_id=agent_id, text=text, message_id=row.message_id)


def _reasoning_record(data: Json, said: set[str], agent_id: str | None) -> Record | None:
    text = data.get("text")
    end = _obj(data.get("time")).get("end")
    if not isinstance(text, str) or not text.strip() or end is None or "text" in said:
        return None
    said.add("text")
    return Thinking(ts=_seconds(end), agent_id=agent_id, text=text)


def _marker_record(kind: str, data: Json, agent_id: str | None) -> Record:
    """The record of a part said by its kind alone (a step's start or finish, a compaction,
    a retry, a kind agentbar does not know)."""
    if kind in ("step-start", "step-finish"):
        return Activity(ts=None, agent_id=agent_id, kind=kind)
    if kind == "compaction":
        return Compaction(ts=None, agent_id=agent_id, trigger="auto" if data.get("auto") else None)
    if kind == "retry":
        error = data.get("error")
        return ApiError(
            ts=_seconds(_obj(data.get("time")).get("created")),
            agent_id=agent_id,
            message=_error_text(error) if isinstance(error, dict) else "retrying",
            retrying=True,
        )
    return Bookkeeping(ts=None, agent_id=agent_id, kind=f"part/{kind}")


# -- field access that never raises on a wrong shape -----------------------------------------


def _seconds(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return value / 1000.0 if value > 1e11 else float(value)
    return None


def _time(data: Json, key: str) -> float | None:
    times = data.get("time")
    return _seconds(times.get(key)) if isinstance(times, dict) else None


def _usage(tokens: object) -> Usage | None:
    if not isinstance(tokens, dict):
        return None
    cache = _obj(tokens.get("cache"))
    usage = Usage(
        input_tokens=token_count(tokens.get("input")),
        output_tokens=token_count(tokens.get("output")) + token_count(tokens.get("reasoning")),
        cache_read_tokens=token_count(cache.get("read")),
        cache_creation_tokens=token_count(cache.get("write")),
    )
    return None if usage == Usage() else usage


def _error_text(error: Json) -> str:
    data = error.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    if isinstance(message, str) and message.strip():
        return one_line(message)
    return label(error.get("name")) or "error"


def _summary(tool: str, tool_input: Json) -> str:
    if tool in QUESTION_TOOLS:
        questions = tool_input.get("questions")
        if isinstance(questions, list) and questions and isinstance(questions[0], dict):
            text = questions[0].get("question")
            if isinstance(text, str):
                return one_line(text)
    for key in TOOL_SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value)
    return ""


def _obj(value: object) -> Json:
    """``value`` when it is a JSON object, else an empty one (fields of unknown shape)."""
    return value if isinstance(value, dict) else {}
