"""Everything agentbar writes is readable by its user alone: the private umask, private folders
and files, and tightening what an older agentbar left open (each entry point sets the umask
and tightens on its main thread, first thing: ``core.cli.prepare``; the helpers run on any
thread).

The umask (0o077) covers every file and folder the process creates; the helpers set the mode
explicitly as well, for code that runs without an entry point (tests, a library caller). The
programs agentbar starts that are not its own (the agents it launches) get the user's umask
back (``user_umask``): their files are theirs, and agentbar must not change how they are made.

Tightening touches agentbar's own files only: the data dir and the config dir themselves, the
names agentbar writes at the top of the data dir, and the folders that hold nothing else
(``events/``, ``tasks/``, ``hooks/``). Symlinks are never followed, entries owned by another
user are left alone, and a folder shared by design (the sticky bit, like /tmp) or the home
folder is never narrowed, whatever ``AGENTBAR_DATA_DIR`` says.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600
OTHERS = 0o077  # the group's and everyone else's bits

# Top-level names in the data dir that are agentbar's, with what follows them: SQLite's -wal,
# -shm, -journal, a log's .1 .2, a moved-aside copy, a ".name.pid.tmp" being written.
DATA_FILES = (
    "index.sqlite3",
    "engine.lock",
    "tray.lock",
    "server.json",
    "agentbar.log",
    "serve.log",
    "notifications-paused.json",
    "welcomed",  # the tray's first start was told (tray/welcome.py)
)
DATA_FOLDERS = ("events", "tasks", "hooks")  # agentbar's alone, all the way down

Listing = Callable[[Path], Iterator[tuple[Path, os.stat_result]]]  # a folder's entries, lstat'ed

_user_umask: int | None = None


def set_private_umask() -> int:
    """Make every file this process creates private (0o077); the user's umask, remembered the
    first time, is returned (and kept for ``user_umask``)."""
    global _user_umask  # noqa: PLW0603 - the process's umask is process-wide too
    previous = os.umask(PRIVATE_UMASK)
    if _user_umask is None:
        _user_umask = previous
    return _user_umask


def user_umask() -> int:
    """The umask the user gave this process, for programs agentbar starts that are not its own
    (the agents): what they write is theirs and keeps the modes it would have without us."""
    if _user_umask is not None:
        return _user_umask
    current = os.umask(PRIVATE_UMASK)
    os.umask(current)
    return current


def private_dir(path: Path) -> Path:
    """``path`` made if missing, and its missing parents, each 0700 (as the XDG base directory
    spec asks of a folder made to write in); one that exists is left as it is."""
    missing = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        with contextlib.suppress(OSError):
            os.chmod(folder, DIR_MODE)  # mkdir's mode passes through the umask; say it outright
    return path


def open_private(path: Path, flags: int) -> int:
    """``os.open(path, flags | O_CREAT, 0600)``: a new file is private whatever the umask."""
    return os.open(path, flags | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)


def create_private(path: Path) -> None:
    """Make ``path`` exist, private if made now (SQLite gives its -wal, -shm and -journal the
    mode of the database file, so creating that first makes them private too)."""
    os.close(open_private(path, os.O_WRONLY))


if sys.platform == "win32":

    def narrow_open_file(fd: int) -> None:
        """Windows: a file's access is its folder's ACL; there are no mode bits to narrow."""

else:

    def narrow_open_file(fd: int) -> None:
        """Make the open file ``fd`` 0600 (one made wider before, by an older agentbar or
        another umask); a file system without modes is left as it is."""
        with contextlib.suppress(OSError):
            os.fchmod(fd, FILE_MODE)


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` at once (a temporary file, then a rename), mode 0600."""
    private_dir(path.parent)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = open_private(temp, os.O_WRONLY | os.O_TRUNC)
    try:
        narrow_open_file(fd)  # a leftover temporary file keeps its old mode
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(temp, path)


# -- tightening what is already there ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tightened:
    """What ``tighten`` narrowed: the top folders (with their old mode), and how many files and
    folders inside them (in ``inside``) were open to others."""

    folders: tuple[tuple[Path, int], ...] = ()
    inside: tuple[Path, ...] = ()  # the top folders something inside was narrowed in
    files: int = 0
    inner_folders: int = 0

    def __bool__(self) -> bool:
        return bool(self.folders or self.files or self.inner_folders)

    def line(self, home: str | None = None) -> str:
        """One line for stderr (after "agentbar: ") and the log; empty when nothing was
        narrowed."""
        if not self:
            return ""
        home = os.path.expanduser("~") if home is None else home
        counted = [
            f"{n} {what}{'s' if n != 1 else ''}"
            for n, what in ((self.files, "file"), (self.inner_folders, "folder"))
            if n
        ]
        were = "was" if self.files + self.inner_folders == 1 else "were"
        inside = f"{' and '.join(counted)} {were} readable by others"
        if not self.folders:
            where = " and ".join(_short(p, home) for p in self.inside)
            return f"made {where} private; {inside}"
        named = " and ".join(f"{_short(p, home)} (was {mode:04o})" for p, mode in self.folders)
        return f"made {named} private" + (f"; {inside}" if counted else "")


def tighten(data_dir: Path, config_dir: Path | None = None) -> Tightened:
    """Narrow agentbar's folders to 0700 and its files to 0600 where they are wider (what an
    older agentbar, or a wide umask, left); what it changed, for one line saying so."""
    folders: list[tuple[Path, int]] = []
    inside: list[Path] = []
    counts = [0, 0]  # files, folders below the top ones
    # The config dir is agentbar's alone; in the data dir only the names agentbar writes.
    tops: list[tuple[Path, Listing]] = [(data_dir, _data_entries)]
    if config_dir is not None and config_dir != data_dir:
        tops.append((config_dir, _below))
    for top, listed in tops:
        if not _may_narrow(top):
            continue
        old = _narrow(top, os.lstat(top))
        if old is not None:
            folders.append((top, old))
        before = sum(counts)
        for path, info in listed(top):
            if _narrow(path, info) is not None:
                counts[stat.S_ISDIR(info.st_mode)] += 1
        if sum(counts) > before:
            inside.append(top)
    return Tightened(tuple(folders), tuple(inside), counts[0], counts[1])


def _data_entries(data_dir: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """agentbar's own entries in the data dir, and everything below its own folders."""
    for path, info in _below(data_dir, deep=False):
        if path.name in DATA_FOLDERS and stat.S_ISDIR(info.st_mode):
            yield path, info
            yield from _below(path)
        elif _is_agentbar_file(path.name):
            yield path, info


def _is_agentbar_file(name: str) -> bool:
    bare = name[1:] if name.startswith(".") else name
    return any(bare == known or bare.startswith((known + ".", known + "-")) for known in DATA_FILES)


def _below(folder: Path, *, deep: bool = True) -> Iterator[tuple[Path, os.stat_result]]:
    """Every entry below ``folder`` with its ``lstat`` (one call each), a folder before what
    it holds; symlinks are listed, never followed."""
    pending = [folder]
    while pending:
        try:
            listing = os.scandir(pending.pop())
        except OSError:
            continue
        with listing:
            for entry in listing:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                path = Path(entry.path)
                yield path, info
                if deep and stat.S_ISDIR(info.st_mode):
                    pending.append(path)


def _may_narrow(folder: Path) -> bool:
    """A real folder of ours that is not shared by design (sticky bit) nor the home folder."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & stat.S_ISVTX:
        return False
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return False
    home = os.path.expanduser("~")
    with contextlib.suppress(OSError):
        if home not in ("", "/") and os.path.samefile(folder, home):
            return False
    return folder.resolve() != Path(folder.anchor or "/")


def _narrow(path: Path, info: os.stat_result) -> int | None:
    """Take the group's and others' bits off ``path`` (a file or folder of ours, not a
    symlink, not shared by design); its old mode, or None when it was left as it was."""
    mode = stat.S_IMODE(info.st_mode)
    if not mode & OTHERS or stat.S_ISLNK(info.st_mode) or info.st_mode & stat.S_ISVTX:
        return None
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return None
    try:
        try:
            os.chmod(path, mode & ~OTHERS, follow_symlinks=False)
        except (NotImplementedError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            os.chmod(path, mode & ~OTHERS)  # no such call here; the lstat said: not a link
    except OSError:
        return None
    return mode


def _short(path: Path, home: str) -> str:
    text = str(path)
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text
