"""opencode's files: where its data folder is, its database and JSON storage as a snapshot
source, and which processes are its clients (engine thread).

opencode keeps its data under ``$XDG_DATA_HOME/opencode`` (``~/.local/share/opencode`` when
unset, on every platform: it uses the XDG folders on macOS and Windows too). Sessions are in
``opencode.db`` (1.2 and later; ``opencode-<channel>.db`` for a build of another channel) and,
before that, in ``storage/``. Neither is a file of lines with one session each, so the source
tails nothing (``classify`` claims no file) and gives the engine a ``snapshot()`` reader
instead (``sources/snapshot.py``).
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...model import Agent
from ...sources.base import (
    JS_RUNTIMES,
    ProcessInfo,
    RegistryEntry,
    StreamParser,
    StreamSpec,
    WatchRoot,
    option_value,
    positionals,
    program_name,
)
from ...sources.snapshot import SnapshotBatch
from .database import DatabaseBusy, DatabaseReader
from .rows import Rows
from .storage import StorageReader
from .translate import Translator

log = logging.getLogger(__name__)

SETTLE_SECONDS = 10.0  # after its files last moved, a database is still read on every tick

AGENT = Agent("opencode")
DATABASE = re.compile(r"^opencode(-[A-Za-z0-9._-]+)?\.db$")
WAL_SUFFIX = "-wal"  # the -shm file is left out: a reader's own visit changes it


def default_data_dir(env: Mapping[str, str]) -> Path:
    """opencode's data folder: ``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``."""
    xdg = env.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg).expanduser() / "opencode"
    home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
    return Path(home) / ".local" / "share" / "opencode"


def default_config_dir(env: Mapping[str, str]) -> Path:
    """opencode's global config folder (its ``opencode.json``, ``plugins/``):
    ``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``."""
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg).expanduser() / "opencode"
    home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
    return Path(home) / ".config" / "opencode"


def locator(database: Path, session_id: str) -> str:
    """A session's place in a database, as agentbar names its transcript."""
    return f"{database}#{session_id}"


class OpencodeSnapshot:
    """Every opencode store in one data folder, read for what changed (``SnapshotReader``)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.translator = Translator()
        self.storage = StorageReader(data_dir)
        self._databases: dict[str, DatabaseReader] = {}
        # Per database: its files' (size, mtime) at the last read, and when they last moved.
        self._stamps: dict[str, tuple[int, int, int, int]] = {}
        self._moved_at: dict[str, float] = {}

    def claims(self, path: Path) -> bool:
        if path.parent == self.data_dir:
            name = path.name.removesuffix(WAL_SUFFIX)
            return DATABASE.match(name) is not None
        return self.storage.kind_of(path) is not None

    def cursors(self) -> dict[str, dict[str, Any]]:
        """Each database's cursor, for the next run (``ResumableReader``). The older JSON
        storage keeps none: it is read whole at each start."""
        found = {path: reader.cursor() for path, reader in self._databases.items()}
        return {path: cursor for path, cursor in found.items() if cursor}

    def resume(self, store: str, cursor: dict[str, Any]) -> bool:
        path = Path(store)
        if path.parent != self.data_dir or not DATABASE.match(path.name):
            return False
        reader = self._databases.setdefault(store, DatabaseReader(path))
        return reader.resume(cursor)

    def read(self, paths: Sequence[Path] | None) -> list[SnapshotBatch]:
        batches: list[SnapshotBatch] = []
        for database in self._databases_touched(paths):
            batches.extend(self._read_database(database, told=paths is not None))
        legacy = [p for p in paths if self.storage.kind_of(p)] if paths is not None else None
        if legacy is None or legacy:
            rows = self.storage.read(legacy)
            if rows:
                where = self.storage.root
                batches.extend(self._batches(rows, lambda sid: locator(where, sid)))
        return batches

    def _databases_touched(self, paths: Sequence[Path] | None) -> list[Path]:
        if paths is None:
            try:
                names = [e.name for e in os.scandir(self.data_dir) if DATABASE.match(e.name)]
            except OSError:
                return []
            return [self.data_dir / name for name in sorted(names)]
        found = {
            self.data_dir / p.name.removesuffix(WAL_SUFFIX)
            for p in paths
            if p.parent == self.data_dir and DATABASE.match(p.name.removesuffix(WAL_SUFFIX))
        }
        return sorted(found)

    def _read_database(self, path: Path, *, told: bool) -> list[SnapshotBatch]:
        """Read when the database or its WAL moved; on a tick, also for a while after they
        last moved. A file event without a move is agentbar's own read: SQLite opens the WAL
        for writing even read-only, and closing it raises a close-after-write event, which
        would start the next read, forever. And a write is seen in the WAL before its commit
        is: a read right after the event can miss the transaction, and the files do not move
        again when it commits, so for a while after they last moved every tick reads again."""
        stamp = _stamp(path)
        if stamp is None:
            return []
        now = time.monotonic()
        if self._stamps.get(str(path)) != stamp:
            self._moved_at[str(path)] = now
        elif told or now - self._moved_at.get(str(path), 0.0) > SETTLE_SECONDS:
            return []
        reader = self._databases.setdefault(str(path), DatabaseReader(path))
        try:
            rows = reader.read()
        except DatabaseBusy as exc:
            log.debug("opencode holds %s (%s); reading it later", path, exc)
            return []
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                log.debug("opencode is still creating %s (%s)", path, exc)
                return []  # its migrations run at its first start: read it once they are in
            log.warning("cannot read opencode's database %s: %s", path, exc)
            self._stamps[str(path)] = stamp  # not again until it changes
            return []
        except sqlite3.Error as exc:
            log.warning("cannot read opencode's database %s: %s", path, exc)
            self._stamps[str(path)] = stamp  # not again until it changes
            return []
        self._stamps[str(path)] = stamp
        return self._batches(rows, lambda sid: locator(path, sid))

    def _batches(self, rows: Rows, where: Any) -> list[SnapshotBatch]:
        return [
            SnapshotBatch(
                batch.owner, batch.records, where(batch.owner.agent_id or batch.owner.session_id)
            )
            for batch in self.translator.translate(rows)
        ]


def _stamp(database: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(database)
    except OSError:
        return None
    try:
        wal = os.stat(f"{database}{WAL_SUFFIX}")
        wal_stamp = (wal.st_size, wal.st_mtime_ns)
    except OSError:
        wal_stamp = (-1, -1)
    return (st.st_size, st.st_mtime_ns, *wal_stamp)


class OpencodeSource:
    """opencode's data folder: a snapshot source, and its processes."""

    agent: Agent = AGENT
    finds_processes = True

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._snapshot = OpencodeSnapshot(data_dir)

    def snapshot(self) -> OpencodeSnapshot:
        return self._snapshot

    def watch_roots(self) -> list[WatchRoot]:
        return [
            WatchRoot(self.data_dir, recursive=False),
            WatchRoot(self.storage_root, recursive=True),
        ]

    @property
    def storage_root(self) -> Path:
        return self._snapshot.storage.root

    def classify(self, path: Path) -> StreamSpec | None:
        return None  # nothing here is tailed by line: see ``snapshot()``

    def parser(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> StreamParser:
        raise LookupError("opencode has no line-tailed streams")

    def parse_registry(self, data: bytes) -> RegistryEntry | None:
        return None  # no live registry: its process tells

    def is_client_process(self, proc: ProcessInfo) -> bool:
        args = _opencode_args(proc)
        if args is None or any(a in _HELP_OPTIONS for a in args):
            return False
        words = positionals(args, _VALUE_OPTIONS)
        return not words or words[0] in _CLIENT_SUBCOMMANDS or words[0] not in _OTHER_SUBCOMMANDS

    def process_session_hint(self, proc: ProcessInfo) -> str | None:
        args = _opencode_args(proc)
        if args is None:
            return None
        return option_value(args, "-s", "--session") or None

    def process_cwd(self, proc: ProcessInfo) -> str | None:
        args = _opencode_args(proc)
        words = positionals(args, _VALUE_OPTIONS) if args is not None else []
        project = words[0] if words and words[0] not in _ALL_SUBCOMMANDS else None
        if project is None:
            return proc.cwd
        if proc.cwd is None or os.path.isabs(project):
            return project
        return os.path.normpath(os.path.join(proc.cwd, project))


# -- command lines ---------------------------------------------------------------------------

_CLIENT_SUBCOMMANDS = frozenset({"run", "attach", "pr"})
_OTHER_SUBCOMMANDS = frozenset(
    {
        "completion", "acp", "mcp", "debug", "providers", "auth", "agent", "upgrade",
        "uninstall", "serve", "web", "models", "stats", "export", "import", "github",
        "session", "plugin", "plug", "db", "help",
    }
)  # fmt: skip
_ALL_SUBCOMMANDS = _CLIENT_SUBCOMMANDS | _OTHER_SUBCOMMANDS
_VALUE_OPTIONS = frozenset(
    {
        "--log-level", "--port", "--hostname", "--mdns-domain", "--cors", "-m", "--model",
        "-s", "--session", "--prompt", "--agent", "--replay-limit",
    }
)  # fmt: skip
_HELP_OPTIONS = frozenset({"-h", "--help", "-v", "--version"})
_SCRIPTS = frozenset({"opencode", "opencode.js", "opencode.mjs", "opencode.cjs"})


def _opencode_args(proc: ProcessInfo) -> list[str] | None:
    """The arguments after opencode's program (or its node launcher script); None if the
    process is not opencode. 1.18 installs the native binary as ``bin/opencode.exe`` on every
    platform; 1.1 runs ``node bin/opencode``, which starts the native ``opencode``."""
    argv = list(proc.cmdline)
    if not argv:
        return None
    program = program_name(argv[0])
    if program == "opencode":
        return argv[1:]
    if program in JS_RUNTIMES:
        script = next((i for i, arg in enumerate(argv[1:], 1) if not arg.startswith("-")), None)
        if script is not None and program_name(argv[script]) in _SCRIPTS:
            return argv[script + 1 :]
        return None
    if program_name(proc.name) == "opencode":
        return argv[1:]
    return None
