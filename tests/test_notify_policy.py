"""The notification policy with a fake clock: one notice per transition (never per poll, never
again after a restart), the first told at once and the ones that follow it coalesced into one
summary, mute, pause, the window in front, and what the notices say and do."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from tray_values import NAMES, T0, approval, change, question, snap

from agentbar.core.clock import FakeClock
from agentbar.core.model import Agent, SessionKey, State
from agentbar.tray import actions, pause
from agentbar.tray.actions import Action
from agentbar.tray.notices import Button, Transition
from agentbar.tray.pause import Pause, PauseStore
from agentbar.tray.policy import Policy
from agentbar.tray.preferences import Preferences


def t(s) -> Transition:
    return Transition.of(change(s), NAMES)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


def test_a_lone_transition_is_told_at_once(clock: FakeClock) -> None:
    policy = Policy(clock)
    policy.offer(t(approval("a")))
    assert policy.deadline() == clock.monotonic()  # no waiting for a burst that may not come
    (notice,) = policy.due()
    assert notice.title == "Claude Code in api needs your approval"
    assert notice.body == "Bash: rm -rf build"
    assert notice.click == Action(actions.OPEN, "/session/claude/a")
    assert notice.buttons == (Button("Open", notice.click),)
    assert notice.urgent and notice.sessions == (SessionKey(Agent("claude"), "a"),)
    assert policy.due() == [] and policy.deadline() is None


def test_the_same_state_again_is_not_news(clock: FakeClock) -> None:
    policy = Policy(clock, Preferences(coalesce_seconds=0))
    s = approval("a")
    policy.offer(t(s))
    assert len(policy.due()) == 1
    for _ in range(5):  # re-published, polled, detail refined: same state, same since
        policy.offer(t(dataclasses.replace(s, title="renamed")))
        clock.advance(5)
        assert policy.due() == []
    policy.offer(t(snap("a", State.RUNNING, since=T0 + 30)))
    policy.offer(t(approval("a", since=T0 + 60)))  # a new wait: told again
    assert [n.title for n in policy.due()] == ["Claude Code in api needs your approval"]


def test_the_first_of_a_burst_at_once_the_rest_as_one_summary(clock: FakeClock) -> None:
    policy = Policy(clock)
    policy.offer(t(snap("a", State.DONE, project="/w/one", detail="Done.")))
    assert [n.title for n in policy.due()] == ["Claude Code in one finished"]
    clock.advance(0.3)
    policy.offer(t(snap("b", State.DONE, project="/w/two", agent=Agent("codex"))))
    assert policy.due() == [] and policy.deadline() == clock.monotonic() + 0.7
    clock.advance(0.3)
    policy.offer(t(question("c", project="/w/three")))
    policy.offer(t(snap("d", State.FAILED, project="/w/four")))
    clock.advance(0.39)
    assert policy.due() == []  # the window is still open
    clock.advance(0.01)
    (summary,) = policy.due()
    assert summary.title == "3 agent sessions: 1 needs you, 1 finished, 1 failed"
    assert summary.body.splitlines() == [
        "Codex · two: finished",
        "Claude Code · three: has a question",
        "Claude Code · four: failed",
    ]
    assert summary.click == actions.BOARD and summary.urgent
    assert len(summary.sessions) == 3


def test_notices_come_at_most_one_per_window_after_the_first(clock: FakeClock) -> None:
    policy = Policy(clock)
    policy.offer(t(approval("a")))
    assert len(policy.due()) == 1
    clock.advance(0.5)
    policy.offer(t(approval("b")))
    clock.advance(0.5)
    assert [n.title for n in policy.due()] == ["Claude Code in api needs your approval"]
    # That notice opened the next window: a change right after it waits for the window.
    clock.advance(0.2)
    policy.offer(t(approval("c")))
    assert policy.due() == [] and policy.deadline() == clock.monotonic() + 0.8
    clock.advance(0.8)
    assert len(policy.due()) == 1
    # A window that closes with nothing held opens no other: after a quiet spell, at once.
    clock.advance(1.0)
    assert policy.due() == [] and policy.deadline() is None
    clock.advance(0.1)
    policy.offer(t(approval("d")))
    assert len(policy.due()) == 1
    clock.advance(1.0)
    assert policy.due() == []
    policy.offer(t(approval("e")))
    assert len(policy.due()) == 1


def test_a_long_burst_names_the_first_five(clock: FakeClock) -> None:
    policy = Policy(clock)
    policy.offer(t(approval("first")))
    assert len(policy.due()) == 1
    for n in range(8):
        policy.offer(t(snap(f"s{n}", State.DONE, project=f"/w/p{n}")))
    clock.advance(1.0)
    (summary,) = policy.due()
    assert summary.title == "8 agent sessions: 8 finished"
    assert summary.body.splitlines()[-1] == "and 3 more"


def test_a_session_that_moves_on_before_it_is_told_is_not_told(clock: FakeClock) -> None:
    policy = Policy(clock)
    policy.offer(t(question("first")))
    assert len(policy.due()) == 1
    policy.offer(t(approval("a")))
    clock.advance(0.2)
    policy.offer(t(snap("a", State.RUNNING, since=T0 + 0.2)))  # approved in its terminal
    assert policy.deadline() is None
    clock.advance(2)
    assert policy.due() == []
    # Twice before it is told (in one batch, or inside one window): once, in its latest state.
    policy.offer(t(approval("b")))
    policy.offer(t(snap("b", State.DONE, detail="Merged.", since=T0 + 3)))
    assert [(n.title, n.body) for n in policy.due()] == [("Claude Code in api finished", "Merged.")]
    policy.offer(t(approval("c")))
    policy.offer(t(snap("c", State.DONE, detail="Shipped.", since=T0 + 4)))
    clock.advance(1)
    assert [(n.title, n.body) for n in policy.due()] == [
        ("Claude Code in api finished", "Shipped.")
    ]
    # The first of a quiet spell answered before the worker told it: nothing.
    clock.advance(5)
    policy.offer(t(approval("d", since=T0 + 10)))
    policy.offer(t(snap("d", State.RUNNING, since=T0 + 10.1)))
    assert policy.due() == [] and policy.deadline() is None


def test_a_silenced_change_holds_nothing_back(clock: FakeClock) -> None:
    policy = Policy(clock, Preferences(muted_projects=("/work/noisy",)))
    policy.offer(t(approval("a", project="/work/noisy")))
    assert policy.due() == [] and policy.deadline() is None
    clock.advance(0.2)
    policy.offer(t(approval("b")))
    assert len(policy.due(in_front=lambda key: key.session_id == "b")) == 0
    clock.advance(0.2)
    policy.offer(t(approval("c")))
    assert [n.sessions for n in policy.due()] == [(SessionKey(Agent("claude"), "c"),)]


def test_preferences_mute_and_the_window_in_front(clock: FakeClock) -> None:
    policy = Policy(clock, Preferences(coalesce_seconds=0, muted_projects=("/work/noisy",)))
    policy.offer(t(approval("a", project="/work/noisy/sub")))
    assert policy.due() == []
    policy.offer(t(approval("b")))
    assert policy.due(in_front=lambda key: key.session_id == "b") == []
    policy.offer(t(approval("c")))
    assert len(policy.due(in_front=lambda key: key.session_id == "b")) == 1
    policy.prefs = Preferences(coalesce_seconds=0, notify_on=frozenset({State.INPUT_REQUIRED}))
    policy.offer(t(snap("d", State.DONE)))
    policy.offer(t(snap("e", State.FAILED)))
    assert policy.due() == []
    policy.prefs = Preferences(coalesce_seconds=0, enabled=False)
    policy.offer(t(question("f")))
    assert policy.due() == []
    policy.prefs = Preferences(coalesce_seconds=0, sound=True)
    policy.offer(t(question("g")))
    assert [n.sound for n in policy.due()] == [True]


def test_the_rules_apply_when_a_held_transition_is_told(clock: FakeClock) -> None:
    policy = Policy(clock)
    policy.offer(t(approval("a")))
    assert len(policy.due()) == 1
    policy.offer(t(approval("b", project="/work/noisy")))
    policy.offer(t(approval("c")))
    policy.prefs = Preferences(muted_projects=("/work/noisy",))  # muted while b was held
    clock.advance(1.0)
    assert [n.sessions for n in policy.due()] == [(SessionKey(Agent("claude"), "c"),)]
    clock.advance(0.5)
    policy.offer(t(approval("d")))
    policy.pause = pause.choose(pause.HOUR, clock.time())  # paused while d was held
    clock.advance(0.5)
    assert policy.due() == []
    assert policy.deadline() is None  # nothing was told: the next window waits for a change


def test_the_pause_silences_until_it_ends(clock: FakeClock) -> None:
    policy = Policy(clock, Preferences(coalesce_seconds=0))
    policy.pause = pause.choose(pause.HOUR, clock.time())
    policy.offer(t(approval("a")))
    assert policy.due() == []
    clock.advance(3601)
    policy.offer(t(approval("b", since=T0 + 3601)))
    assert len(policy.due()) == 1  # what came during the pause is not told later
    policy.pause = pause.choose(pause.OFF, clock.time())
    clock.advance(10 * 24 * 3600)
    policy.offer(t(approval("c", since=clock.time())))
    assert policy.due() == []
    policy.pause = pause.choose(pause.RESUME, clock.time())
    policy.offer(t(approval("d", since=clock.time())))
    assert len(policy.due()) == 1


def test_other_features_add_buttons(clock: FakeClock) -> None:
    def approve_deny(tr: Transition) -> tuple[Button, ...]:
        if tr.state is not State.INPUT_REQUIRED:
            return ()
        return (
            Button("Approve", Action("task", f"approve:{tr.key.session_id}")),
            Button("Deny", Action("task", f"deny:{tr.key.session_id}")),
        )

    policy = Policy(clock, Preferences(coalesce_seconds=0), buttons=approve_deny)
    policy.offer(t(approval("a")))
    (notice,) = policy.due()
    assert [b.label for b in notice.buttons] == ["Open", "Approve", "Deny"]


def test_what_the_body_says(clock: FakeClock) -> None:
    policy = Policy(clock, Preferences(coalesce_seconds=0))
    answer = "I looked at it.\n\nThe fix is in `parse.py`.\nAll 212 tests pass."
    policy.offer(t(snap("a", State.DONE, detail=answer, agent=Agent("codex"), project=None)))
    (notice,) = policy.due()
    assert (notice.title, notice.body) == (
        "Codex in unknown folder finished",
        "All 212 tests pass.",
    )
    assert not notice.urgent
    policy.offer(t(question("q", detail="Which one?\n1. Postgres\n2. SQLite")))
    (notice,) = policy.due()
    assert notice.title == "Claude Code in api has a question"
    assert notice.body == "Which one? 1. Postgres 2. SQLite"
    policy.offer(t(snap("e", State.DONE, detail="", title="Tidy the README")))
    assert policy.due()[0].body == "Tidy the README"


# -- the pause itself ------------------------------------------------------------------------


def local(y: int, mo: int, d: int, h: int, mi: int = 0) -> float:
    return dt.datetime(y, mo, d, h, mi).astimezone().timestamp()


def test_until_tomorrow_means_the_next_morning() -> None:
    evening = local(2026, 3, 10, 18, 30)
    assert pause.next_morning(evening, (8, 0)) == local(2026, 3, 11, 8, 0)
    before_dawn = local(2026, 3, 11, 1, 15)  # still "tonight": this morning
    assert pause.next_morning(before_dawn, (8, 0)) == local(2026, 3, 11, 8, 0)
    morning = local(2026, 3, 11, 9, 0)
    assert pause.next_morning(morning, (7, 30)) == local(2026, 3, 12, 7, 30)
    p = pause.choose(pause.TOMORROW, evening)
    assert p.active(evening) and not p.active(local(2026, 3, 11, 8, 0))
    assert p.describe(evening) == "Notifications paused until tomorrow 08:00"
    assert pause.choose(pause.HOUR, evening).describe(evening) == (
        "Notifications paused until 19:30"
    )
    with pytest.raises(ValueError, match="unknown pause"):
        pause.choose("forever", evening)


def test_the_pause_survives_a_restart_and_a_broken_file(tmp_path) -> None:
    store = PauseStore(tmp_path / "notifications-paused.json")
    assert store.load() == pause.NO_PAUSE
    store.save(Pause(until=T0 + 60))
    assert PauseStore(store.path).load() == Pause(until=T0 + 60)
    store.save(Pause(off=True))
    assert store.load() == Pause(off=True)
    store.save(pause.NO_PAUSE)
    assert not store.path.exists()
    store.path.write_text("{not json")
    assert store.load() == pause.NO_PAUSE
