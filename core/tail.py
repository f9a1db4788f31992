"""Byte-offset tailing of append-only JSONL files (engine thread; one reader per file, no locks).

A reader yields only complete lines. A partial last line (even one cut inside a multi-byte UTF-8
character: splitting happens on the newline byte, which never occurs inside one) is held back
until its newline arrives. The position survives restarts as a ``Cursor``: device, inode, offset
and a fingerprint of the bytes just before the offset, so a file that was truncated, replaced or
rewritten behind our back is noticed and read again from the top instead of mid-line.
Lines longer than ``max_line_bytes`` are not buffered whole: the reader keeps a prefix, skips to
the newline, and reports an ``Oversized`` line so the adapter can still say what it was.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

import zstandard

FINGERPRINT_BYTES = 64
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
OVERSIZED_PREFIX_BYTES = 64 * 1024
READ_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where reading resumes: just after the last complete line consumed."""

    dev: int
    ino: int
    offset: int
    fingerprint: bytes  # the up to 64 bytes before ``offset``

    @staticmethod
    def start() -> Cursor:
        return Cursor(dev=0, ino=0, offset=0, fingerprint=b"")


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line over the size cap: its first bytes and its full length."""

    prefix: bytes
    length: int


Line = bytes | Oversized


@dataclass(slots=True)
class TailResult:
    lines: list[Line] = field(default_factory=list)
    # The file now at the path is not the one the cursor described (replaced, truncated or
    # rewritten): ``lines`` after ``reset_at`` come from the top of the new file.
    reset_at: int | None = None
    gone: bool = False  # the path no longer exists (lines drained from the old file still count)
    more: bool = False  # stopped at the byte budget; call again to continue
    bytes_read: int = 0


class LineReader(Protocol):
    """Anything the engine can pull complete lines from."""

    path: Path

    @property
    def cursor(self) -> Cursor: ...

    def read(self, budget: int | None = None) -> TailResult: ...

    def close(self) -> None: ...


class FileTailer:
    """Incremental reader of one growing file.

    Keeps the file open between reads (``close()`` releases it) so that lines written just
    before a rename or delete are still drained from the old file.
    """

    def __init__(
        self,
        path: Path,
        cursor: Cursor | None = None,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.path = path
        self._cursor = cursor or Cursor.start()
        self._max_line = max_line_bytes
        self._fd: int | None = None
        self._fd_id: tuple[int, int] | None = None
        # Bytes read past the cursor that do not yet end in a newline.
        self._partial = bytearray()
        self._scan_pos = self._cursor.offset  # file position just after ``_partial``
        self._skipping: int | None = None  # length so far of an oversized line being skipped
        self._skip_prefix = b""

    @property
    def cursor(self) -> Cursor:
        return self._cursor

    @property
    def pending_bytes(self) -> int:
        """Bytes read but held back (an unfinished line)."""
        return self._scan_pos - self._cursor.offset

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None
        self._fd_id = None

    def read(self, budget: int | None = None) -> TailResult:
        result = TailResult()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._drain_open_file(result, budget)
            self.close()
            result.gone = True
            return result
        identity = (st.st_dev, st.st_ino)
        if self._fd is not None and self._fd_id != identity:
            # Replaced by rename: finish the old file first, then start the new one.
            self._drain_open_file(result, budget)
            self.close()
        if self._fd is None:
            self._open(identity, result)
            if self._fd is None:
                return result
        if not self._position_is_valid(st.st_size):
            result.reset_at = len(result.lines)
            self._restart_at_top(identity)
        self._read_available(result, budget)
        return result

    # -- internals -------------------------------------------------------------------------

    def _open(self, identity: tuple[int, int], result: TailResult) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError:
            result.gone = True
            return
        st = os.fstat(fd)
        self._fd = fd
        self._fd_id = (st.st_dev, st.st_ino)
        known = (self._cursor.dev, self._cursor.ino)
        if self._cursor.offset > 0 and known not in ((0, 0), self._fd_id):
            # A different file than the one the cursor was taken on.
            result.reset_at = len(result.lines)
            self._restart_at_top(self._fd_id)
        else:
            cur = self._cursor
            self._cursor = Cursor(st.st_dev, st.st_ino, cur.offset, cur.fingerprint)

    def _position_is_valid(self, size: int) -> bool:
        offset = self._cursor.offset
        if size < self._scan_pos or size < offset:
            return False
        if offset == 0:
            return True
        fingerprint = self._cursor.fingerprint
        assert self._fd is not None
        start = offset - len(fingerprint)
        try:
            return os.pread(self._fd, len(fingerprint), start) == fingerprint
        except OSError:
            return False

    def _restart_at_top(self, identity: tuple[int, int]) -> None:
        self._cursor = Cursor(identity[0], identity[1], 0, b"")
        self._partial.clear()
        self._scan_pos = 0
        self._skipping = None
        self._skip_prefix = b""

    def _drain_open_file(self, result: TailResult, budget: int | None) -> None:
        if self._fd is not None:
            self._read_available(result, budget)

    def _read_available(self, result: TailResult, budget: int | None) -> None:
        assert self._fd is not None
        while True:
            if budget is not None and result.bytes_read >= budget:
                result.more = True
                return
            try:
                chunk = os.pread(self._fd, READ_CHUNK_BYTES, self._scan_pos)
            except OSError:
                return
            if not chunk:
                return
            result.bytes_read += len(chunk)
            self._consume(chunk, result)

    def _consume(self, chunk: bytes, result: TailResult) -> None:
        chunk_start = self._scan_pos
        self._scan_pos += len(chunk)
        last_nl = chunk.rfind(b"\n")
        if last_nl < 0:
            self._hold(chunk)
            return
        complete = chunk[: last_nl + 1]
        rest = chunk[last_nl + 1 :]
        first_nl = complete.find(b"\n")
        head, body = complete[:first_nl], complete[first_nl + 1 : -1]
        # The first line continues whatever was held back.
        if self._skipping is not None:
            result.lines.append(Oversized(self._skip_prefix, self._skipping + len(head)))
            self._skipping = None
            self._skip_prefix = b""
        elif self._partial:
            self._partial += head
            self._emit(bytes(self._partial), result)
            self._partial.clear()
        else:
            self._emit(head, result)
        if first_nl < last_nl:
            for line in body.split(b"\n"):
                self._emit(line, result)
        end = chunk_start + last_nl + 1
        tail = complete[-FINGERPRINT_BYTES:]
        if len(tail) < FINGERPRINT_BYTES and end > len(tail):
            tail = self._pread_fingerprint(end)
        self._cursor = Cursor(self._cursor.dev, self._cursor.ino, end, tail)
        if rest:
            self._hold(rest)

    def _pread_fingerprint(self, end: int) -> bytes:
        assert self._fd is not None
        start = max(0, end - FINGERPRINT_BYTES)
        return os.pread(self._fd, end - start, start)

    def _emit(self, line: bytes, result: TailResult) -> None:
        if len(line) > self._max_line:
            result.lines.append(Oversized(line[:OVERSIZED_PREFIX_BYTES], len(line)))
        elif line.strip():
            result.lines.append(line)

    def _hold(self, data: bytes) -> None:
        if self._skipping is not None:
            self._skipping += len(data)
            return
        self._partial += data
        if len(self._partial) > self._max_line:
            # Stop buffering: remember a prefix and how long the line has grown.
            self._skip_prefix = bytes(self._partial[:OVERSIZED_PREFIX_BYTES])
            self._skipping = len(self._partial)
            self._partial.clear()


class WholeFileReader:
    """Reader for files that are rewritten, not appended (compressed archives): when the file's
    size or mtime changes it is read again from the top, reported as a reset."""

    def __init__(self, path: Path, cursor: Cursor | None = None) -> None:
        self.path = path
        self._cursor = cursor or Cursor.start()

    @property
    def cursor(self) -> Cursor:
        return self._cursor

    def close(self) -> None:
        pass

    def read(self, budget: int | None = None) -> TailResult:
        result = TailResult()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            result.gone = True
            return result
        stamp = f"{st.st_size}:{st.st_mtime_ns}".encode()
        if self._cursor.fingerprint == stamp and self._cursor.ino == st.st_ino:
            return result
        result.reset_at = 0 if self._cursor.offset else None
        held = b""
        try:
            with open(self.path, "rb") as raw:
                for chunk in self._decoded_chunks(raw):
                    result.bytes_read += len(chunk)
                    pieces = (held + chunk).split(b"\n")
                    held = pieces.pop()
                    result.lines.extend(line for line in pieces if line.strip())
        except (OSError, ValueError) as exc:
            raise UnreadableFile(f"{self.path}: {exc}") from exc
        if held.strip():
            result.lines.append(held)  # the file is complete: its last line needs no newline
        self._cursor = Cursor(st.st_dev, st.st_ino, st.st_size, stamp)
        return result

    def _decoded_chunks(self, raw: BinaryIO) -> Iterator[bytes]:
        while chunk := raw.read(READ_CHUNK_BYTES):
            yield chunk


class ZstdFileReader(WholeFileReader):
    """A zstd-compressed JSONL archive (Codex compresses rollouts older than a week)."""

    def _decoded_chunks(self, raw: BinaryIO) -> Iterator[bytes]:
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            while chunk := reader.read(READ_CHUNK_BYTES):
                yield chunk
        except zstandard.ZstdError as exc:
            raise ValueError(f"corrupt zstd archive: {exc}") from exc


class UnreadableFile(Exception):
    """A file exists but cannot be decoded (corrupt archive); the engine logs and counts it."""
