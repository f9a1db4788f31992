"""Which rows of a table changed since the last save, kept as they are marked (engine thread).

A row's ``unsaved`` flag is an ``UnsavedFlag``: setting it True also files the row in its
table's ``UnsavedRows``, so the save after each batch takes the few rows that changed instead
of scanning every stream and session on disk for them (with 2,000 sessions at rest, that scan
was a third of the engine's idle CPU). The flag stays the truth: a row filed and then saved, or
taken out of its table, is skipped when the set is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

_OWNER = "_unsaved_rows"  # where a row keeps the set of the table it is in
_FLAG = "_unsaved"

Row = TypeVar("Row")


class UnsavedFlag:
    """A row's ``unsaved: bool`` (a dataclass field, True by default) that files the row in its
    table's ``UnsavedRows`` whenever it is set True."""

    def __get__(self, row: object, owner: type | None = None) -> bool:
        if row is None:
            return True  # the dataclass field's default
        flag: bool = row.__dict__[_FLAG]
        return flag

    def __set__(self, row: object, value: bool) -> None:
        row.__dict__[_FLAG] = value
        if value:
            rows: set[Any] | None = row.__dict__.get(_OWNER)
            if rows is not None:
                rows.add(row)


UNSAVED = UnsavedFlag()  # the one flag, shared: it keeps its value in each row's own dict


class UnsavedRows(Generic[Row]):
    """The rows of one table marked unsaved since they were last taken."""

    def __init__(self) -> None:
        self._rows: set[Row] = set()

    def adopt(self, row: Row) -> None:
        """``row`` joined the table: file it now if it is unsaved, and whenever it is marked."""
        row.__dict__[_OWNER] = self._rows
        if row.__dict__[_FLAG]:
            self._rows.add(row)

    def __bool__(self) -> bool:
        return bool(self._rows)

    def take(self, present: Callable[[Row], bool], order: Callable[[Row], Any]) -> list[Row]:
        """The rows filed since the last take that are still unsaved and ``present`` in the
        table, sorted by ``order`` (the table's own order, as a scan of it would give them)."""
        rows = list(self._rows)
        self._rows.clear()  # (cleared in place: each row holds this very set)
        kept = [row for row in rows if row.__dict__[_FLAG] and present(row)]
        kept.sort(key=order)
        return kept

    def put_back(self, rows: Iterable[Row]) -> None:
        """Rows a failed save did not write: taken again next time."""
        self._rows.update(rows)
