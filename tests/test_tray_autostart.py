"""``agentbar autostart``: the XDG autostart file written, read and removed for real under a tmp
config home (and through the command line), and the macOS LaunchAgent and Windows Run value as
the pure contents they are."""

from __future__ import annotations

import argparse
import io
import os
import plistlib
import subprocess
import sys
from pathlib import Path

from agentbar.tray import autostart
from agentbar.tray.autostart import (
    LaunchAgent,
    XdgAutostart,
    command,
    desktop_entry,
    desktop_exec,
    launch_agent,
    run_key_value,
)


def unquote_exec(value: str) -> list[str]:
    """How a desktop reads an Exec value back (the Desktop Entry spec): the string's own escapes
    first, then words split on spaces, double quotes grouping, and inside them a backslash
    before ``"`` `` ` `` ``$`` ``\\`` standing for that character; ``%%`` is ``%``."""
    text = value.replace("\\\\", "\\")
    words, word, quoted, i = [], "", False, 0
    while i < len(text):
        c = text[i]
        if quoted and c == "\\" and text[i + 1] in '"`$\\':
            word += text[i + 1]
            i += 1
        elif c == '"':
            quoted = not quoted
        elif c == " " and not quoted:
            words.append(word)
            word = ""
        else:
            word += c
        i += 1
    words.append(word)
    return [w.replace("%%", "%") for w in words]


def test_the_command_starts_this_installation() -> None:
    assert command() == [sys.executable, "-m", "agentbar.tray"]
    done = subprocess.run(
        [*command(), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and "autostart" in done.stdout


def test_exec_quoting_survives_spaces_and_reserved_characters() -> None:
    argv = ["/home/me/My Tools/venv/bin/python", "-m", "agentbar.tray", 'a"b$c`d\\e', "50%"]
    value = desktop_exec(argv)
    assert value.startswith('"/home/me/My Tools/venv/bin/python" -m agentbar.tray ')
    assert "50%%" in value
    assert unquote_exec(value) == argv
    assert desktop_exec(["/usr/bin/python3", "-m", "agentbar.tray"]) == (
        "/usr/bin/python3 -m agentbar.tray"
    )


def test_the_xdg_file_is_written_read_and_removed(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    entry = autostart.for_platform("linux", env)
    assert isinstance(entry, XdgAutostart)
    assert entry.path == tmp_path / "config" / "autostart" / "agentbar.desktop"
    assert entry.status() is False
    entry.enable()
    text = entry.path.read_text()
    assert text.startswith("[Desktop Entry]\nType=Application\nName=agentbar\n")
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    assert unquote_exec(exec_line[len("Exec=") :]) == command()
    icon = next(line for line in text.splitlines() if line.startswith("Icon="))
    assert Path(icon[len("Icon=") :]).is_file()
    assert entry.status() is True
    entry.enable()  # again: the same file
    assert entry.path.read_text() == text
    # A desktop's own switch turns it off without deleting it.
    entry.path.write_text(text + "Hidden=true\n")
    assert entry.status() is False
    entry.disable()
    assert not entry.path.exists() and entry.status() is False
    entry.disable()  # nothing to remove: fine


def test_the_xdg_folder_without_xdg_config_home(tmp_path: Path) -> None:
    assert (
        autostart.xdg_autostart_dir({"HOME": str(tmp_path)}) == tmp_path / ".config" / "autostart"
    )
    relative = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": "relative/dir"}  # ignored by the spec
    assert autostart.xdg_autostart_dir(relative) == tmp_path / ".config" / "autostart"


def test_the_command_line(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("XDG_")},
        "XDG_CONFIG_HOME": str(tmp_path),
        "AGENTBAR_DATA_DIR": str(tmp_path / "data"),
    }

    def agentbar(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agentbar.tray", "autostart", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    path = tmp_path / "autostart" / "agentbar.desktop"
    assert agentbar("status").stdout == f"disabled: {path}\n"
    assert agentbar("enable").stdout == f"enabled: {path}\n" and path.is_file()
    assert agentbar("status").stdout == f"enabled: {path}\n"
    assert agentbar("disable").stdout == f"disabled: {path}\n" and not path.exists()
    assert agentbar("sideways").returncode == 2


def test_a_folder_that_cannot_be_written_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "autostart"
    blocker.write_text("a file where the folder should be")
    entry = XdgAutostart(blocker, command())
    out = io.StringIO()
    assert autostart.run(argparse.Namespace(action="enable"), out, entry) == 1
    assert blocker.read_text() == "a file where the folder should be"


def test_the_launch_agent_plist(tmp_path: Path) -> None:
    argv = ["/Users/me/.venv/bin/python", "-m", "agentbar.tray"]
    doc = plistlib.loads(launch_agent(argv))
    assert doc == {
        "Label": "io.github.agentbar",
        "ProgramArguments": argv,
        "RunAtLoad": True,
        "KeepAlive": False,
        "ProcessType": "Interactive",
    }
    entry = autostart.for_platform("darwin", {"HOME": str(tmp_path)})
    assert isinstance(entry, LaunchAgent)
    assert entry.path == tmp_path / "Library" / "LaunchAgents" / "io.github.agentbar.plist"
    entry.enable()
    assert entry.status() is True
    entry.disable()
    assert entry.status() is False


def test_the_windows_run_value() -> None:
    argv = command(r"C:\Users\Me\My venv\Scripts\python.exe", platform="win32")
    assert argv[1:] == ["-m", "agentbar.tray"]
    assert run_key_value(argv) == r'"C:\Users\Me\My venv\Scripts\python.exe" -m agentbar.tray'
    entry = autostart.for_platform("win32", {})
    assert entry.where == (
        r"HKEY_CURRENT_USER\Software\Microsoft\Windows\CurrentVersion\Run\agentbar"
    )


def test_pythonw_is_used_on_windows_when_it_exists(tmp_path: Path) -> None:
    python = tmp_path / "python.exe"
    python.write_text("")
    assert command(str(python), platform="win32")[0] == str(python)
    (tmp_path / "pythonw.exe").write_text("")
    assert command(str(python), platform="win32")[0] == str(tmp_path / "pythonw.exe")


def test_the_entry_text_itself() -> None:
    text = desktop_entry(["/usr/bin/python3", "-m", "agentbar.tray"])
    assert "Terminal=false" in text and "X-GNOME-Autostart-enabled=true" in text
    assert "Icon=" not in text
