"""What a replay is made of: items, sub-agent links, threads and pages (pure values; any thread).

A ``ReplayItem`` is one thing a person reads in a transcript: a prompt, an answer, a thinking
block, a tool call with its input, a tool result with its output, a link to a sub-agent's thread,
a compaction marker, an error, a note, or an unknown line shown plainly. Every item names the
byte offset of the line it came from (and its position in that line), so search hits, cursors
and "fetch the whole item" all point into the transcript itself. Everything here is JSON-able
with ``to_json()``; transcript text is carried as it was written (untrusted: the front-end must
escape or sanitise it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

import orjson

from .. import jsonsafe
from ..model import iso
from ..records import Usage
from .files import AgentRoots, Line, TranscriptFile
from .readable import plain
from .views import EMPTY_VIEW_JSON, ItemView, patch_view, tool_view, words_of

MAIN_THREAD = "main"
INLINE_PREFIX = "inline:"  # thread id of a sub-agent written inline in the main transcript

# Text longer than these is cut in pages (``truncated`` set; ``chars`` is the full length) and
# served whole by the item endpoint.
MESSAGE_CHARS = 32_000  # prompts, answers, thinking, notes
OUTPUT_CHARS = 8_000  # tool inputs and outputs, unknown lines' raw JSON
VIEW_CHARS = 24_000  # each list of a view: a diff's lines, todos, questions


class ItemKind(StrEnum):
    USER = "user"  # a prompt the person typed
    ASSISTANT = "assistant"  # answer text
    THINKING = "thinking"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    SUBAGENT = "subagent"  # a link to a sub-agent's thread, where it was spawned
    COMPACTION = "compaction"
    ERROR = "error"
    NOTE = "note"  # injected context, meta and bookkeeping worth showing, turn ends, titles
    UNKNOWN = "unknown"  # a line no adapter knows: its raw JSON, shown plainly


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentLink:
    """Where a sub-agent's thread is: page it with ``thread``."""

    thread: str
    description: str | None = None
    agent_type: str | None = None
    call_id: str | None = None  # the tool call that spawned it, when known

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayItem:
    kind: ItemKind
    offset: int  # byte offset of the line the item came from
    index: int = 0  # its position among the items of that line
    ts: float | None = None
    agent_id: str | None = None  # the sub-agent that wrote it (None: the main thread)
    text: str = ""  # message, thinking, tool output, note or error text; raw JSON of unknowns
    truncated: bool = False  # ``text`` or ``input`` was cut for a page
    chars: int = 0  # full length of ``text`` in characters
    name: str | None = None  # tool name; note or unknown subtype
    call_id: str | None = None
    summary: str | None = None  # tool call: one readable line (the command, the file)
    input: Any = None  # tool call: its input (JSON value; a cut string when too long)
    is_error: bool = False
    denied: bool = False  # tool result: the user or a policy refused the call
    model: str | None = None
    usage: Usage | None = None  # assistant items: tokens this line added (split copies count once)
    link: SubagentLink | None = None
    line_bytes: int = 0  # length of the source line (without its newline)
    view: ItemView | None = None  # diffs, todos, questions, commands (``views.py``)

    @property
    def key(self) -> tuple[int, int]:
        return (self.offset, self.index)

    def to_json(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "kind": str(self.kind),
            "offset": self.offset,
            "index": self.index,
            "ts": iso(self.ts),
            "agent_id": self.agent_id,
            "text": self.text,
            "truncated": self.truncated,
            "chars": self.chars,
            "name": self.name,
            "call_id": self.call_id,
            "summary": self.summary,
            "input": self.input,
            "is_error": self.is_error,
            "denied": self.denied,
            "model": self.model,
            "usage": None if usage is None else usage.to_json(),
            "link": None if self.link is None else self.link.to_json(),
            "label": note_label(self.name) if self.kind is ItemKind.NOTE else None,
            **(EMPTY_VIEW_JSON if self.view is None else self.view.to_json()),
        }

    def cut(self) -> ReplayItem:
        """This item with long text and input cut to the page limits."""
        limit = OUTPUT_CHARS if self.kind in _OUTPUT_KINDS else MESSAGE_CHARS
        text, cut_text = cut_text_to(self.text, limit)
        value, cut_input = cut_value(self.input, OUTPUT_CHARS)
        view, cut_view = (None, False) if self.view is None else self.view.cut(VIEW_CHARS)
        if not (cut_text or cut_input or cut_view):
            return self
        return replace(self, text=text, input=value, view=view, truncated=True)


# What a note is, in words a person reads (``name`` is the adapter's own word for it).
_NOTE_LABELS = {
    "turn_end": "Turn finished",
    "interrupted": "Interrupted",
    "compact_summary": "Compaction summary",
    "compact-summary": "Compaction summary",
    "notification": "Notification",
    "turn_failed": "Turn failed",
    "command_output": "Command output",
    "title": "Title",
    "context": "Context",
    "session_meta": "Session",
    "oversized": "Line too long to show",
    "user/meta": "Context",
    "user/injected": "Injected text",
}


def note_label(name: str | None) -> str:
    """A note's name in words: ``turn_end`` -> "Turn finished", ``system/stop_hook_summary``
    -> "Stop hook summary"."""
    if not name:
        return "Note"
    known = _NOTE_LABELS.get(name)
    if known is not None:
        return known
    return words_of(name) or "Note"


_OUTPUT_KINDS = frozenset({ItemKind.TOOL_RESULT, ItemKind.UNKNOWN, ItemKind.TOOL_CALL})


def cut_text_to(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def cut_value(value: Any, limit: int) -> tuple[Any, bool]:
    """A JSON value whose serialised form fits ``limit`` characters, or the start of that form
    as a string (with True: it was cut)."""
    if value is None or isinstance(value, bool | int | float):
        return value, False
    if isinstance(value, str):
        return cut_text_to(value, limit)
    encoded = json_text(value)
    if len(encoded) <= limit:
        return value, False
    return encoded[:limit], True


def json_text(value: Any) -> str:
    """Pretty JSON text of any value (what a person reads for an input or an unknown line)."""
    return jsonsafe.dumps(value, orjson.OPT_INDENT_2).decode()


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadInfo:
    """A sub-agent thread of a session, as its own file tells (``description`` and ``call_id``
    when its metadata names them; ``first_prompt`` to match the spawning call otherwise)."""

    thread: str
    description: str | None = None
    agent_type: str | None = None
    call_id: str | None = None
    first_prompt: str | None = None
    started_at: float | None = None
    # Not a sub-agent the model asked for but one the CLI runs for itself: "compaction" (the
    # helper that writes a compaction's summary) or "warmup" (a cache warm-up); None otherwise.
    helper: str | None = None

    def link(self) -> SubagentLink:
        return SubagentLink(
            thread=self.thread,
            description=self.description or self.first_prompt,
            agent_type=self.agent_type,
            call_id=self.call_id,
        )

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "started_at": iso(self.started_at)}


@dataclass(frozen=True, slots=True)
class ThreadCatalog:
    """The sub-agent threads a session has, for linking spawning calls to them."""

    threads: tuple[ThreadInfo, ...] = ()
    _by_call: Mapping[str, ThreadInfo] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, threads: tuple[ThreadInfo, ...]) -> ThreadCatalog:
        by_call = {t.call_id: t for t in threads if t.call_id}
        return cls(threads, by_call)

    def for_call(self, call_id: str | None, prompt: str | None) -> ThreadInfo | None:
        """The thread a spawning call started: named by the thread's metadata, else the one
        whose first prompt is the call's prompt (and not claimed by another call)."""
        if call_id and (found := self._by_call.get(call_id)) is not None:
            return found
        if prompt:
            wanted = prompt.strip()
            for thread in self.threads:
                if thread.call_id is None and (thread.first_prompt or "").strip() == wanted:
                    return thread
        return None

    def named(self, thread_id: str) -> ThreadInfo | None:
        return next((t for t in self.threads if t.thread == thread_id), None)

    def mentioned_in(self, text: str) -> list[ThreadInfo]:
        """Threads whose id appears in ``text`` (Codex names a spawned thread in the output)."""
        return [t for t in self.threads if len(t.thread) >= 8 and t.thread in text]


class LineItems:
    """The items of one line as a parser builds them: offset, time and index filled in."""

    def __init__(self, offset: int, ts: float | None, agent_id: str | None) -> None:
        self.offset = offset
        self.ts = ts
        self.agent_id = agent_id
        self.items: list[ReplayItem] = []

    def add(self, kind: ItemKind, text: str = "", **fields: Any) -> ReplayItem:
        """A new item of this line; terminal escape codes are taken out of its text, and a
        tool call gets the view its input gives (unless ``view`` is given)."""
        fields.setdefault("ts", self.ts)
        fields.setdefault("agent_id", self.agent_id)
        text = plain(text)
        if kind is ItemKind.TOOL_CALL and "view" not in fields:
            fields["view"] = call_view(fields.get("name"), fields.get("input"))
        item = ReplayItem(
            kind=kind,
            offset=self.offset,
            index=len(self.items),
            text=text,
            chars=len(text),
            **fields,
        )
        self.items.append(item)
        return item

    def link(
        self, thread: ThreadInfo, call_id: str | None = None, *, description: str | None = None
    ) -> None:
        """A link to ``thread``, named by ``description`` (the spawning call's own few words)
        when given, else by what the thread's file says about itself."""
        link = thread.link()
        if call_id and not link.call_id:
            link = replace(link, call_id=call_id)
        if description:
            link = replace(link, description=description)
        self.add(ItemKind.SUBAGENT, link.description or "", link=link, call_id=link.call_id)


def call_view(name: str | None, tool_input: Any) -> ItemView | None:
    """The view of a tool call: its input's shape, or the patch it carries as a string."""
    view = tool_view(name, tool_input)
    if view is not None and view.diff is not None:
        return view
    patch = tool_input
    if isinstance(tool_input, dict):
        patch = tool_input.get("patchText") or tool_input.get("input") or tool_input.get("patch")
    patched = patch_view(patch)
    if patched is None:
        return view
    return patched if view is None else replace(view, diff=patched.diff)


class ReplayParser(Protocol):
    """Per-file, per-page parser from lines to items (one per agent, in ``core/sources``)."""

    def items(self, line: bytes, offset: int) -> list[ReplayItem]:
        """The items of one complete line (never raises: a bad line becomes an unknown item)."""
        ...

    def oversized(self, prefix: bytes, length: int, offset: int) -> list[ReplayItem]:
        """An item standing for a line too long to parse, from its first bytes."""
        ...


ReadSide = Callable[[str], "bytes | None"]  # a small file next to a transcript, if readable


@dataclass(frozen=True, slots=True)
class Spawns:
    """The few words each sub-agent spawning call gave (a ``Task``'s ``description``), by the
    call's id and by the prompt it gave the sub-agent."""

    by_call: Mapping[str, str] = field(default_factory=dict)
    by_prompt: Mapping[str, str] = field(default_factory=dict)

    def describe(self, thread: ThreadInfo) -> ThreadInfo:
        """``thread`` named by its spawning call's words when its own file names none."""
        if thread.description:
            return thread
        found = self.by_call.get(thread.call_id or "") or self.by_prompt.get(
            (thread.first_prompt or "").strip()
        )
        return replace(thread, description=found) if found else thread

    def __add__(self, more: Spawns) -> Spawns:
        return Spawns({**self.by_call, **more.by_call}, {**self.by_prompt, **more.by_prompt})


@runtime_checkable
class DescribesSpawns(Protocol):
    """An adapter whose sub-agent files do not say what they are for, while the calls that
    spawned them, in the main transcript, do."""

    def spawns(self, lines: Iterator[Line]) -> Spawns:
        """What the spawning calls among ``lines`` said (lines of no spawn skipped quickly)."""
        ...


class ReplayAdapter(Protocol):
    """What replay needs from one agent's adapter (``core/sources/*_replay.py``)."""

    def parser(self, path: str, catalog: ThreadCatalog, *, thread: str, main: bool) -> ReplayParser:
        """A parser for one page of ``path``: the main transcript (``main``: inline sub-agent
        lines become links) or a sub-agent's thread."""
        ...

    def thread_info(self, thread: str, lines: Iterator[Line], read_side: ReadSide) -> ThreadInfo:
        """What a sub-agent thread's first lines (and side files) say about it."""
        ...

    def inline_thread(self, root: Line, lines: Iterator[Line]) -> list[int] | None:
        """Offsets of the lines of the inline sub-agent thread whose first line is ``root``
        (None when ``root`` does not start one), from the lines after it."""
        ...


@runtime_checkable
class RendersTranscript(Protocol):
    """An adapter whose sessions are not files of lines (rows of a database): it renders one
    as lines for replay, from the transcript locator the engine gave it."""

    def transcript(self, path: str, roots: AgentRoots) -> TranscriptFile:
        """The session's lines; raises ``OutsideRoots`` or ``OSError`` as ``roots.open``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Focus:
    """The item that needs the user (a pending approval or a question), when there is one."""

    offset: int
    index: int
    reason: str  # "approval" or "question"

    def to_json(self) -> dict[str, Any]:
        return {"offset": self.offset, "index": self.index, "reason": self.reason}


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """Items of the complete lines in ``[start, end)`` of one thread's file, in file order.

    ``size`` is where the complete lines end now (a line still being written is not counted);
    ``before`` and ``after`` are the cursors of the neighbouring pages (None at either end).
    """

    thread: str
    items: tuple[ReplayItem, ...]
    start: int
    end: int
    size: int
    focus: Focus | None = None

    @property
    def before(self) -> int | None:
        return self.start if self.start > 0 else None

    @property
    def after(self) -> int | None:
        return self.end if self.end < self.size else None

    def to_json(self) -> dict[str, Any]:
        return {
            "thread": self.thread,
            "items": [item.to_json() for item in self.items],
            "start": self.start,
            "end": self.end,
            "size": self.size,
            "before": self.before,
            "after": self.after,
            "focus": None if self.focus is None else self.focus.to_json(),
        }
