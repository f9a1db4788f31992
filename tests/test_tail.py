"""FileTailer, WholeFileReader and ZstdFileReader against real files: a model-checked property
test of the tailer under appends, truncations, rotations, deletions, restarts and read budgets,
then unit tests of the edges one at a time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections import deque
from pathlib import Path

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from agentbar.core import tail
from agentbar.core.tail import (
    DEFAULT_MAX_LINE_BYTES,
    FINGERPRINT_BYTES,
    OVERSIZED_PREFIX_BYTES,
    Cursor,
    FileTailer,
    Oversized,
    TailResult,
    UnreadableFile,
    WholeFileReader,
    ZstdFileReader,
)

MB = 1024 * 1024


def persisted(cursor: Cursor) -> Cursor:
    """The cursor as it comes back after being saved to disk and loaded by a new process."""
    saved = json.dumps({**dataclasses.asdict(cursor), "fingerprint": cursor.fingerprint.hex()})
    raw = json.loads(saved)
    return Cursor(raw["dev"], raw["ino"], raw["offset"], bytes.fromhex(raw["fingerprint"]))


def append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_all(tailer: FileTailer, budget: int | None = None) -> TailResult:
    """Call ``read`` until it stops asking to be called again; results merged in order."""
    merged = TailResult()
    while True:
        result = tailer.read(budget)
        if result.reset_at is not None:
            assert merged.reset_at is None, "two resets in one merged read"
            merged.reset_at = len(merged.lines) + result.reset_at
        merged.lines += result.lines
        merged.gone = result.gone
        merged.bytes_read += result.bytes_read
        if not result.more:
            return merged


class CappedBuffer(bytearray):
    """Stand-in for the tailer's line buffer that fails the test the moment it outgrows a cap."""

    cap = 0
    peak = 0

    def __repr__(self) -> str:
        return f"CappedBuffer({len(self)} bytes)"

    def __iadd__(self, other: object) -> CappedBuffer:
        super().__iadd__(other)
        self.peak = max(self.peak, len(self))
        assert len(self) <= self.cap, f"line buffer grew to {len(self)} bytes, cap {self.cap}"
        return self


def capped(tailer: FileTailer, cap: int) -> CappedBuffer:
    buffer = CappedBuffer(tailer._partial)
    buffer.cap = cap
    tailer._partial = buffer
    return buffer


# -- the property test ------------------------------------------------------------------------
#
# A writer appends uniquely numbered lines ``<id>:<payload>:<id>`` (payload with 2-, 3- and 4-byte
# UTF-8 characters) in writes of arbitrary byte length, so writes and the tailer's read chunks cut
# lines and characters anywhere. Between reads the file may be truncated, rotated (renamed away
# and a fresh file created at the path) or deleted and later re-created; each of these starts a
# new *generation*. The writer either finishes its current line first (a well-behaved writer) or
# abandons it (a crash): an abandoned line never gets its newline. The reader may be restarted
# from its persisted cursor, and may read with a byte budget (and a tiny READ_CHUNK_BYTES so the
# budget really interrupts it).
#
# Expected output, checked on every read:
# * Each delivered item is exactly one complete line as written (or, over the size cap, an
#   ``Oversized`` with the line's first min(OVERSIZED_PREFIX_BYTES, cap) bytes and its length)
#   whose newline was on disk when the read ran: never a cut, spliced or unfinished line. Blank
#   lines (written now and then) are never delivered.
# * Within a generation, lines are delivered in order, without gaps or repeats, starting at its
#   first line (a reader never starts mid-generation). No line is ever delivered twice overall.
# * Generations are delivered oldest first, and between the last line of one generation and the
#   first of a later one there is a ``reset_at`` marker. A marker is only reported after the file
#   really changed (a generation change since the previous marker), and what follows a marker
#   comes from a newer generation than what preceded it.
# * When a read finishes (``more`` is False), every line complete on disk at that moment has been
#   delivered for each generation the read could see: the one at the path, and every one the
#   reader had open (the one at the path at its previous finished read, and any it delivered
#   lines from since), so a file rotated away or deleted while open is drained to its end. Not
#   owed: a generation truncated away (its bytes are gone), one the reader never had open (it
#   came and went between two reads), or one that moved away while the reader was restarted (a
#   new process has nothing open).
# * ``gone`` is reported exactly when the path does not exist and the read finished (never while
#   a deleted file is still being drained); after a finished read the cursor sits just after the
#   last newline of the file at the path, with its identity and fingerprint, and
#   ``pending_bytes`` is the length of the unfinished last line.
# * The reader's line buffer never holds more than ``max_line_bytes``.

payloads = st.builds(
    lambda text, times: text * times,
    st.text(alphabet=st.sampled_from('aZ é字🙂{}":'), min_size=1, max_size=30),
    st.sampled_from([1, 2, 4, 12]),  # now and then a line over the smaller caps
)
blank_lines = st.sampled_from([b"", b" ", b"\t ", b"\r"])
new_lines = st.lists(st.tuples(payloads, st.none() | blank_lines), min_size=1, max_size=4)
NewLines = list[tuple[str, bytes | None]]  # (payload, blank line to write before it)


@dataclasses.dataclass
class Generation:
    data: bytearray = dataclasses.field(default_factory=bytearray)  # all bytes written
    lines: list[bytes] = dataclasses.field(default_factory=list)  # complete non-blank lines
    alive: bool = True  # False once truncated away


@dataclasses.dataclass(frozen=True)
class Written:
    gen: int
    index: int  # among the generation's complete lines
    line: bytes


class TailerMachine(RuleBasedStateMachine):
    base: Path  # set per test run: a directory under tmp_path

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(dir=self.base))
        self.path = self.dir / "session.jsonl"
        self.path.write_bytes(b"")
        self.gens = [Generation()]
        self.at_path: int | None = 0  # generation at the path; None while deleted
        self.rotations = 0
        # Writer: lines queued but not started, and the one being written (id, bytes, done).
        self.next_id = 0
        self.queue: deque[tuple[int | None, bytes]] = deque()
        self.writing: tuple[int | None, bytes, int] | None = None
        self.written: dict[int, Written] = {}
        # What the reader has delivered.
        self.delivered_upto: dict[int, int] = {}  # generation -> lines delivered
        self.last_gen: int | None = None  # generation of the last delivered line
        self.reset_since_line = False  # a marker was seen since the last delivered line
        self.changes_since_reset = 0  # generation changes since the last marker
        # Generations the reader had open (known from a finished read, or from lines it
        # delivered since): the next finished read owes all their complete lines.
        self.owed: set[int] = set()
        self.saved_chunk = tail.READ_CHUNK_BYTES
        self.cap = DEFAULT_MAX_LINE_BYTES
        self.tailer: FileTailer | None = None

    def teardown(self) -> None:
        if self.tailer is not None:
            self.tailer.close()
        tail.READ_CHUNK_BYTES = self.saved_chunk
        shutil.rmtree(self.dir, ignore_errors=True)

    @initialize(
        chunk=st.sampled_from([1, 3, 16, 200, MB]),
        cap=st.sampled_from([64, 200, DEFAULT_MAX_LINE_BYTES]),
    )
    def start(self, chunk: int, cap: int) -> None:
        tail.READ_CHUNK_BYTES = chunk
        self.cap = cap
        self.tailer = FileTailer(self.path, max_line_bytes=cap)

    # -- writer ---------------------------------------------------------------------------

    @rule(lines=new_lines, hold_back=st.integers(0, 100))
    def write_lines(self, lines: NewLines, hold_back: int) -> None:
        self._write_lines(lines, hold_back)

    def _write_lines(self, lines: NewLines, hold_back: int) -> None:
        """Queue lines and write all that is queued but its last ``hold_back`` bytes."""
        for payload, blank in lines:
            if blank is not None:
                self.queue.append((None, blank + b"\n"))
            line_id = self.next_id
            self.next_id += 1
            self.queue.append((line_id, f"{line_id}:{payload}:{line_id}\n".encode()))
        queued = sum(len(line) for _, line in self.queue)
        if self.writing is not None:
            queued += len(self.writing[1]) - self.writing[2]
        if queued > hold_back:
            self._write(queued - hold_back)

    @precondition(lambda self: self.writing is not None or self.queue)
    @rule(n=st.integers(1, 6))
    def write_bytes(self, n: int) -> None:
        self._write(n)

    def _write(self, n: int | None) -> None:
        """Append the next ``n`` bytes of the queued lines (None: just finish the current one).
        Like a logger opening its file with O_CREAT, writing after a delete re-creates it."""
        if self.at_path is None:
            self._new_generation()
        assert self.at_path is not None
        gen = self.gens[self.at_path]
        out = bytearray()
        while n is None or len(out) < n:
            if self.writing is None:
                if n is None or not self.queue:
                    break
                self.writing = (*self.queue.popleft(), 0)
            line_id, line, done = self.writing
            take = len(line) - done if n is None else min(n - len(out), len(line) - done)
            out += line[done : done + take]
            done += take
            self.writing = (line_id, line, done)
            if done == len(line):
                self.writing = None
                if line_id is not None:
                    self.written[line_id] = Written(self.at_path, len(gen.lines), line[:-1])
                    gen.lines.append(line[:-1])
        if out:
            append(self.path, bytes(out))
            gen.data += out

    def _end_line(self, finish: bool) -> None:
        if finish and self.writing is not None:
            self._write(None)
        else:
            self.writing = None  # the writer crashed mid-line: that line never completes

    def _new_generation(self) -> None:
        self.path.write_bytes(b"")
        self.gens.append(Generation())
        self.at_path = len(self.gens) - 1
        self.changes_since_reset += 1

    # Each change may be followed at once by the writer carrying on (``then``), as loggers do.

    @precondition(lambda self: self.at_path is not None)
    @rule(finish=st.booleans(), then=st.none() | new_lines, hold_back=st.integers(0, 100))
    def truncate(self, finish: bool, then: NewLines | None, hold_back: int) -> None:
        assert self.at_path is not None
        self._end_line(finish)
        os.truncate(self.path, 0)
        self.gens[self.at_path].alive = False
        self.gens.append(Generation())
        self.at_path = len(self.gens) - 1
        self.changes_since_reset += 1
        if then is not None:
            self._write_lines(then, hold_back)

    @precondition(lambda self: self.at_path is not None)
    @rule(finish=st.booleans(), then=st.none() | new_lines, hold_back=st.integers(0, 100))
    def rotate(self, finish: bool, then: NewLines | None, hold_back: int) -> None:
        self._end_line(finish)
        self.rotations += 1
        os.rename(self.path, self.dir / f"session.jsonl.{self.rotations}")
        self._new_generation()
        if then is not None:
            self._write_lines(then, hold_back)

    @precondition(lambda self: self.at_path is not None)
    @rule(finish=st.booleans(), then=st.none() | new_lines, hold_back=st.integers(0, 100))
    def delete(self, finish: bool, then: NewLines | None, hold_back: int) -> None:
        """Delete the file; with ``then``, the writer re-creates it by writing again."""
        self._end_line(finish)
        os.unlink(self.path)
        self.at_path = None
        if then is not None:
            self._write_lines(then, hold_back)

    # -- reader ---------------------------------------------------------------------------

    @rule()
    def read(self) -> None:
        assert self.tailer is not None
        self._check(self.tailer.read(), None)

    @rule(budget=st.integers(1, 300))
    def read_with_budget(self, budget: int) -> None:
        assert self.tailer is not None
        self._check(self.tailer.read(budget=budget), budget)

    @rule(budget=st.integers(1, 100))
    def read_until_done(self, budget: int) -> None:
        """What the engine does: budgeted reads, called again while they report ``more``."""
        assert self.tailer is not None
        for _ in range(100_000):
            result = self.tailer.read(budget=budget)
            self._check(result, budget)
            if not result.more:
                return
        raise AssertionError("more=True forever")

    @rule()
    def restart(self) -> None:
        assert self.tailer is not None
        cursor = persisted(self.tailer.cursor)
        self.tailer.close()
        self.tailer = FileTailer(self.path, cursor, max_line_bytes=self.cap)
        self.owed = set()  # a new process has nothing open: a file moved away meanwhile is lost

    # -- checks ---------------------------------------------------------------------------

    def _check(self, result: TailResult, budget: int | None) -> None:
        assert self.tailer is not None
        exists = self.at_path is not None
        if budget is None:
            assert not result.more
        else:
            assert result.bytes_read < budget + tail.READ_CHUNK_BYTES
        if result.gone:
            assert not exists, "gone reported while the path exists"
            assert not result.more, "gone before the deleted file was drained"
        elif not exists:
            assert result.more, "path missing but neither gone nor more"
        if result.reset_at is not None:
            assert 0 <= result.reset_at <= len(result.lines)
        for i in range(len(result.lines) + 1):
            if result.reset_at == i:
                assert self.changes_since_reset > 0, "reset reported but the file never changed"
                self.changes_since_reset = 0
                self.reset_since_line = True
            if i < len(result.lines):
                self._delivered(result.lines[i])
        assert len(self.tailer._partial) <= self.cap
        if result.more:
            return
        if self.at_path is not None:
            self.owed.add(self.at_path)
        for g in self.owed:
            gen = self.gens[g]
            if gen.alive:
                got = self.delivered_upto.get(g, 0)
                assert got == len(gen.lines), f"generation {g}: {got} of {len(gen.lines)} lines"
        self.owed = {self.at_path} if self.at_path is not None else set()
        if self.at_path is not None:
            self._check_cursor(self.gens[self.at_path].data)

    def _delivered(self, item: bytes | Oversized) -> None:
        raw = item.prefix if isinstance(item, Oversized) else item
        head = raw.split(b":", 1)[0]
        assert head.isdigit(), f"not the start of a line: {raw[:80]!r}"
        w = self.written.get(int(head))
        assert w is not None, f"line {int(head)} delivered before its newline: {raw[:80]!r}"
        if len(w.line) > self.cap:
            prefix = w.line[: min(OVERSIZED_PREFIX_BYTES, self.cap)]
            assert item == Oversized(prefix, len(w.line))
        else:
            assert item == w.line
        if self.last_gen is not None and w.gen != self.last_gen:
            assert w.gen > self.last_gen, f"went back from generation {self.last_gen} to {w.gen}"
            assert self.reset_since_line, f"generation {self.last_gen} -> {w.gen} without reset"
        if self.reset_since_line and self.last_gen is not None:
            assert w.gen > self.last_gen, "line of the old generation after a reset"
        expected = self.delivered_upto.get(w.gen, 0)
        assert w.index == expected, (
            f"generation {w.gen}: got line #{w.index}, expected #{expected}"
            + (" (duplicate)" if w.index < expected else " (gap)")
        )
        self.delivered_upto[w.gen] = expected + 1
        self.last_gen = w.gen
        self.reset_since_line = False
        self.owed.add(w.gen)

    def _check_cursor(self, data: bytearray) -> None:
        assert self.tailer is not None
        offset = data.rfind(b"\n") + 1
        cursor = self.tailer.cursor
        st_ = os.stat(self.path)
        assert (cursor.dev, cursor.ino) == (st_.st_dev, st_.st_ino)
        assert cursor.offset == offset
        assert cursor.fingerprint == bytes(data[max(0, offset - FINGERPRINT_BYTES) : offset])
        assert self.tailer.pending_bytes == len(data) - offset


def test_tailer_against_model(tmp_path: Path) -> None:
    class Machine(TailerMachine):
        base = tmp_path

    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=200,
            stateful_step_count=50,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


# -- FileTailer unit tests ----------------------------------------------------------------------


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    return path


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tail, "READ_CHUNK_BYTES", 5)


def test_partial_line_held_across_reads(log: Path) -> None:
    tailer = FileTailer(log)
    append(log, b'{"a":')
    assert tailer.read().lines == []
    assert tailer.pending_bytes == 5
    assert tailer.cursor.offset == 0
    append(log, b'1}\n{"b"')
    assert tailer.read().lines == [b'{"a":1}']
    assert tailer.pending_bytes == 4
    assert tailer.cursor.offset == 8
    assert tailer.read().lines == []
    append(log, b":2}\n")
    assert tailer.read().lines == [b'{"b":2}']
    assert tailer.pending_bytes == 0


@pytest.mark.parametrize("chunk", [1, 2, 3, MB])
def test_line_cut_inside_four_byte_character(
    log: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(tail, "READ_CHUNK_BYTES", chunk)
    line = '{"text":"smile 🙂 字"}'.encode()
    cut = line.index("🙂".encode()) + 2  # two of the emoji's four bytes
    tailer = FileTailer(log)
    append(log, line[:cut])
    assert tailer.read().lines == []
    append(log, line[cut:] + b"\n")
    [got] = tailer.read().lines
    assert got == line
    assert orjson.loads(got) == {"text": "smile 🙂 字"}


@pytest.mark.parametrize("chunk", [1, 7, 64, MB])
def test_cursor_fingerprint_is_the_bytes_before_the_offset(
    log: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(tail, "READ_CHUNK_BYTES", chunk)
    tailer = FileTailer(log)
    written = b""
    for piece in [b"a\n", b"bb", b"b" * 70, b"\nc", b"\n\n", b"d" * 100 + b"\ne", b"\n"]:
        append(log, piece)
        written += piece
        tailer.read()
        offset = written.rfind(b"\n") + 1
        assert tailer.cursor.offset == offset
        assert tailer.cursor.fingerprint == written[max(0, offset - FINGERPRINT_BYTES) : offset]
        assert tailer.pending_bytes == len(written) - offset


def test_empty_and_blank_lines_skipped(log: Path) -> None:
    append(log, b'\n \n\t\r\n{"a":1}\n\n\n{"b":2}\n   \n')
    tailer = FileTailer(log)
    assert tailer.read().lines == [b'{"a":1}', b'{"b":2}']
    assert tailer.cursor.offset == log.stat().st_size
    assert tailer.pending_bytes == 0


def test_crlf_lines_keep_their_carriage_return_and_parse(log: Path) -> None:
    tailer = FileTailer(log)
    append(log, b'{"a":1}\r\n\r\n{"b":2}\r')
    # The line ends at the newline: "\r" is kept (JSON whitespace), a "\r"-only line is blank.
    assert tailer.read().lines == [b'{"a":1}\r']
    assert tailer.pending_bytes == len(b'{"b":2}\r')
    append(log, b"\n")
    [second] = tailer.read().lines
    assert second == b'{"b":2}\r'
    assert orjson.loads(second) == {"b": 2}


def write_big_line(path: Path, prefix: bytes, length: int) -> None:
    """Append ``prefix`` padded to ``length`` bytes (no newline), one MB at a time."""
    filler = b"x" * MB
    append(path, prefix)
    left = length - len(prefix)
    while left:
        append(path, filler[: min(left, MB)])
        left -= min(left, MB)


def test_100mb_line_with_small_cap(log: Path) -> None:
    cap = 4096
    tailer = FileTailer(log, max_line_bytes=cap)
    buffer = capped(tailer, cap)
    append(log, b'{"before":1}\n')
    prefix = b'{"huge":"' + bytes(range(48, 58)) * 1000
    write_big_line(log, prefix, 60 * MB)
    first = tailer.read()
    assert first.lines == [b'{"before":1}']
    assert tailer.pending_bytes == 60 * MB
    write_big_line(log, b"", 40 * MB)  # the line keeps growing between reads
    append(log, b'"}\n{"after":1}\n')
    second = tailer.read(budget=8 * MB)
    assert second.more
    assert second.lines == []
    rest = read_all(tailer)
    assert rest.lines == [Oversized(prefix[:cap], 100 * MB + 2), b'{"after":1}']
    assert buffer.peak <= cap
    append(log, b'{"later":1}\n')
    assert tailer.read().lines == [b'{"later":1}']
    assert tailer.cursor.offset == log.stat().st_size


def test_100mb_line_with_default_cap_never_buffers_past_the_cap(log: Path) -> None:
    tailer = FileTailer(log)
    buffer = capped(tailer, DEFAULT_MAX_LINE_BYTES)
    prefix = b'{"huge":"' + b"0123456789abcdef" * 5000
    write_big_line(log, prefix, 100 * MB)
    append(log, b'"}\n{"after":1}\n')
    pending_seen = []
    lines: list[bytes | Oversized] = []
    while True:  # one megabyte per call, watching the buffer between calls too
        result = tailer.read(budget=MB)
        lines += result.lines
        pending_seen.append(tailer.pending_bytes)
        assert len(tailer._partial) <= DEFAULT_MAX_LINE_BYTES
        if not result.more:
            break
    assert lines == [Oversized(prefix[:OVERSIZED_PREFIX_BYTES], 100 * MB + 2), b'{"after":1}']
    assert max(pending_seen) >= 99 * MB  # held back, but not buffered
    assert DEFAULT_MAX_LINE_BYTES - MB < buffer.peak <= DEFAULT_MAX_LINE_BYTES


@pytest.mark.parametrize("split", [1, 40, 63, 64, 65, 100])
def test_oversized_prefix_does_not_depend_on_how_the_line_was_read(
    log: Path, monkeypatch: pytest.MonkeyPatch, split: int
) -> None:
    monkeypatch.setattr(tail, "READ_CHUNK_BYTES", split)
    line = b"0123456789" * 20
    tailer = FileTailer(log, max_line_bytes=64)
    append(log, line[:split])
    tailer.read()
    append(log, line[split:] + b"\nok\n")
    assert read_all(tailer).lines == [Oversized(line[:64], len(line)), b"ok"]
    assert len(tailer._partial) == 0


def test_line_exactly_at_the_cap_is_not_oversized(log: Path) -> None:
    tailer = FileTailer(log, max_line_bytes=10)
    append(log, b"0123456789\n01234567890\n")
    assert tailer.read().lines == [b"0123456789", Oversized(b"0123456789", 11)]


@pytest.mark.parametrize("extra", [0, 1, 5000])
def test_truncate_and_rewrite_past_the_offset_is_noticed(log: Path, extra: int) -> None:
    tailer = FileTailer(log)
    append(log, b'{"old":1}\n{"old":2}\n')
    assert len(tailer.read().lines) == 2
    offset = tailer.cursor.offset
    new = b'{"new":1}\n{"new":2,"pad":"' + b"p" * (offset + extra) + b'"}\n'
    os.truncate(log, 0)
    append(log, new)
    assert log.stat().st_size > offset
    result = tailer.read()
    assert result.reset_at == 0
    assert result.lines == new.splitlines()
    assert tailer.cursor.offset == len(new)


def test_same_length_rewrite_is_noticed(log: Path) -> None:
    tailer = FileTailer(log)
    append(log, b'{"old":1}\n')
    tailer.read()
    os.truncate(log, 0)
    append(log, b'{"new":1}\n')
    result = tailer.read()
    assert (result.reset_at, result.lines) == (0, [b'{"new":1}'])


def test_truncate_and_rewrite_while_only_a_partial_line_is_held(log: Path) -> None:
    """Nothing consumed yet (offset 0), a partial line held: the rewrite must not be spliced on."""
    tailer = FileTailer(log)
    append(log, b'{"old":"abandoned')
    assert tailer.read().lines == []
    os.truncate(log, 0)
    append(log, b'{"new":1,"padding":"long enough to pass the old partial"}\n{"new":2}\n')
    assert tailer.read().lines == [
        b'{"new":1,"padding":"long enough to pass the old partial"}',
        b'{"new":2}',
    ]


def test_truncate_and_rewrite_behind_a_held_partial_line(log: Path) -> None:
    tailer = FileTailer(log)
    append(log, b'{"old":1}\n{"old":2,"')
    assert tailer.read().lines == [b'{"old":1}']
    os.truncate(log, 0)
    # Same first line, so the fingerprint before the offset matches; the held bytes do not.
    append(log, b'{"old":1}\n{"new":2,"padding":"................"}\n')
    result = tailer.read()
    assert result.reset_at == 0
    assert result.lines == [b'{"old":1}', b'{"new":2,"padding":"................"}']


def test_rewrite_that_keeps_only_the_start_of_a_held_line_is_noticed(log: Path) -> None:
    """Transcript lines often share their first 64 bytes; the end of what is held must match
    too before more bytes are appended to it."""
    common = b'{"type":"response_item","timestamp":"2025-01-01T00:00:00.000Z","payload":"'
    tailer = FileTailer(log)
    append(log, common + b"a" * 40)
    assert tailer.read().lines == []
    os.truncate(log, 0)
    append(log, common + b"b" * 80 + b'"}\n')
    assert tailer.read().lines == [common + b"b" * 80 + b'"}']


def test_cursor_survives_a_restart(log: Path) -> None:
    append(log, b'{"a":1}\n{"b":2}\n{"c":')
    first = FileTailer(log)
    assert first.read().lines == [b'{"a":1}', b'{"b":2}']
    cursor = persisted(first.cursor)
    first.close()
    assert cursor.offset == 16
    assert cursor.fingerprint == b'{"a":1}\n{"b":2}\n'
    assert (cursor.dev, cursor.ino) == (log.stat().st_dev, log.stat().st_ino)
    append(log, b'3}\n{"d":4}\n')
    second = FileTailer(log, cursor)
    result = second.read()
    assert (result.reset_at, result.lines) == (None, [b'{"c":3}', b'{"d":4}'])


def test_restart_onto_a_replaced_file_resets(log: Path, tmp_path: Path) -> None:
    append(log, b'{"a":1}\n')
    first = FileTailer(log)
    first.read()
    cursor = first.cursor
    first.close()
    replacement = tmp_path / "replacement"
    replacement.write_bytes(b'{"new":1}\n{"new":2}\n')
    os.replace(replacement, log)
    second = FileTailer(log, cursor)
    result = second.read()
    assert (result.reset_at, result.lines) == (0, [b'{"new":1}', b'{"new":2}'])


def test_restart_onto_a_file_truncated_while_down_resets(log: Path) -> None:
    append(log, b'{"a":1}\n{"b":2}\n')
    first = FileTailer(log)
    first.read()
    cursor = first.cursor
    first.close()
    os.truncate(log, 0)
    append(log, b'{"z":9}\n')
    second = FileTailer(log, cursor)
    result = second.read()
    assert (result.reset_at, result.lines) == (0, [b'{"z":9}'])


def test_deleted_file_is_drained_then_gone(log: Path) -> None:
    tailer = FileTailer(log)
    append(log, b'{"a":1}\n')
    assert tailer.read().lines == [b'{"a":1}']
    append(log, b'{"b":2}\n{"unfinished"')
    log.unlink()
    result = tailer.read()
    assert (result.lines, result.gone, result.reset_at) == ([b'{"b":2}'], True, None)
    again = tailer.read()
    assert (again.lines, again.gone) == ([], True)
    append(log, b'{"c":3}\n')
    reborn = tailer.read()
    assert (reborn.lines, reborn.gone, reborn.reset_at) == ([b'{"c":3}'], False, 0)


def test_missing_file_from_the_start_is_gone(tmp_path: Path) -> None:
    tailer = FileTailer(tmp_path / "nope.jsonl")
    assert tailer.read().gone
    assert tailer.cursor == Cursor.start()


def test_rotated_file_is_drained_before_the_new_one(log: Path) -> None:
    tailer = FileTailer(log)
    append(log, b'{"a":1}\n')
    tailer.read()
    append(log, b'{"b":2}\n')
    log.rename(log.with_suffix(".1"))
    append(log, b'{"new":1}\n')
    result = tailer.read()
    assert (result.lines, result.reset_at) == ([b'{"b":2}', b'{"new":1}'], 1)


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("gone", [False, True])
def test_drain_of_a_rotated_or_deleted_file_continues_across_budgeted_reads(
    log: Path, gone: bool
) -> None:
    tailer = FileTailer(log)
    append(log, b'{"a":1}\n')
    tailer.read()
    old = [b'{"old":%d}' % i for i in range(20)]
    append(log, b"\n".join(old) + b"\n")
    if gone:
        log.unlink()
    else:
        log.rename(log.with_suffix(".1"))
        append(log, b'{"new":1}\n')
    first = tailer.read(budget=30)
    assert first.more
    assert not first.gone
    rest = read_all(tailer, budget=30)
    delivered = first.lines + rest.lines
    if gone:
        assert delivered == old
        assert rest.gone
    else:
        assert delivered == [*old, b'{"new":1}']
        assert rest.reset_at is not None
        assert len(first.lines) + rest.reset_at == len(old)


def test_rotation_while_only_a_partial_line_was_read(log: Path) -> None:
    """The old file never finished its line (writer died): nothing of it may leak into the new."""
    tailer = FileTailer(log)
    append(log, b'{"dying":"wri')
    assert tailer.read().lines == []
    log.rename(log.with_suffix(".1"))
    append(log, b'{"fresh":1}\n{"fresh":2}\n')
    result = tailer.read()
    assert result.lines == [b'{"fresh":1}', b'{"fresh":2}']
    assert tailer.pending_bytes == 0
    assert tailer.cursor.offset == log.stat().st_size


def test_file_truncated_then_rotated_is_not_drained_as_garbage(log: Path) -> None:
    tailer = FileTailer(log)
    append(log, b'{"a":1}\n{"b":2}\n')
    tailer.read()
    os.truncate(log, 0)
    append(log, b'{"rewritten":"this content is longer than before"}\n')
    log.rename(log.with_suffix(".1"))
    append(log, b'{"new":1}\n')
    result = tailer.read()
    for line in result.lines:
        assert isinstance(line, bytes)
        orjson.loads(line)  # nothing spliced from two generations
    assert result.lines[-1] == b'{"new":1}'
    assert result.reset_at is not None
    assert result.lines[result.reset_at :] == [b'{"new":1}']


def test_budget_stops_and_resumes(log: Path, small_chunks: None) -> None:
    lines = [b'{"n":%d}' % i for i in range(50)]
    append(log, b"\n".join(lines) + b"\n")
    tailer = FileTailer(log)
    first = tailer.read(budget=40)
    assert first.more
    assert first.bytes_read < 40 + tail.READ_CHUNK_BYTES
    assert first.lines + read_all(tailer, budget=40).lines == lines


# -- WholeFileReader / ZstdFileReader -----------------------------------------------------------

ARCHIVE = [b'{"n":%d,"text":"caf\xc3\xa9"}' % i for i in range(3000)]


def compress(lines: list[bytes], *, frames: int = 1) -> bytes:
    body = b"\n".join(lines) + b"\n"
    step = -(-len(body) // frames)
    zc = zstandard.ZstdCompressor()
    return b"".join(zc.compress(body[i : i + step]) for i in range(0, len(body), step))


def test_whole_file_reader_reads_once_and_again_when_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_bytes(b'{"a":1}\n\n{"b":2}')  # last line without newline: the file is complete
    reader = WholeFileReader(path)
    first = reader.read()
    assert (first.lines, first.reset_at) == ([b'{"a":1}', b'{"b":2}'], None)
    unchanged = reader.read()
    assert (unchanged.lines, unchanged.reset_at, unchanged.bytes_read) == ([], None, 0)
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":3}\n')
    again = reader.read()
    assert (again.lines, again.reset_at) == ([b'{"a":1}', b'{"b":2}', b'{"c":3}'], 0)
    path.unlink()
    assert reader.read().gone


@pytest.mark.parametrize("frames", [1, 3])
def test_zstd_reader_reads_once_and_again_when_rewritten(tmp_path: Path, frames: int) -> None:
    path = tmp_path / "rollout.jsonl.zst"
    path.write_bytes(compress(ARCHIVE, frames=frames))
    reader = ZstdFileReader(path)
    first = reader.read()
    assert first.lines == ARCHIVE
    assert first.reset_at is None
    assert reader.read().lines == []
    path.write_bytes(compress([*ARCHIVE, b'{"n":"last"}'], frames=frames))
    again = reader.read()
    assert again.reset_at == 0
    assert again.lines == [*ARCHIVE, b'{"n":"last"}']
    assert reader.read().lines == []


def test_zstd_reader_cursor_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl.zst"
    path.write_bytes(compress(ARCHIVE))
    reader = ZstdFileReader(path)
    reader.read()
    restarted = ZstdFileReader(path, persisted(reader.cursor))
    assert restarted.read().lines == []
    os.utime(path, ns=(1, 1))  # touched: read again
    again = restarted.read()
    assert (again.lines, again.reset_at) == (ARCHIVE, 0)


@pytest.mark.parametrize(
    "content",
    [b"this is not zstd at all\n", b"garbage after"],
    ids=["not-zstd", "trailing-garbage"],
)
def test_corrupt_zstd_is_unreadable(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "rollout.jsonl.zst"
    if content == b"garbage after":
        content = compress(ARCHIVE) + content
    path.write_bytes(content)
    with pytest.raises(UnreadableFile):
        ZstdFileReader(path).read()


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.99])
def test_truncated_zstd_is_unreadable_not_cut_short(tmp_path: Path, keep: float) -> None:
    """An archive cut mid-frame (still being written, or damaged) decodes to a prefix without
    any error from the stream reader; delivering it would cut the last line."""
    path = tmp_path / "rollout.jsonl.zst"
    whole = compress(ARCHIVE)
    path.write_bytes(whole[: int(len(whole) * keep)])
    reader = ZstdFileReader(path)
    with pytest.raises(UnreadableFile):
        reader.read()
    path.write_bytes(whole)  # finished later: read in full
    assert reader.read().lines == ARCHIVE


def test_zstd_reader_missing_file_is_gone(tmp_path: Path) -> None:
    assert ZstdFileReader(tmp_path / "none.zst").read().gone
