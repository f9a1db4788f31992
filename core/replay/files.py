"""Reading a transcript by byte ranges, only from inside the agents' own folders (any thread).

``AgentRoots.open`` is the one way the replay, export and server code open a transcript: the
path must come from the engine (never from a request), and its real path, symlinks resolved,
must lie inside a known agent root (Claude's config roots, Codex's home). A plain file is read
with ``pread`` at the offsets asked for, so a 50 MB transcript is never read whole to show a
page; a zstd archive (Codex's old rollouts) cannot be read at an offset, so it is decompressed
once into memory (bounded) and kept for the next request.

Line windows: ``lines_after`` and ``lines_before`` return the complete lines next to an offset,
each with its own offset, up to a count of lines and a number of bytes. Only complete lines
count: bytes after the last newline are a line still being written and are never returned.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ReplayError
from ..positional import pread
from ..tail import ZstdFileReader

BLOCK_BYTES = 64 * 1024
LONG_BLOCK_BYTES = 1024 * 1024
READ_BYTES = 256 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024  # a longer line is not parsed: its prefix stands for it
PREFIX_BYTES = 64 * 1024
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024  # a decompressed archive held in memory, at most
ARCHIVE_CACHE = 2


class OutsideRoots(ReplayError):
    """The path does not resolve inside any agent root (a symlink out, or not an agent file)."""

    title = "Not an agent's file"


@dataclass(frozen=True, slots=True)
class Line:
    offset: int
    length: int  # without the newline
    data: bytes  # the whole line, or its first PREFIX_BYTES when ``length`` > MAX_LINE_BYTES

    @property
    def oversized(self) -> bool:
        return self.length > len(self.data)

    @property
    def end(self) -> int:
        return self.offset + self.length + 1


class TranscriptFile:
    """Random access to the complete lines of one file (open it with ``AgentRoots.open``)."""

    def __init__(self, path: str, fd: int | None, data: bytes | None) -> None:
        self.path = path
        self._fd = fd
        self._data = data
        self._size = self._raw_size()
        self.complete = self._complete_end()

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __enter__(self) -> TranscriptFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _raw_size(self) -> int:
        if self._data is not None:
            return len(self._data)
        assert self._fd is not None
        return os.fstat(self._fd).st_size

    def pread(self, size: int, offset: int) -> bytes:
        if self._data is not None:
            return self._data[offset : offset + size]
        assert self._fd is not None
        return pread(self._fd, size, offset)

    def _complete_end(self) -> int:
        """Just after the last newline: where the complete lines end."""
        return self._start_of_line_ending(self._size)

    def line_start(self, offset: int) -> int:
        """``offset`` when a line starts there, else the start of the next line (or the end)."""
        offset = max(0, min(offset, self.complete))
        if offset == 0 or self.pread(1, offset - 1) == b"\n":
            return offset
        pos = offset
        while pos < self.complete:
            block = self.pread(min(BLOCK_BYTES, self.complete - pos), pos)
            newline = block.find(b"\n")
            if newline >= 0:
                return pos + newline + 1
            pos += len(block)
        return self.complete

    def line_at(self, offset: int) -> Line | None:
        """The complete line starting at ``offset`` (which must be a line start)."""
        if offset < 0 or offset >= self.complete or self.line_start(offset) != offset:
            return None
        return self._read_line(offset)

    def lines_after(
        self, offset: int, *, max_lines: int, max_bytes: int, skip_blank: bool = True
    ) -> Iterator[Line]:
        """Complete lines from the line start ``offset`` on; stops after ``max_lines`` lines or
        once ``max_bytes`` have been passed (always at least one line)."""
        seen = 0
        count = 0
        for line in self._iter_lines(offset):
            if count >= max_lines or (count and seen >= max_bytes):
                return
            seen += line.length + 1
            if skip_blank and not line.data.strip():
                continue
            count += 1
            yield line

    def _iter_lines(self, pos: int) -> Iterator[Line]:
        """Every complete line from ``pos`` on, read in blocks."""
        buf = bytearray()
        base = pos  # file offset of buf[0]
        i = 0  # where the next line starts in buf
        while True:
            newline = buf.find(b"\n", i)
            if newline >= 0:
                yield Line(offset=base + i, length=newline - i, data=bytes(buf[i:newline]))
                i = newline + 1
                continue
            read_at = base + len(buf)
            if read_at >= self.complete:
                return
            if len(buf) - i > MAX_LINE_BYTES:
                line = self._read_line(base + i)  # too long to hold: keep its prefix only
                yield line
                buf, base, i = bytearray(), line.end, 0
                continue
            chunk = self.pread(min(READ_BYTES, self.complete - read_at), read_at)
            if not chunk:
                return
            del buf[:i]
            buf += chunk
            base += i
            i = 0

    def _read_line(self, pos: int) -> Line:
        head = bytearray()
        length = 0
        over = False
        cursor = pos
        block_size = BLOCK_BYTES
        while cursor < self.complete:
            block = self.pread(min(block_size, self.complete - cursor), cursor)
            if not block:
                break
            newline = block.find(b"\n")
            part = block if newline < 0 else block[:newline]
            length += len(part)
            if not over:
                head += part
                if length > MAX_LINE_BYTES:
                    over = True
                    del head[PREFIX_BYTES:]
            if newline >= 0:
                break
            cursor += len(block)
            block_size = LONG_BLOCK_BYTES  # a long line: read the rest in bigger steps
        return Line(offset=pos, length=length, data=bytes(head))

    def line_end_before(self, offset: int) -> int:
        """``offset`` when a line starts there, else the start of the line holding it."""
        offset = max(0, min(offset, self.complete))
        if offset == 0 or self.pread(1, offset - 1) == b"\n":
            return offset
        return self._start_of_line_ending(offset)

    def lines_before(self, offset: int, *, max_lines: int, max_bytes: int) -> list[Line]:
        """Complete lines ending at or before ``offset``, the last ones, in file order; stops
        after ``max_lines`` lines or once ``max_bytes`` have been passed (at least one line)."""
        end = self.line_end_before(offset)
        back = _BackwardNewlines(self, end)
        starts: list[int] = []
        seen = 0
        line_end = end
        while line_end > 0 and len(starts) < max_lines and (not starts or seen < max_bytes):
            start = back.previous(line_end - 1) + 1  # the newline ending this line excluded
            seen += line_end - start
            if line_end - start > 1:  # a blank line is just its newline
                starts.append(start)
            line_end = start
        starts.reverse()
        lines = [self._read_line(start) for start in starts]
        return [line for line in lines if line.data.strip()]

    def _start_of_line_ending(self, newline_at: int) -> int:
        """Start of the line whose newline is at ``newline_at``: just after the last newline
        before it (0 when there is none)."""
        pos = newline_at
        while pos > 0:
            start = max(0, pos - BLOCK_BYTES)
            block = self.pread(pos - start, start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                return start + newline + 1
            pos = start
        return 0

    def all_lines(self, start: int = 0) -> Iterator[Line]:
        """Every complete non-blank line from the line start ``start`` on (export, scans)."""
        return (line for line in self._iter_lines(start) if line.data.strip())


class _BackwardNewlines:
    """Finds newlines going backwards through a file, one block read at a time."""

    def __init__(self, file: TranscriptFile, end: int) -> None:
        self._file = file
        self._start = end
        self._block = b""

    def previous(self, before: int) -> int:
        """The position of the last newline before ``before``, or -1."""
        while True:
            if before > self._start:
                found = self._block.rfind(b"\n", 0, before - self._start)
                if found >= 0:
                    return self._start + found
                before = self._start
            if self._start == 0:
                return -1
            start = max(0, self._start - BLOCK_BYTES)
            self._block = self._file.pread(self._start - start, start)
            self._start = start


class AgentRoots:
    """The folders whose files may be read: every path is resolved (symlinks included) and
    must be inside one of them."""

    def __init__(self, roots: Iterable[Path]) -> None:
        self.roots = tuple(sorted({os.path.realpath(root) for root in roots}))
        self._archives: OrderedDict[tuple[str, int, int], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def resolve(self, path: str | os.PathLike[str]) -> str:
        """The real path of ``path``; raises ``OutsideRoots`` unless it is a regular file inside
        a root."""
        real = os.path.realpath(path)
        if not any(real.startswith(root + os.sep) for root in self.roots):
            raise OutsideRoots(f"not inside an agent folder: {path}")
        if not os.path.isfile(real):
            raise OutsideRoots(f"not a file: {path}")
        return real

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` may be read: ``resolve`` would take it, or it names a session in
        a store inside a root (``<database or folder>#<session id>``, ``sources/snapshot.py``)."""
        try:
            self.resolve(path)
        except (OutsideRoots, OSError, ValueError):
            return self._holds_store_of(os.fspath(path))
        return True

    def _holds_store_of(self, locator: str) -> bool:
        store, _, session_id = locator.rpartition("#")
        if not store or not session_id:
            return False
        real = os.path.realpath(store)
        return any(real.startswith(root + os.sep) for root in self.roots) and os.path.exists(real)

    def open(self, path: str | os.PathLike[str]) -> TranscriptFile:
        """Open a transcript for reading; raises ``OutsideRoots`` or ``OSError``."""
        real = self.resolve(path)
        flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(real, flags)
        try:
            if real.endswith(".zst"):
                data = self._archive(real, fd)
                os.close(fd)
                return TranscriptFile(real, None, data)
            return TranscriptFile(real, fd, None)
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise

    def read_small(self, path: str | os.PathLike[str], limit: int = 1 << 20) -> bytes | None:
        """A small side file (a sub-agent's ``.meta.json``) when it exists inside a root."""
        try:
            real = self.resolve(path)
            with open(real, "rb") as fh:
                return fh.read(limit)
        except (OutsideRoots, OSError):
            return None

    def _archive(self, real: str, fd: int) -> bytes:
        st = os.fstat(fd)
        key = (real, st.st_size, st.st_mtime_ns)
        with self._lock:
            if key in self._archives:
                self._archives.move_to_end(key)
                return self._archives[key]
        chunks: list[bytes] = []
        total = 0
        with os.fdopen(os.dup(fd), "rb") as raw:
            try:
                for chunk in ZstdFileReader(Path(real))._decoded_chunks(raw):
                    total += len(chunk)
                    if total > MAX_ARCHIVE_BYTES:
                        raise OSError(f"{real}: archive too large to replay")
                    chunks.append(chunk)
            except ValueError as exc:
                raise OSError(str(exc)) from exc
        data = b"".join(chunks)
        with self._lock:
            self._archives[key] = data
            while len(self._archives) > ARCHIVE_CACHE:
                self._archives.popitem(last=False)
        return data
