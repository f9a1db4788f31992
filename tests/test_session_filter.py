"""SessionFilter and its parsers, and the board's first rows (pure logic)."""

from __future__ import annotations

import datetime as dt

import pytest

from agentbar.core.listing import SessionFilter, first_rows, parse_since, parse_states, select
from agentbar.core.model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
)
from agentbar.core.records import Usage

NOW = 1_800_000_000.0


def snap(
    sid: str,
    *,
    project: str | None = "/home/u/projects/alpha",
    agent: str = "claude",
    state: State = State.RUNNING,
    last: float | None = NOW,
    host: str = "local",
) -> SessionSnapshot:
    return SessionSnapshot(
        key=SessionKey(Agent(agent), sid, host),
        project=project,
        title=None,
        state=SessionState(state=state, source=Source.TRANSCRIPT),
        state_since=NOW,
        started_at=None,
        last_activity=last,
        model=None,
        usage=Usage(),
        transcript=None,
        process=None,
    )


def test_empty_filter_keeps_everything() -> None:
    rows = [snap("a"), snap("b", project=None, last=None)]
    assert SessionFilter().apply(rows) == rows


def test_each_field_must_match() -> None:
    rows = [
        snap("a"),
        snap("b", project="/home/u/projects/beta", agent="codex"),
        snap("c", state=State.INPUT_REQUIRED, last=NOW - 7200),
        snap("d", host="devbox"),
        snap("e", project=None),
    ]
    ids = lambda f: [s.key.session_id for s in f.apply(rows)]  # noqa: E731
    assert ids(SessionFilter(project="alpha")) == ["a", "c", "d"]
    assert ids(SessionFilter(project="projects/beta")) == ["b"]
    assert ids(SessionFilter(project="/home/u/projects/alpha/")) == ["a", "c", "d"]
    assert ids(SessionFilter(agent="codex")) == ["b"]
    assert ids(SessionFilter(states=frozenset({State.INPUT_REQUIRED}))) == ["c"]
    assert ids(SessionFilter(since=NOW - 3600)) == ["a", "b", "d", "e"]
    assert ids(SessionFilter(host="devbox")) == ["d"]
    assert ids(SessionFilter(host="local", agent="claude", since=NOW - 60)) == ["a", "e"]


def test_states_by_name_and_alias() -> None:
    assert parse_states("running, needs-you") == {State.RUNNING, State.INPUT_REQUIRED}
    assert parse_states("input-required,FAILED") == {State.INPUT_REQUIRED, State.FAILED}
    with pytest.raises(ValueError, match="unknown state 'sleeping'"):
        parse_states("running,sleeping")
    with pytest.raises(ValueError, match="no state"):
        parse_states(" , ")


def test_since_spans_days_and_dates() -> None:
    assert parse_since("30m", now=NOW) == NOW - 1800
    assert parse_since("2h", now=NOW) == NOW - 7200
    assert parse_since("3d", now=NOW) == NOW - 3 * 86400
    assert parse_since("1w", now=NOW) == NOW - 7 * 86400
    today = parse_since("today", now=NOW)
    assert dt.datetime.fromtimestamp(today).hour == 0 and NOW - 86400 < today <= NOW
    # A day with a clock change is 23 or 25 h.
    assert abs(parse_since("yesterday", now=NOW) - (today - 86400)) <= 3600
    assert parse_since("2026-11-30T00:00:00+00:00", now=NOW) == 1_795_996_800.0
    with pytest.raises(ValueError, match="cannot read 'soon'"):
        parse_since("soon", now=NOW)


def test_project_written_from_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    rows = [snap("a"), snap("b", project="/home/other/projects/alpha")]
    ids = [s.key.session_id for s in SessionFilter(project="~/projects/alpha").apply(rows)]
    assert ids == ["a"]


def test_first_rows_are_the_live_ones_and_the_newest_others_in_listing_order() -> None:
    rows = select(
        [
            snap("old", state=State.DONE, last=NOW - 9000),
            snap("asks", state=State.INPUT_REQUIRED, last=NOW - 99999),
            snap("new-ended", state=State.ENDED, last=NOW - 10),
            snap("runs", state=State.RUNNING, last=NOW - 50000),
            snap("new-failed", state=State.FAILED, last=NOW - 20),
            snap("never", state=State.ENDED, last=None),
            snap("mid", state=State.DONE, last=NOW - 100),
        ],
        now=NOW,
        show_all=True,
    )
    first, rest = first_rows(rows, 2)
    ids = [s.key.session_id for s in rows]
    assert [s.key.session_id for s in first] == [
        i for i in ids if i in {"asks", "runs", "new-ended", "new-failed"}
    ]
    assert [s.key.session_id for s in rest] == [i for i in ids if i in {"old", "mid", "never"}]
    everything, none = first_rows(rows, 100)
    assert everything == rows and none == []
    live, others = first_rows(rows, 0)
    assert {s.key.session_id for s in live} == {"asks", "runs"} and len(others) == 5
