"""The StatusNotifier tray's pure parts: the menu's dbusmenu items (ids that stay with their
entry, properties, layout with depth and filter, what a change tells clients, revisions), the
badge as ARGB32 pixmaps, and where the session bus is."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from PIL import Image

from agentbar.tray import actions, badge
from agentbar.tray.actions import Action
from agentbar.tray.sni import bus, menu, pixmaps
from agentbar.tray.sni.menu import Menu
from agentbar.tray.view import SEPARATOR, Badge, Entry

OPEN_A = Action(actions.OPEN, "/session/claude/a")
OPEN_B = Action(actions.OPEN, "/session/claude/b")


def entries(
    a_label: str = "Claude Code · api — approve Bash: ls", login: bool = False
) -> tuple[Entry, ...]:
    return (
        Entry("Needs you (1)"),
        Entry(a_label, OPEN_A),
        SEPARATOR,
        Entry("Open window", actions.BOARD, default=True),
        Entry(
            "Pause notifications",
            submenu=(
                Entry("For 1 hour", Action(actions.PAUSE, "hour")),
                Entry("Off", Action(actions.PAUSE, "off"), checked=False, radio=True),
            ),
        ),
        Entry(
            "Start at login",
            Action(actions.AUTOSTART, "disable" if login else "enable"),
            checked=login,
        ),
        SEPARATOR,
        Entry("Quit my_app", Action(actions.QUIT)),
    )


def test_items_carry_the_dbusmenu_properties_with_defaults_left_out() -> None:
    tree = Menu(entries()).tree
    root = tree[menu.ROOT]
    assert root.props == {"children-display": "submenu"}
    props = [tree[i].props for i in root.children]
    assert props == [
        {"label": "Needs you (1)", "enabled": False},
        {"label": "Claude Code · api — approve Bash: ls"},
        {"type": "separator"},
        {"label": "Open window"},
        {"label": "Pause notifications", "children-display": "submenu"},
        {"label": "Start at login", "toggle-type": "checkmark", "toggle-state": 0},
        {"type": "separator"},
        {"label": "Quit my__app"},  # "_" alone would mark a mnemonic
    ]
    pause = tree[root.children[4]]
    assert [tree[i].props for i in pause.children] == [
        {"label": "For 1 hour"},
        {"label": "Off", "toggle-type": "radio", "toggle-state": 0},
    ]
    assert [tree[i].action for i in pause.children] == [
        Action(actions.PAUSE, "hour"), Action(actions.PAUSE, "off")
    ]  # fmt: skip


def test_a_new_label_is_a_property_update_a_new_entry_a_new_layout() -> None:
    m = Menu(entries())
    a_id = m.tree[menu.ROOT].children[1]
    assert m.replace(entries()) is None and m.revision == 1
    change = m.replace(entries("Claude Code · api — approve Bash: rm", login=True))
    login_id = m.tree[menu.ROOT].children[5]
    assert change == menu.Change(
        revision=2,
        layout=False,
        updated=(
            (a_id, {"label": "Claude Code · api — approve Bash: rm"}),
            (login_id, {"toggle-state": 1}),
        ),
    )
    assert m.tree[menu.ROOT].children[1] == a_id  # the same session keeps its id
    assert m.action_of(login_id) == Action(actions.AUTOSTART, "disable")  # the check box too
    more = (*entries()[:2], Entry("Claude Code · web — done", OPEN_B), *entries()[2:])
    change = m.replace(more)
    assert change == menu.Change(revision=3, layout=True)
    assert m.tree[menu.ROOT].children[1] == a_id
    assert m.action_of(m.tree[menu.ROOT].children[2]) == OPEN_B
    gone = m.tree[menu.ROOT].children[2]
    m.replace(entries())
    assert m.revision == 4 and m.action_of(gone) is None  # its id is never reused


def test_a_property_left_out_now_is_reported_removed() -> None:
    m = Menu((Entry("Heading"),))
    change = m.replace((Entry("Heading", submenu=(Entry("x", actions.BOARD),)),))
    assert change is not None and change.layout  # it has children now
    # An item that keeps its id but leaves a property out now (diff over two trees).
    before = menu.Tree({
        menu.ROOT: menu.Item(menu.ROOT, {"children-display": "submenu"}, (1,)),
        1: menu.Item(1, {"label": "Off", "toggle-type": "radio", "toggle-state": 1}),
    })  # fmt: skip
    after = menu.Tree({menu.ROOT: before[menu.ROOT], 1: menu.Item(1, {"label": "Off"})})
    assert menu.diff(before, after, 7) == menu.Change(
        7, False, (), ((1, ("toggle-state", "toggle-type")),)
    )
    assert menu.diff(before, before, 7) is None


def test_layout_follows_depth_and_the_property_filter() -> None:
    tree = Menu(entries()).tree
    full = menu.layout(tree, menu.ROOT, -1)
    pause = full[2][4]
    assert pause[1]["label"] == "Pause notifications" and len(pause[2]) == 2
    shallow = menu.layout(tree, menu.ROOT, 1, ["label"])
    assert all(child[2] == [] for child in shallow[2])
    assert shallow[2][2] == (tree[menu.ROOT].children[2], {}, [])  # a separator has no label
    assert menu.layout(tree, menu.ROOT, 0) == (0, {"children-display": "submenu"}, [])
    assert menu.layout(tree, pause[0], -1, ["toggle-state"])[2][1][1] == {"toggle-state": 0}
    with pytest.raises(KeyError):
        menu.layout(tree, 999, -1)


def test_group_properties_and_one_property() -> None:
    tree = Menu(entries()).tree
    open_id = tree[menu.ROOT].children[3]
    assert menu.group_properties(tree, [open_id, 999], ["label"]) == [
        (open_id, {"label": "Open window"})
    ]
    assert len(menu.group_properties(tree, [], [])) == len(tree.items)
    assert menu.property_of(tree, open_id, "label") == "Open window"
    assert menu.property_of(tree, open_id, "enabled") is True
    assert menu.property_of(tree, open_id, "toggle-state") == -1
    with pytest.raises(KeyError):
        menu.property_of(tree, open_id, "no-such-property")


def test_pixmaps_are_argb32_in_network_byte_order() -> None:
    image = Image.new("RGBA", (2, 1), (10, 20, 30, 40))
    image.putpixel((1, 0), (1, 2, 3, 255))
    assert pixmaps.argb32(image) == bytes([40, 10, 20, 30, 255, 1, 2, 3])
    shown = pixmaps.pixmaps(Badge(needs=2))
    assert [(p.width, p.height) for p in shown] == [(s, s) for s in pixmaps.SIZES]
    for p in shown:
        drawn = badge.render(Badge(needs=2), p.width)
        assert p.argb == pixmaps.argb32(drawn)
        assert p.as_dbus() == [p.width, p.height, p.argb]
    assert pixmaps.pixmaps(Badge(needs=2)) is shown  # cached: a redraw costs nothing


def test_the_session_bus_address(tmp_path: Path) -> None:
    assert bus.session_address({"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}) == "unix:path=/x"
    with pytest.raises(bus.NoBus, match="no session D-Bus"):
        bus.session_address({"XDG_RUNTIME_DIR": str(tmp_path)})
    (tmp_path / "bus").write_text("not a socket")
    with pytest.raises(bus.NoBus):
        bus.session_address({"XDG_RUNTIME_DIR": str(tmp_path)})
    (tmp_path / "bus").unlink()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "bus"))
    try:
        assert bus.session_address({"XDG_RUNTIME_DIR": str(tmp_path)}) == (
            f"unix:path={tmp_path / 'bus'}"
        )
    finally:
        listener.close()
