"""What the Markdown and HTML exports share: the walk through a session's threads that writes
each tool call with its own result and the sub-agents it spawned, the session's facts, the whole
title, the words each item is headed by (any thread but the engine's)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..model import SessionSnapshot, iso
from .model import MAIN_THREAD, ItemKind, ReplayItem, ThreadInfo, note_label
from .pages import NotFound, Replay

MAX_DEPTH = 4  # sub-agents of sub-agents...
# What is held back behind a call waiting for its result, at most (then it goes without).
WAITING_ITEMS = 5000
WAITING_CHARS = 16_000_000
_SHOWN_NOTES = frozenset(
    {"interrupted", "compact_summary", "notification", "turn_failed", "command_output"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    thinking: bool = True
    notes: bool = (
        False  # every note (injected context, titles, turn ends), not just the telling ones
    )


def thread_items(replay: Replay, snap: SessionSnapshot, thread: str) -> Iterator[ReplayItem]:
    try:
        yield from replay.items(snap, thread)
    except NotFound:
        return


@dataclass(slots=True)
class _Block:
    """One thing to write: an item, or a tool call with its result and the sub-agents it
    spawned (complete once its result came, or when the thread ends without one)."""

    item: ReplayItem
    result: ReplayItem | None = None
    links: list[ReplayItem] = field(default_factory=list)
    waiting: bool = False  # a call whose result may still come

    @property
    def chars(self) -> int:
        return self.item.chars + sum(i.chars for i in (self.result, *self.links) if i is not None)


class Writer:
    def __init__(self, options: Options) -> None:
        self.options = options

    def document(
        self, replay: Replay, snap: SessionSnapshot, threads: dict[str, ThreadInfo]
    ) -> Iterator[str]:
        yield self.header(snap, full_title(replay, snap))
        yield from self.thread(replay, snap, MAIN_THREAD, depth=0, seen={MAIN_THREAD})
        yield self.footer()

    def thread(
        self, replay: Replay, snap: SessionSnapshot, thread: str, *, depth: int, seen: set[str]
    ) -> Iterator[str]:
        """A thread's items in order; a tool call is written with its own result (paired by
        call id, as the JSON export and the web replay pair them, however calls and results
        interleave) and the sub-agents it spawned right after them. What follows a call
        waits for its result, up to ``WAITING_ITEMS`` items (then the call goes without)."""
        queue: deque[_Block] = deque()
        waiting: dict[str, _Block] = {}
        held = 0  # characters of text held back in ``queue``
        for item in thread_items(replay, snap, thread):
            block = waiting.get(item.call_id or "") if item.call_id else None
            if block is not None and item.kind is ItemKind.TOOL_RESULT:
                block.result, block.waiting = item, False
                del waiting[item.call_id or ""]
            elif block is not None and item.kind is ItemKind.SUBAGENT:
                block.links.append(item)
            elif item.kind is ItemKind.TOOL_CALL:
                block = _Block(item, waiting=bool(item.call_id) and item.call_id not in waiting)
                queue.append(block)
                if block.waiting:
                    waiting[item.call_id or ""] = block
            elif item.kind is ItemKind.SUBAGENT or self.shown(item):
                queue.append(_Block(item))
            else:
                continue
            held += item.chars
            while queue and (
                not queue[0].waiting or len(queue) > WAITING_ITEMS or held > WAITING_CHARS
            ):
                head = queue.popleft()
                held -= head.chars
                if head.waiting:  # given up on: its result, if it comes, is written alone
                    head.waiting = False
                    waiting.pop(head.item.call_id or "", None)
                yield from self.block(replay, snap, head, depth=depth, seen=seen)
        while queue:
            yield from self.block(replay, snap, queue.popleft(), depth=depth, seen=seen)

    def block(
        self, replay: Replay, snap: SessionSnapshot, block: _Block, *, depth: int, seen: set[str]
    ) -> Iterator[str]:
        item = block.item
        if item.kind is ItemKind.TOOL_CALL:
            yield self.tool(item, block.result)
            for link in block.links:
                yield from self.subagent(replay, snap, link, depth=depth, seen=seen)
        elif item.kind is ItemKind.SUBAGENT:
            yield from self.subagent(replay, snap, item, depth=depth, seen=seen)
        else:
            yield self.item(item)

    def subagent(
        self, replay: Replay, snap: SessionSnapshot, item: ReplayItem, *, depth: int, seen: set[str]
    ) -> Iterator[str]:
        target = item.link.thread if item.link is not None else None
        yield self.subagent_open(item)
        if target is not None and depth < MAX_DEPTH and target not in seen:
            yield from self.thread(replay, snap, target, depth=depth + 1, seen=seen | {target})
        yield self.subagent_close()

    def shown(self, item: ReplayItem) -> bool:
        if item.kind is ItemKind.THINKING:
            return self.options.thinking and bool(item.text.strip())
        if item.kind is ItemKind.NOTE:
            return self.options.notes or item.name in _SHOWN_NOTES
        return True

    def header(self, snap: SessionSnapshot, title: str) -> str:
        raise NotImplementedError

    def footer(self) -> str:
        raise NotImplementedError

    def item(self, item: ReplayItem) -> str:
        raise NotImplementedError

    def tool(self, call: ReplayItem, result: ReplayItem | None) -> str:
        raise NotImplementedError

    def subagent_open(self, item: ReplayItem) -> str:
        raise NotImplementedError

    def subagent_close(self) -> str:
        raise NotImplementedError


def facts(snap: SessionSnapshot) -> list[tuple[str, str]]:
    usage = snap.usage
    facts = [
        ("Agent", str(snap.key.agent)),
        ("Session", snap.key.session_id),
        ("Project", snap.project or ""),
        ("Started", iso(snap.started_at) or ""),
        ("Last activity", iso(snap.last_activity) or ""),
        ("State", str(snap.state.state)),
        ("Model", snap.model or ""),
        (
            "Tokens",
            f"{usage.input_tokens + usage.output_tokens:,} "
            f"({usage.input_tokens:,} in, {usage.output_tokens:,} out)",
        ),
        (
            "Cache",
            f"{usage.cache_read_tokens:,} read, {usage.cache_creation_tokens:,} written",
        ),
    ]
    return [(k, v) for k, v in facts if v]


def when(item: ReplayItem) -> str:
    stamp = iso(item.ts)
    return stamp.replace("T", " ").replace("Z", " UTC") if stamp else ""


TITLES = {
    ItemKind.USER: "User",
    ItemKind.ASSISTANT: "Assistant",
    ItemKind.THINKING: "Thinking",
    ItemKind.COMPACTION: "Compaction",
    ItemKind.ERROR: "Error",
    ItemKind.NOTE: "Note",
    ItemKind.UNKNOWN: "Unknown line",
    ItemKind.TOOL_RESULT: "Result of an earlier call",
}


def title_of(item: ReplayItem) -> str:
    if item.kind is ItemKind.NOTE:
        return note_label(item.name)
    if item.kind is ItemKind.USER and item.view is not None and item.view.command:
        return "User · command"
    return TITLES[item.kind]


def result_label(result: ReplayItem) -> str:
    if result.denied:
        return "Result (refused)"
    return "Result (error)" if result.is_error else "Result"


TITLE_LOOKAHEAD_ITEMS = 400  # items read from the top for the text a cut title came from


def full_title(replay: Replay, snap: SessionSnapshot) -> str:
    """The session's title whole: the index keeps it cut (``…``), so a cut one is looked up in
    the first items (the prompt or the title note it was taken from)."""
    title = " ".join((snap.title or "Session " + snap.key.session_id).split())
    if not title.endswith("…"):
        return title
    stem = title[:-1]
    for count, item in enumerate(thread_items(replay, snap, MAIN_THREAD)):
        if count >= TITLE_LOOKAHEAD_ITEMS:
            break
        if item.kind in (ItemKind.USER, ItemKind.NOTE):
            line = next(
                (" ".join(raw.split()) for raw in item.text.splitlines() if raw.strip()), ""
            )
            if len(line) > len(stem) and line.startswith(stem):
                return line
    return title


def subagent_title(item: ReplayItem) -> str:
    link = item.link
    return one_line((link.description if link else None) or item.text or "sub-agent")[:200]


def one_line(text: str) -> str:
    return " ".join(text.split())
