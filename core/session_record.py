"""The engine's record of one session (everything every signal said about it) and the table of
them, which also remembers what changed since the last publish and save (engine thread only).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .facts import SessionFacts
from .model import Process, SessionKey, SessionState
from .sources.base import RegistryEntry
from .state.hooks import HookState
from .state.turns import TurnState
from .unsaved import UNSAVED, UnsavedFlag, UnsavedRows


@dataclass(eq=False)
class SessionRecord:
    key: SessionKey
    turn: TurnState = field(default_factory=TurnState)
    facts: SessionFacts = field(default_factory=SessionFacts)
    hooks: HookState = field(default_factory=HookState)
    transcript: str | None = None
    streams: set[str] = field(default_factory=set)
    registry: RegistryEntry | None = None
    # When the registry last said the agent was busy, by the agent's clock.
    registry_active_at: float | None = None
    process: Process | None = None
    alive: bool | None = None
    # Once a session has had a process, losing it ends the session at once; only a session
    # never seen with one gets the grace period (its process may not be in the table yet).
    had_process: bool = False
    state: SessionState | None = None
    state_since: float | None = None
    reported: SessionState | None = None  # the last state subscribers were told about
    hold_until: float | None = None  # a provisional state waits for its detail until then
    undecided: bool = True  # changed since its state was last decided
    unsaved: UnsavedFlag = UNSAVED  # its row differs from the index

    def mark(self) -> None:
        self.undecided = True
        self.unsaved = True

    @property
    def visible(self) -> bool:
        """Listed to users: it has its own transcript, a live registry entry, or hook events
        that say where it runs (a session can announce itself before its first line)."""
        return (
            self.transcript is not None or self.registry is not None or self.hooks.cwd is not None
        )

    @property
    def project(self) -> str | None:
        registry = self.registry
        return self.facts.project or (registry.cwd if registry else None) or self.hooks.cwd


class SessionTable:
    """Every session the engine knows, by key; ``unpublished`` and ``deleted`` say what the
    next publish and the next save must carry, ``touched`` which sessions were added or
    changed since its reader last emptied it (the engine's ticks look at those and the live
    ones, not at all of them)."""

    def __init__(self) -> None:
        self._by_key: dict[SessionKey, SessionRecord] = {}
        self.unpublished: set[SessionKey] = set()
        self.deleted: set[SessionKey] = set()
        self.touched: set[SessionKey] = set()
        self._order: dict[SessionKey, int] = {}  # when each was added: the table's order
        self._added = 0
        self.unsaved = UnsavedRows[SessionRecord]()  # the sessions to save (``take_unsaved``)

    def __iter__(self) -> Iterator[SessionRecord]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def keys(self) -> set[SessionKey]:
        return set(self._by_key)

    def get(self, key: SessionKey | None) -> SessionRecord | None:
        return None if key is None else self._by_key.get(key)

    def __getitem__(self, key: SessionKey) -> SessionRecord:
        return self._by_key[key]

    @property
    def added(self) -> int:
        """How many keys were ever added: a session added later has a greater ``order``."""
        return self._added

    def order(self, key: SessionKey) -> int:
        """When ``key`` was first added (1 for the first): the table's order."""
        return self._order[key]

    def in_order(self, keys: Iterable[SessionKey]) -> list[SessionRecord]:
        """The sessions of ``keys`` still here, in the order iterating the table gives."""
        found = [r for r in map(self._by_key.get, keys) if r is not None]
        found.sort(key=lambda r: self._order[r.key])
        return found

    def add(self, record: SessionRecord) -> None:
        self._by_key[record.key] = record
        if record.key not in self._order:  # (a key replaced keeps its place, as in a dict)
            self._added += 1
            self._order[record.key] = self._added
        self.deleted.discard(record.key)
        self.touched.add(record.key)
        self.unsaved.adopt(record)

    def take_unsaved(self) -> list[SessionRecord]:
        """The sessions marked unsaved since the last take, in the table's order: those a
        scan of every session for ``unsaved`` would find, without the scan."""
        return self.unsaved.take(
            lambda r: self._by_key.get(r.key) is r, lambda r: self._order[r.key]
        )

    def changed(self, record: SessionRecord) -> None:
        """``record`` changed: decide, save and publish it again."""
        record.mark()
        self.unpublished.add(record.key)
        self.touched.add(record.key)

    def remove(self, key: SessionKey) -> None:
        del self._by_key[key]
        del self._order[key]
        self.deleted.add(key)
