"""The toy agent's sessions as replay items (any thread but the engine's)."""

from __future__ import annotations

from collections.abc import Iterator

from agentbar.core.replay.files import Line
from agentbar.core.replay.model import (
    ItemKind,
    LineItems,
    ReadSide,
    ReplayItem,
    ThreadCatalog,
    ThreadInfo,
)
from agentbar.core.sources.base import MalformedLine, load_json_object, parse_timestamp

_KINDS = {
    "user": ItemKind.USER,
    "says": ItemKind.ASSISTANT,
    "asks": ItemKind.TOOL_CALL,
    "answer": ItemKind.TOOL_RESULT,
}


class ToyReplayParser:
    def items(self, line: bytes, offset: int) -> list[ReplayItem]:
        try:
            data = load_json_object(line)
        except MalformedLine:
            out = LineItems(offset, None, None)
            out.add(ItemKind.UNKNOWN, line.decode("utf-8", "replace"))
            return out.items
        out = LineItems(offset, parse_timestamp(data.get("t")), None)
        for key, kind in _KINDS.items():
            if isinstance(data.get(key), str):
                out.add(kind, data[key], name="ask" if key == "asks" else None)
        if data.get("done") is True:
            out.add(ItemKind.NOTE, "turn ended", name="turn_end")
        return out.items

    def oversized(self, prefix: bytes, length: int, offset: int) -> list[ReplayItem]:
        out = LineItems(offset, None, None)
        out.add(ItemKind.UNKNOWN, f"a line of {length} bytes")
        return out.items


class ToyReplay:
    def parser(
        self, path: str, catalog: ThreadCatalog, *, thread: str, main: bool
    ) -> ToyReplayParser:
        return ToyReplayParser()

    def thread_info(self, thread: str, lines: Iterator[Line], read_side: ReadSide) -> ThreadInfo:
        return ThreadInfo(thread=thread)  # the toy agent has no sub-agents

    def inline_thread(self, root: Line, lines: Iterator[Line]) -> list[int] | None:
        return None


REPLAY = ToyReplay()
