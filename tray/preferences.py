"""The tray's settings: ``settings.toml`` in the user config dir, read into a frozen value
(pure parsing; the loader is called from the tray's worker threads).

Every key has a default that needs no editing, so the file need not exist. A file that cannot
be read or parsed, or a key with a wrong type, is reported in one clear line (on stderr, in the
log and in the tray menu) and the defaults are used for what is wrong; agentbar never crashes on
it and never writes to it. ``AGENTBAR_CONFIG_DIR`` overrides the folder (tests, portable setups).

    [notifications]
    enabled = true                      # false: the badge only, never a notification
    on = ["input_required", "done", "failed"]
    coalesce_seconds = 1.0              # a change at once; the next ones this soon: one summary
    muted_projects = ["~/src/noisy"]    # these folders (and below) never notify
    sound = false
    tomorrow_at = "08:00"               # "Pause until tomorrow" ends then (local time)
    limit_percent = 80                  # tell once per window when an agent's usage passes it
                                        # (0: never)

    [menu]
    recent_hours = 2                    # done and failed sessions stay in the menu this long

    [launch]
    pinned_projects = ["~/src/api"]     # offered first in "Launch agent", then recent folders
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import config, options
from ..core.model import State

log = logging.getLogger(__name__)

FILE_NAME = "settings.toml"
NOTIFIABLE = (State.INPUT_REQUIRED, State.DONE, State.FAILED)
MAX_COALESCE_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Preferences:
    enabled: bool = True
    notify_on: frozenset[State] = frozenset(NOTIFIABLE)
    coalesce_seconds: float = 1.0
    muted_projects: tuple[str, ...] = ()
    sound: bool = False
    tomorrow_at: tuple[int, int] = (8, 0)
    recent_hours: float = 2.0
    limit_percent: float = 80.0  # a usage window past this percent used is told once (0: never)
    pinned_projects: tuple[str, ...] = ()  # offered first in the menu's "Launch agent"
    # What was wrong with the file (one line each), or empty: shown, never fatal.
    problems: tuple[str, ...] = field(default=(), compare=False)

    def is_muted(self, project: str | None) -> bool:
        """``project`` is one of the muted folders or inside one."""
        if not project or not self.muted_projects:
            return False
        path = os.path.normpath(project)
        return any(
            path == m or path.startswith(m.rstrip(os.sep) + os.sep) for m in self.muted_projects
        )


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    return config.config_dir(os.environ if env is None else env)


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / FILE_NAME


def parse(text: str, *, where: str = FILE_NAME, home: str | None = None) -> Preferences:
    """The preferences ``text`` sets; whatever is wrong is named in ``problems`` and left at
    its default."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Preferences(problems=(f"{where}: {exc}; using the defaults",))
    problems: list[str] = []
    values: dict[str, Any] = {}
    known = {"notifications": _NOTIFICATION_KEYS, "menu": _MENU_KEYS, "launch": _LAUNCH_KEYS}
    for section, table in doc.items():
        if section in options.SECTIONS:
            continue  # the engine's part of the same file (core/options.py reads it)
        if section not in known or not isinstance(table, dict):
            problems.append(f"{where}: unknown section [{section}] (ignored)")
            continue
        for key, value in table.items():
            reader = known[section].get(key)
            if reader is None:
                problems.append(f"{where}: unknown key {section}.{key} (ignored)")
                continue
            try:
                values.update(reader(value, home))
            except (TypeError, ValueError) as exc:
                problems.append(f"{where}: {section}.{key}: {exc}; using the default")
    return Preferences(**values, problems=tuple(problems))


def load(path: Path) -> Preferences:
    """The preferences in ``path``: defaults when it does not exist; defaults and a problem
    when it cannot be read."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Preferences()
    except OSError as exc:
        why = exc.strerror or exc
        return Preferences(problems=(f"cannot read {path}: {why}; using the defaults",))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Preferences(problems=(f"{path} is not UTF-8 text; using the defaults",))
    prefs = parse(text, where=str(path), home=os.path.expanduser("~"))
    for problem in prefs.problems:
        log.warning("%s", problem)
    return prefs


class PreferencesFile:
    """The settings file, read again when it changes (its mtime and size); callers on any
    thread get the latest value (one reference swap)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._loaded = False
        self.current = Preferences()
        self.refresh()

    def refresh(self) -> bool:
        """Read the file again if it changed (mtime or size); True when the preferences did."""
        try:
            st = self.path.stat()
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if self._loaded and stamp == self._stamp:
            return False
        self._loaded, self._stamp = True, stamp
        before = self.current
        self.current = load(self.path)
        return (self.current, self.current.problems) != (before, before.problems)


# -- one reader per key: the value checked and converted, or ValueError/TypeError ---------------


def _bool(name: str) -> Any:
    def read(value: Any, _home: str | None) -> dict[str, Any]:
        if not isinstance(value, bool):
            raise TypeError(f"must be true or false, not {value!r}")
        return {name: value}

    return read


def _notify_on(value: Any, _home: str | None) -> dict[str, Any]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("must be a list of states")
    names = {str(s): s for s in NOTIFIABLE}
    wrong = [v for v in value if v not in names]
    if wrong:
        raise ValueError(f"{', '.join(wrong)} cannot notify (choose from {', '.join(names)})")
    return {"notify_on": frozenset(names[v] for v in value)}


def _coalesce(value: Any, _home: str | None) -> dict[str, Any]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"must be a number of seconds, not {value!r}")
    if not 0 <= value <= MAX_COALESCE_SECONDS:
        raise ValueError(f"must be between 0 and {MAX_COALESCE_SECONDS:g} seconds")
    return {"coalesce_seconds": float(value)}


def _folders(name: str) -> Any:
    """A list of folders; ``~`` stands for the home folder."""

    def read(value: Any, home: str | None) -> dict[str, Any]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise TypeError("must be a list of folders")
        folders = []
        for folder in value:
            if folder == "~" or folder.startswith("~/"):
                folder = (home or os.path.expanduser("~")) + folder[1:]  # noqa: PLW2901
            folders.append(os.path.normpath(folder))
        return {name: tuple(folders)}

    return read


def _tomorrow_at(value: Any, _home: str | None) -> dict[str, Any]:
    if not isinstance(value, str):
        raise TypeError(f'must be a time like "08:00", not {value!r}')
    hour, sep, minute = value.partition(":")
    if not (sep and hour.isdigit() and minute.isdigit() and len(minute) == 2):
        raise ValueError(f'must be a time like "08:00", not {value!r}')
    if not (0 <= int(hour) <= 23 and 0 <= int(minute) <= 59):
        raise ValueError(f"{value!r} is not a time of day")
    return {"tomorrow_at": (int(hour), int(minute))}


def _recent_hours(value: Any, _home: str | None) -> dict[str, Any]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"must be a number of hours, not {value!r}")
    if not 0 <= value <= 24 * 7:
        raise ValueError("must be between 0 and 168 hours")
    return {"recent_hours": float(value)}


def _limit_percent(value: Any, _home: str | None) -> dict[str, Any]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"must be a percent, not {value!r}")
    if not 0 <= value <= 100:
        raise ValueError("must be between 0 and 100")
    return {"limit_percent": float(value)}


_NOTIFICATION_KEYS = {
    "enabled": _bool("enabled"),
    "on": _notify_on,
    "coalesce_seconds": _coalesce,
    "muted_projects": _folders("muted_projects"),
    "sound": _bool("sound"),
    "tomorrow_at": _tomorrow_at,
    "limit_percent": _limit_percent,
}
_MENU_KEYS = {"recent_hours": _recent_hours}
_LAUNCH_KEYS = {"pinned_projects": _folders("pinned_projects")}
