"""The engine's part of ``settings.toml``: how long a Codex hook may hold the terminal for an
answer from agentbar, and how long a background ``agentbar serve`` lingers once nothing uses it
(pure parsing; the loader is called once by the command that needs it, any thread).

    [answers]
    codex_hold_seconds = 0          # 0: observe Codex's approvals only (no buttons); N: its
                                    # PermissionRequest hook waits up to N s for an answer from
                                    # agentbar, while Codex's own prompt is NOT drawn yet
    [serve]
    background_idle_seconds = 300   # the serve `agentbar launch` started by itself ends this
                                    # long after its last task, window, watch and decision

The tray reads its own sections of the same file (``tray/preferences.py``); the sections here
are the engine's. Like the tray's, a file that cannot be read, or a key with a wrong type, is
one clear line in ``problems`` and the default is used; agentbar never writes the file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILE_NAME = "settings.toml"
SECTIONS = ("answers", "serve")  # the engine's sections; the tray's are its own
MAX_CODEX_HOLD_SECONDS = 600  # Codex's own default hook timeout; it is the person's terminal
MIN_IDLE_SECONDS = 1.0
MAX_IDLE_SECONDS = 24 * 3600.0


@dataclass(frozen=True, slots=True)
class Options:
    codex_hold_seconds: int = 0  # 0: observe only
    background_idle_seconds: float = 300.0
    problems: tuple[str, ...] = field(default=(), compare=False)

    def agent_holds(self) -> tuple[tuple[str, int], ...]:
        """The hook holds chosen, as ``HookCommand.agent_holds`` takes them."""
        return (("codex", self.codex_hold_seconds),) if self.codex_hold_seconds else ()


def parse(text: str, *, where: str = FILE_NAME) -> Options:
    """The engine's options ``text`` sets; other sections are the tray's and are skipped."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Options(problems=(f"{where}: {exc}; using the defaults",))
    problems: list[str] = []
    values: dict[str, Any] = {}
    for section, keys in _KEYS.items():
        table = doc.get(section)
        if table is None:
            continue
        if not isinstance(table, dict):
            problems.append(f"{where}: [{section}] must be a table (ignored)")
            continue
        for key, value in table.items():
            reader = keys.get(key)
            if reader is None:
                problems.append(f"{where}: unknown key {section}.{key} (ignored)")
                continue
            try:
                values[key] = reader(value)
            except (TypeError, ValueError) as exc:
                problems.append(f"{where}: {section}.{key}: {exc}; using the default")
    return Options(**values, problems=tuple(problems))


def load(path: Path | None) -> Options:
    """The options in ``path`` (None or missing: the defaults; unreadable: the defaults and a
    problem)."""
    if path is None:
        return Options()
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return Options()
    except OSError as exc:
        return Options(problems=(f"cannot read {path}: {exc.strerror or exc}; using the defaults",))
    except UnicodeDecodeError:
        return Options(problems=(f"{path} is not UTF-8 text; using the defaults",))
    return parse(text, where=str(path))


def _hold(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"must be a whole number of seconds, not {value!r}")
    if not 0 <= value <= MAX_CODEX_HOLD_SECONDS:
        raise ValueError(f"must be between 0 (observe only) and {MAX_CODEX_HOLD_SECONDS} seconds")
    return value


def _idle(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"must be a number of seconds, not {value!r}")
    if not MIN_IDLE_SECONDS <= value <= MAX_IDLE_SECONDS:
        raise ValueError(f"must be between {MIN_IDLE_SECONDS:g} and {MAX_IDLE_SECONDS:g} seconds")
    return float(value)


_KEYS: dict[str, dict[str, Any]] = {
    "answers": {"codex_hold_seconds": _hold},
    "serve": {"background_idle_seconds": _idle},
}
