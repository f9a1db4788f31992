"""settings.toml: defaults with no file, every key read and checked, clear problems for bad
input (never a crash, never a write), and the file re-read when it changes."""

from __future__ import annotations

import os
from pathlib import Path

from agentbar.core.model import State
from agentbar.tray import preferences
from agentbar.tray.preferences import Preferences, PreferencesFile, load, parse


def test_no_file_means_the_defaults(tmp_path: Path) -> None:
    prefs = load(tmp_path / "settings.toml")
    assert prefs == Preferences()
    assert prefs.enabled and prefs.notify_on == {State.INPUT_REQUIRED, State.DONE, State.FAILED}
    assert prefs.coalesce_seconds == 1.0 and prefs.tomorrow_at == (8, 0)
    assert prefs.problems == ()


def test_every_key_is_read() -> None:
    prefs = parse(
        """
        [notifications]
        enabled = false
        on = ["input_required"]
        coalesce_seconds = 2.5
        muted_projects = ["~/src/noisy", "/work/other/"]
        sound = true
        tomorrow_at = "07:30"
        [menu]
        recent_hours = 6
        """,
        home="/home/me",
    )
    assert prefs == Preferences(
        enabled=False,
        notify_on=frozenset({State.INPUT_REQUIRED}),
        coalesce_seconds=2.5,
        muted_projects=("/home/me/src/noisy", "/work/other"),
        sound=True,
        tomorrow_at=(7, 30),
        recent_hours=6.0,
    )
    assert prefs.problems == ()


def test_a_wrong_value_is_named_and_only_it_falls_back() -> None:
    prefs = parse(
        """
        [notifications]
        enabled = "yes"
        on = ["running", "done"]
        coalesce_seconds = 400
        tomorrow_at = "25:00"
        sound = true
        colour = "red"
        [menu]
        recent_hours = -1
        [window]
        size = 3
        """
    )
    assert prefs.sound is True  # the good key still counts
    assert (prefs.enabled, prefs.coalesce_seconds, prefs.tomorrow_at) == (True, 1.0, (8, 0))
    assert prefs.notify_on == Preferences().notify_on and prefs.recent_hours == 2.0
    text = "\n".join(prefs.problems)
    assert "notifications.enabled: must be true or false, not 'yes'" in text
    assert "running cannot notify" in text
    assert "coalesce_seconds: must be between 0 and 30 seconds" in text
    assert "'25:00' is not a time of day" in text
    assert "unknown key notifications.colour" in text
    assert "menu.recent_hours: must be between 0 and 168 hours" in text
    assert "unknown section [window]" in text
    assert len(prefs.problems) == 7


def test_a_file_that_is_not_toml_gives_the_defaults_and_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("[notifications\nenabled = ")
    prefs = load(path)
    assert prefs == Preferences()
    assert len(prefs.problems) == 1 and str(path) in prefs.problems[0]
    assert "using the defaults" in prefs.problems[0]
    assert path.read_text() == "[notifications\nenabled = "  # never rewritten


def test_a_file_that_is_not_utf8_or_not_readable(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(b"\xff\xfe[menu]")
    assert "is not UTF-8 text" in load(path).problems[0]
    folder = tmp_path / "a-folder.toml"
    folder.mkdir()
    assert "cannot read" in load(folder).problems[0]


def test_mute_covers_the_folder_and_below_only() -> None:
    prefs = Preferences(muted_projects=("/work/noisy",))
    assert prefs.is_muted("/work/noisy") and prefs.is_muted("/work/noisy/sub/")
    assert not prefs.is_muted("/work/noisy-other") and not prefs.is_muted(None)
    assert not Preferences().is_muted("/work/noisy")


def test_the_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    watched = PreferencesFile(path)
    assert watched.current == Preferences() and watched.refresh() is False
    path.write_text("[notifications]\nsound = true\n")
    assert watched.refresh() is True and watched.current.sound is True
    assert watched.refresh() is False  # unchanged: not read again
    path.write_text("[notifications]\nsound = 3\n")
    os.utime(path, ns=(1, 1))
    assert watched.refresh() is True  # a wrong value: its default, and a problem
    assert watched.current.sound is False and watched.current.problems
    path.unlink()
    assert watched.refresh() is True and watched.current == Preferences()
    assert watched.current.problems == ()


def test_the_config_dir_follows_the_override(tmp_path: Path) -> None:
    assert preferences.settings_path({"AGENTBAR_CONFIG_DIR": str(tmp_path)}) == (
        tmp_path / "settings.toml"
    )
    assert preferences.config_dir({}).name == "agentbar"


def test_the_engines_sections_of_the_same_file_are_not_the_trays_problems() -> None:
    prefs = parse(
        """
        [answers]
        codex_hold_seconds = 30
        [serve]
        background_idle_seconds = 60
        [notifications]
        sound = true
        """
    )
    assert prefs.sound is True
    assert prefs.problems == ()
