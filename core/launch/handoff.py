"""What one session hands to another agent: its clean last answer, or a Markdown brief of it
(pure over replay items; read through ``core/replay`` in a worker thread).

Both come from the transcript the agent wrote (``Replay``), never from a terminal's screen: the
last answer is the assistant text of the last turn after its last tool call (Claude writes one
answer as several lines: they are joined); the brief gives the goal (the first prompt, a slash
command such as ``/init`` included, one that only tends the session such as ``/clear`` left
out), the decisions along the way (the person's later prompts, the calls they refused), the
files the session changed and the todos still open (as the agent's ``ToolVocabulary`` reads its
calls: Claude's Edit or TodoWrite, Codex's apply_patch or update_plan) and the last answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from ..agents.base import ToolVocabulary
from ..errors import LaunchError
from ..model import SessionSnapshot, iso
from ..replay.model import MAIN_THREAD, ItemKind, ReplayItem
from ..replay.pages import Replay

MAX_HANDOFF_CHARS = 60_000  # what is typed into a TUI or passed as a prompt
BACK_PAGES = 20  # how far back the last answer is looked for
LINE_CHARS = 300
DONE = frozenset({"completed", "done", "cancelled"})


class What(StrEnum):
    ANSWER = "answer"
    BRIEF = "brief"


class NothingToHandOff(LaunchError, LookupError):
    title = "Nothing to hand off"


def last_answer(replay: Replay, snap: SessionSnapshot) -> str:
    """The session's last answer, read from the end of its transcript a page at a time."""
    before: int | None = None
    for _ in range(BACK_PAGES):
        page = replay.page(snap, MAIN_THREAD, before=before)
        answer = answer_in(list(page.items))
        if answer is not None:
            return answer
        if page.before is None:
            break
        before = page.before
    raise NothingToHandOff("the session has no answer yet")


def answer_in(items: list[ReplayItem]) -> str | None:
    """The assistant text after the last prompt, tool call or result among ``items``."""
    parts: list[str] = []
    for item in reversed(items):
        if item.agent_id is not None:
            continue
        if item.kind is ItemKind.ASSISTANT and item.text.strip():
            parts.append(item.text.strip())
        elif item.kind in (ItemKind.USER, ItemKind.TOOL_CALL, ItemKind.TOOL_RESULT) and parts:
            break
        elif item.kind is ItemKind.USER:
            return None  # a prompt with no answer after it: this turn has none yet
    return "\n\n".join(reversed(parts)) if parts else None


@dataclass
class _Digest:
    prompts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)  # path -> tools, in order
    todos: list[tuple[str, str]] = field(default_factory=list)  # (status, text)
    answer: list[str] = field(default_factory=list)  # the current run of answer text
    last_answer: str | None = None
    calls: dict[str, str] = field(default_factory=dict)  # call id -> summary


def brief(
    snap: SessionSnapshot, items: Iterable[ReplayItem], tools: ToolVocabulary | None = None
) -> str:
    """A Markdown brief of the session for another agent to take over from; ``tools``: what
    the session's agent's tool calls mean (None: no files or todos are listed)."""
    digest = _Digest()
    for item in items:
        if item.agent_id is None:
            _take(digest, item, tools)
    if digest.answer:
        digest.last_answer = "\n\n".join(digest.answer)
    if not digest.prompts and digest.last_answer is None:
        raise NothingToHandOff("the session has no prompt or answer yet")
    return render(snap, digest)


def _take(digest: _Digest, item: ReplayItem, tools: ToolVocabulary | None) -> None:
    match item.kind:
        case ItemKind.USER:
            if item.text.strip() and not _housekeeping(item):
                digest.prompts.append(item.text.strip())
            _close_answer(digest)
        case ItemKind.ASSISTANT:
            if item.text.strip():
                digest.answer.append(item.text.strip())
        case ItemKind.TOOL_CALL:
            _close_answer(digest)
            if item.call_id:
                digest.calls[item.call_id] = f"{item.name}: {item.summary or ''}".strip(": ")
            _tool_call(digest, item, tools)
        case ItemKind.TOOL_RESULT:
            _close_answer(digest)
            if item.denied:
                digest.refused.append(digest.calls.get(item.call_id or "", "a tool call"))
        case _:
            pass


# Slash commands that tend the session rather than ask for work: no goal, no decision. Any
# other command counts as a prompt (``/init``, ``/review 42``, a plugin's).
_HOUSEKEEPING_COMMANDS = frozenset(
    {"/clear", "/exit", "/quit", "/model", "/resume", "/compact", "/cost", "/status", "/config",
     "/help", "/login", "/logout", "/doctor", "/permissions", "/context", "/usage", "/memory",
     "/hooks", "/mcp", "/agents", "/ide", "/theme", "/vim", "/export", "/rewind"}
)  # fmt: skip


def _housekeeping(item: ReplayItem) -> bool:
    view = item.view
    return view is not None and view.command in _HOUSEKEEPING_COMMANDS and not view.args


def _close_answer(digest: _Digest) -> None:
    if digest.answer:
        digest.last_answer = "\n\n".join(digest.answer)
        digest.answer = []


def _tool_call(digest: _Digest, item: ReplayItem, tools: ToolVocabulary | None) -> None:
    if tools is None:
        return
    name = item.name or ""
    for path in tools.changed_files(name, item.input):
        digest.files.setdefault(path, []).append(name)
    todos = tools.todos(name, item.input)
    if todos is not None:
        digest.todos = todos


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"


def render(snap: SessionSnapshot, digest: _Digest) -> str:
    title = snap.title or (digest.prompts[0] if digest.prompts else snap.key.session_id)
    out = [f"# Hand-off: {_line(title)}", ""]
    out.append(
        f"From {snap.key.agent} session `{snap.key.session_id}` in `{snap.project or '?'}` "
        f"(last active {iso(snap.last_activity) or 'unknown'}). Continue this work."
    )
    out += ["", "## Goal", "", digest.prompts[0] if digest.prompts else "(no prompt recorded)"]
    decisions = [f"- Asked: {_line(p)}" for p in digest.prompts[1:]]
    decisions += [f"- Refused: {_line(r)}" for r in digest.refused]
    out += ["", "## Decisions along the way", ""]
    out += decisions or ["- (none recorded)"]
    out += ["", "## Changed files", ""]
    if digest.files:
        for path, tools in digest.files.items():
            counts = ", ".join(f"{t} ×{tools.count(t)}" for t in dict.fromkeys(tools))
            out.append(f"- `{path}` ({counts})")
    else:
        out.append("- (none recorded)")
    open_todos = [(s, t) for s, t in digest.todos if s not in DONE]
    out += ["", "## Open todos", ""]
    if open_todos:
        out += [f"- [ ] {_line(t)}" + (" (in progress)" if s == "in_progress" else "")
                for s, t in open_todos]  # fmt: skip
    else:
        out.append("- (none recorded)")
    out += ["", "## Last answer", "", digest.last_answer or "(no answer yet)", ""]
    return cap("\n".join(out))


def cap(text: str) -> str:
    if len(text) <= MAX_HANDOFF_CHARS:
        return text
    return text[: MAX_HANDOFF_CHARS - 40] + "\n\n[… cut: the hand-off was too long]\n"


def handoff_text(
    replay: Replay, snap: SessionSnapshot, what: What, tools: ToolVocabulary | None = None
) -> str:
    """The answer or the brief of ``snap``; raises ``NothingToHandOff``, and ``NotFound``
    when the transcript cannot be read. ``tools``: the session's agent's (see ``brief``)."""
    if what is What.ANSWER:
        return cap(last_answer(replay, snap))
    return brief(snap, replay.items(snap, MAIN_THREAD), tools)
