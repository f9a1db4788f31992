"""The tray's first start, on the private desktop (dunst, a StatusNotifier host, dbusmenu): one
notice of what it found and what to do next, once its first reading is done; a menu line that
says it again until dismissed; nothing of it at the next start. The words and the menu part as
values too."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest
from claude_lines import ClaudeTranscript, write_lines
from desktop import wait_until
from test_tray_sni import sni_host  # noqa: F401  (the fixture)
from tray_rig import A, Tray

from agentbar.core.config import Settings
from agentbar.tray import actions, welcome
from agentbar.tray.welcome import Found

pytestmark = pytest.mark.slow

ENDED = "eeeeeeee-5555-4555-8555-555555555555"


def test_the_words() -> None:
    assert Found(22, 0).line == "22 sessions, 0 need you"
    assert Found(1, 1).line == "1 session, 1 needs you"
    told = welcome.notice(Found(22, 0), autostart=False)
    assert told.title == "agentbar found 22 sessions, 0 need you"
    assert "agentbar hooks install" in told.body and "Start at login" in told.body
    assert "Start at login" not in welcome.notice(Found(22, 0), autostart=True).body
    assert "Start at login" not in welcome.notice(Found(22, 0), autostart=None).body
    (line,) = welcome.entries(Found(3, 1), autostart=False)
    assert line.label == "Welcome: 3 sessions, 1 needs you"
    assert [e.label for e in line.submenu] == [
        "Next: agentbar hooks install (exact approvals)",
        "Next: start agentbar at login",
        "Dismiss",
    ]
    assert line.submenu[1].action == actions.Action(actions.AUTOSTART, "enable")
    (line,) = welcome.entries(Found(3, 1), autostart=True)
    assert [e.label for e in line.submenu][-1] == "Dismiss"
    assert len(line.submenu) == 2


def test_first_start_means_no_index_and_never_told(tmp_path: Path) -> None:
    settings = Settings.from_env({"HOME": str(tmp_path), "AGENTBAR_DATA_DIR": str(tmp_path / "d")})
    assert welcome.first_start(settings)
    settings.data_dir.mkdir()
    (settings.data_dir / welcome.MARKER).touch()
    assert not welcome.first_start(settings)
    (settings.data_dir / welcome.MARKER).unlink()
    settings.index_path.touch()
    assert not welcome.first_start(settings)


def labels(tray: Tray) -> list[str]:
    return [n.label for n in tray.menu().children]


def test_the_first_start_says_what_it_found_once_and_the_menu_line_until_dismissed(
    tray: Tray,
    sni_host: object,  # noqa: F811
) -> None:
    (tray.data / welcome.MARKER).unlink()  # the rig's trays are not first starts; this one is
    t = ClaudeTranscript(ENDED, "/work/old", start=time.time() - 3600)
    write_lines(
        tray.home / ".claude" / "projects" / "-work-old" / f"{ENDED}.jsonl",
        [t.prompt("Tidy the README"), t.text("Done.", stop_reason="end_turn"), t.turn_duration()],
    )
    tray.start_waiting(A, "/work/live")
    tray.run_tray()
    tray.wait_ready()
    told = tray.desktop.wait_notification(lambda n: n["summary"].startswith("agentbar found"))
    assert told["summary"] == "agentbar found 2 sessions, 1 needs you"
    assert told["body"].startswith("Next: run 'agentbar hooks install'")
    line = "Welcome: 2 sessions, 1 needs you"
    wait_until("the menu line", lambda: line in labels(tray))
    steps = [n.label for n in tray.menu().find(line).children]
    assert steps[0] == "Next: agentbar hooks install (exact approvals)"
    assert steps[-1] == "Dismiss"
    marker = tray.data / welcome.MARKER
    assert stat.S_IMODE(marker.stat().st_mode) == 0o600
    tray.click_entry(line, "Dismiss")
    wait_until("the line gone", lambda: line not in labels(tray))
    status, err = tray.stop()
    assert status == 0, err
    assert "Traceback" not in err

    # The next start: nothing of it (the needs-you notice comes again, the welcome does not).
    tray.desktop.clear_notifications()
    tray.run_tray()
    tray.wait_ready()
    wait_until("the menu", lambda: "Needs you (1)" in labels(tray))
    time.sleep(1.0)  # the welcome would be posted just after the first reading
    assert not any(n["summary"].startswith("agentbar found") for n in tray.desktop.notifications())
    assert not any(label.startswith("Welcome:") for label in labels(tray))
