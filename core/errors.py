"""One root for agentbar's errors, each with a title and a message a person can read, and the
runtime faults that reach the person rather than only the log (plain values; any thread).

Every error agentbar raises on purpose derives from ``AgentbarError``; the ones that also
mean a standard kind of failure keep that base too, so ``except LookupError`` still works::

    AgentbarError                      title: what failed, message: why and what to do
    ├── HooksFileError                 a settings file the hook installer must not touch
    ├── IndexUnusable                  the index cannot be read (it is rebuilt)
    ├── UnreadableFile                 a transcript that cannot be decoded (counted, skipped)
    ├── LaunchError
    │   ├── BadLaunch (ValueError)     a launch that cannot be made as asked
    │   ├── NoSuchTask (LookupError)   no launched agent by that id
    │   ├── NotRunning (RuntimeError)  the launched agent has exited
    │   ├── NotWaiting (RuntimeError)  its screen shows no approval prompt
    │   └── NothingToHandOff (LookupError)
    ├── ServerError
    │   ├── NoServer                   no agentbar server runs (or it does not answer)
    │   ├── ApiError                   the server answered with an error (status, code)
    │   └── Refused                    the server refuses a request (status, code)
    └── ReplayError
        ├── NotFound                   no such thread, item or transcript
        └── OutsideRoots               a path outside every agent's folder

A ``Fault`` is what the engine (and the watcher feeding it) reports while running: a folder it
cannot watch, an index it had to rebuild, a folder it cannot read. Faults are published to the
engine's fault subscribers; the tray shows each as a notice and a menu line, until the same
fault comes again marked ``over`` (the watch that failed succeeded at a later try).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import ClassVar


class AgentbarError(Exception):
    """An error a person can read: ``title`` (a few words: what failed) and ``message`` (why,
    and what to do). ``str(error)`` is the message, as before the root existed."""

    title: ClassVar[str] = "agentbar failed"

    def __init__(self, message: str = "", *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message or self.title
        if title is not None:
            self.title = title  # type: ignore[misc]  # (an instance's own title)


class LaunchError(AgentbarError):
    title = "Cannot launch or answer the agent"


class ServerError(AgentbarError):
    title = "agentbar's server failed"


class ReplayError(AgentbarError):
    title = "Cannot read the session"


class FaultKind(StrEnum):
    WATCH_LIMIT = "watch_limit"  # inotify's per-user limit on watches (or instances)
    CANNOT_WATCH = "cannot_watch"  # a folder that cannot be watched for another reason
    UNREADABLE = "unreadable"  # a folder or file the engine cannot read
    INDEX = "index"  # the index could not be read or written
    ACTION = "action"  # something the person asked for failed (a launch, an approval)


@dataclass(frozen=True, slots=True)
class Fault:
    """A runtime fault for the person: what failed (``title``), why and what to do
    (``message``), about which folder or file (``subject``, for telling one from another).
    ``over``: the same problem has gone (the folder is watched after all), so it is no longer
    listed."""

    kind: FaultKind
    title: str
    message: str
    subject: str = ""
    over: bool = False

    @property
    def key(self) -> tuple[FaultKind, str]:
        """Faults with the same key are the same problem seen again."""
        return (self.kind, self.subject)

    def to_json(self) -> dict[str, str]:
        return {
            "kind": str(self.kind),
            "title": self.title,
            "message": self.message,
            "subject": self.subject,
        }

    def line(self) -> str:
        """The fault in one line, for a terminal or a log."""
        if self.over:
            return f"no longer: {self.title} ({self.subject})"
        return f"{self.title}: {self.message}"


WATCH_LIMIT_SYSCTLS = {
    errno.ENOSPC: "fs.inotify.max_user_watches",
    errno.EMFILE: "fs.inotify.max_user_instances",
}


def watch_fault(folder: Path, exc: OSError) -> Fault:
    """What it means that ``folder`` cannot be watched, in words, with the remedy where there
    is one (inotify's limits: the sysctl to raise)."""
    sysctl = WATCH_LIMIT_SYSCTLS.get(exc.errno or 0)
    if sysctl is not None:
        return Fault(
            FaultKind.WATCH_LIMIT,
            "File watch limit reached",
            f"agentbar cannot watch {folder} ({exc.strerror or exc}): the system's limit on "
            f"file watches ({sysctl}) is used up. Changes there are seen by polling, a few "
            f"seconds late. To raise the limit: sudo sysctl {sysctl}=524288 (and add "
            f"'{sysctl}=524288' to /etc/sysctl.conf to keep it).",
            str(folder),
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Fault(
            FaultKind.UNREADABLE,
            "Cannot read a folder",
            f"agentbar may not read {folder} ({exc.strerror or exc}): sessions there are not "
            "shown. Give your user read access to it.",
            str(folder),
        )
    return Fault(
        FaultKind.CANNOT_WATCH,
        "Cannot watch a folder",
        f"agentbar cannot watch {folder} ({exc.strerror or exc}); changes there are seen by "
        "polling, a few seconds late.",
        str(folder),
    )
