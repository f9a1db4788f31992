"""Codex rollout lines to replay items (any thread; pure per-page state).

The records parser (``codex_rollout``) decides what each line is (a typed prompt or the copy of
one, injected context, a tool call or its output, a turn end...); this module adds what a person
reads: the call's arguments, the output text, the note texts, unknown lines' raw JSON. Both line
formats (the envelope and the mid-2025 bare one) go through the same records parser.

Sub-agents (agent-formats.md 3.9) have rollouts of their own whose ``session_meta`` names the
parent thread; the engine files them under the parent session with their own thread id. In the
parent, the call that spawned one (``spawn_agent``) names the new thread id in its output: any
item whose text names a known sub-agent thread gets a link to it. Usage records are each
response's own counts; their running sum is put on each turn's end note (``usage`` there is
cumulative for the thread).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import records as rec
from ...replay import model as rm
from ...replay.files import Line
from ...replay.readable import human_duration
from ...replay.views import ItemView, fold_summary
from ...sources.base import (
    MalformedLine,
    StreamKind,
    StreamSpec,
    load_json_object,
    nonempty_str,
    size_text,
    small_int,
)
from .files import AGENT
from .rollout import (
    INJECTED_PREFIXES,
    CodexRolloutParser,
    content_texts,
    decode_arguments,
    find_key,
    output_text,
)

_SHOWN_ACTIVITY = frozenset({"web_search_call", "image_generation_call", "tool_search_call"})
_TURN_END_EVENTS = frozenset({"task_complete", "turn_complete"})
THREAD_SCAN_LINES = 60  # lines of a sub-agent's rollout read for its first prompt


def _payload(obj: dict[str, Any]) -> dict[str, Any]:
    """The item a line carries: the envelope's payload, or the bare legacy line itself."""
    payload = obj.get("payload")
    return payload if isinstance(payload, dict) else obj


class CodexReplayParser:
    """Items of the lines of one page of one rollout."""

    def __init__(self, path: str, catalog: rm.ThreadCatalog, *, thread: str, main: bool) -> None:
        self.catalog = catalog
        self.thread = None if main else thread
        spec = StreamSpec(AGENT, StreamKind.TRANSCRIPT, Path(path))
        self._records = CodexRolloutParser(spec)
        self._model: str | None = None
        self._total: rec.Usage | None = None
        self._linked: set[str] = set()

    def items(self, line: bytes, offset: int) -> list[rm.ReplayItem]:
        try:
            obj = load_json_object(line)
            records = self._records.parse(line)
        except MalformedLine as exc:
            out = rm.LineItems(offset, None, self.thread)
            out.add(rm.ItemKind.UNKNOWN, line.decode("utf-8", "replace"), name=f"malformed: {exc}")
            return out.items
        out = rm.LineItems(offset, records[0].ts if records else None, self.thread)
        payload = _payload(obj)
        for record in records:
            self._item(record, obj, payload, out)
        return out.items

    def oversized(self, prefix: bytes, length: int, offset: int) -> list[rm.ReplayItem]:
        out = rm.LineItems(offset, None, self.thread)
        text = f"[a line of {size_text(length)}, too long to show]"
        for record in self._records.parse_oversized(prefix, length):
            out.ts = record.ts
            if isinstance(record, rec.ToolResult):
                out.add(rm.ItemKind.TOOL_RESULT, text, call_id=record.call_id, name="oversized")
            elif isinstance(record, rec.Prompt):
                out.add(rm.ItemKind.USER, record.text)
            else:
                out.add(rm.ItemKind.NOTE, text, name="oversized")
        return out.items

    def _item(
        self, record: rec.Record, obj: dict[str, Any], payload: dict[str, Any], out: rm.LineItems
    ) -> None:
        """The exchange (prompts, answers, calls and their output) and what the items after it
        carry (the model, the running usage total); every other record is a note."""
        match record:
            case rec.Prompt(text=text):
                out.add(rm.ItemKind.USER, text)
            case rec.AssistantText(text=text):
                out.add(rm.ItemKind.ASSISTANT, text, model=self._model)
            case rec.Thinking(text=text):
                out.add(rm.ItemKind.THINKING, text, model=self._model)
            case rec.ToolCall():
                out.add(
                    rm.ItemKind.TOOL_CALL,
                    name=record.name,
                    call_id=record.call_id,
                    summary=record.summary,
                    input=_call_input(payload),
                    model=self._model,
                )
            case rec.ToolResult():
                self._tool_result(record, payload, out)
            case rec.ModelSeen(model=model):
                self._model = model
            case rec.UsageReport(usage=usage):
                self._total = usage if self._total is None else self._total + usage
            case _:
                self._note(record, obj, payload, out)

    def _tool_result(
        self, record: rec.ToolResult, payload: dict[str, Any], out: rm.LineItems
    ) -> None:
        if payload.get("type") == "local_shell_call":
            return  # the completed call's own line: its call item shows it, it has no output
        text, _ = output_text(payload.get("output"))
        out.add(
            rm.ItemKind.TOOL_RESULT,
            text,
            call_id=record.call_id,
            is_error=record.is_error,
            denied=record.denied,
        )
        self._links(text, out, record.call_id)

    def _note(
        self, record: rec.Record, obj: dict[str, Any], payload: dict[str, Any], out: rm.LineItems
    ) -> None:
        """Turn ends and failures, errors, Codex's own bookkeeping and activity, unknown lines."""
        match record:
            case rec.TurnEnded() if payload.get("type") not in _TURN_END_EVENTS:
                pass  # inferred from the running totals: it depends on lines before the page
            case rec.TurnEnded(error=error) if error:
                out.add(rm.ItemKind.ERROR, error, name="turn_failed", usage=self._total)
            case rec.TurnEnded():
                took = small_int(payload.get("duration_ms"))
                text = "Turn finished" + (
                    "" if took is None else f" in {human_duration(took / 1000)}"
                )
                out.add(rm.ItemKind.NOTE, text, name="turn_end", usage=self._total)
            case rec.TurnAborted(reason=reason):
                out.add(rm.ItemKind.NOTE, reason, name="interrupted")
            case rec.ApiError(message=message, retrying=retrying):
                out.add(rm.ItemKind.ERROR, message, name="retrying" if retrying else None)
            case rec.Compaction():
                text = nonempty_str(payload.get("message")) or "Conversation compacted"
                out.add(rm.ItemKind.COMPACTION, text)
            case rec.TitleSet(title=title):
                out.add(rm.ItemKind.NOTE, title, name="title")
            case rec.SessionMeta(cwd=cwd, cli_version=version, originator=originator):
                parts = [p for p in (cwd, originator, version and f"Codex {version}") if p]
                out.add(rm.ItemKind.NOTE, " · ".join(parts), name="session_meta")
            case rec.Bookkeeping(kind="context") if _injected(payload):
                context = "\n".join(content_texts(payload.get("content")))
                out.add(rm.ItemKind.NOTE, context, name="context")
            case rec.Activity(kind=kind) if kind in _SHOWN_ACTIVITY:
                shown = {k: v for k, v in payload.items() if k not in ("type", "id")}
                _folded(out, kind, shown)
            case rec.Activity(kind=kind) if kind.startswith("collab_"):
                self._links(rm.json_text(payload), out, nonempty_str(payload.get("call_id")))
            case rec.Unknown(kind=kind) if _FOLDED_KINDS.search(kind):
                _folded(out, kind, payload)
            case rec.Unknown(kind=kind):
                out.add(rm.ItemKind.UNKNOWN, rm.json_text(obj), name=kind)

    def _links(self, text: str, out: rm.LineItems, call_id: str | None) -> None:
        for thread in self.catalog.mentioned_in(text):
            if thread.thread not in self._linked:
                self._linked.add(thread.thread)
                out.link(thread, call_id)


# Records of Codex's own reviewer and of sub-agents' comings and goings: one folded line each.
_FOLDED_KINDS = re.compile(r"guardian|sub_?agent|collab|agent_(?:activity|status)", re.IGNORECASE)


def _folded(out: rm.LineItems, kind: str, record: dict[str, Any]) -> None:
    """A noisy record as one short line (``summary``), its JSON there to unfold."""
    view = ItemView(folded=True)
    out.add(
        rm.ItemKind.NOTE,
        rm.json_text(record),
        name=kind,
        summary=fold_summary(kind, record),
        view=view,
    )


def _injected(payload: dict[str, Any]) -> bool:
    """Context Codex put in front of the model, not the model-visible copy of a prompt (the
    prompt itself is shown from its event)."""
    if payload.get("role") != "user":
        return True
    text = "".join(content_texts(payload.get("content"))).lstrip()
    return text.startswith(("<", *INJECTED_PREFIXES))


def _call_input(payload: dict[str, Any]) -> Any:
    kind = payload.get("type")
    if kind == "function_call":
        args, raw = decode_arguments(payload.get("arguments"))
        return args if args is not None else raw
    if kind == "custom_tool_call":
        return payload.get("input")
    if kind == "local_shell_call":
        return payload.get("action")
    return None


class CodexReplay:
    """The Codex adapter's replay side (``core.replay.model.ReplayAdapter``)."""

    def parser(
        self, path: str, catalog: rm.ThreadCatalog, *, thread: str, main: bool
    ) -> CodexReplayParser:
        return CodexReplayParser(path, catalog, thread=thread, main=main)

    def thread_info(
        self, thread: str, lines: Iterator[Line], read_side: rm.ReadSide
    ) -> rm.ThreadInfo:
        records = CodexRolloutParser(StreamSpec(AGENT, StreamKind.TRANSCRIPT, Path(thread)))
        nickname: str | None = None
        role: str | None = None
        started: float | None = None
        first_prompt: str | None = None
        for count, line in enumerate(lines):
            if count >= THREAD_SCAN_LINES or line.oversized:
                break
            try:
                obj = load_json_object(line.data)
                found = records.parse(line.data)
            except MalformedLine:
                continue
            if obj.get("type") == "session_meta" and nickname is None:
                payload = _payload(obj)
                nickname = find_key(payload, "agent_nickname")
                role = find_key(payload, "agent_role")
            for record in found:
                started = started or record.ts
                if isinstance(record, rec.Prompt):
                    first_prompt = record.text.strip() or None
            if first_prompt:
                break
        return rm.ThreadInfo(
            thread=thread,
            description=nickname,
            agent_type=role,
            first_prompt=first_prompt,
            started_at=started,
        )

    def inline_thread(self, root: Line, lines: Iterator[Line]) -> list[int] | None:
        return None  # Codex writes every sub-agent to a rollout of its own


REPLAY = CodexReplay()
