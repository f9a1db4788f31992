"""The fields of a Claude transcript line the parser reads, decoded without the rest (any thread).

Most of a transcript's bytes are tool results and file contents (``toolUseResult``, a
``tool_result`` block's ``content``) that no record needs: ``line_fields`` decodes a line into a
dict holding only what ``ClaudeTranscriptParser.parse_object`` reads, with the same values, so
that one parser serves both decodings. Types are narrow on purpose: a field of any other type
than the usual ones fails the typed decode and the line is decoded whole, so odd lines keep
their exact handling. So do the lines whose handling reads fields left out here: ``system``
lines, API error and synthetic assistant lines, and tool results that failed (their content
says whether the person refused the call).

Keep ``_Line`` in step with the parser: every key ``parse_object`` reads for a kind decoded
here must be declared (tests/test_fast_decode.py compares both decodings on every fixture).
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

import msgspec

from ...sources.base import Unsure, json_value, load_fields

# Integers as ``orjson`` reads them: it reads wider ones as floats, and the lenient path as text,
# so they are left to the full decode (msgspec bounds stop at 64 signed bits: so does this).
_Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class _CacheCreation(TypedDict, total=False):
    ephemeral_1h_input_tokens: _Int | float | None


class _Usage(TypedDict, total=False):
    input_tokens: _Int | float | None
    output_tokens: _Int | float | None
    cache_read_input_tokens: _Int | float | None
    cache_creation_input_tokens: _Int | float | None
    cache_creation: _CacheCreation | None


class _Block(TypedDict, total=False):
    type: str
    text: str
    thinking: str
    name: str
    id: str
    input: msgspec.Raw  # a tool call's arguments: any JSON, decoded by ``json_value``
    tool_use_id: str
    is_error: bool


class _Message(TypedDict, total=False):
    model: str | None
    content: str | list[_Block]
    id: str | None
    usage: _Usage | None
    stop_reason: str | None


class _Typed(TypedDict, total=False):
    type: str | None


class _Fork(TypedDict, total=False):
    sessionId: str | None


class _Line(TypedDict, total=False):
    type: str
    timestamp: str | None
    isSidechain: bool | None
    agentId: str | None
    sessionId: str | None
    cwd: str | None
    parentUuid: str | None
    version: str | None
    forkedFrom: _Fork | None
    message: _Message
    requestId: str | None
    isApiErrorMessage: bool | None
    isCompactSummary: bool | None
    isMeta: bool | None
    data: _Typed | None
    attachment: _Typed | None
    customTitle: str | None
    agentName: str | None
    aiTitle: str | None
    summary: str | None


_DECODER = msgspec.json.Decoder(_Line)
_WHOLE_KINDS = frozenset({"system"})  # their fields are read below several levels of unknowns


def line_fields(line: bytes) -> dict[str, Any] | None:
    """The fields of ``line`` the parser reads, or None: decode it whole."""
    obj = load_fields(line, _DECODER)
    if obj is None:
        return None
    kind = obj.get("type")
    if kind in _WHOLE_KINDS:
        return None
    message = obj.get("message")
    if message is None:
        return obj
    if kind == "assistant":
        if obj.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>":
            return None  # reads ``error`` and every block's text
        return obj if _decode_inputs(message.get("content")) else None
    if kind == "user" and _failed_result(message.get("content")):
        return None
    return obj


def _decode_inputs(content: object) -> bool:
    """Decode the tool calls' inputs in place; False when one cannot be decoded exactly."""
    if not isinstance(content, list):
        return True
    try:
        for block in content:
            if "input" in block:
                block["input"] = json_value(block["input"])
    except Unsure:
        return False
    return True


def _failed_result(content: object) -> bool:
    return isinstance(content, list) and any(b.get("is_error") is True for b in content)
