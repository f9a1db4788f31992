"""The usage windows in the tray: a menu line per window, the tooltip's end, and one
notification per window past settings.toml's ``limit_percent`` (the worker over a real engine
of real rollout files; the notification delivered to a real dunst on a private desktop)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from claude_lines import T0, write_lines
from codex_lines import CodexRollout
from desktop import Desktop
from engine_harness import Rig, make_rig
from test_limits import codex_limits, window
from tray_values import NAMES

from agentbar.core.limits import FIVE_HOURS, WEEKLY, LimitWindow
from agentbar.core.limits_claude import NOT_KNOWN, NOT_SENT
from agentbar.core.remote.hosts import HostState, HostStatus
from agentbar.tray.limit_alerts import LimitAlerts
from agentbar.tray.notify import DesktopNotifier, FakeNotifier, icon_path
from agentbar.tray.pause import PauseStore
from agentbar.tray.preferences import Preferences, PreferencesFile, parse
from agentbar.tray.presenter import TrayState, present
from agentbar.tray.worker import TrayWorker

X = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
NOW = T0 + 100.0


def codex(used: float, span: str = FIVE_HOURS, resets_at: float | None = NOW + 3600) -> LimitWindow:
    return LimitWindow("codex", span, used, resets_at, "plus", NOW, "codex-rollout")


def test_menu_lines_and_tooltip() -> None:
    at = time.mktime((2026, 11, 30, 14, 20, 0, 0, 0, -1))
    windows = (
        dataclasses.replace(codex(38.0), resets_at=at, observed_at=at - 60),
        codex(7.0, WEEKLY, None),
    )
    view = present([], now=at - 60, prefs=Preferences(), tray=TrayState(limits=windows))
    labels = [e.label for e in view.menu]
    assert "Codex: 62 % of 5 h left, resets 14:20" in labels
    assert "Codex: 93 % of the week left" in labels and NOT_KNOWN in labels
    assert view.tooltip == "agentbar: nothing needs you; Codex 5 h 62 % left, the week 93 % left"
    plain = present([], now=at, prefs=Preferences(), tray=TrayState())
    assert plain.tooltip == "agentbar: nothing needs you"  # none known: the menu says why


def test_alerts_once_per_window_and_again_after_it_resets() -> None:
    alerts = LimitAlerts()
    assert alerts.check([codex(79.9)], 80, NOW) == []
    (notice,) = alerts.check([codex(80.0), codex(20.0, WEEKLY)], 80, NOW)
    assert notice.title == "Codex has used 80 % of 5 h"
    assert notice.body.startswith("Codex: 20 % of 5 h left, resets ")
    assert alerts.check([codex(95.0)], 80, NOW + 60) == []  # the same window: told already
    assert alerts.check([codex(95.0)], 80, NOW + 3600) == []  # reset since: not past it now
    later = codex(90.0, resets_at=NOW + 3600 + 5 * 3600)
    assert len(alerts.check([later], 80, NOW + 3700)) == 1  # the next window
    assert LimitAlerts().check([codex(100.0)], 0, NOW) == []  # 0: never


@pytest.mark.parametrize(
    ("text", "percent", "problems"),
    [("", 80.0, 0), ("[notifications]\nlimit_percent = 95\n", 95.0, 0),
     ("[notifications]\nlimit_percent = 120\n", 80.0, 1),
     ("[notifications]\nlimit_percent = \"x\"\n", 80.0, 1)],
)  # fmt: skip
def test_the_threshold_setting(text: str, percent: float, problems: int) -> None:
    prefs = parse(text)
    assert (prefs.limit_percent, len(prefs.problems)) == (percent, problems)


@pytest.fixture
def rig(tmp_path: Path):
    r = make_rig(tmp_path)
    yield r
    r.close()


def write_rollout(rig: Rig, used: float) -> None:
    r = CodexRollout(X, "/w/limits", start=T0)
    token_count = r.tokens(100, 0, 10)
    token_count["payload"]["rate_limits"] = codex_limits(window(used, 300, T0 + 3600))
    path = rig.codex / "sessions" / "2026" / "11" / "29" / f"rollout-2026-11-29-{X}.jsonl"
    write_lines(path, [r.meta(), r.started(), r.prompt("hi"), token_count])


def test_a_window_past_the_threshold_notifies_dunst_once(
    rig: Rig, tmp_path: Path, desktop: Desktop, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(key, desktop.env[key])
    desktop.clear_notifications()
    write_rollout(rig, 86.0)
    engine = rig.open()
    notifier = DesktopNotifier(lambda _action: None, icon=icon_path(), fallback=FakeNotifier())
    shown = []
    worker = TrayWorker(
        engine,
        notifier,
        clock=rig.clock,
        prefs=PreferencesFile(tmp_path / "settings.toml"),
        pauses=PauseStore(tmp_path / "paused.json"),
        show=shown.append,
        names=NAMES,
    )
    try:
        worker.refresh_view()
        got = desktop.wait_notification(lambda n: n["summary"] == "Codex has used 86 % of 5 h")
        assert got["body"].startswith("Codex: 14 % of 5 h left, resets ")
        assert any(e.label.startswith("Codex: 14 % of 5 h left") for e in shown[-1].menu)
        assert "Codex 5 h 14 % left" in shown[-1].tooltip
        worker.refresh_view()
        rig.clock.advance(10)
        worker.refresh_view()
        time.sleep(1.0)  # a second notice would have reached dunst by now
        told = [n for n in desktop.notifications() if n["summary"].startswith("Codex has used")]
        assert len(told) == 1
    finally:
        notifier.close()


def test_a_remote_host_s_windows_are_its_own_lines_after_this_machine_s() -> None:
    at = time.mktime((2026, 11, 30, 14, 20, 0, 0, 0, -1))
    local = dataclasses.replace(codex(38.0), resets_at=at, observed_at=at - 60)
    there = dataclasses.replace(local, used_percent=60.0, host="devbox")
    claude_there = LimitWindow("claude", FIVE_HOURS, 10.0, None, None, at - 60, "x", host="devbox")
    view = present([], now=at - 60, prefs=Preferences(),
                   tray=TrayState(limits=(local, there, claude_there)))  # fmt: skip
    labels = [e.label for e in view.menu]
    at_limits = labels.index("Codex: 62 % of 5 h left, resets 14:20")
    # This machine's line and its note (devbox's Claude says nothing of this one's), then
    # devbox's, each naming it.
    assert labels[at_limits : at_limits + 4] == [
        "Codex: 62 % of 5 h left, resets 14:20",
        NOT_KNOWN,
        "Codex on devbox: 40 % of 5 h left, resets 14:20",
        "Claude on devbox: 90 % of 5 h left",
    ]
    assert view.tooltip == (
        "agentbar: nothing needs you; Codex 5 h 62 % left; Codex on devbox 5 h 40 % left; "
        "Claude on devbox 5 h 90 % left"
    )
    # devbox not connected: its last known, saying how old.
    stale = dataclasses.replace(there, stale=True)
    view = present([], now=at - 30, prefs=Preferences(), tray=TrayState(limits=(stale,)))
    assert ("Codex on devbox: 40 % of 5 h left, resets 14:20 (last known 14:19, devbox not "
            "connected)") in [e.label for e in view.menu]  # fmt: skip


def test_alerts_name_the_host_and_tell_each_host_s_window_apart() -> None:
    alerts = LimitAlerts()
    there = dataclasses.replace(codex(85.0), host="devbox")
    local, remote = alerts.check([codex(85.0), there], 80, NOW)
    assert local.title == "Codex has used 85 % of 5 h"
    assert remote.title == "Codex on devbox has used 85 % of 5 h"
    assert remote.body.startswith("Codex on devbox: 15 % of 5 h left, resets ")
    assert alerts.check([codex(90.0), there], 80, NOW + 60) == []


def test_a_host_s_notes_are_its_own_lines_named_by_it_and_last_known_while_it_is_away() -> None:
    """devbox's Claude status line spoke without windows (an API-key login there); box told
    nothing of its sources (an older agentbar): no note of box, whose limits may be known."""
    devbox = HostStatus(name="devbox", state=HostState.CONNECTED, since=NOW,
                        heard=frozenset({"claude"}))  # fmt: skip
    box = HostStatus(name="box", state=HostState.CONNECTED, since=NOW)
    there = dataclasses.replace(codex(38.0), host="devbox")
    view = present([], now=NOW, prefs=Preferences(),
                   tray=TrayState(limits=(there,), hosts=(devbox, box)))  # fmt: skip
    labels = [e.label for e in view.menu]
    at = labels.index(NOT_KNOWN)  # this machine's: its own Claude is not linked
    assert labels[at : at + 3] == [
        NOT_KNOWN,
        "Codex on devbox: 62 % of 5 h left, resets " + labels[at + 1].rsplit(" ", 1)[-1],
        f"devbox: {NOT_SENT}",
    ]
    assert not any(label.startswith("box:") for label in labels)
    away = dataclasses.replace(devbox, state=HostState.UNREACHABLE)
    view = present([], now=NOW, prefs=Preferences(), tray=TrayState(hosts=(away,)))
    assert f"devbox: {NOT_SENT} (last known, devbox not connected)" in [e.label for e in view.menu]
    # A Claude window of devbox's: no note of devbox's Claude.
    claude = LimitWindow("claude", FIVE_HOURS, 10.0, None, None, NOW, "x", host="devbox")
    view = present([], now=NOW, prefs=Preferences(),
                   tray=TrayState(limits=(claude,), hosts=(devbox,)))  # fmt: skip
    assert not any(e.label.startswith("devbox:") for e in view.menu)
