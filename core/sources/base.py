"""The seam between the engine and one agent's files: what an adapter must provide (any thread).

An adapter knows where its agent keeps files, which of them are sessions, sub-agents or live
registries, and how each line becomes ``records``. The adapters live in each agent's package
(``agentbar.core.agents.<agent>``); nothing outside them knows an agent's file shapes. Here are
the protocols they fill and the helpers they share.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import threading
from collections.abc import Container, Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import msgspec
import orjson

from .. import jsonsafe
from ..model import Agent
from ..records import TOKEN_LIMIT, Record

log = logging.getLogger(__name__)


class StreamKind(StrEnum):
    TRANSCRIPT = "transcript"  # a session's own transcript (Claude) or rollout (Codex)
    SUBAGENT = "subagent"  # a sub-agent's transcript: part of its parent session
    REGISTRY = "registry"  # a live-session file the agent rewrites (Claude sessions/<pid>.json)
    HOOKS = "hooks"  # agentbar's hook events for one session (<data>/events/<agent>/<id>.jsonl)


@dataclass(frozen=True, slots=True)
class WatchRoot:
    path: Path
    recursive: bool


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """One file the engine reads, as classified from its path alone."""

    agent: Agent
    kind: StreamKind
    path: Path
    session_hint: str | None = None  # session id the path implies (may be confirmed by content)
    agent_id_hint: str | None = None  # sub-agent id the path implies
    compressed: bool = False
    # One JSON document rewritten whole (Gemini CLI's chats up to 0.38), not appended lines:
    # read from the top whenever it changes, handed to the parser as one line.
    whole_document: bool = False


@dataclass(frozen=True, slots=True)
class Owner:
    """The session a stream's records belong to; ``agent_id`` set for a sub-agent's stream."""

    session_id: str
    agent_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RegistryEntry:
    """The agent's own account of a live session (Claude's ``sessions/<pid>.json``)."""

    pid: int
    session_id: str
    cwd: str | None
    status: str | None  # "busy", "idle", "waiting" (others passed through)
    waiting_for: str | None
    updated_at: float | None  # epoch seconds of the last status change
    started_at: float | None
    proc_start: str | None
    version: str | None
    name: str | None


class MalformedLine(Exception):
    """A line that is not a JSON object; counted and logged, never fatal."""


class StreamParser(Protocol):
    """Stateful, per-file line parser. ``checkpoint()`` must round-trip through JSON so a warm
    restart can resume mid-file."""

    @property
    def owner(self) -> Owner | None: ...

    def parse(self, line: bytes) -> list[Record]:
        """Records of one complete line; raises ``MalformedLine`` for garbage."""
        ...

    def parse_oversized(self, prefix: bytes, length: int) -> list[Record]:
        """Best-effort records for a line too long to buffer, from its first bytes."""
        ...

    def checkpoint(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessInfo:
    """What the engine knows of one OS process when matching agents to sessions."""

    pid: int
    ppid: int
    create_time: float
    name: str
    cmdline: tuple[str, ...]
    cwd: str | None


class AgentSource(Protocol):
    agent: Agent
    # False for a source that knows no processes (agentbar's hook events): the engine matches
    # processes to sessions through one source per agent that does.
    finds_processes: bool

    def watch_roots(self) -> list[WatchRoot]:
        """Folders to watch; they may not exist yet."""
        ...

    def classify(self, path: Path) -> StreamSpec | None:
        """The stream a path is, or None when the engine should ignore it."""
        ...

    def parser(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> StreamParser: ...

    def parse_registry(self, data: bytes) -> RegistryEntry | None:
        """A registry file's content, or None when it is not one (or the agent has none)."""
        ...

    def is_client_process(self, proc: ProcessInfo) -> bool:
        """True for the agent's own interactive or exec process (not daemons or helpers)."""
        ...

    def process_session_hint(self, proc: ProcessInfo) -> str | None:
        """A session id the process's command line names (``--resume <id>``), if any."""
        ...

    def process_cwd(self, proc: ProcessInfo) -> str | None:
        """The folder the process works in (``-C dir`` beats the OS cwd)."""
        ...


def load_json_object(line: bytes) -> dict[str, Any]:
    """Parse one JSONL line into a dict; raises ``MalformedLine`` with a short reason."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        value = _load_leniently(line)
    if not isinstance(value, dict):
        raise MalformedLine(f"not a JSON object but {type(value).__name__}")
    return value


def _load_leniently(line: bytes) -> Any:
    """A line orjson refuses but a person would call JSON: invalid UTF-8 (an agent can write a
    broken character in a tool output) gets U+FFFD; a lone surrogate escape (``\\ud800``),
    which orjson rejects and Python's parser keeps, gets U+FFFD too (SQLite and every JSON
    writer refuse lone surrogates later)."""
    text = line.decode("utf-8", "replace")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise MalformedLine(f"not JSON: {reason}") from None
    return jsonsafe.tame(value, max_depth=_LENIENT_DEPTH)


# orjson reads up to 1024 levels; Python's parser stops near 1000 with RecursionError.
_LENIENT_DEPTH = 1024


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class Decoding(threading.local):
    """Whether this thread's parsers may decode only the fields they read (``load_fields``)."""

    def __init__(self) -> None:
        self.fast = True


DECODING = Decoding()


@contextlib.contextmanager
def full_decode() -> Iterator[None]:
    """Every line decoded whole on this thread while inside: the reference the fast decoding
    must equal, record for record (tests/test_fast_decode.py, bench/bench_parse.py)."""
    before, DECODING.fast = DECODING.fast, False
    try:
        yield
    finally:
        DECODING.fast = before


def load_fields(line: bytes, decoder: msgspec.json.Decoder[Any]) -> dict[str, Any] | None:
    """The fields of a JSONL line that ``decoder``'s typed dict names, decoded without building
    the rest (tool outputs, file contents: most of the bytes); None whenever this cannot be
    sure to equal ``load_json_object`` for those fields (then the caller decodes the line whole).

    msgspec checks the whole line's syntax, skipped parts included, as strictly as orjson, and
    more strictly in what could differ (a lone surrogate escape anywhere). What it lets through
    and orjson refuses (invalid UTF-8, a number past a float's range or nesting past orjson's
    1024 levels, in skipped parts) sends the full decode down ``_load_leniently``, which only
    changes values the typed dict cannot hold: integers past 64 bits and containers that deep
    (the typed dicts bound their integers and nest a few levels; ``json_value`` guards the rest).
    """
    if not DECODING.fast:
        return None
    try:
        fields: dict[str, Any] = _decode_below(_FRAMES_BELOW, decoder, line)
    except (msgspec.DecodeError, RecursionError):
        return None  # not JSON, not an object, a field of a type the typed dict does not take
    return fields


def _decode_below(frames: int, decoder: msgspec.json.Decoder[Any], line: bytes) -> Any:
    """``decoder.decode(line)`` called ``frames`` calls deeper (see ``_FRAMES_BELOW``)."""
    if frames:
        return _decode_below(frames - 1, decoder, line)
    return decoder.decode(line)


def _deepest(decode: Any) -> int:
    """The deepest nesting ``decode`` accepts when called from here."""
    low, high = 1, 100_000
    while low < high:
        middle = (low + high + 1) // 2
        try:
            decode(b"[" * middle + b"]" * middle)
        except (RecursionError, ValueError, msgspec.DecodeError):
            high = middle - 1
        else:
            low = middle
    return low


def _frames_below() -> int:
    """How much deeper ``load_fields`` must call msgspec so that it refuses nesting a little
    shallower than the lenient path's ``json.loads`` does (both count Python's recursion
    budget; both are called at the same depth below a parser's ``parse``). Otherwise a line
    nested just past json's limit, with a number orjson refuses elsewhere in it, would be
    refused by the full decode and read by the fast one."""
    msgspec_deepest = _deepest(msgspec.json.Decoder().decode)
    json_deepest = _deepest(lambda data: json.loads(data.decode(), parse_constant=_no_constant))
    return max(0, msgspec_deepest - json_deepest + 1)


_FRAMES_BELOW = _frames_below()


class Unsure(Exception):
    """A field ``load_fields`` left raw cannot be decoded here exactly as in the whole line."""


def json_value(raw: msgspec.Raw) -> Any:
    """A field left raw by ``load_fields`` (a tool's input), decoded as ``orjson.loads`` of the
    whole line would have; raises ``Unsure`` when that cannot be known from the field alone.

    msgspec reads integers of any width exactly, where ``orjson`` reads one past 64 bits as a
    float and the lenient path as text (which of them the whole line takes depends on bytes
    outside the field): ``orjson.dumps`` refuses exactly those integers, and nesting past 254
    levels, so a value it writes back holds none and is what ``orjson.loads`` would give."""
    try:
        value = _RAW_DECODER.decode(raw)
        orjson.dumps(value)
    except (msgspec.DecodeError, RecursionError, orjson.JSONEncodeError):
        raise Unsure from None
    return value


_RAW_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder()


def is_uuid(text: str) -> bool:
    """Five hex groups 8-4-4-4-12, the shape of both agents' session ids."""
    if len(text) != 36:
        return False
    parts = text.split("-")
    if [len(p) for p in parts] != [8, 4, 4, 4, 12]:
        return False
    return all(c in "0123456789abcdefABCDEF" for p in parts for c in p)


def one_line(text: str, limit: int = 200) -> str:
    """First non-empty line of ``text``, whitespace collapsed, cut to ``limit`` characters."""
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


# Epoch seconds a timestamp may take: from 1970 to the start of the year 3000, inside what every
# platform's calendar functions convert (Windows' stop at 3000-12-31; past a platform's time_t
# or year range they raise OverflowError, OSError EOVERFLOW or ValueError). Anything else is a
# value no agent writes: treated as unknown and counted, never passed on to fail later.
EPOCH_MIN = 0.0
EPOCH_MAX = 32_503_680_000.0


class OddValues(threading.local):
    """What this thread's parsers had to replace in the lines they read: timestamps that name
    no representable moment and counts out of range. The stream table takes the counts after
    each batch of lines (``take``) for the diagnostics."""

    def __init__(self) -> None:
        self.timestamps = 0
        self.numbers = 0

    def take(self) -> tuple[int, int]:
        counts = (self.timestamps, self.numbers)
        self.timestamps = self.numbers = 0
        return counts


ODD_VALUES = OddValues()


def parse_timestamp(value: object) -> float | None:
    """Epoch seconds from an ISO 8601 string (``...Z``), epoch seconds or epoch milliseconds;
    None (counted in ``ODD_VALUES`` unless the value is missing) for anything else, including a
    well-formed moment outside ``EPOCH_MIN``..``EPOCH_MAX``. Never raises."""
    if value is None:
        return None
    epoch: float | None = None
    if isinstance(value, str):
        try:
            epoch = datetime.fromisoformat(value).timestamp()
        except (ValueError, OverflowError, OSError):
            epoch = None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            # Values this large are milliseconds (1e11 s is the year 5138).
            epoch = value / 1000.0 if value > 1e11 else float(value)
        except OverflowError:  # an integer past a float's range
            epoch = None
    if epoch is None or not EPOCH_MIN <= epoch < EPOCH_MAX:  # NaN fails the comparison too
        ODD_VALUES.timestamps += 1
        return None
    return epoch


def token_count(value: object) -> int:
    """A token count from a line: a number clamped to 0..``TOKEN_LIMIT`` (a clamp is counted in
    ``ODD_VALUES``); 0 for a missing or non-numeric value."""
    if type(value) is int and 0 <= value <= TOKEN_LIMIT:  # the usual case
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        ODD_VALUES.numbers += 1
        return TOKEN_LIMIT if value == math.inf else 0  # -inf and NaN: no count
    if value < 0:
        ODD_VALUES.numbers += 1
        return 0
    if value > TOKEN_LIMIT:
        ODD_VALUES.numbers += 1
        return TOKEN_LIMIT
    return int(value)


def small_int(value: object, limit: int = 2**31 - 1) -> int | None:
    """``value`` when it is an integer in 0..``limit`` (counts, process ids), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit:
        return value
    return None


def size_text(length: int) -> str:
    """A line's size for a person, as oversized placeholders show it ("17.3 MB")."""
    return f"{length / 1_000_000:.1f} MB"


class FolderCache:
    """What each folder held when last listed, keyed by path, with the folder's mtime: a
    folder whose mtime has not moved still holds the same entries, so a periodic rescan lists
    only the folders that changed (an idle rescan of thousands of sessions is stats, not
    listings)."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, list[str], list[str]]] = {}


def walk_paths(
    root: Path, max_depth: int | None = None, cache: FolderCache | None = None
) -> Iterator[str]:
    """Files under ``root`` as path strings, iteratively; symlinked folders are not followed.

    A missing ``root`` yields nothing silently (the agent has not written there yet); any other
    folder that cannot be read (permissions, a file where a folder should be) is logged as a
    warning and skipped, never raised. ``max_depth`` 1 lists ``root`` alone.
    """
    stack: list[tuple[str, int]] = [(str(root), 0)]
    while stack:
        folder, depth = stack.pop()
        listed = _list_folder(folder, depth, cache)
        if listed is None:
            continue
        files, folders = listed
        yield from files
        if max_depth is None or depth + 1 < max_depth:
            stack.extend((sub, depth + 1) for sub in folders)


def walk_files(root: Path, max_depth: int | None = None) -> Iterator[Path]:
    """``walk_paths`` as ``Path`` objects."""
    return (Path(p) for p in walk_paths(root, max_depth))


def _list_folder(
    folder: str, depth: int, cache: FolderCache | None
) -> tuple[list[str], list[str]] | None:
    try:
        mtime = os.stat(folder).st_mtime_ns if cache is not None else 0
        if cache is not None:
            known = cache.entries.get(folder)
            if known is not None and known[0] == mtime:
                return known[1], known[2]
        files: list[str] = []
        folders: list[str] = []
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif entry.is_file():
                        files.append(entry.path)
                except OSError:
                    continue
    except FileNotFoundError:
        if depth > 0:
            log.warning("folder vanished while scanning: %s", folder)
        if cache is not None:
            cache.entries.pop(folder, None)
        return None
    except OSError as exc:
        log.warning("skipping unreadable folder %s: %s", folder, exc)
        return None
    if cache is not None:
        cache.entries[folder] = (mtime, files, folders)
    return files, folders


def scan_source(
    source: AgentSource,
    cache: FolderCache | None = None,
    skip: Container[str] = frozenset(),
) -> Iterator[StreamSpec]:
    """Every stream of ``source`` on disk, found by walking its watch roots (paths in ``skip``
    are passed over unclassified). A ``.jsonl.zst`` archive is left out when its plain
    ``.jsonl`` exists: the agent re-materialises the plain file to append, and reads it first."""
    for root in source.watch_roots():
        files = list(walk_paths(root.path, None if root.recursive else 1, cache))
        present = set(files)
        for path in files:
            if path in skip:
                continue
            if path.endswith(".zst") and path[: -len(".zst")] in present:
                continue
            spec = source.classify(Path(path))
            if spec is not None:
                yield spec


# Runtimes an agent's npm wrapper script runs under (``node .../cli.js``).
JS_RUNTIMES = frozenset({"node", "nodejs", "bun", "deno"})


def program_name(arg: str) -> str:
    """A command's program as a bare lowercase name: ``C:\\x\\Codex.EXE`` -> ``codex``."""
    name = arg.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name.removesuffix(".exe")


def positionals(args: list[str], value_options: Container[str]) -> list[str]:
    """A command line's arguments that are neither options nor the values of
    ``value_options``, in order (everything after ``--`` is one)."""
    words: list[str] = []
    skip_value = False
    for index, arg in enumerate(args):
        if skip_value:
            skip_value = False
        elif arg == "--":
            words.extend(args[index + 1 :])
            break
        elif arg.startswith("-") and len(arg) > 1:
            skip_value = arg in value_options
        else:
            words.append(arg)
    return words


def option_value(args: list[str], *names: str, glued: str | None = None) -> str | None:
    """The last value a command line gives one of the options ``names`` (``--cd dir``,
    ``--cd=dir`` for a long name; ``-Cdir`` too when ``glued`` is that short option); a value
    is never read as an option itself, nothing after ``--`` counts."""
    value: str | None = None
    skip_value = False
    for index, arg in enumerate(args):
        if skip_value:
            skip_value = False
        elif arg == "--":
            break
        elif arg in names:
            if index + 1 < len(args):
                value, skip_value = args[index + 1], True
        elif arg.startswith("--") and "=" in arg and arg.split("=", 1)[0] in names:
            value = arg.split("=", 1)[1]
        elif glued is not None and arg.startswith(glued) and not arg.startswith("--"):
            value = arg[len(glued) :]
    return value


def label(value: object, limit: int = 200) -> str:
    """Short text for a value of unknown type from a line (a record kind, an id): a string
    itself, a number or None as ``str`` gives it, anything else as JSON; at most ``limit``
    characters. Never ``str()`` of a nested value, whose repr can recurse past Python's limit."""
    if type(value) is str and len(value) <= limit:  # the usual case: the string itself
        return value
    if isinstance(value, str):
        return value[:limit]
    if value is None or isinstance(value, bool | int | float):
        return str(value)[:limit]
    return jsonsafe.dumps(value).decode()[:limit]


def nonempty_str(value: object) -> str | None:
    """``value`` when it is a non-empty string, else None (fields of unknown shape)."""
    return value if isinstance(value, str) and value else None
