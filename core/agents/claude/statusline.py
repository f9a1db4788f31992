"""Claude Code's status-line link: agentbar's program as ``statusLine`` in its settings.json,
running the person's own command after it (main thread).

Install puts ``<python> -I -S <abs>/agentbar_statusline.py --data-dir <dir> [--then <their
command>]`` where the person's ``statusLine.command`` was, keeping the object's other keys
(``padding``...), after showing the diff; the file's bytes before are kept as a backup and what
was there (the whole ``statusLine`` value, or none) in ``<data dir>/limits/status-line-link.json``.
Uninstall writes the backup back byte for byte when the file is still as agentbar left it, and
otherwise puts the remembered ``statusLine`` value back in place of agentbar's, leaving the rest
of the file as the person has it now.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....assets import statusline as statusline_assets
from ...hooks import files, json_settings
from ...hooks.errors import HooksFileError
from ...privacy import private_dir

MARKER = "agentbar_statusline.py"
LINK_RECORD = "status-line-link.json"
BACKUP_SUFFIX = ".agentbar-status-line-backup"
KEY = "statusLine"


def script() -> Path:
    return Path(statusline_assets.__file__).resolve().parent / MARKER


def link_command(data_dir: Path, then: str | None, python: str | None = None) -> str:
    argv = [python or sys.executable, "-I", "-S", str(script()), "--data-dir", str(data_dir)]
    if then is not None:
        argv += ["--then", then]
    return shlex.join(argv)


def is_link(value: object) -> bool:
    """Whether a ``statusLine`` value is agentbar's link."""
    command = value.get("command") if isinstance(value, dict) else None
    return isinstance(command, str) and MARKER in command


def backup_of(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def record_path(data_dir: Path) -> Path:
    return data_dir / "limits" / LINK_RECORD


@dataclass
class LinkPlan:
    path: Path
    before: bytes | None
    after: bytes | None
    summary: str
    record: dict[str, Any] | None = None  # what install remembers (None: uninstall forgets)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        before = None if self.before is None else self.before.decode("utf-8", "replace")
        after = None if self.after is None else self.after.decode("utf-8", "replace")
        return files.unified_diff(before, after, str(self.path))


def plan_install(path: Path, data_dir: Path, python: str | None = None) -> LinkPlan:
    """The settings file with agentbar's link as its status line; ``HooksFileError`` when the
    file cannot be read or is no JSON object, or its ``statusLine`` is not a command."""
    before = files.read(path)
    data, style = json_settings.load(files.decode(before, path), str(path))
    previous = data.get(KEY)
    if is_link(previous):
        return LinkPlan(path, before, before, "status-line link already installed")
    if previous is not None and not (
        isinstance(previous, dict) and previous.get("type", "command") == "command"
    ):
        raise HooksFileError(f"{path}: {KEY} is not a command agentbar can run after its own")
    then = previous.get("command") if isinstance(previous, dict) else None
    if then is not None and not isinstance(then, str):
        raise HooksFileError(f"{path}: {KEY}.command is not text")
    link = dict(previous) if isinstance(previous, dict) else {"type": "command"}
    link["command"] = link_command(data_dir, then or None, python)
    after = json_settings.dump({**data, KEY: link}, style).encode("utf-8")
    record = {
        "path": str(path),
        "had": KEY in data,
        "previous": previous,
        "after_sha256": files.sha256(after),
        "existed": before is not None,
    }
    notes = [] if then else ["no status line was set: agentbar's link prints a short one"]
    return LinkPlan(path, before, after, "status-line link installed", record, notes)


def plan_uninstall(path: Path, data_dir: Path) -> LinkPlan:
    """The settings file as it was before the link (see the module docstring)."""
    remembered = _read_record(record_path(data_dir))
    before = files.read(path)
    if remembered is not None and files.sha256(before) == remembered.get("after_sha256"):
        if not remembered.get("existed"):  # agentbar made the file: it goes again
            return LinkPlan(path, before, None, "status-line link removed (file deleted)")
        exact = files.read(backup_of(path))
        if exact is not None:
            return LinkPlan(path, before, exact, "status-line link removed (file restored)")
    data, style = json_settings.load(files.decode(before, path), str(path))
    if not is_link(data.get(KEY)):
        return LinkPlan(path, before, before, "status-line link not installed")
    if remembered is not None and remembered.get("had"):
        data[KEY] = remembered.get("previous")
    else:
        data.pop(KEY)
    after = json_settings.dump(data, style).encode("utf-8")
    return LinkPlan(path, before, after, "status-line link removed")


def apply(plan: LinkPlan, data_dir: Path) -> None:
    """Write the planned file (a backup first on install) and the link record."""
    backup = backup_of(plan.path)
    mode = files.mode_of(plan.path)
    if plan.record is not None:
        if plan.before is not None:
            files.atomic_write(backup, plan.before, mode)
        private_dir(record_path(data_dir).parent)
        files.atomic_write(record_path(data_dir), json.dumps(plan.record).encode("utf-8"), 0o600)
    if plan.after is None:
        files.remove_file(plan.path)
    else:
        files.atomic_write(plan.path, plan.after, mode)
    if plan.record is None:
        files.remove_file(record_path(data_dir))
        files.remove_file(backup)


def status(path: Path) -> str:
    data, _ = json_settings.load(files.decode(files.read(path), path), str(path))
    value = data.get(KEY)
    if not is_link(value):
        return "status-line link not installed"
    then = _then_of(value) if isinstance(value, dict) else None
    return "status-line link installed" + (f" (then runs: {then})" if then else "")


def _then_of(value: dict[str, Any]) -> str | None:
    argv = shlex.split(str(value.get("command", "")))
    if "--then" in argv and argv.index("--then") + 1 < len(argv):
        return argv[argv.index("--then") + 1]
    return None


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
