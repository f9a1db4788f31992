"""Gemini CLI chat lines to replay items (any thread; pure per-page state).

The records parser (``chat.py``) decides what each line is (a prompt or a history copy, a
re-appended message, a finished call); this module adds what a person reads: the call's
arguments, its output, notes and errors. A JSON chat (up to 0.38) is one document rewritten
whole: its items all come with its first line (offset 0), read from the file as it is now.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import records as rec
from ...replay import model as rm
from ...replay.files import Line
from ...sources.base import (
    MalformedLine,
    StreamKind,
    StreamSpec,
    load_json_object,
    size_text,
)
from .chat import GeminiChatParser, function_responses, part_texts
from .files import AGENT

THREAD_SCAN_LINES = 60  # lines of a sub-agent's chat read for its first prompt


def _spec(path: str) -> StreamSpec:
    return StreamSpec(
        AGENT, StreamKind.TRANSCRIPT, Path(path), whole_document=path.endswith(".json")
    )


class GeminiReplayParser:
    """Items of the lines of one page of one chat."""

    def __init__(self, path: str, *, thread: str, main: bool) -> None:
        self.path = path
        self.thread = None if main else thread
        self._spec = _spec(path)
        self._records = GeminiChatParser(self._spec, None)
        self._model: str | None = None
        self._usage: rec.Usage | None = None

    def items(self, line: bytes, offset: int) -> list[rm.ReplayItem]:
        if self._spec.whole_document:
            return self._document(offset)
        try:
            obj = load_json_object(line)
            records = self._records.parse(line)
        except MalformedLine as exc:
            out = rm.LineItems(offset, None, self.thread)
            out.add(rm.ItemKind.UNKNOWN, line.decode("utf-8", "replace"), name=f"malformed: {exc}")
            return out.items
        return self._items(obj, records, offset)

    def oversized(self, prefix: bytes, length: int, offset: int) -> list[rm.ReplayItem]:
        out = rm.LineItems(offset, None, self.thread)
        out.add(
            rm.ItemKind.NOTE, f"[a line of {size_text(length)}, too long to show]", name="oversized"
        )
        return out.items

    def _document(self, offset: int) -> list[rm.ReplayItem]:
        """The whole JSON chat, at its first line; nothing for the lines after it."""
        if offset != 0:
            return []
        try:
            data = Path(self.path).read_bytes()
            doc = load_json_object(data.replace(b"\n", b" "))
            records = self._records.parse(data.replace(b"\n", b" "))
        except (OSError, MalformedLine) as exc:
            out = rm.LineItems(offset, None, self.thread)
            out.add(rm.ItemKind.UNKNOWN, f"{self.path}: {exc}", name="unreadable")
            return out.items
        messages = doc.get("messages")
        by_id = {
            m["id"]: m
            for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, dict) and isinstance(m.get("id"), str)
        }
        out = rm.LineItems(offset, None, self.thread)
        for record in records:
            source = by_id.get(_message_id(record) or "", doc)
            out.ts = record.ts
            self._item(record, source, out)
        return out.items

    def _items(
        self, obj: dict[str, Any], records: list[rec.Record], offset: int
    ) -> list[rm.ReplayItem]:
        out = rm.LineItems(offset, records[0].ts if records else None, self.thread)
        for record in records:
            self._item(record, obj, out)
        return out.items

    def _item(self, record: rec.Record, obj: dict[str, Any], out: rm.LineItems) -> None:
        match record:
            case rec.Prompt(text=text):
                out.add(rm.ItemKind.USER, text)
            case rec.AssistantText(text=text):
                out.add(rm.ItemKind.ASSISTANT, text, model=self._model, usage=self._usage)
                self._usage = None
            case rec.Thinking(text=text):
                out.add(rm.ItemKind.THINKING, text, model=self._model)
            case rec.ToolCall(call_id=call_id):
                call = _call(obj, call_id)
                out.add(
                    rm.ItemKind.TOOL_CALL,
                    name=record.name,
                    call_id=call_id,
                    summary=record.summary,
                    input=call.get("args"),
                    model=self._model,
                )
            case rec.ToolResult(call_id=call_id):
                out.add(
                    rm.ItemKind.TOOL_RESULT,
                    _result_text(obj, call_id),
                    call_id=call_id,
                    is_error=record.is_error,
                    denied=record.denied,
                )
            case rec.ModelSeen(model=model):
                self._model = model
            case rec.UsageReport(usage=usage):
                self._usage = usage  # the response's tokens, shown on its answer text
            case rec.TurnAborted(reason=reason):
                out.add(rm.ItemKind.NOTE, reason, name="interrupted")
            case rec.ApiError(message=message):
                out.add(rm.ItemKind.ERROR, message)
            case rec.TitleSet(title=title):
                out.add(rm.ItemKind.NOTE, title, name="title")
            case rec.SessionMeta(cwd=cwd):
                out.add(rm.ItemKind.NOTE, cwd or "Gemini CLI session", name="session_meta")
            case rec.Bookkeeping(kind="info" | "warning" as kind):
                text = "".join(part_texts(obj.get("content")))
                if text:
                    out.add(rm.ItemKind.NOTE, text, name=kind)
            case rec.Unknown(kind=kind):
                out.add(rm.ItemKind.UNKNOWN, rm.json_text(obj), name=kind)


def _message_id(record: rec.Record) -> str | None:
    """Not every record names its message; those that do let a document's item find it."""
    if isinstance(record, rec.AssistantText):
        return record.message_id
    return None


def _call(obj: dict[str, Any], call_id: str) -> dict[str, Any]:
    """The ``toolCalls`` entry with this id, in a message or anywhere in a document."""
    for message in _messages(obj):
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and call.get("id") == call_id:
                return call
    return {}


def _messages(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    messages = obj.get("messages")
    if isinstance(messages, list):
        yield from (m for m in messages if isinstance(m, dict))
    else:
        yield obj


def _result_text(obj: dict[str, Any], call_id: str) -> str:
    call = _call(obj, call_id)
    responses = function_responses(call.get("result")) if call else []
    if not responses:
        responses = [
            r
            for m in _messages(obj)
            for r in function_responses(m.get("content"))
            if r.get("id") == call_id
        ]
    for response in responses:
        body = response.get("response")
        if isinstance(body, dict):
            for key in ("output", "error"):
                value = body.get(key)
                if isinstance(value, str):
                    return value
            return rm.json_text(body)
    return ""


class GeminiReplay:
    """The Gemini CLI adapter's replay side (``core.replay.model.ReplayAdapter``)."""

    def parser(
        self, path: str, catalog: rm.ThreadCatalog, *, thread: str, main: bool
    ) -> GeminiReplayParser:
        return GeminiReplayParser(path, thread=thread, main=main)

    def thread_info(
        self, thread: str, lines: Iterator[Line], read_side: rm.ReadSide
    ) -> rm.ThreadInfo:
        records = GeminiChatParser(_spec(thread), None)
        started: float | None = None
        first_prompt: str | None = None
        for count, line in enumerate(lines):
            if count >= THREAD_SCAN_LINES or line.oversized:
                break
            try:
                found = records.parse(line.data)
            except MalformedLine:
                continue
            for record in found:
                started = started or record.ts
                if isinstance(record, rec.Prompt):
                    first_prompt = record.text.strip() or None
            if first_prompt:
                break
        return rm.ThreadInfo(thread=thread, first_prompt=first_prompt, started_at=started)

    def inline_thread(self, root: Line, lines: Iterator[Line]) -> list[int] | None:
        return None  # every sub-agent has a chat file of its own


REPLAY = GeminiReplay()
