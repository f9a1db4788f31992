"""The channel's framing: one JSON object per line (orjson), at most ``MAX_FRAME`` bytes, read
from and written to a pipe (the thread that owns the pipe's end).

Before the far side's hello, a few lines that are not JSON are skipped (a login banner, a
message of the day a shell prints): at most ``MAX_BANNER_LINES`` of them, then the far side is
not an agentbar. Every line after the hello must be a frame.
"""

from __future__ import annotations

import threading
from typing import IO, Any

import orjson

from .. import jsonsafe

PROTOCOL = 1
MAX_FRAME = 1 << 20  # bytes of one line; a page, a chunk of an export, never a transcript
CHUNK_CHARS = 256 * 1024  # text of one export chunk (far under MAX_FRAME once escaped)
MAX_BANNER_LINES = 200
MAX_BANNER_BYTES = 256 * 1024


class FrameError(ValueError):
    """The stream broke the framing: a line too long, a line that is not a JSON object."""


class Closed(EOFError):
    """The other side closed the channel."""


def encode(frame: dict[str, Any]) -> bytes:
    data = jsonsafe.dumps(frame) + b"\n"
    if len(data) > MAX_FRAME:
        raise FrameError(f"a frame of {len(data)} bytes is over {MAX_FRAME}")
    return data


def decode(line: bytes) -> dict[str, Any]:
    try:
        frame = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise FrameError(f"not JSON: {exc}") from None
    if not isinstance(frame, dict):
        raise FrameError("a frame is a JSON object")
    return frame


def read_line(stream: IO[bytes]) -> bytes:
    """One line (without its end); ``Closed`` at the end of the stream, ``FrameError`` when
    a line runs past ``MAX_FRAME`` (or the stream ends inside a line)."""
    line = stream.readline(MAX_FRAME + 1)
    if not line:
        raise Closed("the channel was closed")
    if not line.endswith(b"\n"):
        if len(line) > MAX_FRAME:
            raise FrameError(f"a line longer than {MAX_FRAME} bytes")
        raise Closed("the channel was closed inside a frame")
    return line[:-1]


def read_frame(stream: IO[bytes]) -> dict[str, Any]:
    return decode(read_line(stream))


def read_hello(stream: IO[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """The far side's hello, skipping what a login printed before it (returned, for saying
    what the far side said instead when it is no agentbar)."""
    skipped: list[bytes] = []
    size = 0
    while True:
        line = read_line(stream)
        if line.startswith(b"{"):
            try:
                frame = decode(line)
            except FrameError:
                frame = None
            if frame is not None and frame.get("t") == "hello":
                return frame, skipped
        skipped.append(line)
        size += len(line)
        if len(skipped) > MAX_BANNER_LINES or size > MAX_BANNER_BYTES:
            raise FrameError("the far side printed too much before its hello")


class Writer:
    """Frames written whole from any thread (one lock: two threads never interleave a line)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.bytes_sent = 0

    def send(self, frame: dict[str, Any]) -> None:
        """Raises ``Closed`` when the other side is gone, ``FrameError`` for a frame too big."""
        data = encode(frame)
        with self._lock:
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise Closed(f"the channel was closed: {exc}") from None
            self.bytes_sent += len(data)
