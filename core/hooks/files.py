"""Reading and writing the agents' settings files safely (main thread).

Writes are atomic: a temporary file in the same folder, flushed and fsync'ed, given the
original's permission bits, then ``os.replace``d over the original (and the folder fsync'ed), so
the file is always either the old or the new content, never a mix. A symlinked settings file
(a dotfiles repository) is written through to its target, not replaced by a plain file.

What agentbar wrote is remembered in ``<data dir>/hooks/installed.json`` (per file: the hash of
the original and of what agentbar wrote, whether agentbar created the file), so ``uninstall``
can tell "exactly as agentbar left it" (restore the original byte for byte) from "changed since"
(take out only agentbar's entries).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import HooksFileError

BACKUP_SUFFIX = ".agentbar-backup"
NEW_FILE_MODE = 0o600  # settings can hold secrets (API key helpers, environment)


def real_path(path: Path) -> Path:
    """``path`` with symlinks resolved (a missing file: its folder's)."""
    return Path(os.path.realpath(path))


def read(path: Path) -> bytes | None:
    """The file's bytes, or None when there is none; ``HooksFileError`` when it cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise HooksFileError(f"{path} is a folder, not a file") from None
    except OSError as exc:
        raise HooksFileError(f"cannot read {path}: {exc.strerror or exc}") from None


def decode(data: bytes | None, path: Path) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        why = f"{exc.reason} at byte {exc.start}"
        raise HooksFileError(f"{path} is not UTF-8 text ({why})") from None


def mode_of(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def atomic_write(path: Path, data: bytes, mode: int | None) -> None:
    """Replace ``path`` with ``data`` all at once; on any failure the file is untouched."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".agentbar-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, NEW_FILE_MODE if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(path.parent)


def remove_file(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def unified_diff(before: str | None, after: str | None, shown: str) -> str:
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        new,
        fromfile="/dev/null" if before is None else shown,
        tofile="/dev/null" if after is None else shown,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass
class Record:
    """What agentbar did to one file."""

    before_sha256: str | None  # None: the file did not exist
    after_sha256: str
    backup: str | None = None  # the backup that holds the original, if agentbar made one
    feature_added: bool = False  # Codex: agentbar set [features] codex_hooks
    made_folders: list[str] = field(default_factory=list)  # created for a new file, outermost first
    created_keys: list[str] = field(default_factory=list)  # hooks, hooks.<Event> added by agentbar


class InstallState:
    """``<data dir>/hooks/installed.json``: one ``Record`` per settings file (by real path)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "hooks" / "installed.json"

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            value = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def get(self, file: Path) -> Record | None:
        raw = self._load().get(str(file))
        if not isinstance(raw, dict):
            return None
        try:
            return Record(
                before_sha256=_opt_str(raw.get("before_sha256")),
                after_sha256=str(raw["after_sha256"]),
                backup=_opt_str(raw.get("backup")),
                feature_added=raw.get("feature_added") is True,
                made_folders=[str(f) for f in _list(raw.get("made_folders"))],
                created_keys=[str(k) for k in _list(raw.get("created_keys"))],
            )
        except KeyError:
            return None

    def put(self, file: Path, record: Record | None) -> None:
        entries = self._load()
        if record is None:
            if entries.pop(str(file), None) is None:
                return
        else:
            entries[str(file)] = asdict(record)
        data = (json.dumps(entries, indent=2, sort_keys=True) + "\n").encode()
        atomic_write(self.path, data, NEW_FILE_MODE)


def missing_folders(path: Path) -> list[Path]:
    """The folders above ``path`` that do not exist yet, outermost first."""
    missing = []
    for folder in path.parents:
        if folder.exists():
            break
        missing.append(folder)
    return list(reversed(missing))


def remove_empty_folders(folders: list[str]) -> None:
    """Remove the folders agentbar made, innermost first, if nothing else was put in them."""
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:
            return


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None
