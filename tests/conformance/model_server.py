"""A scripted model server on 127.0.0.1 that speaks enough of the Anthropic Messages API and
the OpenAI Responses API (both streaming) for the real CLIs to run turns against it.

A test queues ``Reply`` values; each main request (one that offers tools: the agent's own turn)
takes the next one. Side requests (titles, summaries; no tools) get a short canned answer and
never consume the script. Every request is logged with its arrival time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolUse:
    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One model response. ``delay`` holds it back before the first byte (a long turn);
    ``error`` answers with that HTTP status and message instead."""

    blocks: tuple[Text | ToolUse, ...] = ()
    delay: float = 0.0
    error: tuple[int, str] | None = None

    @staticmethod
    def text(text: str, *, delay: float = 0.0) -> Reply:
        return Reply((Text(text),), delay=delay)

    @staticmethod
    def tool(name: str, arguments: dict[str, Any], *, say: str | None = None) -> Reply:
        blocks: tuple[Text | ToolUse, ...] = (ToolUse(name, arguments),)
        return Reply((Text(say), *blocks) if say else blocks)

    @staticmethod
    def failure(status: int, message: str) -> Reply:
        return Reply(error=(status, message))


def thinking(reply: Reply, seconds: float = 1.0) -> Reply:
    """The model takes a moment, as models do. A reply at once can take the agent from busy to
    waiting or done before anyone could see it busy: Claude rewrites its registry within
    milliseconds; Codex had a whole turn on disk in 50 ms, before a loaded engine's first read
    of it. The scenario would have no "running" to check."""
    return dataclasses.replace(reply, delay=seconds)


@dataclass
class Logged:
    at: float  # time.perf_counter()
    method: str
    path: str
    body: dict[str, Any] | None
    main: bool


@dataclass
class Script:
    replies: deque[Reply] = field(default_factory=deque)
    default: Reply = field(default_factory=lambda: Reply.text("OK."))
    side_text: str = "Conformance session"

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def next_reply(self) -> Reply:
        return self.replies.popleft() if self.replies else self.default


class ModelServer:
    def __init__(self) -> None:
        self.script = Script()
        self.log: list[Logged] = []
        # Sent with every streamed answer: a test sets the rate-limit headers the real services
        # send (Codex: x-codex-primary-used-percent...; Anthropic: anthropic-ratelimit-unified-*).
        self.extra_headers: dict[str, str] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def record(self, entry: Logged) -> None:
        with self._lock:
            self.log.append(entry)

    def requests(self) -> list[Logged]:
        with self._lock:
            return list(self.log)

    def main_requests(self) -> list[Logged]:
        with self._lock:
            return [e for e in self.log if e.main]

    def wait_main_requests(self, count: int, timeout: float = 30.0) -> list[Logged]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = self.main_requests()
            if len(done) >= count:
                return done
            time.sleep(0.05)
        raise AssertionError(f"expected {count} model requests, got {len(self.main_requests())}")


def _is_warmup(body: dict[str, Any]) -> bool:
    """Claude Code 2.0.x warms its sub-agents up at start-up with a "Warmup" prompt that offers
    tools: a side request, not a turn of the script."""
    messages = body.get("messages")
    if not isinstance(messages, list) or len(messages) != 1 or not isinstance(messages[0], dict):
        return False
    content = messages[0].get("content")
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = " ".join(t for t in texts if isinstance(t, str))
    return isinstance(content, str) and content.strip() == "Warmup"


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the server keeps its own log

    def handle(self) -> None:
        # The CLI hung up mid-answer (an interrupt, its exit): nothing to report.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()

    # -- plumbing ----------------------------------------------------------------------------

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            value = json.loads(raw) if raw else None
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in self.owner.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True

    def _event(self, name: str, payload: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()

    # -- routes ------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.owner.record(Logged(time.perf_counter(), "GET", self.path, None, False))
        if self.path.startswith("/v1/models"):
            self._json(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        body = self._body()
        path = self.path.split("?", 1)[0]
        tools = (body or {}).get("tools")
        main = bool(tools) and not _is_warmup(body or {})
        self.owner.record(Logged(time.perf_counter(), "POST", self.path, body, main))
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(body or {}, main)
        elif path.endswith("/responses"):
            self._openai(body or {}, main)
        elif is_gemini_path(path):
            gemini_route(self, path, body or {}, main)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    # -- Anthropic Messages ------------------------------------------------------------------

    def _anthropic(self, body: dict[str, Any], main: bool) -> None:
        reply = self.owner.script.next_reply() if main else Reply.text(self.owner.script.side_text)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.error is not None:
            status, message = reply.error
            kind = "overloaded_error" if status == 529 else "invalid_request_error"
            self._json(status, {"type": "error", "error": {"type": kind, "message": message}})
            return
        model = body.get("model", "claude-sonnet-4-5")
        message_id = self.owner.new_id("msg")
        blocks = [self._anthropic_block(b) for b in reply.blocks]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        usage = {
            "input_tokens": 120,
            "output_tokens": 30,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
        if not body.get("stream"):
            self._json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        self._start_events()
        self._event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        )
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            self._event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            self._event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    def _anthropic_block(self, block: Text | ToolUse) -> dict[str, Any]:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text}
        call_id = block.call_id or self.owner.new_id("toolu")
        return {"type": "tool_use", "id": call_id, "name": block.name, "input": block.arguments}

    # -- OpenAI Responses --------------------------------------------------------------------

    def _openai(self, body: dict[str, Any], main: bool) -> None:
        reply = self.owner.script.next_reply() if main else Reply.text(self.owner.script.side_text)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.error is not None:
            status, message = reply.error
            self._json(
                status,
                {
                    "error": {
                        "message": message,
                        "type": "invalid_request_error",
                        "code": None,
                        "param": None,
                    }
                },
            )
            return
        response_id = self.owner.new_id("resp")
        items = [self._openai_item(b) for b in reply.blocks]
        usage = {
            "input_tokens": 120,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 150,
        }
        base = {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model", "mock-model"),
        }
        self._start_events()
        self._event(
            "response.created",
            {
                "type": "response.created",
                "response": {**base, "status": "in_progress", "output": []},
            },
        )
        for index, item in enumerate(items):
            self._event(
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": item},
            )
            self._event(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        self._event(
            "response.completed",
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": items, "usage": usage},
            },
        )

    def _openai_item(self, block: Text | ToolUse) -> dict[str, Any]:
        if isinstance(block, Text):
            return {
                "type": "message",
                "id": self.owner.new_id("msg"),
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block.text, "annotations": []}],
            }
        return {
            "type": "function_call",
            "id": self.owner.new_id("fc"),
            "status": "completed",
            "call_id": block.call_id or self.owner.new_id("call"),
            "name": block.name,
            "arguments": json.dumps(block.arguments),
        }


# -- Gemini API (Gemini CLI) -------------------------------------------------------------------
# Gemini CLI talks to ``{GOOGLE_GEMINI_BASE_URL}/v1beta/models/<model>:<method>``:
# ``streamGenerateContent?alt=sse`` for its turns (the main requests: they offer tools),
# ``generateContent`` for its side requests (the model router, the next-speaker check, titles;
# they ask for JSON with a schema and offer no tools) and ``countTokens``.

GEMINI_METHODS = (":streamGenerateContent", ":generateContent", ":countTokens")


def is_gemini_path(path: str) -> bool:
    return path.endswith(GEMINI_METHODS)


def gemini_route(handler: _Handler, path: str, body: dict[str, Any], main: bool) -> None:
    """Answer one Gemini API request (``handler`` has already logged it)."""
    if path.endswith(":countTokens"):
        handler._json(200, {"totalTokens": 100})
        return
    server = handler.owner
    reply = server.script.next_reply() if main else Reply.text(_gemini_side_text(server, body))
    if reply.delay:
        time.sleep(reply.delay)
    if reply.error is not None:
        status, message = reply.error
        handler._json(
            status,
            {
                "error": {
                    "code": status,
                    "message": message,
                    "status": _GEMINI_STATUS.get(status, "UNKNOWN"),
                }
            },
        )
        return
    parts = [_gemini_part(server, block) for block in reply.blocks]
    usage = {"promptTokenCount": 120, "candidatesTokenCount": 30, "totalTokenCount": 150}
    chunk = {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": usage,
        "modelVersion": str(body.get("model") or "gemini-mock"),
        "responseId": server.new_id("resp"),
    }
    if not path.endswith(":streamGenerateContent"):
        handler._json(200, chunk)
        return
    handler._start_events()
    handler.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
    handler.wfile.flush()


_GEMINI_STATUS = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                  503: "UNAVAILABLE"}  # fmt: skip


def _gemini_part(server: ModelServer, block: Text | ToolUse) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"text": block.text}
    call: dict[str, Any] = {"name": block.name, "args": block.arguments}
    if block.call_id:
        call["id"] = block.call_id
    return {"functionCall": call}


def _gemini_side_text(server: ModelServer, body: dict[str, Any]) -> str:
    """A side request that asks for JSON gets JSON its schema accepts (the router picks the
    model it was given; the next-speaker check says the person speaks next); others get the
    script's side text."""
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if config.get("responseMimeType") != "application/json" or not isinstance(schema, dict):
        return server.script.side_text
    return json.dumps(_gemini_json_for(schema))


def _gemini_json_for(schema: dict[str, Any]) -> Any:
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: _gemini_json_for(sub) for name, sub in properties.items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    return "user"
