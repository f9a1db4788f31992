"""The tray's menu as com.canonical.dbusmenu items (pure; the tray's D-Bus thread): ids that stay
with their entry across rebuilds, the layout a client asks for (a depth and a property filter),
and what a new menu changed (a new revision with ``LayoutUpdated``, or only
``ItemsPropertiesUpdated``).

An entry keeps its id while it keeps its place and its identity: its action when it has one (a
session's entry keeps its id while its label says what the session does now), a check box's
label (its action flips as it is checked), else its label.
So a label that changes is a property update, which a host applies without rebuilding the open
menu; a structure that changes is a new layout revision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..actions import Action
from ..view import Entry

ROOT = 0
PropValue = str | bool | int
Props = dict[str, PropValue]
# What a property is when an item leaves it out (the specification's defaults).
DEFAULTS: dict[str, PropValue] = {
    "type": "standard",
    "label": "",
    "enabled": True,
    "visible": True,
    "toggle-type": "",
    "toggle-state": -1,
    "children-display": "",
}


@dataclass(frozen=True, slots=True)
class Item:
    id: int
    props: Props
    children: tuple[int, ...] = ()
    action: Action | None = None


@dataclass(frozen=True, slots=True)
class Tree:
    items: dict[int, Item]

    def __getitem__(self, item_id: int) -> Item:
        return self.items[item_id]


Layout = tuple[int, Props, list["Layout"]]


@dataclass(frozen=True, slots=True)
class Change:
    """What a client must be told after the menu changed."""

    revision: int
    layout: bool  # the structure changed: LayoutUpdated(revision, ROOT)
    updated: tuple[tuple[int, Props], ...] = ()  # ItemsPropertiesUpdated: new values
    removed: tuple[tuple[int, tuple[str, ...]], ...] = ()  # ...and properties left out now


def props_of(entry: Entry) -> Props:
    """``entry``'s dbusmenu properties, defaults left out."""
    if entry.separator:
        return {"type": "separator"}
    props: Props = {"label": entry.label.replace("_", "__")}  # a lone "_" marks a mnemonic
    if not entry.enabled:
        props["enabled"] = False
    if entry.submenu:
        props["children-display"] = "submenu"
    if entry.checked is not None:
        props["toggle-type"] = "radio" if entry.radio else "checkmark"
        props["toggle-state"] = 1 if entry.checked else 0
    return props


@dataclass
class Ids:
    """Ids handed out by identity, kept for as long as this menu lives."""

    known: dict[tuple[object, ...], int] = field(default_factory=dict)

    def id_for(self, key: tuple[object, ...]) -> int:
        if key not in self.known:
            self.known[key] = len(self.known) + 1  # ROOT is 0
        return self.known[key]


def build(entries: Sequence[Entry], ids: Ids) -> Tree:
    items: dict[int, Item] = {}

    def add(level: Sequence[Entry], parent: tuple[object, ...]) -> tuple[int, ...]:
        children: list[int] = []
        seen: dict[tuple[object, ...], int] = {}
        for entry in level:
            if entry.separator:
                what: tuple[object, ...] = ("separator",)
            elif entry.action is not None and entry.checked is not None:
                # A check box's action flips with it ("enable" / "disable"): its label stays.
                what = ("toggle", entry.action.kind, entry.label)
            elif entry.action is not None:
                what = ("action", entry.action.kind, entry.action.arg)
            else:
                what = ("label", entry.label)
            seen[what] = seen.get(what, -1) + 1
            key = (*parent, what, seen[what])
            item_id = ids.id_for(key)
            inner = add(entry.submenu, key) if entry.submenu else ()
            items[item_id] = Item(item_id, props_of(entry), inner, entry.action)
            children.append(item_id)
        return tuple(children)

    top = add(entries, ())
    items[ROOT] = Item(ROOT, {"children-display": "submenu"}, top)
    return Tree(items)


def layout(tree: Tree, parent: int, depth: int, names: Iterable[str] = ()) -> Layout:
    """``GetLayout``: ``parent`` and its children down ``depth`` levels (-1: all), each with
    the properties in ``names`` (empty: all). KeyError for an unknown ``parent``."""
    item = tree[parent]
    wanted = tuple(names)
    children = (
        [layout(tree, child, depth - 1, wanted) for child in item.children] if depth != 0 else []
    )
    return (item.id, select(item.props, wanted), children)


def select(props: Props, names: Sequence[str]) -> Props:
    return dict(props) if not names else {k: v for k, v in props.items() if k in names}


def group_properties(
    tree: Tree, ids: Sequence[int], names: Sequence[str]
) -> list[tuple[int, Props]]:
    """``GetGroupProperties``: the items in ``ids`` that exist (all of them for no ids)."""
    chosen = ids or sorted(tree.items)
    return [(i, select(tree[i].props, names)) for i in chosen if i in tree.items]


def property_of(tree: Tree, item_id: int, name: str) -> PropValue:
    """``GetProperty``: the value, or its default. KeyError for an unknown item or name."""
    props = tree[item_id].props
    return props[name] if name in props else DEFAULTS[name]


def diff(old: Tree, new: Tree, revision: int) -> Change | None:
    """What changed from ``old`` to ``new`` (None: nothing)."""
    structure = {i: item.children for i, item in old.items.items()} != {
        i: item.children for i, item in new.items.items()
    }
    if structure:
        return Change(revision, layout=True)
    updated: list[tuple[int, Props]] = []
    removed: list[tuple[int, tuple[str, ...]]] = []
    actions_changed = False
    for item_id, item in sorted(new.items.items()):
        before = old[item_id]
        actions_changed |= before.action != item.action
        if before.props == item.props:
            continue
        changed = {k: v for k, v in item.props.items() if before.props.get(k) != v}
        gone = tuple(sorted(set(before.props) - set(item.props)))
        if changed:
            updated.append((item_id, changed))
        if gone:
            removed.append((item_id, gone))
    if not (updated or removed or actions_changed):
        return None
    return Change(revision, layout=False, updated=tuple(updated), removed=tuple(removed))


class Menu:
    """The menu a client sees: its tree and revision, replaced as the tray's view changes."""

    def __init__(self, entries: Sequence[Entry] = ()) -> None:
        self.ids = Ids()
        self.tree = build(entries, self.ids)
        self.revision = 1

    def replace(self, entries: Sequence[Entry]) -> Change | None:
        """Show ``entries``; what to tell clients, or None when nothing they see changed."""
        new = build(entries, self.ids)
        change = diff(self.tree, new, self.revision + 1)
        self.tree = new
        if change is not None:
            self.revision = change.revision
        return change

    def action_of(self, item_id: int) -> Action | None:
        """What choosing ``item_id`` does (None: nothing, or it is gone)."""
        item = self.tree.items.get(item_id)
        return item.action if item is not None else None
