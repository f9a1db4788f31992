"""The tray's view from engine snapshots: badge, tooltip and menu (pure), the actions behind its
entries, and the rule that an unchanged view is equal (so nothing is redrawn or rebuilt)."""

from __future__ import annotations

import dataclasses

from tray_values import NAMES, T0, approval, question, snap

from agentbar.core.limits_claude import NOT_KNOWN
from agentbar.core.model import Agent, SessionKey, State
from agentbar.tray import actions
from agentbar.tray.actions import Action, ActionRouter
from agentbar.tray.pause import Pause
from agentbar.tray.preferences import Preferences
from agentbar.tray.presenter import MAX_NEEDS, TrayState, present, project_name, session_label
from agentbar.tray.view import Badge, Entry

NOW = T0 + 60


def labels(view_entries: tuple[Entry, ...]) -> list[str]:
    return ["---" if e.separator else e.label for e in view_entries]


def view(snaps, *, prefs=None, tray=None, now=NOW):
    tray = dataclasses.replace(tray or TrayState(), names=NAMES)
    return present(snaps, now=now, prefs=prefs or Preferences(), tray=tray)


def test_sessions_that_need_you_come_first_then_running_then_recent() -> None:
    sessions = [
        snap("run1", State.RUNNING, project="/work/web", title="Add a login page", since=T0 + 5),
        approval("ask1", project="/work/api", since=T0 + 10),
        snap("done1", State.DONE, project="/work/docs", title="Update the changelog", since=T0),
        question("ask2", agent=Agent("codex"), project="/work/db", since=T0 + 1),
        snap("fail1", State.FAILED, project="/work/ci", detail="API Error: 529", since=T0 + 2),
        snap("gone", State.ENDED, since=T0),
        snap("old", State.DONE, since=T0 - 3 * 3600),  # older than recent_hours: not listed
    ]
    v = view(sessions, tray=TrayState(autostart=False))
    assert labels(v.menu) == [
        "Needs you (2)",
        "Codex · db — asks: Which database?",  # waiting longest first
        "Claude Code · api — approve Bash: rm -rf build",
        "Running (1)",
        "Claude Code · web — Add a login page",
        "Recently finished (2)",
        "Claude Code · ci — failed: API Error: 529",
        "Claude Code · docs — done: Update the changelog",
        "---",
        NOT_KNOWN,  # no usage window known: Claude's is the one agentbar can be told to see
        "---",
        "Open window",
        "Pause notifications",
        "Start at login",
        "---",
        "Quit agentbar",
    ]
    assert v.badge == Badge(needs=2, failed=True)
    assert v.tooltip == "agentbar: 2 need you, 1 running, 1 failed"
    by_label = {e.label: e for e in v.entries()}
    assert by_label["Codex · db — asks: Which database?"].action == Action(
        actions.OPEN, "/session/codex/ask2"
    )
    assert by_label["Needs you (2)"].action is None and not by_label["Needs you (2)"].enabled
    assert by_label["Open window"].action == actions.BOARD and by_label["Open window"].default
    assert by_label["Start at login"].checked is False
    assert by_label["Start at login"].action == Action(actions.AUTOSTART, "enable")
    assert by_label["Quit agentbar"].action == Action(actions.QUIT)
    pause_menu = by_label["Pause notifications"]
    assert [e.label for e in pause_menu.submenu] == ["For 1 hour", "Until tomorrow", "Off"]
    assert [e.action for e in pause_menu.submenu] == [
        Action(actions.PAUSE, "hour"),
        Action(actions.PAUSE, "tomorrow"),
        Action(actions.PAUSE, "off"),
    ]


def test_nothing_active() -> None:
    v = view([])
    assert v.badge == Badge() and v.tooltip == "agentbar: nothing needs you"
    assert labels(v.menu)[0] == "No agent session is active"
    assert "Start at login" not in labels(v.menu)  # a platform without autostart


def test_a_running_session_shows_its_title_so_the_menu_does_not_change_on_every_tool() -> None:
    first = view([snap("r", State.RUNNING, detail="exec_command: npm test")])
    second = view([snap("r", State.RUNNING, detail="exec_command: npm run build")])
    assert first == second  # equal views: the icon is neither redrawn nor its menu rebuilt
    other = view([approval("r")])
    assert other != first and other.badge != first.badge


def test_long_lists_end_with_a_way_to_the_window() -> None:
    many = [approval(f"s{n:02}", since=T0 + n) for n in range(MAX_NEEDS + 3)]
    v = view(many)
    assert v.badge.needs == MAX_NEEDS + 3
    assert "… 3 more in the window" in labels(v.menu)
    more = next(e for e in v.menu if e.label.startswith("…"))
    assert more.action == actions.BOARD


def test_labels_are_one_short_line() -> None:
    s = approval("x", detail="Bash: " + "echo long\n" * 40, project="/home/me/src/a-project")
    label = session_label(s, NAMES)
    assert len(label) <= 72 and "\n" not in label and label.endswith("…")
    assert project_name(None) == "unknown folder" and project_name("/work/api/") == "api"
    assert session_label(snap("d", State.DONE, title=None, detail=""), NAMES) == (
        "Claude Code · api — done: the turn"
    )


def test_the_pause_and_the_settings_show_in_the_menu() -> None:
    until = NOW + 1800
    v = view([], tray=TrayState(pause=Pause(until=until)))
    entry = next(e for e in v.menu if e.submenu)
    assert entry.label.startswith("Notifications paused until ")
    assert entry.submenu[0] == Entry("Resume notifications", Action(actions.PAUSE, "resume"))
    assert "(notifications paused until" in v.tooltip
    after = view([], tray=TrayState(pause=Pause(until=until)), now=until + 1)
    assert next(e for e in after.menu if e.submenu).label == "Pause notifications"
    off = view([], tray=TrayState(pause=Pause(off=True)))
    menu = next(e for e in off.menu if e.submenu)
    assert menu.label == "Notifications off"
    assert next(e for e in menu.submenu if e.label == "Off").checked is True
    disabled = view([], prefs=Preferences(enabled=False))
    assert "Notifications are off in settings.toml" in labels(disabled.menu)
    broken = view([], prefs=Preferences(problems=("a", "b")))
    assert labels(broken.menu)[0] == "settings.toml: 2 problems, see the log"


def test_other_features_add_entries_above_open_window() -> None:
    launch = Entry("Launch Claude Code in api", Action("launch", "/work/api"))
    v = view([], tray=TrayState(extra=(launch,)))
    names = labels(v.menu)
    assert names.index("Launch Claude Code in api") == names.index("Open window") - 1


def test_the_router_runs_one_handler_per_kind_and_survives_failures() -> None:
    router = ActionRouter()
    seen: list[Action] = []
    router.register("launch", seen.append)
    router.register("boom", lambda _: 1 / 0)  # type: ignore[func-returns-value]
    assert router.run(Action("launch", "/work/api")) is True
    assert router.run(Action("boom")) is False  # logged, not raised
    assert router.run(Action("unknown")) is False
    assert seen == [Action("launch", "/work/api")]
    assert router.handles("launch") and not router.handles("unknown")
    try:
        router.register("launch", seen.append)
    except ValueError as exc:
        assert "registered already" in str(exc)
    else:
        raise AssertionError("a second handler for one kind was accepted")


def test_session_paths_are_quoted() -> None:
    key = SessionKey(Agent("claude"), "a/b?c")
    assert actions.session_path(key) == "/session/claude/a%2Fb%3Fc"
    assert dataclasses.replace(actions.BOARD).arg == "/"
