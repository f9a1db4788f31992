"""Gemini CLI chat records to agentbar records (engine thread; pure per-stream state).

Two file formats, the same message shapes (``packages/core/src/services/chatRecordingService.ts``):

- **JSONL** (0.39 on): the first line is the metadata ``{sessionId, projectHash, startTime,
  lastUpdated, kind}``; then one message per line. A message that changes (its tool calls, its
  token counts) is **appended again** under the same ``id``: the last copy wins. ``{"$set":
  {...}}`` lines update the metadata (``lastUpdated``, ``summary``, ``sessionId``) or replace
  the whole history (``messages``: a snapshot of what the model will see, with ids of its own).
  ``{"$rewindTo": id}`` drops that message and everything after it (``/rewind``). A resumed
  session appends a second metadata line to the same file.
- **JSON** (up to 0.38): one document ``{sessionId, projectHash, startTime, lastUpdated,
  messages: [...], kind, summary?}`` rewritten whole after every change. The stream is read as
  one document (``StreamSpec.whole_document``) and its messages go through the same code.

Messages: ``user`` (a prompt, or ``functionResponse`` parts: tool results going back to the
model), ``gemini`` (answer text as a string, ``thoughts``, ``tokens``, ``model``, and
``toolCalls`` with ``status`` success/error/cancelled), ``info`` ("Request cancelled." is an
interrupt or a denial), ``error`` ("[API Error: ...]") and ``warning``.

What the file never says (seen on the real CLI, 0.38.2 and 0.61.0): a tool call is written only
once it has finished, so a call waiting for approval or an ``ask_user`` question on screen
leaves an empty ``gemini`` message behind and nothing else (only the ``Notification`` hook
tells). A turn has no end marker: a ``gemini`` message with text and no tool calls is the
model's last word, unless tool calls are added to it later (text and a call in one response),
which reopens the turn.

History rewrites: after an interrupt or a denial the CLI puts its history back, and 0.61 writes
every message of it again as new lines with new ids (the first one starting with the
``<session_context>`` block) before the ``$set.messages`` snapshot. Those lines are history, not
new prompts: from a user message that opens with the session context up to the snapshot,
nothing is reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ... import jsonsafe
from ...records import (
    TITLE_RANK_AGENT,
    ApiError,
    Asks,
    AssistantText,
    Bookkeeping,
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
    Unknown,
    Usage,
    UsageReport,
)
from ...sources.base import (
    MalformedLine,
    Owner,
    StreamSpec,
    load_json_object,
    one_line,
    parse_timestamp,
    size_text,
    token_count,
)

_Json = dict[str, Any]

CONTEXT_OPENING = "<session_context>"  # the first user message of every history the CLI keeps
CANCELLED = "Request cancelled."  # the info message of an interrupt, or of a denied tool
QUESTION_TOOLS = frozenset({"ask_user"})
COMPLETE_TASK = "complete_task"  # how a sub-agent hands its result to its parent
# Tool calls whose result comes back with this text were refused by the person.
DENIED_MARKERS = ("User denied", "[Operation Cancelled]")
# Message ids remembered per stream (re-appends only ever touch recent messages).
REMEMBERED_IDS = 400
_FINISHED = frozenset({"success", "error", "cancelled"})


def _str(obj: _Json, key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def part_texts(content: object) -> list[str]:
    """The text of a message's content: a string, or the ``text`` of its parts (thought parts
    left out)."""
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, list):
        return []
    return [
        text
        for part in content
        if isinstance(part, dict)
        and not part.get("thought")
        and isinstance(text := part.get("text"), str)
        and text
    ]


def function_responses(content: object) -> list[_Json]:
    if not isinstance(content, list):
        return []
    found = []
    for part in content:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            found.append(response)
    return found


def prompt_text(message: _Json) -> str:
    """What the person typed: the display copy when the CLI kept one (``@file`` expanded in
    the content), else the content's text."""
    shown = part_texts(message.get("displayContent"))
    return "".join(shown or part_texts(message.get("content")))


def is_history_copy(message: _Json) -> bool:
    """A user message that opens with the session context: the start of a history the CLI
    (re)writes, never something the person typed."""
    texts = part_texts(message.get("content"))
    return bool(texts) and texts[0].lstrip().startswith(CONTEXT_OPENING)


def tool_summary(name: str, args: object, description: object = None) -> str:
    """One readable line: the command, the file, the question, or the call's description."""
    if isinstance(args, dict):
        for key in (  # a search's pattern says more than the folder it searched
            "command",
            "pattern",
            "file_path",
            "absolute_path",
            "path",
            "dir_path",
            "url",
            "query",
            "prompt",
        ):
            value = args.get(key)
            if isinstance(value, str) and value:
                return one_line(value)
        questions = args.get("questions")
        if isinstance(questions, list):
            for question in questions:
                text = question.get("question") if isinstance(question, dict) else None
                if isinstance(text, str) and text:
                    return one_line(text)
    if isinstance(description, str) and description:
        return one_line(description)
    if isinstance(args, dict) and args:
        return one_line(jsonsafe.dumps(args).decode())
    return ""


def usage_of(tokens: object) -> Usage | None:
    """Gemini's per-response counts: ``input`` includes the cached part and not the tool-use
    prompt (``tool``, billed as input); ``output`` excludes the thoughts, billed as output."""
    if not isinstance(tokens, dict):
        return None
    cached = token_count(tokens.get("cached"))
    prompt = token_count(tokens.get("input")) + token_count(tokens.get("tool"))
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=token_count(tokens.get("output")) + token_count(tokens.get("thoughts")),
        cache_read_tokens=cached,
    )


def api_error_text(content: object) -> str:
    """``[API Error: {"error":{"message":...}}]`` -> the message; other texts as they are."""
    text = "".join(part_texts(content)).strip()
    inner = text.removeprefix("[API Error:").removesuffix("]").strip()
    if inner != text:
        try:
            value = orjson.loads(inner)
        except orjson.JSONDecodeError:
            return one_line(inner) or "API error"
        error = value.get("error") if isinstance(value, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message:
            return one_line(message)
        return one_line(inner)
    return one_line(text) or "API error"


@dataclass
class _Seen:
    """What was already reported of one message id."""

    text: str = ""
    thoughts: int = 0
    tokens: bool = False
    calls: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)

    def to_json(self) -> list[Any]:
        return [self.text[-200:], self.thoughts, self.tokens, self.calls, self.results]

    @staticmethod
    def from_json(value: object) -> _Seen:
        if not isinstance(value, list) or len(value) != 5:
            return _Seen()
        text, thoughts, tokens, calls, results = value
        return _Seen(
            text if isinstance(text, str) else "",
            thoughts if isinstance(thoughts, int) else 0,
            tokens is True,
            [c for c in calls if isinstance(c, str)] if isinstance(calls, list) else [],
            [r for r in results if isinstance(r, str)] if isinstance(results, list) else [],
        )


class GeminiChatParser:
    """One chat file's lines (or its one document) to records."""

    def __init__(
        self, spec: StreamSpec, checkpoint: dict[str, Any] | None, cwd: str | None = None
    ) -> None:
        self.spec = spec
        self.cwd = cwd
        self.whole = spec.whole_document
        self.session_id: str | None = None
        self.agent_id = spec.agent_id_hint
        self.parent = spec.session_hint if spec.agent_id_hint else None
        self.meta_sent = False
        self.in_history = False  # between a history copy's first message and its snapshot
        self.seen: dict[str, _Seen] = {}
        self.results: set[str] = set()  # calls whose result was reported (of ``seen``)
        self.title: str | None = None
        if checkpoint and not self.whole:
            self._restore(checkpoint)

    # -- the StreamParser protocol ------------------------------------------------------------

    @property
    def owner(self) -> Owner | None:
        if self.agent_id is not None and self.parent is not None:
            return Owner(self.parent, self.agent_id)
        if self.session_id is None:
            return None
        return Owner(self.session_id)

    def parse(self, line: bytes) -> list[Record]:
        obj = load_json_object(line)
        if self.whole:
            return self._document(obj)
        return self._line(obj)

    def parse_oversized(self, prefix: bytes, length: int) -> list[Record]:
        return [Unknown(kind=f"oversized line ({size_text(length)})", agent_id=self._sub())]

    def checkpoint(self) -> dict[str, Any]:
        if self.whole:
            return {}  # a document is read whole every time
        return {
            "session_id": self.session_id,
            "meta_sent": self.meta_sent,
            "in_history": self.in_history,
            "title": self.title,
            "seen": {key: seen.to_json() for key, seen in self.seen.items()},
        }

    def _restore(self, checkpoint: dict[str, Any]) -> None:
        session_id = checkpoint.get("session_id")
        self.session_id = session_id if isinstance(session_id, str) else None
        self.meta_sent = checkpoint.get("meta_sent") is True
        self.in_history = checkpoint.get("in_history") is True
        title = checkpoint.get("title")
        self.title = title if isinstance(title, str) else None
        seen = checkpoint.get("seen")
        if isinstance(seen, dict):
            self.seen = {str(k): _Seen.from_json(v) for k, v in seen.items()}
            self.results = {r for s in self.seen.values() for r in s.results}

    # -- shapes -------------------------------------------------------------------------------

    def _sub(self) -> str | None:
        return self.agent_id

    def _document(self, doc: _Json) -> list[Record]:
        """A legacy JSON chat: its metadata and every message, as a fresh read."""
        if not isinstance(doc.get("sessionId"), str):
            raise MalformedLine("a JSON chat without a sessionId")
        self.seen.clear()  # each read of the document is a fresh read
        self.results.clear()
        self.meta_sent, self.title = False, None
        out = self._metadata(doc)
        messages = doc.get("messages")
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                out.extend(self._message(message))
        out.extend(self._summary(doc.get("summary")))
        return out

    def _line(self, obj: _Json) -> list[Record]:
        if isinstance(obj.get("$rewindTo"), str):
            return self._rewind(obj["$rewindTo"])
        update = obj.get("$set")
        if isinstance(update, dict):
            return self._update(update)
        if isinstance(obj.get("id"), str):
            return self._message(obj)
        if isinstance(obj.get("sessionId"), str):
            return self._metadata(obj)
        raise MalformedLine("neither a message, a metadata record nor an update")

    def _metadata(self, obj: _Json) -> list[Record]:
        session_id = obj["sessionId"]
        if self.meta_sent and session_id == self.session_id:
            return [Bookkeeping(kind="resumed", agent_id=self._sub())]  # a resume's header
        self.session_id = session_id
        self.meta_sent = True
        if self.agent_id is not None:
            # A sub-agent's chat: its records go to the parent session (the folder names it).
            self.agent_id = session_id
            return [Bookkeeping(kind="subagent", agent_id=self._sub())]
        cwd = self.cwd
        directories = obj.get("directories")
        if cwd is None and isinstance(directories, list) and directories:
            first = directories[0]
            cwd = first if isinstance(first, str) else None
        return [
            SessionMeta(ts=parse_timestamp(obj.get("startTime")), session_id=session_id, cwd=cwd)
        ]

    def _update(self, update: _Json) -> list[Record]:
        out: list[Record] = []
        if "messages" in update:
            # A snapshot of the history: ends a history copy; nothing new happened.
            self.in_history = False
            out.append(Bookkeeping(kind="history", agent_id=self._sub()))
        out.extend(self._summary(update.get("summary")))
        return out or [Bookkeeping(kind="metadata", agent_id=self._sub())]

    def _summary(self, summary: object) -> list[Record]:
        if self.agent_id is not None:
            return []  # a sub-agent's "summary" is its result for the parent, not a title
        if not isinstance(summary, str) or not summary.strip() or summary == self.title:
            return []
        self.title = summary
        return [TitleSet(title=one_line(summary), rank=TITLE_RANK_AGENT, agent_id=self._sub())]

    def _rewind(self, message_id: str) -> list[Record]:
        # The messages from there on are gone from the chat; forget them so that a message
        # written again under one of their ids reads as new.
        ids = list(self.seen)
        if message_id in self.seen:
            for key in ids[ids.index(message_id) :]:
                self._forget(key)
        return [Bookkeeping(kind="rewind", agent_id=self._sub())]

    # -- messages -----------------------------------------------------------------------------

    def _message(self, message: _Json) -> list[Record]:
        message_id: str = message["id"]
        kind = message.get("type")
        ts = parse_timestamp(message.get("timestamp"))
        known = message_id in self.seen
        seen = self.seen.setdefault(message_id, _Seen())
        self._forget_old()
        if kind == "user":
            return self._user(message, seen, known, ts)
        if self.in_history:
            return [Bookkeeping(kind="history", agent_id=self._sub())]
        if kind == "gemini":
            return self._gemini(message, message_id, seen, ts)
        if kind == "info":
            text = "".join(part_texts(message.get("content")))
            if known:
                return [Bookkeeping(kind="info", agent_id=self._sub())]
            if text.strip() == CANCELLED:
                return [TurnAborted(ts=ts, agent_id=self._sub(), reason="interrupted")]
            return [Bookkeeping(kind="info", agent_id=self._sub())]
        if kind == "error":
            if known:
                return [Bookkeeping(kind="error", agent_id=self._sub())]
            message_text = api_error_text(message.get("content"))
            return [ApiError(ts=ts, agent_id=self._sub(), message=message_text)]
        if kind == "warning":
            return [Bookkeeping(kind="warning", agent_id=self._sub())]
        return [Unknown(ts=ts, agent_id=self._sub(), kind=f"message/{kind}")]

    def _forget_old(self) -> None:
        while len(self.seen) > REMEMBERED_IDS:
            self._forget(next(iter(self.seen)))

    def _forget(self, message_id: str) -> None:
        self.results.difference_update(self.seen.pop(message_id).results)

    def _reported(self, seen: _Seen, call_id: str) -> None:
        seen.results.append(call_id)
        self.results.add(call_id)

    def _user(self, message: _Json, seen: _Seen, known: bool, ts: float | None) -> list[Record]:
        if is_history_copy(message):
            self.in_history = not self.whole
            return [Bookkeeping(kind="history", agent_id=self._sub())]
        if self.in_history or known:
            return [Bookkeeping(kind="history", agent_id=self._sub())]
        responses = function_responses(message.get("content"))
        if responses:
            return list(self._responses(responses, seen, ts))
        text = prompt_text(message)
        if not text.strip():
            return [Bookkeeping(kind="empty-prompt", agent_id=self._sub())]
        return [Prompt(ts=ts, agent_id=self._sub(), text=text)]

    def _responses(self, responses: list[_Json], seen: _Seen, ts: float | None) -> Iterable[Record]:
        """Tool results going back to the model: each call's result, unless its ``toolCalls``
        entry already said so."""
        for response in responses:
            call_id = _str(response, "id")
            if call_id is None or call_id in self.results:
                continue
            body = response.get("response")
            error = body.get("error") if isinstance(body, dict) else None
            denied = isinstance(error, str) and any(m in error for m in DENIED_MARKERS)
            self._reported(seen, call_id)
            yield ToolResult(
                ts=ts,
                agent_id=self._sub(),
                call_id=call_id,
                is_error=error is not None,
                denied=denied,
            )
        if not seen.results:
            yield Bookkeeping(kind="tool-response", agent_id=self._sub())

    def _gemini(
        self, message: _Json, message_id: str, seen: _Seen, ts: float | None
    ) -> list[Record]:
        out: list[Record] = []
        sub = self._sub()
        thoughts = message.get("thoughts")
        if isinstance(thoughts, list) and len(thoughts) > seen.thoughts:
            for thought in thoughts[seen.thoughts :]:
                if isinstance(thought, dict):
                    text = " ".join(
                        t
                        for k in ("subject", "description")
                        if isinstance(t := thought.get(k), str)
                    )
                    out.append(Thinking(ts=ts, agent_id=sub, text=text))
            seen.thoughts = len(thoughts)
        usage = usage_of(message.get("tokens"))
        if usage is not None and not seen.tokens:
            seen.tokens = True
            model = _str(message, "model")
            if model:  # first: the usage is priced under the model that spent it
                out.append(ModelSeen(ts=ts, agent_id=sub, model=model))
            out.append(UsageReport(ts=ts, agent_id=sub, usage=usage, key=message_id))
        calls = message.get("toolCalls")
        calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        text = "".join(part_texts(message.get("content")))
        if text.strip() and text != seen.text:
            seen.text = text
            # No calls: the model's last word for this turn (calls added later reopen it).
            out.append(
                AssistantText(
                    ts=ts, agent_id=sub, text=text, message_id=message_id, final=not calls
                )
            )
        for call in calls:
            out.extend(self._call(call, seen, ts))
        return out or [Bookkeeping(kind="gemini", agent_id=sub)]

    def _call(self, call: _Json, seen: _Seen, ts: float | None) -> list[Record]:
        call_id = _str(call, "id")
        name = _str(call, "name") or "tool"
        if call_id is None:
            return []
        sub = self._sub()
        out: list[Record] = []
        call_ts = parse_timestamp(call.get("timestamp")) or ts
        if call_id not in seen.calls:
            seen.calls.append(call_id)
            asks = Asks.QUESTION if name in QUESTION_TOOLS else Asks.NOTHING
            summary = tool_summary(name, call.get("args"), call.get("description"))
            out.append(
                ToolCall(
                    ts=ts,
                    agent_id=sub,
                    call_id=call_id,
                    name=_display(call, name),
                    summary=summary,
                    asks=asks,
                )
            )
        status = call.get("status")
        if status in _FINISHED and call_id not in seen.results:
            self._reported(seen, call_id)
            denied = status == "cancelled" and _was_denied(call)
            out.append(
                ToolResult(
                    ts=call_ts,
                    agent_id=sub,
                    call_id=call_id,
                    is_error=status != "success",
                    denied=denied,
                )
            )
            if sub is not None and name == COMPLETE_TASK and status == "success":
                # A sub-agent ends by handing its result over: it has nothing more to do.
                out.append(TurnEnded(ts=call_ts, agent_id=sub))
        return out


def _display(call: _Json, name: str) -> str:
    """The tool's name as the CLI shows it ("Shell" for ``run_shell_command``)."""
    shown = call.get("displayName")
    return shown if isinstance(shown, str) and shown else name


def _was_denied(call: _Json) -> bool:
    """A cancelled call the person refused (its result says so), not one an interrupt
    cancelled."""
    text = jsonsafe.dumps(call.get("result")).decode() if call.get("result") is not None else ""
    return not text or any(marker in text for marker in DENIED_MARKERS)
