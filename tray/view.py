"""What the tray shows, as plain values: the badge, the tooltip and the menu entries (frozen
values; built on the tray's worker thread, shown on the main thread).

Two views compare equal exactly when the tray would look the same, so the icon is redrawn and the
menu rebuilt only when something a person would see changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .actions import Action


class Mark(StrEnum):
    CALM = "calm"  # nothing needs you
    NEEDS = "needs"  # a number: the sessions waiting for you
    FAILED = "failed"  # nothing waits, but a session failed recently


@dataclass(frozen=True, slots=True)
class Badge:
    needs: int = 0  # sessions in input_required
    failed: bool = False  # a session failed recently

    @property
    def mark(self) -> Mark:
        if self.needs > 0:
            return Mark.NEEDS
        return Mark.FAILED if self.failed else Mark.CALM


@dataclass(frozen=True, slots=True)
class Entry:
    """One menu entry. Without an action it is a heading or a note (shown disabled)."""

    label: str
    action: Action | None = None
    checked: bool | None = None  # a check mark (None: no check box at all)
    radio: bool = False
    default: bool = False  # the entry a click on the icon runs, where the platform has one
    submenu: tuple[Entry, ...] = ()
    separator: bool = False

    @property
    def enabled(self) -> bool:
        return self.action is not None or bool(self.submenu)


SEPARATOR = Entry("", separator=True)


@dataclass(frozen=True, slots=True)
class TrayView:
    badge: Badge
    tooltip: str
    menu: tuple[Entry, ...]

    def entries(self) -> list[Entry]:
        """Every entry, submenus flattened in order (for tests and lookups)."""
        found: list[Entry] = []

        def walk(entries: tuple[Entry, ...]) -> None:
            for entry in entries:
                found.append(entry)
                walk(entry.submenu)

        walk(self.menu)
        return found
