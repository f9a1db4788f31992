"""``agentbar autostart enable|disable|status``: start the tray at login, the platform's own way
(main thread, or the tray's worker thread for the menu's check box).

- Linux and other XDG desktops: ``$XDG_CONFIG_HOME/autostart/agentbar.desktop``.
- macOS: a LaunchAgent, ``~/Library/LaunchAgents/<LABEL>.plist`` (RunAtLoad), read at login.
- Windows: the ``agentbar`` value under ``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run``.

Each entry starts this very installation: the Python that runs now with ``-m agentbar.tray``
(``pythonw`` on Windows, so no console opens). The contents are pure functions of the command,
so they are tested on every platform; only the Linux file is also written in the tests.
"""

from __future__ import annotations

import argparse
import os
import plistlib
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

from .notify import icon_path

LABEL = "io.github.agentbar"
DESKTOP_FILE = "agentbar.desktop"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "agentbar"
COMMENT = "Which of your coding agents' sessions needs you"


class Autostart(Protocol):
    where: str

    def status(self) -> bool | None: ...

    def enable(self) -> None: ...

    def disable(self) -> None: ...


def command(python: str | None = None, platform: str | None = None) -> list[str]:
    """The command that starts the tray of this installation."""
    python = python or sys.executable
    platform = platform or sys.platform
    if platform == "win32":
        windowed = Path(python).with_name("pythonw.exe")
        if windowed.exists():
            python = str(windowed)
    return [python, "-m", "agentbar.tray"]


# -- Linux (XDG) ---------------------------------------------------------------------------------

_EXEC_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def desktop_exec(argv: Sequence[str]) -> str:
    """``argv`` as a Desktop Entry ``Exec`` value: arguments with reserved characters quoted,
    ``"`` `` ` `` ``$`` ``\\`` escaped inside quotes, ``%`` doubled, and the string's own
    backslashes escaped again (the spec's two levels)."""
    words = []
    for raw in argv:
        arg = raw.replace("%", "%%")
        if arg and not (_EXEC_RESERVED & set(arg)):
            words.append(arg)
            continue
        quoted = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        words.append(f'"{quoted}"')
    return " ".join(words).replace("\\", "\\\\")


def desktop_entry(argv: Sequence[str], icon: Path | None = None) -> str:
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Name=agentbar",
        f"Comment={COMMENT}",
        f"Exec={desktop_exec(argv)}",
        "Terminal=false",
        "Categories=Development;Utility;",
        "X-GNOME-Autostart-enabled=true",
    ]
    if icon is not None:
        lines.insert(5, f"Icon={icon}")
    return "\n".join(lines) + "\n"


def xdg_autostart_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or ""
    if os.path.isabs(base):
        return Path(base) / "autostart"
    return Path(env.get("HOME", "~")).expanduser() / ".config" / "autostart"


class XdgAutostart:
    def __init__(self, folder: Path, argv: Sequence[str], icon: Path | None = None) -> None:
        self.path = folder / DESKTOP_FILE
        self.where = str(self.path)
        self.argv = list(argv)
        self.icon = icon

    def status(self) -> bool:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        # A desktop that turned it off keeps the file with one of these.
        lowered = text.lower()
        return "hidden=true" not in lowered and "x-gnome-autostart-enabled=false" not in lowered

    def enable(self) -> None:
        _write_atomic(self.path, desktop_entry(self.argv, self.icon).encode())

    def disable(self) -> None:
        self.path.unlink(missing_ok=True)


# -- macOS -----------------------------------------------------------------------------------------


def launch_agent(argv: Sequence[str]) -> bytes:
    return plistlib.dumps(
        {
            "Label": LABEL,
            "ProgramArguments": list(argv),
            "RunAtLoad": True,
            "KeepAlive": False,
            "ProcessType": "Interactive",
        }
    )


class LaunchAgent:
    def __init__(self, folder: Path, argv: Sequence[str]) -> None:
        self.path = folder / f"{LABEL}.plist"
        self.where = str(self.path)
        self.argv = list(argv)

    def status(self) -> bool:
        try:
            doc = plistlib.loads(self.path.read_bytes())
        except (OSError, plistlib.InvalidFileException, ValueError):
            return False
        if not isinstance(doc, dict):
            return False
        return doc.get("Label") == LABEL and doc.get("Disabled") is not True

    def enable(self) -> None:
        _write_atomic(self.path, launch_agent(self.argv))

    def disable(self) -> None:
        self.path.unlink(missing_ok=True)


# -- Windows ---------------------------------------------------------------------------------------


def run_key_value(argv: Sequence[str]) -> str:
    """The ``Run`` value: one command line, quoted the way Windows parses it."""
    return subprocess.list2cmdline(list(argv))


class RunKey:
    where = "HKEY_CURRENT_USER\\" + RUN_KEY + "\\" + RUN_VALUE

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)

    def _winreg(self) -> Any:
        import winreg  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

        return winreg

    def status(self) -> bool:
        reg = self._winreg()
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY) as key:
                value, _kind = reg.QueryValueEx(key, RUN_VALUE)
        except OSError:
            return False
        return bool(value)

    def enable(self) -> None:
        reg = self._winreg()
        with reg.CreateKey(reg.HKEY_CURRENT_USER, RUN_KEY) as key:
            reg.SetValueEx(key, RUN_VALUE, 0, reg.REG_SZ, run_key_value(self.argv))

    def disable(self) -> None:
        reg = self._winreg()
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY, 0, reg.KEY_SET_VALUE) as key:
                reg.DeleteValue(key, RUN_VALUE)
        except FileNotFoundError:
            pass


# -- choosing and the command ----------------------------------------------------------------------


def for_platform(platform: str | None = None, env: Mapping[str, str] | None = None) -> Autostart:
    platform = platform or sys.platform
    env = os.environ if env is None else env
    argv = command(platform=platform)
    if platform == "win32":
        return RunKey(argv)
    if platform == "darwin":
        home = Path(env.get("HOME", "~")).expanduser()
        return LaunchAgent(home / "Library" / "LaunchAgents", argv)
    return XdgAutostart(xdg_autostart_dir(env), argv, icon_path())


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_bytes(data)
    os.replace(temp, path)


def add_parser(commands: Any) -> None:
    cmd = commands.add_parser("autostart", help="start agentbar's tray at login (or not)")
    cmd.add_argument("action", choices=("enable", "disable", "status"))


def run(args: argparse.Namespace, out: TextIO, entry: Autostart | None = None) -> int:
    entry = entry or for_platform()
    try:
        if args.action == "enable":
            entry.enable()
        elif args.action == "disable":
            entry.disable()
    except OSError as exc:
        print(f"agentbar: cannot change {entry.where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    on = entry.status()
    out.write(f"{'enabled' if on else 'disabled'}: {entry.where}\n")
    return 0
