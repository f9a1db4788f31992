"""The ``[[remotes]]`` of ``settings.toml``: read them, and add or remove one while keeping the
rest of the person's file as it is (pure reading; the edits run on the caller's thread).

    [[remotes]]
    name = "devbox"                       # letters, digits, - _ . (the sessions' ``host``)
    command = ["ssh", "devbox"]           # what reaches the machine: ssh, docker exec -i, wsl.exe
    agentbar = "agentbar"                 # the program on the other side (optional)

A remote's command comes from this file alone: nothing a request carries ever names a host or a
command. Edits go through tomlkit (comments and order kept), are written atomically with mode
0600, and leave the file as it was in ``settings.toml.bak`` first.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import AgentbarError
from ..model import LOCAL_HOST
from ..privacy import write_private

if TYPE_CHECKING:
    import tomlkit

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DEFAULT_PROGRAM = "agentbar"
MAX_REMOTES = 32


class RemoteConfigError(AgentbarError, ValueError):
    title = "Cannot change the remotes"


@dataclass(frozen=True, slots=True)
class Remote:
    """One configured remote: its name (the ``host`` of its sessions), the argv that reaches
    it, and the agentbar program to run there."""

    name: str
    command: tuple[str, ...]
    program: str = DEFAULT_PROGRAM

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "command": list(self.command), "agentbar": self.program}


@dataclass(frozen=True, slots=True)
class Remotes:
    remotes: tuple[Remote, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)

    def get(self, name: str) -> Remote | None:
        return next((r for r in self.remotes if r.name == name), None)


def check_name(name: str) -> str:
    if not NAME.match(name) or name == LOCAL_HOST:
        raise RemoteConfigError(
            f"a remote's name is letters, digits, '-', '_' and '.' (up to 64, not "
            f"{LOCAL_HOST!r}): {name!r}"
        )
    return name


def check_command(command: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    if not command or not all(isinstance(part, str) and part for part in command):
        raise RemoteConfigError("a remote's command is a list of non-empty words, e.g. ssh HOST")
    if any("\0" in part for part in command):
        raise RemoteConfigError("a remote's command may not hold a NUL character")
    return tuple(command)


def parse(text: str, *, where: str = "settings.toml") -> Remotes:
    """The remotes ``text`` configures; each bad entry is one line in ``problems``."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Remotes(problems=(f"{where}: {exc}; no remotes",))
    entries = doc.get("remotes", [])
    if not isinstance(entries, list):
        return Remotes(problems=(f"{where}: remotes must be [[remotes]] tables",))
    found: list[Remote] = []
    problems: list[str] = []
    for number, entry in enumerate(entries[:MAX_REMOTES], 1):
        try:
            found.append(_remote(entry, {r.name for r in found}))
        except RemoteConfigError as exc:
            problems.append(f"{where}: remote {number}: {exc} (ignored)")
    if len(entries) > MAX_REMOTES:
        problems.append(f"{where}: only the first {MAX_REMOTES} remotes are used")
    return Remotes(tuple(found), tuple(problems))


def _remote(entry: object, taken: set[str]) -> Remote:
    if not isinstance(entry, dict):
        raise RemoteConfigError("must be a table")
    name = entry.get("name")
    command = entry.get("command")
    program = entry.get("agentbar", DEFAULT_PROGRAM)
    if not isinstance(name, str):
        raise RemoteConfigError("name must be a string")
    check_name(name)
    if name in taken:
        raise RemoteConfigError(f"the name {name!r} is used twice")
    if not isinstance(command, list):
        raise RemoteConfigError('command must be a list of words, e.g. ["ssh", "devbox"]')
    if not isinstance(program, str) or not program:
        raise RemoteConfigError("agentbar must be a non-empty string")
    return Remote(name, check_command(command), program)


def load(path: Path | None) -> Remotes:
    if path is None:
        return Remotes()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Remotes()
    except (OSError, UnicodeDecodeError) as exc:
        return Remotes(problems=(f"{path}: cannot be read: {exc}",))
    return parse(text, where=str(path))


# -- edits -------------------------------------------------------------------------------------


def add(path: Path, remote: Remote) -> None:
    """Add ``remote`` to the file at ``path`` (made if missing). Refuses a name taken."""
    check_name(remote.name)
    check_command(remote.command)
    import tomlkit  # noqa: PLC0415 - an edit's alone: the tray at rest does without
    from tomlkit.items import AoT  # noqa: PLC0415

    doc, before = _read(path)
    remotes = doc.get("remotes")
    if remotes is not None and not isinstance(remotes, AoT):
        raise RemoteConfigError(f"{path}: remotes is not a list of [[remotes]] tables")
    if parse(before).get(remote.name) is not None:
        raise RemoteConfigError(f"a remote named {remote.name!r} exists already")
    table = tomlkit.table()
    table["name"] = remote.name
    table["command"] = list(remote.command)
    if remote.program != DEFAULT_PROGRAM:
        table["agentbar"] = remote.program
    if remotes is None:
        remotes = tomlkit.aot()
        doc["remotes"] = remotes
    remotes.append(table)
    _write(path, doc, before)


def remove(path: Path, name: str) -> None:
    """Remove the remote named ``name``; ``RemoteConfigError`` when there is none."""
    from tomlkit.items import AoT  # noqa: PLC0415 - an edit's alone

    doc, before = _read(path)
    remotes = doc.get("remotes")
    index = None
    if isinstance(remotes, AoT):
        index = next((i for i, table in enumerate(remotes) if table.get("name") == name), None)
    if remotes is None or index is None:
        raise RemoteConfigError(f"no remote named {name!r}")
    del remotes[index]
    if not len(remotes):
        del doc["remotes"]
    _write(path, doc, before)


def _read(path: Path) -> tuple[tomlkit.TOMLDocument, str]:
    import tomlkit  # noqa: PLC0415 - an edit's alone
    from tomlkit.exceptions import TOMLKitError  # noqa: PLC0415

    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise RemoteConfigError(f"{path} cannot be read: {exc}") from None
    try:
        return tomlkit.parse(before), before
    except TOMLKitError as exc:
        raise RemoteConfigError(f"{path} is not valid TOML ({exc}); nothing changed") from None


def _write(path: Path, doc: tomlkit.TOMLDocument, before: str) -> None:
    import tomlkit  # noqa: PLC0415 - an edit's alone

    text = tomlkit.dumps(doc)
    tomllib.loads(text)  # what we write must read back
    if before:
        write_private(path.with_name(path.name + ".bak"), before.encode())
    write_private(path, text.encode())
