"""Codex rollout lines to records (engine thread; pure per-stream state).

Two line formats exist. The envelope ``{timestamp, type, payload}`` (late 2025 on) and the legacy
bare format of mid-2025 (a header object ``{id, timestamp, instructions?, git?}``, then bare
response items and ``{"record_type": "state"}`` markers). The first recognisable line decides.

Prompts. A typed prompt can reach the file as an ``event_msg/user_message`` (legacy history
mode), as an ``event_msg/item_completed`` with a ``UserMessage`` item (paginated history mode and
newer builds), or both. The rule: whichever copy comes first is the ``Prompt``; a copy from the
other source with the same text before the turn ends is its duplicate and becomes
``Bookkeeping("prompt-copy")``. Two copies from the same source are two prompts (steering input),
and a file that changes shape midway (resumed by a newer build) keeps every prompt. The
``response_item`` user messages of the envelope format are injected context and never prompts.

Approval waits are never written by Codex; ``ToolCall.asks`` only says what the call itself
implies under the approval policy, sandbox and collaboration mode of the latest ``turn_context``.

Turn ends. Builds up to at least 0.99 persist neither ``task_started`` nor ``task_complete``
(observed with 0.58.0 and 0.99.0): a turn opened by a bare prompt has no closing line. Its end is
inferred from the model's last response: one that brought answer text and no tool call, and
that completed. A response is complete at the ``token_count`` that follows its first output
(an ``agent_message`` event, a message, a call, reasoning); the count Codex writes when a request
starts, after its ``turn_context`` and before any output, repeats the previous one and proves
nothing. 0.58 writes the response's items after that count, 0.99 before it. The completed
response has nothing left to run, so Codex ends the turn, and a ``TurnEnded`` is emitted with its
text. A turn opened by ``task_started`` waits for its own closing line.

Tokens. A ``token_count`` carries the thread's running total and the latest response's own
counts (``last_token_usage``); each becomes a ``UsageReport`` of that response's counts alone. A
count that repeats the previous one, total and response alike, adds nothing (Codex writes one
when a request starts); a total that did not move while the response's counts did (a build that
stopped updating its total) still counts the response. The per-response counts are followed
even when the total goes back (a resumed session starting a new count, a trimmed file): a total
is never taken to replace what was counted. Lines with a total and no per-response counts
(older builds) add what each count of the total grew (nothing for one that went back), as
ccusage does.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from ... import jsonsafe
from ...limits import LimitsSeen
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
    TurnStarted,
    Unknown,
    Usage,
    UsageReport,
)
from ...sources.base import (
    Owner,
    StreamSpec,
    load_json_object,
    one_line,
    parse_timestamp,
    program_name,
    size_text,
    token_count,
)

log = logging.getLogger(__name__)

_Json = dict[str, Any]


def _str(obj: _Json, key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _obj(obj: _Json, key: str) -> _Json:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _counts(raw: object) -> list[int] | None:
    """[input, cached input, output] of a Codex usage object; None when it is no object."""
    if not isinstance(raw, dict):
        return None
    get = raw.get  # two of these per token_count, one of the commonest lines
    return [
        token_count(get("input_tokens")),
        token_count(get("cached_input_tokens")),
        token_count(get("output_tokens")),
    ]


def content_texts(items: object) -> list[str]:
    """The ``text`` strings of a list of parts (content items, summaries, output items)."""
    if not isinstance(items, list):
        return []
    return [
        text
        for item in items
        if isinstance(item, dict) and isinstance(text := item.get("text"), str)
    ]


def _has_image(parts: object) -> bool:
    return isinstance(parts, list) and any(
        isinstance(part, dict) and part.get("type") in ("image", "local_image") for part in parts
    )


def find_key(value: object, key: str, depth: int = 6) -> str | None:
    """The first string stored under ``key`` anywhere in ``value`` (breadth-first, bounded)."""
    layer = [value]
    for _ in range(depth):
        below: list[object] = []
        for node in layer:
            if isinstance(node, dict):
                if isinstance(found := node.get(key), str) and found:
                    return found
                below.extend(node.values())
            elif isinstance(node, list):
                below.extend(node)
        layer = below
    return None


def _kind(value: object) -> str:
    return value if isinstance(value, str) and value else "?"


# --------------------------------------------------------------------------------------------
# Tool calls and their results
# --------------------------------------------------------------------------------------------

# The tool that asks the person (the hook state machine reads it through the kit's traits).
QUESTION_TOOL = "request_user_input"
_EXEC_TOOLS = frozenset({"exec_command", "shell", "local_shell", "container.exec", "shell_command"})
_SHELLS = frozenset({"bash", "sh", "zsh"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
# A request for escalated permissions brings up Codex's approval prompt only under "on-request":
# under every other policy the shell handlers answer at once "approval policy is X; reject
# command — you should not ask for escalated permissions ..." (codex-rs/core/src/tools/handlers/
# shell.rs and unified_exec.rs, 2025 and 2026 revisions alike). None: no turn_context seen yet.
_ESCALATION_ASKS_UNDER = frozenset({None, "on-request"})


def decode_arguments(raw: object) -> tuple[_Json | None, str]:
    """A function call's arguments as an object (None when not one) and as text."""
    if isinstance(raw, dict):
        return raw, jsonsafe.dumps(raw).decode()
    if not isinstance(raw, str):
        return None, ""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None, raw
    return (value if isinstance(value, dict) else None), raw


def _command_text(value: object) -> str | None:
    """A command given as a string or an argv list; ``bash -lc "<script>"`` becomes the script."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(part, str) for part in value):
        return None
    if len(value) >= 3 and program_name(value[0]) in _SHELLS and value[1] in ("-lc", "-c"):
        value = value[2:]
    return " ".join(value)


def _exec_command(args: _Json) -> str | None:
    return _command_text(args.get("cmd")) or _command_text(args.get("command"))


def _patch_files(patch: str) -> list[str]:
    return _PATCH_FILE.findall(patch)


def _short_arguments(args: _Json) -> str:
    parts = []
    for key, value in args.items():
        text = value if isinstance(value, str) else jsonsafe.dumps(value).decode()
        parts.append(f"{key}={text}")
    return " ".join(parts)


def _patch_text(args: _Json | None, raw: str) -> str:
    if args is None:
        return raw
    return _str(args, "input") or _str(args, "patch") or ""


def _tool_summary(name: str, args: _Json | None, raw: str, *, freeform: bool) -> str:
    """One readable line: the command, the files, the question, or the name and arguments."""
    if name == "apply_patch":
        files = _patch_files(_patch_text(args, raw))
        return one_line(f"apply_patch {', '.join(files)}" if files else "apply_patch")
    if args is None:
        return one_line(f"{name} {raw}" if freeform else raw) or name
    if name in _EXEC_TOOLS and (command := _exec_command(args)):
        return one_line(command)
    if name == QUESTION_TOOL:
        question = _first_question(args)
        if question:
            return one_line(question)
    return one_line(f"{name} {_short_arguments(args)}".strip())


def _first_question(args: _Json) -> str | None:
    questions = args.get("questions")
    if not isinstance(questions, list) or not questions or not isinstance(questions[0], dict):
        return None
    return _str(questions[0], "question") or _str(questions[0], "header")


def _wants_escalation(args: _Json) -> bool:
    return args.get("sandbox_permissions") == "require_escalated" or (
        args.get("with_escalated_permissions") is True
    )


# What Codex writes as a tool's output when the call did not run because someone said no.
# Sources (openai/codex, codex-rs/core/src): tools/orchestrator.rs "rejected by user", normalised
# by tools/events.rs to "exec command rejected by user" / "patch rejected by user" (older builds
# wrote the same strings from codex.rs); mcp_tool_call.rs "user rejected MCP tool call";
# guardian/mod.rs "This action was rejected due to unacceptable risk." (the auto-reviewer);
# tools/handlers/shell.rs "approval policy is X; reject command — ..." (policy refuses an
# escalation). Interrupts: "aborted by user after 1.2s", or for shell tools
# "Wall time: 1.2 seconds\naborted by user"; "aborted" for calls a turn abort left unanswered.
# The unified exec tool can also wrap a refusal in the Debug text of its error (0.99.0, when
# the person says no at once): 'exec_command failed: CreateProcess { message:
# "Rejected(\"rejected by user\")" }' (tools/handlers/unified_exec.rs "exec_command failed:
# {err:?}").
# Only the whole output counts: a command whose output merely mentions these words ran.
_REJECTIONS = frozenset(
    {"rejected by user", "exec command rejected by user", "patch rejected by user",
     "user rejected mcp tool call"}
)  # fmt: skip
_REJECTION_PREFIXES = ("this action was rejected due to unacceptable risk.",)
_POLICY_REJECTION = re.compile(r"^approval policy is [^\n;]{1,300}; reject command\b")
_WRAPPED_REJECTION = re.compile(
    r'^exec_command failed: createprocess \{ message: "rejected\(\\"([^"\\]{1,200})\\"\)" \}$'
)
_ABORTED = re.compile(
    r"^(?:aborted|aborted by user(?: after [\d.]+s)?|wall time: [\d.]+ seconds\naborted by user)$"
)
_EXIT_HEADER = re.compile(r"^(?:Process exited with code|Exit code:)\s*(-?\d+)\s*$", re.MULTILINE)
_STRUCTURED_EXIT = re.compile(r'"metadata"\s*:\s*\{\s*"exit_code"\s*:\s*(-?\d+)')


def output_text(output: object) -> tuple[str, bool | None]:
    """The model-visible text of a tool output and its explicit success flag, if it has one."""
    if isinstance(output, str):
        return output, None
    if isinstance(output, list):
        return "".join(content_texts(output)), None
    if isinstance(output, dict):
        content = output.get("content")
        text = content if isinstance(content, str) else "".join(content_texts(content))
        success = output.get("success")
        return text, success if isinstance(success, bool) else None
    return "", None


def _exit_code_failed(text: str) -> bool:
    """True when the exec output's header (or structured metadata) shows a non-zero exit code."""
    header = text[:2000].split("\nOutput:", 1)[0]
    match = _EXIT_HEADER.search(header) or _STRUCTURED_EXIT.search(text[-400:])
    return match is not None and int(match[1]) != 0


_DENIAL_MAX_CHARS = 1000  # every refusal wording is a short sentence; outputs can be megabytes


def _is_denial(text: str) -> bool:
    if len(text) > _DENIAL_MAX_CHARS:
        return False
    lowered = text.strip().lower()
    wrapped = _WRAPPED_REJECTION.match(lowered)
    return (
        lowered in _REJECTIONS
        or lowered.startswith(_REJECTION_PREFIXES)
        or _POLICY_REJECTION.match(lowered) is not None
        or (wrapped is not None and wrapped[1] in _REJECTIONS)
        or _ABORTED.match(lowered) is not None
    )


def _result_flags(output: object) -> tuple[bool, bool]:
    """``(is_error, denied)`` of a tool output."""
    text, success = output_text(output)
    denied = _is_denial(text)
    return denied or success is False or _exit_code_failed(text), denied


# --------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------

_ENVELOPE = "envelope"
_LEGACY = "legacy"
_CHECKPOINT_VERSION = 2  # 2: last_total
_MAX_PENDING_PROMPTS = 16
_OVERSIZED_PROMPT_KEY = "\x00oversized"

INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
)
_CWD_TAG = re.compile(r"<cwd>(.*?)</cwd>", re.DOTALL)

_TOP_BOOKKEEPING = frozenset(
    {"world_state", "inter_agent_communication", "inter_agent_communication_metadata",
     "token_usage_record", "retained_context", "security_risk_score", "realtime_item"}
)  # fmt: skip
_EVENT_ACTIVITY = frozenset(
    {"agent_message", "agent_reasoning", "agent_reasoning_raw_content",
     "agent_reasoning_section_break", "exec_command_begin", "exec_command_end",
     "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end",
     "web_search_begin", "web_search_end", "image_generation_begin", "image_generation_end",
     "view_image_tool_call", "dynamic_tool_call_request", "dynamic_tool_call_response",
     "collab_agent_spawn_end", "collab_agent_interaction_end", "collab_waiting_end",
     "collab_close_end", "collab_resume_end", "plan_update", "turn_diff"}
)  # fmt: skip
_EVENT_BOOKKEEPING = frozenset(
    {"thread_settings_applied", "thread_rolled_back", "thread_goal_updated",
     "entered_review_mode", "exited_review_mode", "undo_started", "undo_completed", "warning",
     "hook_started", "hook_completed", "session_configured", "background_event",
     "shutdown_complete", "item_started", "model_reroute", "deprecation_notice"}
)  # fmt: skip
_ITEM_ACTIVITY = frozenset({"web_search_call", "tool_search_call", "tool_search_output",
                            "image_generation_call", "agent_message"})  # fmt: skip
_ITEM_BOOKKEEPING = frozenset({"ghost_snapshot", "additional_tools"})
_ITEM_COMPACTION = frozenset({"compaction", "context_compaction"})
_ITEM_TYPES = (
    _ITEM_ACTIVITY
    | _ITEM_BOOKKEEPING
    | _ITEM_COMPACTION
    | {"message", "reasoning", "function_call", "custom_tool_call", "local_shell_call",
       "function_call_output", "custom_tool_call_output"}
)  # fmt: skip
_ENVELOPE_TYPES = (
    frozenset({"session_meta", "turn_context", "event_msg", "response_item", "compacted"})
    | _TOP_BOOKKEEPING
)

# Prefix checks for a line too long to parse (see ``parse_oversized``).
_RE_TS = re.compile(rb'"timestamp"\s*:\s*"([^"\\]{1,64})"')
_RE_CALL_OUTPUT = re.compile(rb'"type"\s*:\s*"(?:function_call_output|custom_tool_call_output)"')
_RE_CALL_ID = re.compile(rb'"call_id"\s*:\s*"([^"\\]{1,200})"')
_RE_USER_MESSAGE = re.compile(rb'"type"\s*:\s*"user_message"')
_RE_USER_ITEM = re.compile(
    rb'"type"\s*:\s*"item_completed".{0,1000}?"type"\s*:\s*"UserMessage"', re.S
)
_RE_SESSION_META = re.compile(rb'"type"\s*:\s*"session_meta"')
_RE_META_ID = re.compile(rb'"payload"\s*:\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
_RE_META_FIELDS = {
    name: re.compile(rb'"' + name.encode() + rb'"\s*:\s*("(?:[^"\\]|\\.){0,4096}")')
    for name in ("session_id", "cwd", "cli_version", "originator", "forked_from_id",
                 "parent_thread_id")
}  # fmt: skip


@dataclass(slots=True)
class _State:
    """Everything a parser carries from line to line; ``checkpoint()`` is this as JSON."""

    format: str | None = None  # "envelope" or "legacy" once a recognisable line is seen
    meta_seen: bool = False
    session_id: str | None = None  # the owner, once a session_meta named it
    agent_id: str | None = None
    approval_policy: str | None = None
    sandbox: str | None = None
    last_model: str | None = None
    # A legacy header waiting for its cwd: {"id", "ts", "cli_version", "originator"}.
    pending_meta: dict[str, Any] | None = None
    # Prompt keys emitted this turn and not yet matched by a copy from the other source.
    event_prompts: list[str] = field(default_factory=list)
    item_prompts: list[str] = field(default_factory=list)
    collaboration_mode: str | None = None  # "default", "plan", ... (latest turn_context)
    # Inferring the end of a turn no line closes (see the module docstring).
    marked_turn: bool = False  # a task_started opened the current turn
    unmarked_turn: bool = False  # a prompt opened it, with no task_started
    round_output: bool = False  # the model's latest request has produced output
    round_answer: str | None = None  # answer text of that response
    round_call: bool = False  # that response called a tool
    round_completed: bool = False  # and it completed
    # The latest token_count's total and its response's own counts: [input, cached input,
    # output], as Codex counts them.
    last_total: list[int] | None = None
    last_response: list[int] | None = None

    @classmethod
    def restore(cls, data: Mapping[str, Any] | None) -> _State:
        """A state from a checkpoint; anything missing or of the wrong type starts fresh."""
        state = cls()
        if not data or data.get("v") != _CHECKPOINT_VERSION:
            return state
        for name in (
            "session_id", "agent_id", "approval_policy", "sandbox", "last_model",
            "collaboration_mode", "round_answer",
        ):  # fmt: skip
            if isinstance(value := data.get(name), str):
                setattr(state, name, value)
        for name in (
            "marked_turn", "unmarked_turn", "round_output", "round_call", "round_completed"
        ):  # fmt: skip
            if isinstance(value := data.get(name), bool):
                setattr(state, name, value)
        if data.get("format") in (_ENVELOPE, _LEGACY):
            state.format = data["format"]
        if isinstance(value := data.get("meta_seen"), bool):
            state.meta_seen = value
        for name in ("event_prompts", "item_prompts"):
            if isinstance(value := data.get(name), list):
                setattr(state, name, [v for v in value if isinstance(v, str)])
        if isinstance(pending := data.get("pending_meta"), dict) and _str(pending, "id"):
            state.pending_meta = pending
        for name in ("last_total", "last_response"):
            counts = data.get(name)
            if (
                isinstance(counts, list)
                and len(counts) == 3
                and all(type(n) is int for n in counts)
            ):
                setattr(state, name, counts)
        return state


_Handler = Callable[[_Json], list[Record]]
# Every record's ``ts`` and ``agent_id`` slots, set straight through their descriptors: the
# frozen Struct's own ``__setattr__`` refuses, the slot's member descriptor does not (the same
# store ``msgspec.structs.force_setattr`` makes, without its lookup of the name per record).
_SET_TS = Record.__dict__["ts"].__set__
_SET_AGENT = Record.__dict__["agent_id"].__set__


class CodexRolloutParser:
    """Turns one rollout's lines into records; see the module docstring for the rules."""

    def __init__(self, spec: StreamSpec, checkpoint: dict[str, Any] | None = None) -> None:
        self.spec = spec
        self._s = _State.restore(checkpoint)
        self._top: dict[str, _Handler] = {
            "session_meta": self._session_meta,
            "turn_context": self._turn_context,
            "event_msg": self._event,
            "response_item": self._response_item,
            "compacted": lambda _payload: [Compaction()],
        }
        self._events: dict[str, _Handler] = {
            "task_started": self._turn_started,
            "turn_started": self._turn_started,
            "task_complete": self._turn_complete,
            "turn_complete": self._turn_complete,
            "turn_aborted": self._turn_aborted,
            "user_message": self._user_message_event,
            "item_completed": self._item_completed,
            "token_count": lambda p: [*self._token_count(p), *rate_limits(p)],
            "error": lambda p: [ApiError(message=_str(p, "message") or "error")],
            "stream_error": lambda p: [
                ApiError(message=_str(p, "message") or "stream error", retrying=True)
            ],
            "context_compacted": lambda _p: [Compaction()],
            "thread_name_updated": self._thread_name,
        }
        self._items: dict[str, _Handler] = {
            "message": self._message,
            "reasoning": self._reasoning,
            "function_call": self._function_call,
            "custom_tool_call": self._custom_tool_call,
            "local_shell_call": self._local_shell_call,
            "function_call_output": self._call_output,
            "custom_tool_call_output": self._call_output,
        }

    # -- StreamParser ------------------------------------------------------------------------

    @property
    def owner(self) -> Owner | None:
        if self._s.session_id is not None:
            return Owner(self._s.session_id, self._s.agent_id)
        return Owner(self.spec.session_hint) if self.spec.session_hint else None

    def checkpoint(self) -> dict[str, Any]:
        return {"v": _CHECKPOINT_VERSION, **asdict(self._s)}

    def parse(self, line: bytes) -> list[Record]:
        # Decoded whole: a typed decode of only the fields read here (as Claude's transcripts
        # are, agents/claude/fields.py) measured slower, not faster, on rollouts, whose bytes
        # are mostly what the parser reads (tool outputs) or strings orjson decodes at memory
        # speed (encrypted reasoning).
        obj = load_json_object(line)
        if self._s.format is None:
            self._s.format = _detect_format(obj)
        if self._s.format == _LEGACY:
            records = self._legacy_line(obj)
        elif self._s.format == _ENVELOPE:
            records = self._envelope_line(obj)
        else:
            records = [Unknown(kind=_kind(obj.get("type")))]
        return self._stamp(records, parse_timestamp(obj.get("timestamp")))

    def parse_oversized(self, prefix: bytes, length: int) -> list[Record]:
        """Guess a line too long to buffer from its first bytes (cheap regex checks only)."""
        ts_match = _RE_TS.search(prefix)
        ts = parse_timestamp(ts_match[1].decode("ascii", "replace")) if ts_match else None
        return self._stamp(self._oversized(prefix, length), ts)

    # -- shared plumbing ---------------------------------------------------------------------

    def _stamp(self, records: list[Record], ts: float | None) -> list[Record]:
        """Set the line's time and sub-agent on the records it produced. They were built by
        this call and nobody else holds them yet, so they are filled in place rather than
        copied: ``dataclasses.replace`` per record was a large share of indexing time (and a
        Struct's ``msgspec.structs.replace`` would still build each record twice)."""
        agent_id = self._s.agent_id
        if ts is not None:
            for record in records:
                _SET_TS(record, ts)
        if agent_id is not None:
            for record in records:
                _SET_AGENT(record, agent_id)
        return records  # (the handlers build them with neither)

    def _oversized(self, prefix: bytes, length: int) -> list[Record]:
        if _RE_CALL_OUTPUT.search(prefix) and (call_id := _RE_CALL_ID.search(prefix)):
            return [ToolResult(call_id=call_id[1].decode("utf-8", "replace"))]
        size = f"[message of {size_text(length)}]"
        if _RE_USER_MESSAGE.search(prefix):
            return [self._prompt(size, from_event=True, key=_OVERSIZED_PROMPT_KEY)]
        if _RE_USER_ITEM.search(prefix):
            return [self._prompt(size, from_event=False, key=_OVERSIZED_PROMPT_KEY)]
        if _RE_SESSION_META.search(prefix) and (meta := _meta_from_prefix(prefix)):
            return self._session_meta(meta)
        return [Activity(kind="oversized")]

    # -- envelope format ---------------------------------------------------------------------

    def _envelope_line(self, obj: _Json) -> list[Record]:
        kind = obj.get("type")
        if not isinstance(kind, str):
            return [Unknown(kind="?")]
        if kind in _TOP_BOOKKEEPING:
            return [Bookkeeping(kind=kind)]
        handler = self._top.get(kind)
        payload = obj.get("payload")
        if handler is None or not isinstance(payload, dict):
            return [Unknown(kind=kind)]
        return handler(payload)

    def _session_meta(self, payload: _Json) -> list[Record]:
        if self._s.meta_seen:
            return [Bookkeeping(kind="session_meta")]  # a fork or sub-agent copied its parent's
        self._s.meta_seen = True
        own_id = _str(payload, "id") or _str(payload, "session_id") or self.spec.session_hint
        if not own_id:
            return [Unknown(kind="session_meta")]
        parent = _parent_thread(payload, own_id)
        self._s.session_id, self._s.agent_id = (parent, own_id) if parent else (own_id, None)
        return [
            SessionMeta(
                session_id=own_id,
                cwd=_str(payload, "cwd"),
                cli_version=_str(payload, "cli_version"),
                parent_session_id=parent,
                forked_from=_str(payload, "forked_from_id"),
                originator=_str(payload, "originator"),
            )
        ]

    def _turn_context(self, payload: _Json) -> list[Record]:
        policy = payload.get("approval_policy")
        if isinstance(policy, str):
            self._s.approval_policy = policy
        elif isinstance(policy, dict) and policy:
            self._s.approval_policy = str(next(iter(policy)))  # {"granular": {...}} and the like
        sandbox = payload.get("sandbox_policy")
        if isinstance(sandbox, str):
            self._s.sandbox = sandbox
        elif isinstance(sandbox, dict):
            self._s.sandbox = _str(sandbox, "type") or _str(sandbox, "mode") or self._s.sandbox
        mode = _obj(payload, "collaboration_mode").get("mode")
        if isinstance(mode, str) and mode:
            self._s.collaboration_mode = mode
        if self._s.unmarked_turn:
            self._new_round()  # builds without turn markers write one per request to the model
        model = _str(payload, "model")
        if model and model != self._s.last_model:
            self._s.last_model = model
            return [ModelSeen(model=model)]
        return [Bookkeeping(kind="turn_context")]

    def _event(self, payload: _Json) -> list[Record]:
        kind = payload.get("type")
        if not isinstance(kind, str):
            return [Unknown(kind="event_msg/?")]
        handler = self._events.get(kind)
        if handler is not None:
            return handler(payload)
        if kind in _EVENT_ACTIVITY:
            if kind in ("agent_message", "agent_reasoning"):
                self._s.round_output = True  # the legacy copy of a message or reasoning item
            return [Activity(kind=kind)]
        if kind in _EVENT_BOOKKEEPING:
            return [Bookkeeping(kind=kind)]
        return [Unknown(kind=f"event_msg/{kind}")]

    def _turn_started(self, payload: _Json) -> list[Record]:
        self._s.marked_turn, self._s.unmarked_turn = True, False
        self._new_round()
        return [TurnStarted(turn_id=_str(payload, "turn_id"))]

    def _turn_complete(self, payload: _Json) -> list[Record]:
        self._end_turn()
        error = payload.get("error")
        message: str | None = None
        if isinstance(error, str):
            message = error or "error"
        elif isinstance(error, dict):
            message = _str(error, "message") or "error"
        return [TurnEnded(last_message=_str(payload, "last_agent_message"), error=message)]

    def _turn_aborted(self, payload: _Json) -> list[Record]:
        self._end_turn()
        return [TurnAborted(reason=_str(payload, "reason") or "interrupted")]

    def _end_turn(self) -> None:
        self._s.event_prompts.clear()
        self._s.item_prompts.clear()
        self._s.marked_turn = self._s.unmarked_turn = False
        self._new_round()

    # -- the end of a turn no line closes (see the module docstring) -------------------------

    def _new_round(self) -> None:
        """A request to the model starts (a prompt, a tool's output going back, a new turn)."""
        s = self._s
        s.round_output, s.round_answer, s.round_call, s.round_completed = False, None, False, False

    def _unmarked_turn_over(self) -> list[Record]:
        s = self._s
        if not s.unmarked_turn or s.round_answer is None or s.round_call or not s.round_completed:
            return []
        answer = s.round_answer
        self._new_round()
        return [TurnEnded(last_message=answer or None)]

    def _user_message_event(self, payload: _Json) -> list[Record]:
        text = _str(payload, "message") or ""
        if not text.strip():
            has_images = bool(payload.get("images") or payload.get("local_images"))
            if not has_images:
                return [Bookkeeping(kind="user_message")]
            text = "[image]"
        return [self._prompt(text, from_event=True)]

    def _item_completed(self, payload: _Json) -> list[Record]:
        item = _obj(payload, "item")
        kind = item.get("type")
        if not isinstance(kind, str) or not kind:
            return [Unknown(kind="event_msg/item_completed")]
        if kind != "UserMessage":
            return [Activity(kind=kind)]
        content = item.get("content")
        text = "".join(content_texts(content))
        if not text.strip():
            if not _has_image(content):
                return [Bookkeeping(kind="UserMessage")]
            text = "[image]"
        return [self._prompt(text, from_event=False)]

    def _prompt(self, text: str, *, from_event: bool, key: str | None = None) -> Record:
        """A Prompt, or Bookkeeping when it is the other source's copy of one already emitted."""
        key = key or " ".join(text.split())[:200]
        mine, other = (
            (self._s.event_prompts, self._s.item_prompts)
            if from_event
            else (self._s.item_prompts, self._s.event_prompts)
        )
        if key in other:
            other.remove(key)
            return Bookkeeping(kind="prompt-copy")
        mine.append(key)
        del mine[:-_MAX_PENDING_PROMPTS]
        if not self._s.marked_turn:
            self._s.unmarked_turn = True
        self._new_round()
        return Prompt(text=text)

    def _token_count(self, payload: _Json) -> list[Record]:
        info = _obj(payload, "info")
        total, last = _counts(info.get("total_token_usage")), _counts(info.get("last_token_usage"))
        if total is None and last is None:
            return [Bookkeeping(kind="token_count")]
        previous, previous_last = self._s.last_total, self._s.last_response
        if total is not None:
            self._s.last_total = total
        self._s.last_response = last
        if total is not None and total == previous and last == previous_last:
            spent = None  # the count a new request starts with: the previous one again
        elif last is not None:
            spent = last
        elif total is not None and previous is not None:
            spent = [max(0, now - before) for now, before in zip(total, previous, strict=True)]
        else:
            spent = total  # the first total
        if self._s.round_output:
            self._s.round_completed = True  # the response that brought that output completed
        if spent is None:
            return [Bookkeeping(kind="token_count"), *self._unmarked_turn_over()]
        inputs, cached, output = spent
        usage = Usage(
            input_tokens=max(0, inputs - cached), cache_read_tokens=cached, output_tokens=output
        )
        return [UsageReport(usage=usage), *self._unmarked_turn_over()]

    def _thread_name(self, payload: _Json) -> list[Record]:
        title = _str(payload, "thread_name") or _str(payload, "name")
        if not title or not title.strip():
            return [Bookkeeping(kind="thread_name_updated")]
        return [TitleSet(title=one_line(title), rank=TITLE_RANK_AGENT)]

    # -- response items (both formats) -------------------------------------------------------

    def _response_item(self, payload: _Json) -> list[Record]:
        kind = payload.get("type")
        if not isinstance(kind, str):
            return [Unknown(kind="response_item/?")]
        handler = self._items.get(kind)
        if handler is not None:
            return handler(payload)
        if kind in _ITEM_ACTIVITY:
            return [Activity(kind=kind)]
        if kind in _ITEM_COMPACTION:
            return [Compaction()]
        if kind in _ITEM_BOOKKEEPING:
            return [Bookkeeping(kind=kind)]
        return [Unknown(kind=f"response_item/{kind}")]

    def _message(self, payload: _Json) -> list[Record]:
        role = payload.get("role")
        texts = content_texts(payload.get("content"))
        if role == "assistant":
            phase = payload.get("phase")
            text = "".join(texts)
            self._s.round_output, self._s.round_answer = True, text
            return [
                AssistantText(
                    text=text,
                    message_id=_str(payload, "id"),
                    final=phase in ("final", "final_answer"),
                ),
                *self._unmarked_turn_over(),
            ]
        if role not in ("user", "developer", "system"):
            return [Unknown(kind=f"response_item/message/{_kind(role)}")]
        if self._s.format != _LEGACY:
            return [Bookkeeping(kind="context")]  # injected context; prompts come from events
        return self._legacy_user_message(role, "".join(texts))

    def _reasoning(self, payload: _Json) -> list[Record]:
        self._s.round_output = True
        return [Thinking(text="\n".join(content_texts(payload.get("summary"))))]

    def _function_call(self, payload: _Json) -> list[Record]:
        name = _str(payload, "name") or "?"
        args, raw = decode_arguments(payload.get("arguments"))
        return self._tool_call(payload, name, args, raw, freeform=False)

    def _custom_tool_call(self, payload: _Json) -> list[Record]:
        name = _str(payload, "name") or "?"
        return self._tool_call(payload, name, None, _str(payload, "input") or "", freeform=True)

    def _local_shell_call(self, payload: _Json) -> list[Record]:
        command = _command_text(_obj(payload, "action").get("command"))
        args = {"command": command} if command else {}
        records = self._tool_call(payload, "local_shell", args, "", freeform=False)
        call_id = _str(payload, "call_id") or _str(payload, "id")
        if call_id and payload.get("status") == "completed":
            records.append(ToolResult(call_id=call_id))
        return records

    def _tool_call(
        self, payload: _Json, name: str, args: _Json | None, raw: str, *, freeform: bool
    ) -> list[Record]:
        call_id = _str(payload, "call_id") or _str(payload, "id")
        if not call_id:
            return [Unknown(kind=f"response_item/{_kind(payload.get('type'))}")]
        summary = _tool_summary(name, args, raw, freeform=freeform)
        self._s.round_output = self._s.round_call = True
        return [ToolCall(call_id=call_id, name=name, summary=summary, asks=self._asks(name, args))]

    def _asks(self, name: str, args: _Json | None) -> Asks:
        if name == QUESTION_TOOL:
            # Codex refuses it at once outside Plan mode ("request_user_input is unavailable in
            # Default mode"), unless the default_mode_request_user_input feature is on.
            mode = self._s.collaboration_mode
            return Asks.QUESTION if mode in (None, "plan") else Asks.NOTHING
        policy = self._s.approval_policy
        if name in _EXEC_TOOLS and args is not None and _wants_escalation(args):
            return Asks.APPROVAL if policy in _ESCALATION_ASKS_UNDER else Asks.NOTHING
        if name == "apply_patch" and self._s.sandbox == "read-only" and policy != "never":
            return Asks.APPROVAL
        return Asks.NOTHING

    def _call_output(self, payload: _Json) -> list[Record]:
        call_id = _str(payload, "call_id")
        if not call_id:
            return [Unknown(kind=f"response_item/{_kind(payload.get('type'))}")]
        is_error, denied = _result_flags(payload.get("output"))
        self._new_round()  # its output goes back to the model: another response follows
        return [ToolResult(call_id=call_id, is_error=is_error, denied=denied)]

    # -- legacy bare format ------------------------------------------------------------------

    def _legacy_line(self, obj: _Json) -> list[Record]:
        if "record_type" in obj:
            return [Bookkeeping(kind=_kind(obj.get("record_type")))]
        kind = obj.get("type")
        if kind is None and not self._s.meta_seen and _str(obj, "id"):
            return self._legacy_header(obj)
        if not isinstance(kind, str) or kind not in _ITEM_TYPES:
            return [Unknown(kind=_kind(kind))]
        records = self._response_item(obj)
        if self._s.pending_meta is not None and not all(
            isinstance(r, Bookkeeping | SessionMeta) for r in records
        ):
            records = [*self._flush_legacy_meta(None), *records]
        return records

    def _legacy_header(self, obj: _Json) -> list[Record]:
        """The first line of a mid-2025 rollout: owner now, SessionMeta once the cwd is known."""
        self._s.meta_seen = True
        own_id = _str(obj, "id") or ""
        self._s.session_id, self._s.agent_id = own_id, None
        self._s.pending_meta = {
            "id": own_id,
            "cli_version": _str(obj, "cli_version"),
            "originator": _str(obj, "originator"),
        }
        if cwd := _str(obj, "cwd"):  # some late legacy builds put it in the header
            return self._flush_legacy_meta(cwd)
        return [Bookkeeping(kind="session_meta")]

    def _flush_legacy_meta(self, cwd: str | None) -> list[Record]:
        pending, self._s.pending_meta = self._s.pending_meta, None
        if pending is None:
            return []
        return [
            SessionMeta(
                session_id=_str(pending, "id") or "",
                cwd=cwd,
                cli_version=_str(pending, "cli_version"),
                originator=_str(pending, "originator"),
            )
        ]

    def _legacy_user_message(self, role: object, text: str) -> list[Record]:
        stripped = text.lstrip()
        if role != "user" or stripped.startswith(INJECTED_PREFIXES):
            cwd = None
            if stripped.startswith("<environment_context>") and (m := _CWD_TAG.search(text)):
                cwd = m[1].strip()
            meta = self._flush_legacy_meta(cwd) if cwd else []
            return [*meta, Bookkeeping(kind="context")]
        if not stripped:
            return [Bookkeeping(kind="context")]
        return [Prompt(text=text)]


def rate_limits(payload: _Json) -> list[Record]:
    """A ``token_count``'s ``rate_limits`` as a ``LimitsSeen`` record (none when every window is
    null: what Codex writes when the server sent no limits, e.g. with an API key)."""
    limits = payload.get("rate_limits")
    if not isinstance(limits, dict) or not (
        isinstance(limits.get("primary"), dict) or isinstance(limits.get("secondary"), dict)
    ):
        return []
    return [LimitsSeen(rate_limits=_limit_fields(limits))]


_LIMIT_KEYS = frozenset({"used_percent", "window_minutes", "resets_at", "resets_in_seconds"})


def _limit_fields(limits: _Json) -> dict[str, object]:
    """Only the scalars the windows are read from: the record is kept, compared and sent to
    and from the cold-read workers, and a hostile line may nest anything at any depth."""
    kept: dict[str, object] = {}
    plan = limits.get("plan_type")
    if plan is not None and _scalar(plan):
        kept["plan_type"] = plan
    for slot in ("primary", "secondary"):
        window = limits.get(slot)
        if isinstance(window, dict):
            kept[slot] = {
                k: v
                for k, v in window.items()
                if k in _LIMIT_KEYS and (type(v) in _SCALARS or _scalar(v))
            }
    return kept


_SCALARS = frozenset({type(None), bool, int, float, str})  # the exact types, looked up first


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def _detect_format(obj: _Json) -> str | None:
    """The line format this line shows, or None when it does not say (garbage before the header)."""
    kind = obj.get("type")
    if "payload" in obj or (isinstance(kind, str) and kind in _ENVELOPE_TYPES):
        return _ENVELOPE
    if "record_type" in obj or (isinstance(kind, str) and kind in _ITEM_TYPES):
        return _LEGACY
    return _LEGACY if kind is None and _str(obj, "id") else None


def _parent_thread(payload: _Json, own_id: str) -> str | None:
    """The parent thread of a sub-agent's session_meta, or None for a main thread."""
    parent = _str(payload, "parent_thread_id")
    source = payload.get("source")
    if not parent and isinstance(source, dict) and "subagent" in source:
        parent = find_key(source["subagent"], "parent_thread_id")
        if not parent:
            # Newer builds name the root thread in ``session_id``; a sub-agent's differs from its id
            root = _str(payload, "session_id")
            parent = root if root != own_id else None
    return parent if parent and parent != own_id else None


def _meta_from_prefix(prefix: bytes) -> _Json | None:
    """The string fields of a session_meta payload, read from the first bytes of its line."""
    found = _RE_META_ID.search(prefix)
    if found is None:
        return None
    meta: _Json = {"id": found[1].decode("utf-8", "replace")}
    for name, pattern in _RE_META_FIELDS.items():
        if (match := pattern.search(prefix)) is not None:
            try:
                meta[name] = orjson.loads(match[1])
            except orjson.JSONDecodeError:
                continue
    return meta
