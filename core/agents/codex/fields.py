"""The fields of a Codex rollout line the parser reads, decoded without the rest (any thread).

Most of a rollout's bytes are tool outputs, encrypted reasoning and instructions: ``line_fields``
decodes an envelope line (``{timestamp, type, payload}``) into a dict holding only what
``CodexRolloutParser`` reads from it, with the same values, so that one parser serves both
decodings. Types are narrow on purpose: a field of any other type than the usual ones fails the
typed decode and the line is decoded whole, so odd lines keep their exact handling. So do the
rare lines whose handling reads fields of any shape: ``session_meta`` (it searches the
``source`` tree), ``turn_context`` (policies as text or objects) and ``local_shell_call``; and the
legacy bare format, which is decided line by line from whole objects.

Keep ``_Payload`` in step with the parser: every key it reads for a kind decoded here must be
declared (tests/test_fast_decode.py compares both decodings on every fixture).
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

import msgspec

from ...sources.base import load_fields

# Integers as ``orjson`` reads them: it reads wider ones as floats, and the lenient path as text,
# so they are left to the full decode (msgspec bounds stop at 64 signed bits: so does this).
_Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class _Part(TypedDict, total=False):
    type: str | None
    text: str | None


class _Item(TypedDict, total=False):
    type: str | None
    content: list[_Part] | None


class _Tokens(TypedDict, total=False):
    input_tokens: _Int | float | None
    cached_input_tokens: _Int | float | None
    output_tokens: _Int | float | None


class _Info(TypedDict, total=False):
    total_token_usage: _Tokens | None


class _Error(TypedDict, total=False):
    message: str | None


class _Output(TypedDict, total=False):
    content: str | list[_Part] | None
    success: bool | None


class _Payload(TypedDict, total=False):
    type: str
    # event_msg
    turn_id: str | None
    last_agent_message: str | None
    error: str | _Error | None
    reason: str | None
    message: str | None
    images: list[msgspec.Raw] | None  # only whether there are any matters
    local_images: list[msgspec.Raw] | None
    item: _Item | None
    info: _Info | None
    thread_name: str | None
    name: str | None
    # response_item
    role: str | None
    content: list[_Part] | None
    phase: str | None
    id: str | None
    summary: list[_Part] | None
    arguments: str | None
    call_id: str | None
    input: str | None
    output: str | list[_Part] | _Output | None


class _Line(TypedDict, total=False):
    timestamp: str | None
    type: str
    payload: _Payload


_DECODER = msgspec.json.Decoder(_Line)
_WHOLE_KINDS = frozenset({"session_meta", "turn_context"})
_WHOLE_ITEMS = frozenset({"local_shell_call"})


def line_fields(line: bytes) -> dict[str, Any] | None:
    """The fields of an envelope-format ``line`` the parser reads, or None: decode it whole."""
    obj = load_fields(line, _DECODER)
    if obj is None or obj.get("type") in _WHOLE_KINDS:
        return None
    payload = obj.get("payload")
    if payload is not None and payload.get("type") in _WHOLE_ITEMS:
        return None
    return obj
