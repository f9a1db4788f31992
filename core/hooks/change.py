"""One agent's planned change to its settings file as the person is shown it, here or on a
remote host (``agentbar hooks --host``), and how it crosses a channel (values; main thread)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import files
from .installer import Plan


@dataclass(frozen=True)
class Change:
    agent: str
    shown: str  # the file, as ``Target.shown`` names it
    path: str  # the file as the agent finds it (the question names it)
    changed: bool
    summary: str
    diff: str
    notes: tuple[str, ...] = ()
    digest: str = ""  # what was shown (``digest``): a write of anything else is refused

    @classmethod
    def of(cls, plan: Plan) -> Change:
        return cls(
            agent=str(plan.target.agent),
            shown=plan.target.shown,
            path=str(plan.target.path),
            changed=plan.changed,
            summary=plan.summary,
            diff=plan.diff() if plan.changed else "",
            notes=tuple(plan.notes),
            digest=digest(plan),
        )

    def to_wire(self) -> dict[str, Any]:
        return {"agent": self.agent, "shown": self.shown, "path": self.path,
                "changed": self.changed, "summary": self.summary, "diff": self.diff,
                "notes": list(self.notes), "digest": self.digest}  # fmt: skip

    @classmethod
    def from_wire(cls, doc: dict[str, Any]) -> Change:
        """``TypeError`` / ``KeyError`` for an answer that does not read."""
        fields = ("agent", "shown", "path", "summary", "diff", "digest")
        if not all(isinstance(doc[name], str) for name in fields):
            raise TypeError("a planned change whose fields are not text")
        notes = doc["notes"]
        if not isinstance(notes, list):
            raise TypeError("notes are not a list")
        return cls(doc["agent"], doc["shown"], doc["path"], doc["changed"] is True,
                   doc["summary"], doc["diff"], tuple(str(n) for n in notes),
                   doc["digest"])  # fmt: skip


def digest(plan: Plan) -> str:
    """The file, its bytes now and the bytes planned: a plan made again with the same digest
    writes exactly what was shown."""
    return digest_of(plan.target.real, plan.before, plan.after)


def digest_of(path: Path, before: bytes | None, after: bytes | None) -> str:
    """``digest`` of any planned change to the file ``path`` (the status-line link's too)."""
    parts = (str(path), files.sha256(before), files.sha256(after))
    return files.sha256("\0".join(str(p) for p in parts).encode()) or ""
