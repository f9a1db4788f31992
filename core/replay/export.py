"""A session's replay as a file to keep or share: Markdown, JSON or one self-contained HTML page
(any thread but the engine's).

Each export is a stream of text chunks (a 50 MB transcript is never held whole). Sub-agent
threads are nested where they were spawned. Transcript text is untrusted: the HTML page escapes
every string it shows, carries no script at all and forbids any with its own
Content-Security-Policy; Markdown puts tool inputs and outputs in fences longer than any run of
backticks inside them.
"""

from __future__ import annotations

import html
import os
import re
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from .. import jsonsafe
from ..model import SessionSnapshot, iso
from .export_parts import (
    EXPORT_OUTPUT_CHARS,
    Checklist,
    Code,
    Part,
    Questions,
    call_parts,
    diff_line_text,
    output,
    result_parts,
    todo_mark,
)
from .model import MAIN_THREAD, ItemKind, ReplayItem, ThreadInfo, note_label
from .pages import NotFound, Replay

MAX_DEPTH = 4  # sub-agents of sub-agents...
# What is held back behind a call waiting for its result, at most (then it goes without).
WAITING_ITEMS = 5000
WAITING_CHARS = 16_000_000
_SHOWN_NOTES = frozenset(
    {"interrupted", "compact_summary", "notification", "turn_failed", "command_output"}
)


class Format(StrEnum):
    MARKDOWN = "md"
    JSON = "json"
    HTML = "html"


MEDIA_TYPES = {
    Format.MARKDOWN: "text/markdown; charset=utf-8",
    Format.JSON: "application/json",
    Format.HTML: "text/html; charset=utf-8",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    thinking: bool = True
    notes: bool = (
        False  # every note (injected context, titles, turn ends), not just the telling ones
    )


_EXTENSIONS = {".md": Format.MARKDOWN, ".markdown": Format.MARKDOWN, ".json": Format.JSON,
               ".html": Format.HTML, ".htm": Format.HTML}  # fmt: skip


class FormatError(ValueError):
    """An export's format cannot be told, or the file's name says another one."""


def format_for(output: str | None, given: str | None) -> Format:
    """The format to write ``output`` in: ``given`` (``--format``) when there is one, else the
    one its extension names, else Markdown. A given format that the file's extension
    contradicts, or an extension that names none, is an error saying what to do."""
    chosen = None if given is None else Format(given)
    if output is None:
        return chosen or Format.MARKDOWN
    suffix = os.path.splitext(output)[1].lower()
    by_name = _EXTENSIONS.get(suffix)
    if chosen is not None and by_name is not None and by_name is not chosen:
        raise FormatError(
            f"{output} names {by_name.value} but --format says {chosen.value}:"
            " change the file's extension or drop --format"
        )
    if chosen is not None:
        return chosen
    if by_name is None:
        known = ", ".join(sorted(_EXTENSIONS))
        what = f"extension {suffix!r}" if suffix else "no extension"
        raise FormatError(
            f"cannot tell the format of {output} ({what}): name it {known}, or give --format"
        )
    return by_name


def filename(snap: SessionSnapshot, fmt: Format) -> str:
    """A safe file name: agent, a slug of the title, the session id's start."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", snap.title or "session").strip("-").lower()[:48]
    return f"{snap.key.agent}-{slug or 'session'}-{snap.key.session_id[:8]}.{fmt}"


def export(
    replay: Replay, snap: SessionSnapshot, fmt: Format, options: Options | None = None
) -> Iterator[str]:
    options = options or Options()
    threads = {t.thread: t for t in replay.threads(snap)}
    if fmt is Format.JSON:
        return _json(replay, snap, threads)
    writer: _Writer = _Markdown(options) if fmt is Format.MARKDOWN else _Html(options)
    return writer.document(replay, snap, threads)


# -- JSON ------------------------------------------------------------------------------------


def _json(replay: Replay, snap: SessionSnapshot, threads: dict[str, ThreadInfo]) -> Iterator[str]:
    head = {
        "format": "agentbar-replay",
        "version": 1,
        "exported_at": iso(time.time()),
        "session": snap.to_json(),
    }
    yield jsonsafe.dumps(head).decode()[:-1] + ',"items":['
    yield from _json_items(replay.items(snap))
    yield '],"threads":['
    for number, info in enumerate(threads.values()):
        body = jsonsafe.dumps(info.to_json()).decode()[:-1]
        yield ("," if number else "") + body + ',"items":['
        yield from _json_items(_thread_items(replay, snap, info.thread))
        yield "]}"
    yield "]}\n"


def _json_items(items: Iterable[ReplayItem]) -> Iterator[str]:
    for number, item in enumerate(items):
        yield ("," if number else "") + jsonsafe.dumps(item.to_json()).decode()


def _thread_items(replay: Replay, snap: SessionSnapshot, thread: str) -> Iterator[ReplayItem]:
    try:
        yield from replay.items(snap, thread)
    except NotFound:
        return


# -- Markdown and HTML -----------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    """One thing to write: an item, or a tool call with its result and the sub-agents it
    spawned (complete once its result came, or when the thread ends without one)."""

    item: ReplayItem
    result: ReplayItem | None = None
    links: list[ReplayItem] = field(default_factory=list)
    waiting: bool = False  # a call whose result may still come

    @property
    def chars(self) -> int:
        return self.item.chars + sum(i.chars for i in (self.result, *self.links) if i is not None)


class _Writer:
    def __init__(self, options: Options) -> None:
        self.options = options

    def document(
        self, replay: Replay, snap: SessionSnapshot, threads: dict[str, ThreadInfo]
    ) -> Iterator[str]:
        yield self.header(snap, full_title(replay, snap))
        yield from self.thread(replay, snap, MAIN_THREAD, depth=0, seen={MAIN_THREAD})
        yield self.footer()

    def thread(
        self, replay: Replay, snap: SessionSnapshot, thread: str, *, depth: int, seen: set[str]
    ) -> Iterator[str]:
        """A thread's items in order; a tool call is written with its own result (paired by
        call id, as the JSON export and the web replay pair them, however calls and results
        interleave) and the sub-agents it spawned right after them. What follows a call
        waits for its result, up to ``WAITING_ITEMS`` items (then the call goes without)."""
        queue: deque[_Block] = deque()
        waiting: dict[str, _Block] = {}
        held = 0  # characters of text held back in ``queue``
        for item in _thread_items(replay, snap, thread):
            block = waiting.get(item.call_id or "") if item.call_id else None
            if block is not None and item.kind is ItemKind.TOOL_RESULT:
                block.result, block.waiting = item, False
                del waiting[item.call_id or ""]
            elif block is not None and item.kind is ItemKind.SUBAGENT:
                block.links.append(item)
            elif item.kind is ItemKind.TOOL_CALL:
                block = _Block(item, waiting=bool(item.call_id) and item.call_id not in waiting)
                queue.append(block)
                if block.waiting:
                    waiting[item.call_id or ""] = block
            elif item.kind is ItemKind.SUBAGENT or self.shown(item):
                queue.append(_Block(item))
            else:
                continue
            held += item.chars
            while queue and (
                not queue[0].waiting or len(queue) > WAITING_ITEMS or held > WAITING_CHARS
            ):
                head = queue.popleft()
                held -= head.chars
                if head.waiting:  # given up on: its result, if it comes, is written alone
                    head.waiting = False
                    waiting.pop(head.item.call_id or "", None)
                yield from self.block(replay, snap, head, depth=depth, seen=seen)
        while queue:
            yield from self.block(replay, snap, queue.popleft(), depth=depth, seen=seen)

    def block(
        self, replay: Replay, snap: SessionSnapshot, block: _Block, *, depth: int, seen: set[str]
    ) -> Iterator[str]:
        item = block.item
        if item.kind is ItemKind.TOOL_CALL:
            yield self.tool(item, block.result)
            for link in block.links:
                yield from self.subagent(replay, snap, link, depth=depth, seen=seen)
        elif item.kind is ItemKind.SUBAGENT:
            yield from self.subagent(replay, snap, item, depth=depth, seen=seen)
        else:
            yield self.item(item)

    def subagent(
        self, replay: Replay, snap: SessionSnapshot, item: ReplayItem, *, depth: int, seen: set[str]
    ) -> Iterator[str]:
        target = item.link.thread if item.link is not None else None
        yield self.subagent_open(item)
        if target is not None and depth < MAX_DEPTH and target not in seen:
            yield from self.thread(replay, snap, target, depth=depth + 1, seen=seen | {target})
        yield self.subagent_close()

    def shown(self, item: ReplayItem) -> bool:
        if item.kind is ItemKind.THINKING:
            return self.options.thinking and bool(item.text.strip())
        if item.kind is ItemKind.NOTE:
            return self.options.notes or item.name in _SHOWN_NOTES
        return True

    def header(self, snap: SessionSnapshot, title: str) -> str:
        raise NotImplementedError

    def footer(self) -> str:
        raise NotImplementedError

    def item(self, item: ReplayItem) -> str:
        raise NotImplementedError

    def tool(self, call: ReplayItem, result: ReplayItem | None) -> str:
        raise NotImplementedError

    def subagent_open(self, item: ReplayItem) -> str:
        raise NotImplementedError

    def subagent_close(self) -> str:
        raise NotImplementedError


def _facts(snap: SessionSnapshot) -> list[tuple[str, str]]:
    usage = snap.usage
    facts = [
        ("Agent", str(snap.key.agent)),
        ("Session", snap.key.session_id),
        ("Project", snap.project or ""),
        ("Started", iso(snap.started_at) or ""),
        ("Last activity", iso(snap.last_activity) or ""),
        ("State", str(snap.state.state)),
        ("Model", snap.model or ""),
        (
            "Tokens",
            f"{usage.input_tokens + usage.output_tokens:,} "
            f"({usage.input_tokens:,} in, {usage.output_tokens:,} out)",
        ),
        (
            "Cache",
            f"{usage.cache_read_tokens:,} read, {usage.cache_creation_tokens:,} written",
        ),
    ]
    return [(k, v) for k, v in facts if v]


def _when(item: ReplayItem) -> str:
    stamp = iso(item.ts)
    return stamp.replace("T", " ").replace("Z", " UTC") if stamp else ""


_TITLES = {
    ItemKind.USER: "User",
    ItemKind.ASSISTANT: "Assistant",
    ItemKind.THINKING: "Thinking",
    ItemKind.COMPACTION: "Compaction",
    ItemKind.ERROR: "Error",
    ItemKind.NOTE: "Note",
    ItemKind.UNKNOWN: "Unknown line",
    ItemKind.TOOL_RESULT: "Result of an earlier call",
}


def _title_of(item: ReplayItem) -> str:
    if item.kind is ItemKind.NOTE:
        return note_label(item.name)
    if item.kind is ItemKind.USER and item.view is not None and item.view.command:
        return "User · command"
    return _TITLES[item.kind]


def _result_label(result: ReplayItem) -> str:
    if result.denied:
        return "Result (refused)"
    return "Result (error)" if result.is_error else "Result"


TITLE_LOOKAHEAD_ITEMS = 400  # items read from the top for the text a cut title came from


def full_title(replay: Replay, snap: SessionSnapshot) -> str:
    """The session's title whole: the index keeps it cut (``…``), so a cut one is looked up in
    the first items (the prompt or the title note it was taken from)."""
    title = " ".join((snap.title or "Session " + snap.key.session_id).split())
    if not title.endswith("…"):
        return title
    stem = title[:-1]
    for count, item in enumerate(_thread_items(replay, snap, MAIN_THREAD)):
        if count >= TITLE_LOOKAHEAD_ITEMS:
            break
        if item.kind in (ItemKind.USER, ItemKind.NOTE):
            line = next(
                (" ".join(raw.split()) for raw in item.text.splitlines() if raw.strip()), ""
            )
            if len(line) > len(stem) and line.startswith(stem):
                return line
    return title


class _Markdown(_Writer):
    def header(self, snap: SessionSnapshot, title: str) -> str:
        lines = [f"# {title}", ""]
        lines += [f"- **{k}**: {_code(v)}" for k, v in _facts(snap)]
        return "\n".join(lines) + "\n\n---\n\n"

    def footer(self) -> str:
        return ""

    def item(self, item: ReplayItem) -> str:
        heading = f"### {_title_of(item)}" + (f" · {_when(item)}" if item.ts else "")
        if item.kind is ItemKind.THINKING:
            return _details("Thinking", item.text) + "\n"
        if item.view is not None and item.view.folded:
            return _details(item.summary or _title_of(item), _fence(output(item.text), "json"))
        if item.kind is ItemKind.UNKNOWN:
            return f"{heading}\n\n{_fence(output(item.text), 'json')}\n\n"
        if item.kind is ItemKind.TOOL_RESULT:
            return f"{heading}\n\n{self.parts(result_parts(None, item))}\n\n"
        return f"{heading}\n\n{item.text.strip()}\n\n"

    def tool(self, call: ReplayItem, result: ReplayItem | None) -> str:
        name = call.name or "tool"
        head = f"**Tool call** `{_tick_free(name)}`"
        if call.summary:
            head += f": {_code(call.summary)}"
        if call.ts:
            head += f" · {_when(call)}"
        view = call.view
        if view is not None and view.description and view.description != call.summary:
            head += f"\n\n_{_md_escape(_one_line(view.description))}_"
        body = head + "\n\n"
        if parts := call_parts(call, result):
            body += self.parts(parts) + "\n\n"
        if result is not None:
            body += _details(_result_label(result), self.parts(result_parts(call, result))) + "\n"
        return body

    def parts(self, parts: list[Part]) -> str:
        out = []
        for part in parts:
            if isinstance(part, Code):
                out.append(_fence(part.text, part.lang))
            elif isinstance(part, Checklist):
                out.append(
                    "\n".join(
                        f"- [{todo_mark(t)}] {_md_escape(_one_line(t.content))}" for t in part.todos
                    )
                )
            else:
                out.append(_md_questions(part))
        return "\n\n".join(out)

    def subagent_open(self, item: ReplayItem) -> str:
        return f"<details><summary>Sub-agent: {html.escape(_subagent_title(item))}</summary>\n\n"

    def subagent_close(self) -> str:
        return "</details>\n\n"


def _md_questions(part: Questions) -> str:
    chosen = {a.question: a.answer for a in part.answers}
    lines = []
    for q in part.questions:
        lines.append(f"- **{_md_escape(_one_line(q.question))}**")
        for option in q.options:
            about = f": {_md_escape(_one_line(option.description))}" if option.description else ""
            lines.append(f"  - {_md_escape(_one_line(option.label))}{about}")
        if q.question in chosen:
            lines.append(f"  - Answer: **{_md_escape(_one_line(chosen.pop(q.question)))}**")
    for question, answer in chosen.items():
        lines.append(f"- {_md_escape(_one_line(question))}: **{_md_escape(_one_line(answer))}**")
    return "\n".join(lines)


def _subagent_title(item: ReplayItem) -> str:
    link = item.link
    return _one_line((link.description if link else None) or item.text or "sub-agent")[:200]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _md_escape(text: str) -> str:
    """Text that Markdown shows as written (no emphasis, links or HTML from the transcript)."""
    return re.sub(r"([\\`*_{}\[\]<>#|!])", r"\\\1", text)


def _tick_free(text: str) -> str:
    return text.replace("`", "'")


def _code(text: str) -> str:
    return f"`{_tick_free(_one_line(text)[:200])}`"


def _fence(text: str, lang: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{html.escape(summary)}</summary>\n\n{body}\n\n</details>\n"


# -- HTML ------------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;
color:#1d2330}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.4rem;margin:.2rem 0 1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.9rem}
dt{color:#5b6475}dd{margin:0;word-break:break-all}
.item{background:#fff;border:1px solid #dfe3ea;border-radius:8px;margin:.8rem 0;padding:.6rem .9rem}
.item header{font-size:.8rem;color:#5b6475;margin-bottom:.3rem}
.user{border-left:4px solid #2f6fde}.assistant{border-left:4px solid #1b9e5a}
.error{border-left:4px solid #d33a3a;background:#fff6f6}.note,.compaction{background:#fafbfc}
.thinking{color:#4a5160;font-style:italic}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:13px/1.45 ui-monospace,Menlo,
Consolas,monospace}
.text{white-space:pre-wrap;word-break:break-word}
details>summary{cursor:pointer;color:#34405a}
.tool pre{background:#f1f3f7;padding:.5rem;border-radius:6px;margin:.3rem 0}
.failed summary{color:#b32626}
.subagent{margin:.8rem 0 .8rem 1.2rem;border-left:2px dashed #9aa5b8;padding-left:.8rem}
.diff .add{background:#e6ffec;display:block}.diff .del{background:#ffebe9;display:block}
.diff .hunk{color:#6a737d;display:block}.diff .file{font-weight:600;display:block}
.diff .context,.diff .cut{display:block}.diff .cut{color:#6a737d;font-style:italic}
.todos{list-style:none;padding-left:.5rem}
.todos .completed{color:#5b6475;text-decoration:line-through}
.about{color:#5b6475;font-size:.85rem}.answer{font-weight:600;color:#1b7a46}
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


class _Html(_Writer):
    def header(self, snap: SessionSnapshot, title: str) -> str:
        facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in _facts(snap))
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">"
            '<meta name="referrer" content="no-referrer">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
            f"<body><main><h1>{_e(title)}</h1><dl>{facts}</dl>\n"
        )

    def footer(self) -> str:
        return "</main></body></html>\n"

    def _box(self, css: str, label: str, ts_item: ReplayItem, body: str) -> str:
        when = _when(ts_item)
        stamp = f" · {_e(when)}" if when else ""
        return f'<section class="item {css}"><header>{_e(label)}{stamp}</header>{body}</section>\n'

    def item(self, item: ReplayItem) -> str:
        label = _title_of(item)
        if item.kind is ItemKind.THINKING:
            text = f'<div class="text">{_e(item.text)}</div>'
            body = f"<details><summary>Thinking</summary>{text}</details>"
            return self._box("thinking", "Thinking", item, body)
        if item.view is not None and item.view.folded:
            summary = _e(item.summary or label)
            body = (
                f"<details><summary>{summary}</summary><pre>{_e(output(item.text))}</pre></details>"
            )
            return self._box("note folded", label, item, body)
        if item.kind is ItemKind.UNKNOWN:
            text = _e(output(item.text))
            body = (
                f"<details><summary>{_e(item.name or 'raw')}</summary><pre>{text}</pre></details>"
            )
            return self._box(str(item.kind), label, item, body)
        if item.kind is ItemKind.TOOL_RESULT:
            return self._box("tool", label, item, self.parts(result_parts(None, item)))
        return self._box(str(item.kind), label, item, f'<div class="text">{_e(item.text)}</div>')

    def tool(self, call: ReplayItem, result: ReplayItem | None) -> str:
        name = call.name or "tool"
        summary = f": {_e(_one_line(call.summary))}" if call.summary else ""
        body = f"<div><strong>{_e(name)}</strong>{summary}</div>"
        view = call.view
        if view is not None and view.description and view.description != call.summary:
            body += f'<div class="about">{_e(view.description)}</div>'
        body += self.parts(call_parts(call, result))
        if result is not None:
            css = ' class="failed"' if result.is_error else ""
            body += (
                f"<details{css}><summary>{_e(_result_label(result))}</summary>"
                f"{self.parts(result_parts(call, result))}</details>"
            )
        return self._box("tool", "Tool call", call, body)

    def parts(self, parts: list[Part]) -> str:
        out = []
        for part in parts:
            if isinstance(part, Code):
                out.append(_html_code(part))
            elif isinstance(part, Checklist):
                rows = "".join(
                    f'<li class="{_e(t.status)}">[{todo_mark(t)}] {_e(t.content)}</li>'
                    for t in part.todos
                )
                out.append(f'<ul class="todos">{rows}</ul>')
            else:
                out.append(_html_questions(part))
        return "".join(out)

    def subagent_open(self, item: ReplayItem) -> str:
        title = _e(_subagent_title(item))
        return f'<details class="subagent" open><summary>Sub-agent: {title}</summary>\n'

    def subagent_close(self) -> str:
        return "</details>\n"


def _html_code(part: Code) -> str:
    lang = f' data-lang="{_e(part.lang)}"' if part.lang else ""
    if not part.diff:
        pre = f'<pre class="{_e(part.label.lower())}"{lang}>{_e(part.text)}</pre>'
        # A call's whole input is there to look up, not to read first: collapsed.
        return f"<details><summary>Input</summary>{pre}</details>" if part.label == "Input" else pre
    rows, size = [], 0
    for number, line in enumerate(part.diff):
        text = diff_line_text(line)
        size += len(text)
        if size > EXPORT_OUTPUT_CHARS:
            rows.append(f'<span class="cut">… {len(part.diff) - number} more lines</span>')
            break
        rows.append(f'<span class="{line.kind}">{_e(text)}</span>')
    # Each line is a block of its own (its colour across the width): no newline between them.
    return f'<pre class="diff"{lang}>' + "".join(rows) + "</pre>"


def _html_questions(part: Questions) -> str:
    chosen = {a.question: a.answer for a in part.answers}
    out = []
    for q in part.questions:
        options = "".join(
            f"<li>{_e(o.label)}"
            + (f' <span class="about">{_e(o.description)}</span>' if o.description else "")
            + "</li>"
            for o in q.options
        )
        answer = chosen.pop(q.question, None)
        picked = f'<p class="answer">Answer: {_e(answer)}</p>' if answer is not None else ""
        out.append(f'<div class="question"><p>{_e(q.question)}</p><ul>{options}</ul>{picked}</div>')
    for question, answer in chosen.items():
        out.append(
            f'<div class="question"><p>{_e(question)}</p><p class="answer">Answer: '
            f"{_e(answer)}</p></div>"
        )
    return "".join(out)
