"""The engine's session table: which sessions were touched since the engine last looked, and
those sessions handed back in the table's own order (the order the engine decides and reports
them in, as when it walked every session)."""

from __future__ import annotations

from agentbar.core.model import Agent, SessionKey
from agentbar.core.session_record import SessionRecord, SessionTable


def key(n: int) -> SessionKey:
    return SessionKey(Agent("claude"), f"s{n}")


def test_touched_holds_what_was_added_or_changed_until_emptied() -> None:
    table = SessionTable()
    for n in range(3):
        table.add(SessionRecord(key(n)))
    assert table.touched == {key(0), key(1), key(2)}
    table.touched.clear()
    record = table[key(1)]
    record.undecided = record.unsaved = False
    table.changed(record)
    assert table.touched == {key(1)}
    assert record.undecided and record.unsaved


def test_in_order_follows_the_table_not_the_keys() -> None:
    table = SessionTable()
    for n in (5, 1, 3, 0):
        table.add(SessionRecord(key(n)))
    table.add(SessionRecord(key(1)))  # replaced: keeps its place, as iterating the table does
    table.remove(key(3))
    wanted = {key(0), key(1), key(3), key(5), key(9)}  # 3 removed, 9 never there
    assert [r.key for r in table.in_order(wanted)] == [key(5), key(1), key(0)]
    assert [r.key for r in table.in_order(wanted)] == [r.key for r in table if r.key in wanted]
    table.add(SessionRecord(key(3)))  # back after removal: last
    assert [r.key for r in table.in_order({key(3), key(5)})] == [key(5), key(3)]
