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
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

import zstandard

from .errors import AgentbarError
from .positional import pread

FINGERPRINT_BYTES = 64
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
OVERSIZED_PREFIX_BYTES = 64 * 1024
READ_CHUNK_BYTES = 1024 * 1024
ZSTD_INPUT_BYTES = 64 * 1024  # compressed bytes fed at a time (JSONL inflates ~10x)


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
    """A line over the size cap: its first min(OVERSIZED_PREFIX_BYTES, cap) bytes and its full
    length (without the newline)."""

    prefix: bytes
    length: int


Line = bytes | Oversized


@dataclass(slots=True)
class TailResult:
    lines: list[Line] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)  # where each of ``lines`` starts
    # The file now at the path is not the one the cursor described (replaced, truncated or
    # rewritten): ``lines`` after ``reset_at`` come from the top of the new file.
    reset_at: int | None = None
    # The path no longer exists and what was left in the file, if it was still open, has been
    # drained (while draining, ``more`` is set instead): ``lines`` still count.
    gone: bool = False
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
        # Bytes read past the cursor that do not yet end in a newline (never over the cap).
        self._partial = bytearray()
        self._scan_pos = self._cursor.offset  # file position just after the held bytes
        self._skipping: int | None = None  # length so far of an oversized line being skipped
        self._skip_prefix = b""
        # First and last bytes of the held (unfinished) line, whether buffered or skipped. The
        # cursor's fingerprint only covers bytes before the offset; these let a rewrite that
        # happened behind held bytes be noticed too, instead of gluing them to the new content.
        self._held_head = b""
        self._held_tail = b""

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
            # Deleted: what was written before the delete is still in the open file. ``gone``
            # only once it is drained, so a caller that drops the reader on ``gone`` loses none.
            if self._drain_open_file(result, budget):
                self.close()
                result.gone = True
            return result
        identity = (st.st_dev, st.st_ino)
        if self._fd is not None and self._fd_id != identity:
            # Replaced by rename: finish the old file first, then start the new one. Should the
            # budget run out first, keep the old file open and carry on with it next call.
            if not self._drain_open_file(result, budget):
                return result
            self.close()
        if self._fd is None:
            self._open(result)
            if self._fd is None:
                return result
        if not self._position_is_valid():
            self._restart_at_top(result)
        self._read_available(result, budget)
        return result

    # -- internals -------------------------------------------------------------------------

    def _open(self, result: TailResult) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError:
            result.gone = True
            return
        st = os.fstat(fd)
        self._fd = fd
        self._fd_id = (st.st_dev, st.st_ino)
        known = (self._cursor.dev, self._cursor.ino)
        if known in ((0, 0), self._fd_id):
            cur = self._cursor
            self._cursor = Cursor(st.st_dev, st.st_ino, cur.offset, cur.fingerprint)
        else:
            # A different file than the one the cursor was taken on: nothing held from the old
            # one (not even an unfinished line, when no complete line was consumed) carries over.
            self._restart_at_top(result)

    def _position_is_valid(self) -> bool:
        """Whether the open file still holds, where we left off, the bytes we read there."""
        assert self._fd is not None
        offset = self._cursor.offset
        fingerprint = self._cursor.fingerprint
        try:
            if os.fstat(self._fd).st_size < self._scan_pos:
                return False
            before = fingerprint + self._held_head
            if before and pread(self._fd, len(before), offset - len(fingerprint)) != before:
                return False
            tail = self._held_tail
            if self.pending_bytes > len(self._held_head):
                return pread(self._fd, len(tail), self._scan_pos - len(tail)) == tail
        except OSError:
            return False
        return True

    def _restart_at_top(self, result: TailResult) -> None:
        assert self._fd_id is not None
        if self._cursor.offset > 0:
            # Lines were consumed from what is no longer there: the caller must drop them.
            result.reset_at = len(result.lines)
        self._cursor = Cursor(self._fd_id[0], self._fd_id[1], 0, b"")
        self._scan_pos = 0
        self._clear_held()

    def _drain_open_file(self, result: TailResult, budget: int | None) -> bool:
        """Read the rest of the file still open; False when the budget ran out first."""
        if self._fd is None:
            return True
        if not self._position_is_valid():
            # Rewritten before it was moved away: what it holds now does not continue what we
            # read, and the next file starts with a reset anyway.
            return True
        self._read_available(result, budget)
        return not result.more

    def _read_available(self, result: TailResult, budget: int | None) -> None:
        assert self._fd is not None
        while True:
            if budget is not None and result.bytes_read >= budget:
                result.more = True
                return
            try:
                chunk = pread(self._fd, READ_CHUNK_BYTES, self._scan_pos)
            except OSError:
                return
            if not chunk:
                return
            result.bytes_read += len(chunk)
            self._consume(chunk, result)

    def _consume(self, chunk: bytes, result: TailResult) -> None:
        last_nl = chunk.rfind(b"\n")
        if last_nl < 0:
            self._scan_pos += len(chunk)
            self._hold(chunk)
            return
        end = self._scan_pos + last_nl + 1
        # The bytes before ``end`` are the old fingerprint, the held line's tail (its whole self
        # when shorter than the fingerprint) and this chunk: no need to read them again.
        fingerprint = chunk[max(0, last_nl + 1 - FINGERPRINT_BYTES) : last_nl + 1]
        if len(fingerprint) < FINGERPRINT_BYTES:
            seen = self._cursor.fingerprint + self._held_tail + fingerprint
            fingerprint = seen[-FINGERPRINT_BYTES:]
        # The first line continues whatever was held back, the bytes after the last newline
        # start a line still being written. Lines are cut with ``find`` (memchr) rather than
        # ``split``, whose one-byte separator is compared byte by byte: this runs for every
        # line of every transcript, and a slice is the line's only copy.
        first_nl = chunk.find(b"\n")
        self._finish_line(chunk[:first_nl], result)
        base = self._scan_pos
        lines, offsets = result.lines, result.offsets
        max_line = self._max_line
        begin = first_nl + 1
        while begin <= last_nl:
            stop = chunk.find(b"\n", begin, last_nl + 1)
            if stop - begin > max_line:
                self._emit(chunk[begin:stop], base + begin, result)
            elif stop > begin:
                line = chunk[begin:stop]
                if not line.isspace():
                    lines.append(line)
                    offsets.append(base + begin)
            begin = stop + 1
        self._cursor = Cursor(self._cursor.dev, self._cursor.ino, end, fingerprint)
        self._scan_pos += len(chunk)
        if last_nl + 1 < len(chunk):
            self._hold(chunk[last_nl + 1 :])

    def _finish_line(self, head: bytes, result: TailResult) -> None:
        """Complete the held line with ``head``, its bytes up to the newline."""
        length = len(self._partial) + len(head)
        start = self._cursor.offset  # the held line starts where the last complete one ended
        if self._skipping is not None:
            result.lines.append(Oversized(self._skip_prefix, self._skipping + len(head)))
            result.offsets.append(start)
        elif length > self._max_line:
            result.lines.append(Oversized(self._prefix(head), length))
            result.offsets.append(start)
        elif self._partial:
            self._partial += head
            self._emit(bytes(self._partial), start, result)
        else:
            self._emit(head, start, result)
        self._clear_held()

    def _emit(self, line: bytes, start: int, result: TailResult) -> None:
        if len(line) > self._max_line:
            result.lines.append(Oversized(line[: self._prefix_bytes()], len(line)))
            result.offsets.append(start)
        elif line and not line.isspace():
            result.lines.append(line)
            result.offsets.append(start)

    def _hold(self, data: bytes) -> None:
        if len(self._held_head) < FINGERPRINT_BYTES:
            self._held_head += data[: FINGERPRINT_BYTES - len(self._held_head)]
        if len(data) >= FINGERPRINT_BYTES:
            self._held_tail = data[-FINGERPRINT_BYTES:]
        else:
            self._held_tail = (self._held_tail + data)[-FINGERPRINT_BYTES:]
        if self._skipping is not None:
            self._skipping += len(data)
        elif len(self._partial) + len(data) > self._max_line:
            # Stop buffering before the buffer outgrows the cap: remember a prefix and how long
            # the line has grown.
            self._skip_prefix = self._prefix(data)
            self._skipping = len(self._partial) + len(data)
            self._partial.clear()
        else:
            self._partial += data

    def _prefix_bytes(self) -> int:
        # Never more than the cap, so the prefix is the same however the line was split
        # into reads (a line over the cap always has this many bytes).
        return min(OVERSIZED_PREFIX_BYTES, self._max_line)

    def _prefix(self, data: bytes) -> bytes:
        """The first bytes of the line made of the held bytes followed by ``data``."""
        held = bytes(self._partial[: self._prefix_bytes()])
        return held + data[: self._prefix_bytes() - len(held)]

    def _clear_held(self) -> None:
        self._partial.clear()
        self._skipping = None
        self._skip_prefix = b""
        self._held_head = b""
        self._held_tail = b""


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
        held_at = 0  # offset of ``held`` in the decompressed stream
        try:
            with open(self.path, "rb") as raw:
                for chunk in self._decoded_chunks(raw):
                    result.bytes_read += len(chunk)
                    pieces = (held + chunk).split(b"\n")
                    held = pieces.pop()
                    for line in pieces:
                        if line.strip():
                            result.lines.append(line)
                            result.offsets.append(held_at)
                        held_at += len(line) + 1
        except (OSError, ValueError) as exc:
            raise UnreadableFile(f"{self.path}: {exc}") from exc
        if held.strip():
            result.lines.append(held)  # the file is complete: its last line needs no newline
            result.offsets.append(held_at)
        self._cursor = Cursor(st.st_dev, st.st_ino, st.st_size, stamp)
        return result

    def _decoded_chunks(self, raw: BinaryIO) -> Iterator[bytes]:
        while chunk := raw.read(READ_CHUNK_BYTES):
            yield chunk


class WholeDocumentReader(WholeFileReader):
    """A file that holds one JSON document, rewritten whole: read again from the top whenever
    it changes, its content handed over as one line (newlines inside it included).

    The writer (Node's ``writeFileSync``) truncates the file and then writes it: a read that
    lands in between finds it empty or cut short, and the events of the write that completes
    it may already have been taken. Such a read is tried again a moment later (the gap is one
    system call long), and if the document is still not whole the position stays where it was,
    so that the next read (an event, the periodic rescan) takes it."""

    RETRIES = 10
    RETRY_SECONDS = 0.01

    def read(self, budget: int | None = None) -> TailResult:
        before = self._cursor
        for _ in range(self.RETRIES):
            result = super().read(budget)
            if result.gone or self._cursor == before or _is_whole(result.lines):
                return result
            self._cursor = before
            time.sleep(self.RETRY_SECONDS)
        return TailResult()

    def _decoded_chunks(self, raw: BinaryIO) -> Iterator[bytes]:
        data = raw.read()
        if data.strip():
            yield data.replace(b"\n", b" ").replace(b"\r", b" ")


def _is_whole(lines: list[Line]) -> bool:
    """One line holding a complete-looking JSON object (its last byte closes it)."""
    return (
        len(lines) == 1
        and isinstance(lines[0], bytes)
        and lines[0].rstrip().endswith(b"}")
        and lines[0].lstrip().startswith(b"{")
    )


class ZstdFileReader(WholeFileReader):
    """A zstd-compressed JSONL archive (Codex compresses rollouts older than a week)."""

    def _decoded_chunks(self, raw: BinaryIO) -> Iterator[bytes]:
        # Frame by frame rather than through a stream reader: that one ends quietly at a frame
        # cut short (an archive still being written, or damaged), and the cut last line would
        # then be delivered as complete.
        try:
            dctx = zstandard.ZstdDecompressor()
            decoder = dctx.decompressobj()
            in_frame = False
            while data := raw.read(ZSTD_INPUT_BYTES):
                while data:
                    in_frame = True
                    if chunk := decoder.decompress(data):
                        yield chunk
                    data = b""
                    if decoder.eof:
                        data = decoder.unused_data
                        decoder = dctx.decompressobj()
                        in_frame = False
            if in_frame:
                raise ValueError("truncated zstd archive: it ends inside a frame")
        except zstandard.ZstdError as exc:
            raise ValueError(f"corrupt zstd archive: {exc}") from exc


class UnreadableFile(AgentbarError):
    """A file exists but cannot be decoded (corrupt archive); the engine logs and counts it."""

    title = "Cannot read a session file"
