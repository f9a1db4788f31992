"""Sources whose sessions are not line-tailed files: one database (or folder of documents) that
holds many sessions and changes in place (engine thread).

The engine tails files line by line, one owner per file. An agent that keeps its sessions in
a database (opencode) instead gives its source a ``snapshot()`` reader: told which of its paths
changed (the database, its ``-wal``; a document), or asked for whatever changed since the last
read (a tick, a rescan), it answers with new records per session, having kept its own cursor.
``SnapshotFeed`` holds those readers for the engine and gives each session one stand-in
``Stream`` (never in the stream table, never stat-ed or re-read by line) so that the engine
folds the records exactly as it folds a transcript's.

A reader may keep its cursor across starts (``ResumableReader``): the engine's index saves
each store's cursor as a stream row of the store's path (with the sessions it covers, in one
transaction) and gives it back at the next start, so a session unchanged since is not read
again. A reader without one starts from the beginning on every start of agentbar. Either way,
the first batch of each session in a run is all of that session (a resumed reader reads a
session whole the first time it changes in a run), marked ``fresh`` so the engine folds the
session again from nothing instead of on top of what it restored.
The stand-in streams' search rows are saved in the index under their locators (never as
stream rows, which no source would claim back at the next start): a stand-in's first rows in
a run replace the ones saved before (``search_reset``), as they were read from nothing too.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..model import Agent
from ..records import Record
from ..streams import Stream
from .base import AgentSource, Owner, StreamKind, StreamSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SnapshotBatch:
    """New records of one session (``owner.agent_id``: of one sub-agent of it). ``locator``
    names where they are kept (``<database>#<session id>``): the session's transcript."""

    owner: Owner
    records: list[Record]
    locator: str


@runtime_checkable
class SnapshotReader(Protocol):
    def claims(self, path: Path) -> bool:
        """True for a path whose change this reader must be told of."""
        ...

    def read(self, paths: Sequence[Path] | None) -> list[SnapshotBatch]:
        """New records since the last read: ``paths`` just changed; None: look at everything
        (a tick or a rescan). Never raises for a busy or unreadable store (it logs, says
        nothing and tries again next time)."""
        ...


@runtime_checkable
class ResumableReader(Protocol):
    """A snapshot reader that can resume where the last run stopped."""

    def cursors(self) -> dict[str, dict[str, Any]]:
        """Each store's cursor (by the store's path): where the next run may resume."""
        ...

    def resume(self, store: str, cursor: dict[str, Any]) -> bool:
        """Resume ``store`` from the last run's cursor, before the first read; False when the
        store is not this reader's or the cursor no longer fits it (then it reads it all)."""
        ...


@runtime_checkable
class SnapshotSource(Protocol):
    def snapshot(self) -> SnapshotReader: ...


@dataclass(frozen=True, slots=True)
class Applied:
    stream: Stream  # the session's stand-in stream
    owner: Owner
    records: list[Record]
    fresh: bool  # the session's first records in this run: fold it again from nothing


class _NoLines:
    """The parser of a stand-in stream: it is never given a line."""

    owner = None

    def parse(self, line: bytes) -> list[Record]:
        return []

    def parse_oversized(self, prefix: bytes, length: int) -> list[Record]:
        return []

    def checkpoint(self) -> dict[str, Any]:
        return {}


class SnapshotFeed:
    """The snapshot readers of the engine's sources and their sessions' stand-in streams."""

    def __init__(self, sources: Sequence[AgentSource]) -> None:
        self._readers = [
            (source, source.snapshot()) for source in sources if isinstance(source, SnapshotSource)
        ]
        self._streams: dict[str, Stream] = {}
        self._roots: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self._readers)

    def streams(self) -> list[Stream]:
        """The stand-in streams made so far in this run."""
        return list(self._streams.values())

    def cursors(self) -> list[tuple[Agent, str, dict[str, Any]]]:
        """(agent, store, cursor) of every store whose reader keeps one."""
        return [
            (source.agent, store, cursor)
            for source, reader in self._readers
            if isinstance(reader, ResumableReader)
            for store, cursor in reader.cursors().items()
        ]

    def resume(self, store: str, cursor: dict[str, Any]) -> bool:
        """Give a store's saved cursor to its reader; False when no reader takes it."""
        return any(
            reader.resume(store, cursor)
            for _, reader in self._readers
            if isinstance(reader, ResumableReader)
        )

    def claims(self, path: Path) -> bool:
        return any(reader.claims(path) for _, reader in self._readers)

    def read(self, paths: Sequence[Path] | None = None) -> list[Applied]:
        """What the readers have new: for ``paths`` (those they claim), or everything."""
        applied: list[Applied] = []
        for source, reader in self._readers:
            mine = None if paths is None else [p for p in paths if reader.claims(p)]
            if mine is not None and not mine:
                continue
            try:
                batches = reader.read(mine)
            except Exception:
                log.exception("reading %s's sessions failed", source.agent)
                continue
            applied.extend(self._applied(source, batch) for batch in batches)
        return applied

    def _applied(self, source: AgentSource, batch: SnapshotBatch) -> Applied:
        stream = self._streams.get(batch.locator)
        if stream is None:
            spec = StreamSpec(
                agent=source.agent,
                kind=StreamKind.TRANSCRIPT,
                path=Path(batch.locator),
                session_hint=batch.owner.session_id,
                agent_id_hint=batch.owner.agent_id,
            )
            stream = Stream(spec=spec, source=source, parser=_NoLines(), unsaved=False)
            stream.search_reset = True  # its rows from an earlier run go: these are all of them
            self._streams[batch.locator] = stream
        root = f"{source.agent}:{batch.owner.session_id}"
        fresh = root not in self._roots
        self._roots.add(root)
        return Applied(stream, batch.owner, batch.records, fresh)
