"""Unified diffs of an edit's old and new text, and of an ``apply_patch`` envelope, as lines
of kinds a page colours (pure values; any thread).

Bounded: at most ``DIFF_LINES`` lines of at most ``DIFF_LINE_CHARS`` characters, a line of kind
``cut`` counting the rest; an edit over ``DIFF_INPUT_CHARS`` is not diffed at all, and one of
more than ``DIFF_WORK`` line pairs is one hunk between the lines both sides share at their ends
(``difflib`` is quadratic at worst). The call's input keeps everything.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

DIFF_LINES = 1500
DIFF_LINE_CHARS = 2000
DIFF_INPUT_CHARS = 400_000
# Lines before x lines after past which difflib's matching (quadratic at worst: 3 s for 5,500
# lines a side with every third changed) gives way to one hunk between the shared ends.
DIFF_WORK = 1_000_000
CONTEXT_LINES = 3


class DiffKind(StrEnum):
    FILE = "file"  # the file a part of the diff is about
    HUNK = "hunk"  # "@@ -1,3 +1,4 @@"
    ADD = "add"
    DEL = "del"
    CONTEXT = "context"
    CUT = "cut"  # the rest was left out (``text`` says how much)


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: DiffKind
    text: str  # without the leading "+", "-" or " "

    def to_json(self) -> dict[str, str]:
        return {"kind": str(self.kind), "text": self.text}


def unified_diff(pairs: Iterable[tuple[str, str]], path: str | None) -> tuple[DiffLine, ...]:
    """The unified diff of each (old, new) pair in turn, bounded (see the module docstring)."""
    head = [DiffLine(DiffKind.FILE, path[:DIFF_LINE_CHARS])] if path else []
    return _bounded(head, (line for old, new in pairs for line in _diff_lines(old, new)))


def _bounded(head: list[DiffLine], lines: Iterable[DiffLine]) -> tuple[DiffLine, ...]:
    """``head`` then ``lines``, at most ``DIFF_LINES`` in all, a ``cut`` line counting the rest."""
    out = head
    left = 0
    for line in lines:
        if len(out) >= DIFF_LINES:
            left += 1
        else:
            out.append(line)
    if left:
        out.append(DiffLine(DiffKind.CUT, f"{left} more lines"))
    return tuple(out)


def _diff_lines(old: str, new: str) -> Iterator[DiffLine]:
    size = len(old) + len(new)
    if size > DIFF_INPUT_CHARS:
        yield DiffLine(DiffKind.CUT, f"change of {size} characters, too large to diff")
        return
    before, after = old.splitlines(), new.splitlines()
    if len(before) * len(after) > DIFF_WORK:
        yield from _one_hunk(before, after)
        return
    lines = difflib.unified_diff(before, after, lineterm="", n=CONTEXT_LINES)
    for number, line in enumerate(lines):
        if number < 2:
            continue  # the "---" and "+++" headers: the path is the diff's first line
        if line.startswith("@@"):
            yield DiffLine(DiffKind.HUNK, line[:DIFF_LINE_CHARS])
            continue
        kind = {"+": DiffKind.ADD, "-": DiffKind.DEL}.get(line[:1], DiffKind.CONTEXT)
        yield DiffLine(kind, line[1:][:DIFF_LINE_CHARS])


def _one_hunk(before: list[str], after: list[str]) -> Iterator[DiffLine]:
    """A correct but not minimal diff for edits too big to match line by line in time: the
    lines both share at the start and at the end kept as they are, everything between them
    deleted and added (one hunk)."""
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    limit = min(len(before), len(after)) - head
    while tail < limit and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    if head == len(before) == len(after):
        return
    start = max(0, head - CONTEXT_LINES)
    keep = min(tail, CONTEXT_LINES)
    old_end, new_end = len(before) - tail + keep, len(after) - tail + keep
    yield DiffLine(
        DiffKind.HUNK,
        f"@@ -{start + 1},{old_end - start} +{start + 1},{new_end - start} @@",
    )
    for line in before[start:head]:
        yield DiffLine(DiffKind.CONTEXT, line[:DIFF_LINE_CHARS])
    for line in before[head : len(before) - tail]:
        yield DiffLine(DiffKind.DEL, line[:DIFF_LINE_CHARS])
    for line in after[head : len(after) - tail]:
        yield DiffLine(DiffKind.ADD, line[:DIFF_LINE_CHARS])
    for line in after[len(after) - tail : new_end]:
        yield DiffLine(DiffKind.CONTEXT, line[:DIFF_LINE_CHARS])


_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.*)$")


def patch_diff(patch: object) -> tuple[DiffLine, ...] | None:
    """An ``apply_patch`` envelope (Codex, opencode) as diff lines, bounded like a diff."""
    if not isinstance(patch, str) or "*** Begin Patch" not in patch[:200]:
        return None
    lines = (_patch_line(raw) for raw in patch[:DIFF_INPUT_CHARS].splitlines())
    out = _bounded([], (line for line in lines if line is not None))
    return out or None


def _patch_line(raw: str) -> DiffLine | None:
    found = _PATCH_FILE.match(raw)
    if found:
        return DiffLine(DiffKind.FILE, f"{found.group(2).strip()} ({found.group(1).lower()})")
    if raw.startswith("*** "):
        return None  # Begin/End Patch, Move to, End of File
    if raw.startswith("@@"):
        return DiffLine(DiffKind.HUNK, raw[:DIFF_LINE_CHARS])
    kind = {"+": DiffKind.ADD, "-": DiffKind.DEL}.get(raw[:1], DiffKind.CONTEXT)
    return DiffLine(kind, raw[1:][:DIFF_LINE_CHARS])
