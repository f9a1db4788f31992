"""A mutation fuzzer over real recorded transcript lines, shared by the CI test
(tests/test_fuzz.py) and the benchmark (bench/bench_fuzz.py); runs on the caller's thread.

The corpus is every JSONL line of tests/data/recorded (the real CLIs) and tests/data/synthetic.
Mutators damage lines the ways the issue lists (byte flips, truncation, type swaps, huge numbers,
deep nesting, key removal, encoding breakage, timestamp extremes, unknown types) and the targets
read them: both agents' line parsers, both replay adapters (items, their JSON), and a live engine
over real files with the replay, the exports and search over what it indexed.

What counts:

- a **crash** is any exception a target lets out, other than ``MalformedLine`` from a parser
  (its documented refusal), and any failure the engine only contained: an error logged by
  ``agentbar`` (an adapter that failed on a line, an index write that failed), or a file it
  counted as unreadable.
- a **lost good line**: a file of a session is written twice, once as recorded (the baseline)
  and once with mutated lines between its lines, each read by an engine of its own (the first
  half of each file cold, the rest appended live). A good line is lost when, in the fuzzed run,
  the index's stored offset for its file does not reach past it, or its search rows (kind and
  text, at the line's offset) differ from the baseline's, or the baseline's session of its file
  is not shown after a warm restart (then each of the file's good lines counts as lost). A file
  whose lines all arrived, but filed under a session a mutated line named before any good line
  did (Claude 1.0's resume rule: a line may name the session its file continues), is counted
  apart as **regrouped**, not lost.

Everything random comes from one ``random.Random(seed)``: a failure names its seed and
reproduces with it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import shutil
import sqlite3
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentbar.core import jsonsafe
from agentbar.core.agents.base import replay_adapters
from agentbar.core.agents.claude.transcript import ClaudeTranscriptParser
from agentbar.core.agents.codex.rollout import CodexRolloutParser
from agentbar.core.agents.registry import KITS
from agentbar.core.config import Settings
from agentbar.core.engine import Engine, PathTouched
from agentbar.core.index import Index
from agentbar.core.listing import diagnostics
from agentbar.core.model import Agent
from agentbar.core.procs import FakeProcessTable
from agentbar.core.records import Unknown
from agentbar.core.replay.export import Format, Options, export
from agentbar.core.replay.files import AgentRoots
from agentbar.core.replay.model import MAIN_THREAD, ThreadCatalog
from agentbar.core.replay.pages import Replay
from agentbar.core.search import Searcher
from agentbar.core.sources.base import ODD_VALUES, MalformedLine, StreamKind, StreamSpec
from agentbar.core.tail import OVERSIZED_PREFIX_BYTES

DATA = Path(__file__).parent / "data"

# -- the corpus --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One recorded JSONL file and where it goes in a HOME (``.claude/...`` or ``.codex/...``)."""

    agent: Agent
    target: str
    lines: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Corpus:
    units: tuple[tuple[SourceFile, ...], ...]  # files that belong together (one scenario)

    @property
    def files(self) -> list[SourceFile]:
        return [f for unit in self.units for f in unit]

    def lines(self, agent: Agent) -> list[bytes]:
        return [line for f in self.files if f.agent == agent for line in f.lines]


def load_corpus(data: Path = DATA) -> Corpus:
    units: list[tuple[SourceFile, ...]] = []
    for scenario in sorted((data / "recorded").glob("*/*")):
        if not scenario.is_dir():
            continue
        agent = Agent("codex") if scenario.parent.name.startswith("codex") else Agent("claude")
        home = ".codex" if agent == Agent("codex") else ".claude"
        files = [
            SourceFile(agent, f"{home}/{p.relative_to(scenario)}", _lines(p))
            for p in sorted(scenario.rglob("*.jsonl"))
        ]
        units.append(tuple(f for f in files if f.lines))
    for version in sorted((data / "synthetic" / "claude").iterdir()):
        files = [
            SourceFile(Agent("claude"), f".claude/{p.relative_to(version)}", _lines(p))
            for p in sorted(version.rglob("*.jsonl"))
        ]
        units.append(tuple(f for f in files if f.lines))
    for number, path in enumerate(sorted((data / "synthetic" / "codex").glob("*.jsonl"))):
        name = f"rollout-2026-11-29T10-00-00-019ad3f1-0000-7000-8000-{number:012d}.jsonl"
        units.append(
            (SourceFile(Agent("codex"), f".codex/sessions/2026/11/29/{name}", _lines(path)),)
        )
    return Corpus(tuple(u for u in units if u))


def _lines(path: Path) -> tuple[bytes, ...]:
    return tuple(line for line in path.read_bytes().split(b"\n") if line.strip())


# -- mutators ----------------------------------------------------------------------------------

HUGE_NUMBERS: tuple[Any, ...] = (
    2**63, 2**64, 2**64 - 1, -(2**63) - 1, 5 * 10**18, 10**30, 10**400, -1, -(10**20),
    1.7976931348623157e308, -1e308, 1e-320, 0.5,
)  # fmt: skip
ODD_TIMES: tuple[Any, ...] = (
    "9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59.999999Z",
    "10000-01-01T00:00:00Z", "2026-02-30T10:00:00Z", "2026-11-29T25:61:61Z", "", "Z", "T",
    "1970-01-01T00:00:00Z", "2038-01-19T03:14:08Z", "2106-02-07T06:28:16Z",
    -1, 0, -62135596800, -62135596801000, 253402300800, 2**31, 2**32, 2**63, 2**64, 10**30,
    1e308, -1e308, [], {}, True, None,
)  # fmt: skip
ENCODING_BREAKS: tuple[bytes, ...] = (
    b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
    b"\x80", b"\xc3", b"\x00", b"\\u0000", b"\\ud800", b"\\udc00", b"\\ud800\\u0041",
    b"\\udbff\\udfff", b"\xef\xbb\xbf", b"\\", b'\\"', b"\r", b"\x1b[2J",
)  # fmt: skip
TYPE_SWAPS: tuple[Any, ...] = ("x", "", 0, -1, 1.5, True, False, None, [], [1, "a"], {}, {"a": 1})
UNKNOWN_TYPES: tuple[Any, ...] = ("brand-new-kind", "", "assistant ", "USER", 7, None, ["user"])

Mutator = Callable[[random.Random, bytes], bytes]


def _tree(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _dump(value: Any) -> bytes:
    """JSON of a mutated value: Python's writer takes integers of any size and NaN-free floats;
    ``inf`` comes out as ``Infinity`` (JSON readers refuse it: a malformed line, as intended)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def _nodes(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) slot of a JSON value, iteratively."""
    slots: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                slots.append((node, key))
                stack.append(item)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                slots.append((node, index))
                stack.append(item)
    return slots


def byte_flip(rng: random.Random, line: bytes) -> bytes:
    data = bytearray(line)
    for _ in range(rng.randint(1, 4)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data).replace(b"\n", b" ")


def truncate(rng: random.Random, line: bytes) -> bytes:
    return line[: rng.randrange(1, len(line))] if len(line) > 1 else b"{"


def type_swap(rng: random.Random, line: bytes) -> bytes:
    tree = _tree(line)
    slots = _nodes(tree)
    if not slots:
        return b"[]"
    parent, key = rng.choice(slots)
    parent[key] = rng.choice(TYPE_SWAPS)
    return _dump(tree)


def huge_number(rng: random.Random, line: bytes) -> bytes:
    tree = _tree(line)
    slots = _nodes(tree)
    numeric = [
        (p, k)
        for p, k in slots
        if isinstance(p[k], int | float) or (isinstance(k, str) and "token" in k.lower())
    ]
    if not (numeric or slots):
        return _dump(rng.choice(HUGE_NUMBERS))
    parent, key = rng.choice(numeric or slots)
    parent[key] = rng.choice(HUGE_NUMBERS)
    return _dump(tree)


def deep_nesting(rng: random.Random, line: bytes) -> bytes:
    tree = _tree(line)
    slots = _nodes(tree)
    depth = rng.choice((100, 255, 256, 300, 600, 1000, 1023, 1100))
    opener, closer = rng.choice(((b'{"a":', b"}"), (b"[", b"]")))
    deep = opener * depth + b"1" + closer * depth
    if not slots:
        return deep
    parent, key = rng.choice(slots)
    marker = "\x01deep\x01"
    parent[key] = marker
    return _dump(tree).replace(_dump(marker), deep, 1)


def key_removal(rng: random.Random, line: bytes) -> bytes:
    tree = _tree(line)
    keyed = [(p, k) for p, k in _nodes(tree) if isinstance(p, dict)]
    if isinstance(tree, dict) and tree:
        keyed += [(tree, k) for k in tree] * 3  # the top-level keys matter most
    for _ in range(rng.randint(1, 3)):
        if not keyed:
            break
        parent, key = keyed.pop(rng.randrange(len(keyed)))
        parent.pop(key, None)
    return _dump(tree)


def encoding(rng: random.Random, line: bytes) -> bytes:
    data = line
    for _ in range(rng.randint(1, 3)):
        # Inside a string value when there is one: the line stays JSON but for the bytes.
        quotes = [i for i in range(1, len(data)) if data[i - 1 : i] == b'"']
        at = rng.choice(quotes) if quotes else rng.randrange(len(data) + 1)
        data = data[:at] + rng.choice(ENCODING_BREAKS) + data[at:]
    return data.replace(b"\n", b" ")


def timestamp(rng: random.Random, line: bytes) -> bytes:
    tree = _tree(line)
    if not isinstance(tree, dict):
        return _dump({"timestamp": rng.choice(ODD_TIMES)})
    slots = [(p, k) for p, k in _nodes(tree) if k in ("timestamp", "ts", "startedAt", "updatedAt")]
    parent, key = rng.choice(slots) if slots else (tree, "timestamp")
    parent[key] = rng.choice(ODD_TIMES)
    return _dump(tree)


# The live engine's line cap in these runs: a real CLI's lines here are at most 4 KB, and an
# overlong line costs its bytes in every run (the default cap is 16 MB).
MAX_LINE_BYTES = 8 * 1024


def overlong(rng: random.Random, line: bytes) -> bytes:
    """The line grown past ``MAX_LINE_BYTES`` inside its first string (an oversized line)."""
    pad = b"x" * rng.randint(MAX_LINE_BYTES, MAX_LINE_BYTES + 4096)
    at = line.find(b'":"')
    if at < 0:
        return line + pad
    return line[: at + 3] + pad + line[at + 3 :]


def unknown_type(rng: random.Random, line: bytes) -> bytes:
    tree = _tree(line)
    if not isinstance(tree, dict):
        return _dump({"type": rng.choice(UNKNOWN_TYPES)})
    target = tree
    payload = tree.get("payload")
    if isinstance(payload, dict) and rng.random() < 0.5:
        target = payload
    target["type"] = rng.choice(UNKNOWN_TYPES)
    return _dump(tree)


MUTATORS: dict[str, Mutator] = {
    "byte_flip": byte_flip,
    "truncate": truncate,
    "type_swap": type_swap,
    "huge_number": huge_number,
    "deep_nesting": deep_nesting,
    "key_removal": key_removal,
    "encoding": encoding,
    "timestamp": timestamp,
    "unknown_type": unknown_type,
    "overlong": overlong,
}


@dataclass(frozen=True, slots=True)
class Mutant:
    kind: str
    line: bytes


def mutate(rng: random.Random, line: bytes) -> Mutant:
    """One mutated copy of ``line`` (never the line itself, never containing a newline)."""
    kind = rng.choice(list(MUTATORS))
    out = MUTATORS[kind](rng, line)
    if out == line or not out.strip():
        out = truncate(rng, line) if len(line) > 1 else b"{"
    return Mutant(kind, out.replace(b"\n", b" "))


# -- the tally --------------------------------------------------------------------------------


@dataclass
class Tally:
    """What a fuzz run saw. ``outcomes`` counts mutated lines by mutator and by what the
    parser made of them: ``malformed`` (refused, counted by the engine), ``unknown`` (kept as an
    unknown record), ``odd_time`` (a timestamp read as unknown), ``clamped`` (a number clamped),
    ``parsed`` (records like any line)."""

    seed: int
    lines: int = 0  # mutated lines fed to the targets
    good_lines: int = 0  # unmutated lines the live engine read alongside them
    crashes: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    # Files whose lines all arrived but under another session than in the clean run: a mutated
    # line before the first line that names the session named another (a 1.0 resume's rule).
    regrouped: list[str] = field(default_factory=list)
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    engine_counts: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def crash(self, where: str, line: bytes | None = None) -> None:
        shown = "" if line is None else f" on {line[:300]!r}"
        self.crashes.append(f"[seed {self.seed}] {where}{shown}\n{traceback.format_exc()}")

    def summary(self) -> dict[str, Any]:
        by_outcome: Counter[str] = Counter()
        for (_, outcome), count in self.outcomes.items():
            by_outcome[outcome] += count
        return {
            "seed": self.seed,
            "mutated_lines": self.lines,
            "good_lines": self.good_lines,
            "crashes": len(self.crashes),
            "lost_good_lines": len(self.lost),
            "regrouped_files": len(self.regrouped),
            "outcomes": dict(sorted(by_outcome.items())),
            "by_mutator": {
                f"{kind}/{outcome}": count
                for (kind, outcome), count in sorted(self.outcomes.items())
            },
            "engine_diagnostics": dict(sorted(self.engine_counts.items())),
            "seconds": round(self.seconds, 2),
            "lines_per_second": round(self.lines / self.seconds) if self.seconds else None,
        }


# -- targets: the parsers and the replay adapters ----------------------------------------------


def _spec(agent: Agent) -> StreamSpec:
    if agent == Agent("claude"):
        path = Path("/fuzz/projects/-fuzz/aaaaaaaa-0000-4000-8000-00000000f022.jsonl")
        return StreamSpec(agent, StreamKind.TRANSCRIPT, path, session_hint=path.stem)
    return StreamSpec(agent, StreamKind.TRANSCRIPT, Path("/fuzz/rollout.jsonl"))


class LineTargets:
    """Both agents' parsers and replay adapters, kept across lines (state matters), fed mutated
    lines one at a time; a fresh set every ``RESET_LINES`` lines, as a new file would."""

    RESET_LINES = 200

    def __init__(self) -> None:
        self._fed = 0
        self._fresh()

    def _fresh(self) -> None:
        self.parsers = {
            Agent("claude"): ClaudeTranscriptParser(_spec(Agent("claude"))),
            Agent("codex"): CodexRolloutParser(_spec(Agent("codex"))),
        }
        catalog = ThreadCatalog()
        self.replay = {
            agent: replay_adapters(KITS)[agent].parser(
                str(_spec(agent).path), catalog, thread=MAIN_THREAD, main=True
            )
            for agent in (Agent("claude"), Agent("codex"))
        }

    def feed(self, tally: Tally, agent: Agent, mutant: Mutant) -> None:
        self._fed += 1
        if self._fed % self.RESET_LINES == 0:
            self._fresh()
        tally.lines += 1
        line = mutant.line
        if len(line) > MAX_LINE_BYTES:
            self._feed_oversized(tally, agent, mutant)
            return
        ODD_VALUES.take()
        try:
            records = self.parsers[agent].parse(line)
            outcome = "unknown" if any(type(r) is Unknown for r in records) else "parsed"
        except MalformedLine:
            outcome = "malformed"
        except Exception:
            tally.crash(f"{agent} parser, {mutant.kind}", line)
            outcome = "crash"
        odd_times, clamped = ODD_VALUES.take()
        if outcome == "parsed" and odd_times:
            outcome = "odd_time"
        elif outcome == "parsed" and clamped:
            outcome = "clamped"
        tally.outcomes[(mutant.kind, outcome)] += 1
        try:
            checkpoint = self.parsers[agent].checkpoint()
            jsonsafe.dumps(checkpoint)
        except Exception:
            tally.crash(f"{agent} parser checkpoint, {mutant.kind}", line)
        try:
            items = self.replay[agent].items(line, 1000)
            for item in items:
                jsonsafe.dumps(item.cut().to_json())
                jsonsafe.dumps(item.to_json())
        except Exception:
            tally.crash(f"{agent} replay adapter, {mutant.kind}", line)
        ODD_VALUES.take()

    def _feed_oversized(self, tally: Tally, agent: Agent, mutant: Mutant) -> None:
        """What the engine and the replay do with a line over the cap: its first bytes only."""
        prefix = mutant.line[:OVERSIZED_PREFIX_BYTES]
        try:
            self.parsers[agent].parse_oversized(prefix, len(mutant.line))
            for item in self.replay[agent].oversized(prefix, len(mutant.line), 1000):
                jsonsafe.dumps(item.to_json())
            tally.outcomes[(mutant.kind, "oversized")] += 1
        except Exception:
            tally.crash(f"{agent} oversized line, {mutant.kind}", mutant.line)
        ODD_VALUES.take()


def fuzz_lines(corpus: Corpus, seed: int, count: int, tally: Tally | None = None) -> Tally:
    """``count`` mutated lines through both parsers and replay adapters."""
    rng = random.Random(seed)
    tally = tally or Tally(seed)
    targets = LineTargets()
    pools = {agent: corpus.lines(agent) for agent in (Agent("claude"), Agent("codex"))}
    started = time.perf_counter()
    for _ in range(count):
        agent = rng.choice((Agent("claude"), Agent("codex")))
        targets.feed(tally, agent, mutate(rng, rng.choice(pools[agent])))
    tally.seconds += time.perf_counter() - started
    return tally


# -- target: a live engine over real files -----------------------------------------------------


class _ErrorLog(logging.Handler):
    """Errors and tracebacks ``agentbar`` logs while it contains a failure: each is a crash."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(self.format(record))


@contextlib.contextmanager
def logged_errors() -> Iterator[_ErrorLog]:
    handler = _ErrorLog()
    root = logging.getLogger("agentbar")
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


@dataclass
class _Written:
    """One file as written for a run: its path and, per good line, where it starts."""

    path: Path
    good_offsets: list[int]


def _write_home(
    root: Path,
    files: list[SourceFile],
    mutated: dict[str, list[list[Mutant]]] | None,
    *,
    half: bool,
) -> dict[str, _Written]:
    """The files under ``root`` (a HOME). With ``half``, each file gets only the first half of
    its lines (the engine reads those cold; ``_append_rest`` writes the rest)."""
    written: dict[str, _Written] = {}
    for f in files:
        path = root / f.target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        written[f.target] = _Written(path, [])
        _append(written[f.target], f, mutated, range(0, _half(f) if half else len(f.lines)))
    return written


def _half(f: SourceFile) -> int:
    return max(1, len(f.lines) // 2)


def _append(
    into: _Written, f: SourceFile, mutated: dict[str, list[list[Mutant]]] | None, which: range
) -> None:
    with open(into.path, "ab") as fh:
        for number in which:
            into.good_offsets.append(fh.tell())
            fh.write(f.lines[number] + b"\n")
            for mutant in (mutated or {}).get(f.target, [[]] * len(f.lines))[number]:
                fh.write(mutant.line + b"\n")


def _settings(root: Path) -> Settings:
    return Settings(
        homes={Agent("claude"): (root / ".claude",), Agent("codex"): (root / ".codex",)},
        data_dir=root / "data",
    )


def _engine(settings: Settings) -> Engine:
    engine = Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=FakeProcessTable(),
        traits=settings.traits(),
        max_line_bytes=MAX_LINE_BYTES,
    )
    engine.catch_up()
    engine.drain()
    return engine


def _search_rows(index_path: Path, home: Path) -> dict[str, dict[int, list[tuple[str, str]]]]:
    """Search rows per file (relative to ``home``) and line offset."""
    conn = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT f.path, d.offset, d.kind, d.text FROM search_docs d"
            " JOIN search_files f ON f.id = d.file ORDER BY d.id"
        ).fetchall()
    finally:
        conn.close()
    out: dict[str, dict[int, list[tuple[str, str]]]] = {}
    for path, offset, kind, text in rows:
        rel = str(Path(path).relative_to(home))
        out.setdefault(rel, {}).setdefault(offset, []).append((kind, text))
    return out


def _streams(index_path: Path, home: Path) -> dict[str, tuple[int, str | None]]:
    """Each file's stored offset and session, as the index holds them."""
    conn = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT path, offset, session_id FROM streams").fetchall()
    finally:
        conn.close()
    return {str(Path(p).relative_to(home)): (o, s) for p, o, s in rows}


def fuzz_engine(
    corpus: Corpus,
    seed: int,
    workdir: Path,
    *,
    files: int = 6,
    per_line: float = 1.0,
    tally: Tally | None = None,
) -> Tally:
    """One round: ``files`` scenarios' worth of real files, a mutated line after each good line
    on average ``per_line`` times, read by a live engine and compared with a clean run."""
    rng = random.Random(seed)
    tally = tally or Tally(seed)
    units = rng.sample(list(corpus.units), min(files, len(corpus.units)))
    chosen = [f for unit in units for f in unit]
    mutated: dict[str, list[list[Mutant]]] = {}
    for f in chosen:
        mutated[f.target] = [
            [mutate(rng, rng.choice(f.lines)) for _ in range(_poisson(rng, per_line))]
            for _ in f.lines
        ]
    count = sum(len(m) for per in mutated.values() for m in per)
    started = time.perf_counter()
    clean_root, fuzz_root = workdir / f"clean-{seed}", workdir / f"fuzz-{seed}"
    try:
        with logged_errors() as errors:
            clean = _clean_run(clean_root, chosen)
            _fuzz_run(fuzz_root, chosen, mutated, clean, tally)
        tally.crashes += [f"[seed {seed}] engine logged: {m}" for m in errors.messages]
    finally:
        shutil.rmtree(clean_root, ignore_errors=True)
        shutil.rmtree(fuzz_root, ignore_errors=True)
    tally.lines += count
    tally.good_lines += sum(len(f.lines) for f in chosen)
    tally.seconds += time.perf_counter() - started
    return tally


def _poisson(rng: random.Random, mean: float) -> int:
    count, limit, product = 0, pow(2.718281828459045, -mean), rng.random()
    while product > limit:
        count += 1
        product *= rng.random()
    return count


@dataclass
class _Clean:
    written: dict[str, _Written]
    rows: dict[str, dict[int, list[tuple[str, str]]]]
    streams: dict[str, tuple[int, str | None]]
    sessions: set[str]  # the sessions it shows


def _clean_run(root: Path, files: list[SourceFile]) -> _Clean:
    settings = _settings(root)
    written = _write_home(root, files, None, half=False)
    engine = _engine(settings)
    sessions = {s.key.session_id for s in engine.sessions()}
    engine.stop()
    engine.index.close()
    index = settings.index_path
    return _Clean(written, _search_rows(index, root), _streams(index, root), sessions)


def _fuzz_run(
    root: Path,
    files: list[SourceFile],
    mutated: dict[str, list[list[Mutant]]],
    clean: _Clean,
    tally: Tally,
) -> None:
    settings = _settings(root)
    written = _write_home(root, files, mutated, half=True)
    engine = _engine(settings)  # the first half: a cold catch-up
    try:
        for f in files:  # the rest: appended while the engine runs, a line batch at a time
            rest = range(_half(f), len(f.lines))
            for start in range(rest.start, rest.stop, 3):
                _append(written[f.target], f, mutated, range(start, min(start + 3, rest.stop)))
                engine.post(PathTouched(written[f.target].path))
                engine.drain()
        for name, value in diagnostics(engine.stats()).items():
            tally.engine_counts[name] += value
        if engine.stats().unreadable:
            tally.crashes.append(
                f"[seed {tally.seed}] {engine.stats().unreadable} unreadable files"
            )
        _read_back(engine, settings, tally)
    finally:
        engine.stop()
        engine.index.close()
    engine = _engine(settings)  # a warm restart: it must hold what was saved
    sessions = {s.key.session_id for s in engine.sessions()}
    engine.stop()
    engine.index.close()
    index = settings.index_path
    _compare(clean, written, _search_rows(index, root), _streams(index, root), sessions, tally)


def _read_back(engine: Engine, settings: Settings, tally: Tally) -> None:
    """Everything a person can ask of the fuzzed sessions: every replay page's items as JSON,
    the three exports, and searches for words of the fuzzed text."""
    replay = Replay(AgentRoots(settings.agent_roots), replay_adapters(KITS))
    for snap in engine.sessions():
        try:
            page = replay.page(snap)  # the first page a person opens, cut to the page limits
            jsonsafe.dumps([item.to_json() for item in page.items])
            for item in replay.items(snap):
                jsonsafe.dumps(item.to_json())
            for thread in replay.threads(snap):
                for item in replay.items(snap, thread.thread):
                    jsonsafe.dumps(item.to_json())
            for fmt in Format:
                for _ in export(replay, snap, fmt, Options(thinking=True, notes=True)):
                    pass
            jsonsafe.dumps(snap.to_json())
        except Exception:
            tally.crash(f"replay/export of {snap.key}")
    searcher = Searcher(settings.index_path)
    try:
        for query in ("the", "a\x00b", "\ud800", "é ü", '"', "*", "NEAR(", "zz" * 300):
            for hit in searcher.search(query):
                jsonsafe.dumps(hit.to_json())
    except Exception:
        tally.crash("search")
    finally:
        searcher.close()


def _compare(
    clean: _Clean,
    written: dict[str, _Written],
    rows: dict[str, dict[int, list[tuple[str, str]]]],
    streams: dict[str, tuple[int, str | None]],
    sessions: set[str],
    tally: Tally,
) -> None:
    for target, base in clean.written.items():
        fuzzed = written[target]
        base_offset, base_session = clean.streams.get(target, (None, None))
        stored, session = streams.get(target, (0, None))
        clean_rows = clean.rows.get(target, {})
        fuzz_rows = rows.get(target, {})
        for number, (at_clean, at_fuzz) in enumerate(
            zip(base.good_offsets, fuzzed.good_offsets, strict=True)
        ):
            why = None
            if base_offset is not None and stored <= at_fuzz:
                why = f"the index stopped at {stored}"
            elif clean_rows.get(at_clean, []) != fuzz_rows.get(at_fuzz, []):
                why = f"search rows {clean_rows.get(at_clean)} became {fuzz_rows.get(at_fuzz)}"
            if why is not None:
                tally.lost.append(f"[seed {tally.seed}] {target} line {number + 1}: {why}")
        if base_session not in clean.sessions or (session == base_session and session in sessions):
            continue
        where = f"[seed {tally.seed}] {target}: its session {base_session} is now {session}"
        if session in sessions:
            tally.regrouped.append(where)
        else:
            tally.lost.extend(
                f"{where}, not shown after a restart (line {n + 1})"
                for n in range(len(fuzzed.good_offsets))
            )
