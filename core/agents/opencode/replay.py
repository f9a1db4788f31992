"""opencode sessions for replay and export: one session rendered as lines, and those lines as
items (any thread; pure per-page state).

Replay pages through a transcript by byte offsets. An opencode session is rows in a database
(or files of the JSON storage), so the adapter renders it (``transcript``): one JSON line per
message and per part, message by message in the order they were made, each part line carrying
its message's role. The rendering is read the same read-only way the engine reads
(``database.py``); offsets point into it, and stay put as the session grows at its end.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...replay import model as rm
from ...replay.files import AgentRoots, Line, OutsideRoots, TranscriptFile
from ...sources.base import MalformedLine, load_json_object, nonempty_str, size_text
from .database import read_only_uri
from .storage import StorageReader
from .translate import QUESTION_TOOLS, REJECTED, _summary

Json = dict[str, Any]


def render(store: Path, session_id: str) -> bytes:
    """The session's messages and parts as JSON lines (see the module docstring)."""
    messages, parts = (_from_database if store.is_file() else _from_storage)(store, session_id)
    messages.sort(key=lambda m: (_created(m), str(m.get("id"))))
    by_message: dict[str, list[Json]] = {}
    for part in parts:
        by_message.setdefault(str(part.get("messageID")), []).append(part)
    out: list[bytes] = []
    for message in messages:
        out.append(orjson.dumps({"message": message}))
        role = message.get("role")
        for part in sorted(by_message.get(str(message.get("id")), ()), key=lambda p: str(p["id"])):
            out.append(orjson.dumps({"part": part, "role": role}))
    return b"".join(line + b"\n" for line in out)


def _from_database(path: Path, session_id: str) -> tuple[list[Json], list[Json]]:
    idle = not Path(f"{path}-wal").exists()
    conn = sqlite3.connect(read_only_uri(path, immutable=idle), uri=True, timeout=0.2)
    try:
        conn.execute("BEGIN")
        rows = conn.execute(
            "SELECT id, data FROM message WHERE session_id = ?", (session_id,)
        ).fetchall()
        part_rows = conn.execute(
            "SELECT id, message_id, data FROM part WHERE session_id = ?", (session_id,)
        ).fetchall()
        conn.execute("COMMIT")
    finally:
        conn.close()
    messages = [{**_json(data), "id": mid} for mid, data in rows]
    parts = [{**_json(data), "id": pid, "messageID": mid} for pid, mid, data in part_rows]
    return messages, parts


def _from_storage(storage: Path, session_id: str) -> tuple[list[Json], list[Json]]:
    reader = StorageReader(storage.parent)
    message_files = list((storage / "message" / session_id).glob("*.json"))
    rows = reader.read(message_files)
    part_files = [p for m in rows.messages for p in (storage / "part" / m.id).glob("*.json")]
    parts = reader.read(part_files).parts
    return [{**m.data, "id": m.id} for m in rows.messages], [
        {**p.data, "id": p.id, "messageID": p.message_id} for p in parts
    ]


def _json(value: object) -> Json:
    try:
        parsed = orjson.loads(value) if isinstance(value, str | bytes) else None
    except orjson.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _created(message: Json) -> float:
    times = message.get("time")
    created = times.get("created") if isinstance(times, dict) else None
    return float(created) if isinstance(created, int | float) else 0.0


def _obj(value: object) -> Json:
    return value if isinstance(value, dict) else {}


def _seconds(value: object) -> float | None:
    return value / 1000.0 if isinstance(value, int | float) and value > 0 else None


class OpencodeReplayParser:
    """Items of the rendered lines of one page."""

    def __init__(self, path: str, catalog: rm.ThreadCatalog, *, thread: str, main: bool) -> None:
        self.thread = None if main else thread

    def items(self, line: bytes, offset: int) -> list[rm.ReplayItem]:
        try:
            obj = load_json_object(line)
        except MalformedLine as exc:
            out = rm.LineItems(offset, None, self.thread)
            out.add(rm.ItemKind.UNKNOWN, line.decode("utf-8", "replace"), name=f"malformed: {exc}")
            return out.items
        message, part = obj.get("message"), obj.get("part")
        if isinstance(message, dict):
            return self._message(message, offset)
        if isinstance(part, dict):
            return self._part(part, obj.get("role"), offset)
        out = rm.LineItems(offset, None, self.thread)
        out.add(rm.ItemKind.UNKNOWN, rm.json_text(obj), name="unknown")
        return out.items

    def oversized(self, prefix: bytes, length: int, offset: int) -> list[rm.ReplayItem]:
        out = rm.LineItems(offset, None, self.thread)
        out.add(rm.ItemKind.NOTE, f"[a part of {size_text(length)}, too long to show]")
        return out.items

    def _message(self, message: Json, offset: int) -> list[rm.ReplayItem]:
        times = _obj(message.get("time"))
        out = rm.LineItems(offset, _seconds(times.get("completed") or times.get("created")),
                           self.thread)  # fmt: skip
        error = message.get("error")
        if isinstance(error, dict):
            data = _obj(error.get("data"))
            text = nonempty_str(data.get("message")) or str(error.get("name") or "error")
            out.add(rm.ItemKind.ERROR, text, name=nonempty_str(error.get("name")))
        return out.items

    def _part(self, part: Json, role: object, offset: int) -> list[rm.ReplayItem]:
        times = _obj(part.get("time"))
        state = _obj(part.get("state"))
        state_times = _obj(state.get("time"))
        ts = _seconds(times.get("end") or times.get("start") or state_times.get("start"))
        out = rm.LineItems(offset, ts, self.thread)
        kind = part.get("type")
        text = part.get("text") if isinstance(part.get("text"), str) else ""
        if kind == "text" and text and part.get("synthetic") is not True:
            out.add(rm.ItemKind.USER if role == "user" else rm.ItemKind.ASSISTANT, text)
        elif kind == "reasoning" and text:
            out.add(rm.ItemKind.THINKING, text)
        elif kind == "tool":
            self._tool(part, state, out)
        elif kind == "compaction":
            out.add(rm.ItemKind.COMPACTION, "Conversation compacted")
        elif kind in ("step-start", "step-finish", "snapshot", "patch"):
            pass
        elif isinstance(kind, str):
            shown = {k: v for k, v in part.items() if k not in ("id", "messageID", "sessionID")}
            out.add(rm.ItemKind.NOTE, rm.json_text(shown), name=kind)
        return out.items

    def _tool(self, part: Json, state: Json, out: rm.LineItems) -> None:
        name = nonempty_str(part.get("tool")) or "tool"
        call_id = nonempty_str(part.get("callID"))
        tool_input = _obj(state.get("input"))
        out.add(rm.ItemKind.TOOL_CALL, name=name, call_id=call_id,
                summary=_summary(name, tool_input), input=tool_input)  # fmt: skip
        status = state.get("status")
        if status == "completed":
            output = state.get("output")
            out.add(rm.ItemKind.TOOL_RESULT, output if isinstance(output, str) else "",
                    call_id=call_id)  # fmt: skip
        elif status == "error":
            found = state.get("error")
            error = found if isinstance(found, str) else "error"
            out.add(rm.ItemKind.TOOL_RESULT, error, call_id=call_id, is_error=True,
                    denied=REJECTED in error)  # fmt: skip
        elif name in QUESTION_TOOLS:
            pass  # still asking: the call itself shows the question


class OpencodeReplay:
    """The opencode adapter's replay side, rendering each session (``RendersTranscript``)."""

    def transcript(self, path: str, roots: AgentRoots) -> TranscriptFile:
        store, _, session_id = path.rpartition("#")
        if not store or not session_id:
            raise OutsideRoots(f"not an opencode session: {path}")
        real = os.path.realpath(store)
        if not any(real.startswith(root + os.sep) for root in roots.roots):
            raise OutsideRoots(f"not inside an agent folder: {store}")
        try:
            data = render(Path(real), session_id)
        except sqlite3.Error as exc:
            raise OSError(f"cannot read opencode's database: {exc}") from exc
        return TranscriptFile(path, None, data)

    def parser(
        self, path: str, catalog: rm.ThreadCatalog, *, thread: str, main: bool
    ) -> OpencodeReplayParser:
        return OpencodeReplayParser(path, catalog, thread=thread, main=main)

    def thread_info(
        self, thread: str, lines: Iterator[Line], read_side: rm.ReadSide
    ) -> rm.ThreadInfo:
        return rm.ThreadInfo(thread=thread)

    def inline_thread(self, root: Line, lines: Iterator[Line]) -> list[int] | None:
        return None


REPLAY = OpencodeReplay()
