"""Claude Code transcript lines to replay items (any thread; pure per-page state).

The records parser (``claude_transcript``) decides what each line is (a typed prompt, injected
text, an interrupt, a tool result, a turn end...); this module adds what a person reads and the
records leave out: tool inputs, tool outputs, the text of notes, and the raw JSON of lines no
one knows. Sub-agents (agent-formats.md 1.9): a 2.0 ``agent-<id>.jsonl`` or 2.1
``<session>/subagents/agent-<id>.jsonl`` is its own thread, linked from the ``Task``/``Agent``
call that spawned it (the 2.1 ``.meta.json`` names that call; otherwise the thread's first
prompt is the call's prompt, or the result's ``toolUseResult.agentId`` names it). A 1.0
sub-agent written inline (``isSidechain`` lines in the session's own file) becomes a link in the
main thread at its first line, and a thread of its own, ``inline:<offset of that line>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import records as rec
from ...facts import NO_USAGE, split_usage_delta
from ...replay import model as rm
from ...replay.files import Line
from ...replay.readable import human_duration
from ...replay.views import ItemView, answers_of
from ...sources.base import (
    MalformedLine,
    StreamKind,
    StreamSpec,
    label,
    load_json_object,
    nonempty_str,
    parse_timestamp,
    size_text,
    small_int,
)
from .commands import command_output, slash_command
from .files import AGENT
from .transcript import ClaudeTranscriptParser

SPAWN_TOOLS = frozenset({"Task", "Agent"})
_NOTE_BOOKKEEPING = frozenset({"user/injected", "user/meta", "compact-summary"})
_HIDDEN_BOOKKEEPING = frozenset(
    {"file-history-snapshot", "last-prompt", "content-replacement", "user/empty", "tag"}
)
THREAD_SCAN_LINES = 40  # lines of a sub-agent's file read for its first prompt


def content_text(content: object) -> str:
    """The readable text of message content: a string, or blocks (text, tool results, images)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind == "image":
                parts.append("[image]")
            elif kind == "tool_result":
                parts.append(content_text(block.get("content")))
    return "\n".join(part for part in parts if part)


def _message_content(obj: dict[str, Any]) -> object:
    message = obj.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _blocks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    content = _message_content(obj)
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _block_with(obj: dict[str, Any], key: str, value: str) -> dict[str, Any]:
    return next((b for b in _blocks(obj) if b.get(key) == value), {})


class ClaudeReplayParser:
    """Items of the lines of one page of one Claude transcript."""

    def __init__(self, path: str, catalog: rm.ThreadCatalog, *, thread: str, main: bool) -> None:
        self.catalog = catalog
        self.main = main
        inline = thread.startswith(rm.INLINE_PREFIX)
        kind = StreamKind.TRANSCRIPT if main or inline else StreamKind.SUBAGENT
        agent_hint = None if main or inline else thread
        spec = StreamSpec(AGENT, kind, Path(path), agent_id_hint=agent_hint)
        self._records = ClaudeTranscriptParser(spec)
        self._recent_usage: list[tuple[str, rec.Usage]] = []
        self._linked: set[str] = set()
        # prompt of a spawning call in this page -> (call id, the call's description)
        self._spawns: dict[str, tuple[str, str | None]] = {}

    def items(self, line: bytes, offset: int) -> list[rm.ReplayItem]:
        try:
            obj = load_json_object(line)
        except MalformedLine as exc:
            out = rm.LineItems(offset, None, None)
            out.add(rm.ItemKind.UNKNOWN, line.decode("utf-8", "replace"), name=f"malformed: {exc}")
            return out.items
        out = rm.LineItems(offset, parse_timestamp(obj.get("timestamp")), None)
        if self.main and obj.get("isSidechain") is True:
            self._inline_link(obj, out)
            return out.items
        usage: rec.Usage | None = None  # goes on the line's first answer, thinking or call item
        for record in self._records.parse_object(obj):
            out.agent_id = record.agent_id
            if isinstance(record, rec.UsageReport):
                delta = split_usage_delta(self._recent_usage, record.usage, record.key)
                usage = None if delta == NO_USAGE else delta
                continue
            item = self._item(record, obj, out, usage)
            if item is not None and item.usage is not None:
                usage = None
        return out.items

    def oversized(self, prefix: bytes, length: int, offset: int) -> list[rm.ReplayItem]:
        out = rm.LineItems(offset, None, None)
        for record in self._records.parse_oversized(prefix, length):
            out.ts, out.agent_id = record.ts, record.agent_id
            text = f"[a line of {size_text(length)}, too long to show]"
            if isinstance(record, rec.ToolResult):
                out.add(rm.ItemKind.TOOL_RESULT, text, call_id=record.call_id, name="oversized")
            else:
                out.add(rm.ItemKind.NOTE, text, name="oversized")
        return out.items

    # -- one record, with what its line says about it ------------------------------------

    def _item(
        self, record: rec.Record, obj: dict[str, Any], out: rm.LineItems, usage: rec.Usage | None
    ) -> rm.ReplayItem | None:
        model = _model(obj)
        match record:
            case rec.Prompt(text=text):
                return out.add(rm.ItemKind.USER, text)
            case rec.AssistantText(text=text):
                return out.add(rm.ItemKind.ASSISTANT, text, model=model, usage=usage)
            case rec.Thinking(text=text):
                return out.add(rm.ItemKind.THINKING, text, model=model, usage=usage)
            case rec.ToolCall():
                return self._tool_call(record, obj, out, model, usage)
            case rec.ToolResult():
                return self._tool_result(record, obj, out)
            case rec.TurnEnded():
                duration = small_int(obj.get("durationMs"))
                took = "" if duration is None else f" in {human_duration(duration / 1000)}"
                return out.add(rm.ItemKind.NOTE, f"Turn finished{took}", name="turn_end")
            case rec.TurnAborted() | rec.TurnStarted():
                name = "interrupted" if isinstance(record, rec.TurnAborted) else "notification"
                return out.add(rm.ItemKind.NOTE, content_text(_message_content(obj)), name=name)
            case rec.ApiError(message=message, retrying=retrying):
                return out.add(rm.ItemKind.ERROR, message, name="retrying" if retrying else None)
            case rec.Compaction(trigger=trigger):
                text = nonempty_str(obj.get("content")) or "Conversation compacted"
                return out.add(rm.ItemKind.COMPACTION, text, name=trigger)
            case rec.TitleSet(rank=rec.TITLE_RANK_COMMAND):
                return None  # the command's own prompt item shows it
            case rec.TitleSet(title=title):
                return out.add(rm.ItemKind.NOTE, title, name="title")
            case rec.Bookkeeping(kind=kind):
                note = _bookkeeping_text(kind, obj)
                if note is None:
                    return None
                return _command_item(note, out) or out.add(rm.ItemKind.NOTE, note, name=kind)
            case rec.Unknown(kind=kind):
                return out.add(rm.ItemKind.UNKNOWN, rm.json_text(obj), name=kind)
        return None

    def _tool_call(
        self,
        record: rec.ToolCall,
        obj: dict[str, Any],
        out: rm.LineItems,
        model: str | None,
        usage: rec.Usage | None,
    ) -> rm.ReplayItem:
        tool_input = _block_with(obj, "id", record.call_id).get("input")
        description = (
            nonempty_str(tool_input.get("description")) if isinstance(tool_input, dict) else None
        )
        item = out.add(
            rm.ItemKind.TOOL_CALL,
            name=record.name,
            call_id=record.call_id,
            summary=record.summary,
            input=tool_input,
            model=model,
            usage=usage,
        )
        if record.name in SPAWN_TOOLS and isinstance(tool_input, dict):
            prompt = nonempty_str(tool_input.get("prompt"))
            if prompt:
                self._spawns[prompt.strip()] = (record.call_id, description)
            thread = self.catalog.for_call(record.call_id, prompt)
            if thread is not None and thread.thread not in self._linked:
                self._linked.add(thread.thread)
                out.link(thread, record.call_id, description=description)
        return item

    def _tool_result(
        self, record: rec.ToolResult, obj: dict[str, Any], out: rm.LineItems
    ) -> rm.ReplayItem:
        block = _block_with(obj, "tool_use_id", record.call_id)
        text = content_text(block.get("content"))
        result = obj.get("toolUseResult")
        answers = answers_of(result, text) if _answered(result, text) else None
        item = out.add(
            rm.ItemKind.TOOL_RESULT,
            text,
            call_id=record.call_id,
            is_error=record.is_error,
            denied=record.denied,
            view=None if answers is None else ItemView(answers=answers),
        )
        agent = nonempty_str(result.get("agentId")) if isinstance(result, dict) else None
        thread = self.catalog.named(agent) if agent else None
        if thread is not None and thread.thread not in self._linked:
            self._linked.add(thread.thread)
            out.link(thread, record.call_id)
        return item

    def _inline_link(self, obj: dict[str, Any], out: rm.LineItems) -> None:
        """An inline sub-agent's first line becomes a link to its thread; its other lines
        belong to that thread, not to the main one."""
        if obj.get("parentUuid") is not None or obj.get("type") != "user":
            return
        prompt = content_text(_message_content(obj)).strip()
        spawn = self._spawns.get(prompt)
        thread = rm.ThreadInfo(
            thread=f"{rm.INLINE_PREFIX}{out.offset}",
            description=(spawn[1] if spawn else None) or prompt or None,
            agent_type=nonempty_str(obj.get("agentId")),
            call_id=spawn[0] if spawn else None,
        )
        out.link(thread)


_ANSWERED_PREFIXES = ("User has answered your question", "Your questions have been answered")


def _answered(result: object, text: str) -> bool:
    """Whether a tool result is a question tool's answers (its call may be on another page)."""
    if isinstance(result, dict) and isinstance(result.get("answers"), dict):
        return True
    return text.lstrip().startswith(_ANSWERED_PREFIXES)


def _command_item(text: str, out: rm.LineItems) -> rm.ReplayItem | None:
    """A slash command as the person's prompt, or what a local command printed as a note."""
    command = slash_command(text)
    if command is not None:
        view = ItemView(command=command.name, args=command.args)
        return out.add(rm.ItemKind.USER, command.text, view=view)
    printed = command_output(text)
    if printed is not None:
        return out.add(rm.ItemKind.NOTE, printed, name="command_output")
    return None


def _bookkeeping_text(kind: str, obj: dict[str, Any]) -> str | None:
    """The note a bookkeeping line of this kind shows, or None for the kinds no one reads."""
    if kind in _NOTE_BOOKKEEPING:
        return content_text(_message_content(obj))
    if kind.startswith("system/"):
        return nonempty_str(obj.get("content")) or ""
    if kind in ("permission-mode", "mode"):
        return nonempty_str(obj.get("permissionMode")) or nonempty_str(obj.get("mode")) or ""
    return None if kind in _HIDDEN_BOOKKEEPING else ""


COMPACTION_HELPER_PREFIX = "acompact"  # agent-acompact-<hex>.jsonl (agent-formats.md 1.1)
WARMUP_PROMPT = "Warmup"  # 2.0.x warms its caches with sidechains of this one prompt
COMPACTION_PROMPT = "Your task is to create a detailed summary of the conversation so far"


def _helper(thread: str, first_prompt: str | None, meta: dict[str, Any]) -> str | None:
    """What a thread the CLI ran for itself is ("compaction", "warmup"), else None."""
    if thread.startswith(COMPACTION_HELPER_PREFIX) or (first_prompt or "").startswith(
        COMPACTION_PROMPT
    ):
        return "compaction"
    if first_prompt == WARMUP_PROMPT and not meta:
        return "warmup"
    return None


def _model(obj: dict[str, Any]) -> str | None:
    message = obj.get("message")
    model = message.get("model") if isinstance(message, dict) else None
    return model if isinstance(model, str) and model and model != "<synthetic>" else None


class ClaudeReplay:
    """The Claude adapter's replay side (``core.replay.model.ReplayAdapter``)."""

    def parser(
        self, path: str, catalog: rm.ThreadCatalog, *, thread: str, main: bool
    ) -> ClaudeReplayParser:
        return ClaudeReplayParser(path, catalog, thread=thread, main=main)

    def thread_info(
        self, thread: str, lines: Iterator[Line], read_side: rm.ReadSide
    ) -> rm.ThreadInfo:
        meta: dict[str, Any] = {}
        side = read_side(".meta.json")
        if side is not None:
            try:
                meta = load_json_object(side)
            except MalformedLine:
                meta = {}
        first_prompt: str | None = None
        started: float | None = None
        for count, line in enumerate(lines):
            if count >= THREAD_SCAN_LINES or line.oversized:
                break
            try:
                obj = load_json_object(line.data)
            except MalformedLine:
                continue
            started = started or parse_timestamp(obj.get("timestamp"))
            if obj.get("type") == "user":
                first_prompt = content_text(_message_content(obj)).strip() or None
                break
        description = nonempty_str(meta.get("description"))
        return rm.ThreadInfo(
            thread=thread,
            description=description,
            agent_type=nonempty_str(meta.get("agentType")),
            call_id=nonempty_str(meta.get("toolUseId")),
            first_prompt=first_prompt,
            started_at=started,
            helper=_helper(thread, first_prompt, meta),
        )

    def spawns(self, lines: Iterator[Line]) -> rm.Spawns:
        by_call: dict[str, str] = {}
        by_prompt: dict[str, str] = {}
        for line in lines:
            data = line.data
            if line.oversized or b'"tool_use"' not in data:
                continue
            if b'"Task"' not in data and b'"Agent"' not in data:
                continue
            try:
                obj = load_json_object(data)
            except MalformedLine:
                continue
            for block in _blocks(obj):
                args = block.get("input")
                if block.get("name") not in SPAWN_TOOLS or not isinstance(args, dict):
                    continue
                description = nonempty_str(args.get("description"))
                if description is None:
                    continue
                if (call_id := nonempty_str(block.get("id"))) is not None:
                    by_call[call_id] = description
                if (prompt := nonempty_str(args.get("prompt"))) is not None:
                    by_prompt[prompt.strip()] = description
        return rm.Spawns(by_call, by_prompt)

    def inline_thread(self, root: Line, lines: Iterator[Line]) -> list[int] | None:
        try:
            first = load_json_object(root.data)
        except MalformedLine:
            return None
        if not (
            first.get("isSidechain") is True
            and first.get("parentUuid") is None
            and first.get("type") == "user"
        ):
            return None
        agent = nonempty_str(first.get("agentId"))
        members: set[str] = {label(first.get("uuid"))}
        offsets = [root.offset]
        for line in lines:
            data = line.data
            if line.oversized or not (
                b'"isSidechain":true' in data or b'"isSidechain": true' in data
            ):
                continue
            try:
                obj = load_json_object(data)
            except MalformedLine:
                continue
            if obj.get("isSidechain") is not True:
                continue
            same_agent = agent is not None and obj.get("agentId") == agent
            parent = obj.get("parentUuid")
            if same_agent or (isinstance(parent, str) and parent in members):
                members.add(label(obj.get("uuid")))
                offsets.append(line.offset)
        return offsets


REPLAY = ClaudeReplay()
