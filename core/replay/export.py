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
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from .. import jsonsafe
from ..model import SessionSnapshot, iso
from .model import (
    MAIN_THREAD,
    ItemKind,
    ReplayItem,
    ThreadInfo,
    cut_text_to,
    json_text,
)
from .pages import NotFound, Replay

EXPORT_OUTPUT_CHARS = 20_000  # tool inputs and outputs in Markdown and HTML; JSON has them whole
MAX_DEPTH = 4  # sub-agents of sub-agents...
_SHOWN_NOTES = frozenset({"interrupted", "compact_summary", "notification", "turn_failed"})


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


class _Writer:
    def __init__(self, options: Options) -> None:
        self.options = options

    def document(
        self, replay: Replay, snap: SessionSnapshot, threads: dict[str, ThreadInfo]
    ) -> Iterator[str]:
        yield self.header(snap)
        yield from self.thread(replay, snap, MAIN_THREAD, depth=0, seen={MAIN_THREAD})
        yield self.footer()

    def thread(
        self, replay: Replay, snap: SessionSnapshot, thread: str, *, depth: int, seen: set[str]
    ) -> Iterator[str]:
        """A thread's items; a tool call is written with its result, and a sub-agent its call
        spawned right after them."""
        pending: list[ReplayItem] = []  # calls waiting for their results
        results: dict[str, ReplayItem] = {}
        links: dict[str, ReplayItem] = {}

        def flush() -> Iterator[str]:
            for call in pending:
                yield self.tool(call, results.get(call.call_id or ""))
                link = links.get(call.call_id or "")
                if link is not None:
                    yield from self.subagent(replay, snap, link, depth=depth, seen=seen)
            pending.clear()
            results.clear()
            links.clear()

        for item in _thread_items(replay, snap, thread):
            waiting = any(call.call_id == item.call_id for call in pending if item.call_id)
            if item.kind is ItemKind.TOOL_CALL:
                if not waiting:
                    yield from flush()
                pending.append(item)
            elif item.kind is ItemKind.TOOL_RESULT and waiting and item.call_id:
                results[item.call_id] = item
                if len(results) == len(pending):
                    yield from flush()
            elif item.kind is ItemKind.SUBAGENT and waiting and item.call_id:
                links[item.call_id] = item
            else:
                yield from flush()
                if item.kind is ItemKind.SUBAGENT:
                    yield from self.subagent(replay, snap, item, depth=depth, seen=seen)
                elif self.shown(item):
                    yield self.item(item)
        yield from flush()

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

    def header(self, snap: SessionSnapshot) -> str:
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
            f"{usage.input_tokens} in, {usage.output_tokens} out, "
            f"{usage.cache_read_tokens} cache read, {usage.cache_creation_tokens} cache write",
        ),
    ]
    return [(k, v) for k, v in facts if v]


def _when(item: ReplayItem) -> str:
    stamp = iso(item.ts)
    return stamp.replace("T", " ").replace("Z", " UTC") if stamp else ""


def _output(text: str) -> str:
    shown, cut = cut_text_to(text, EXPORT_OUTPUT_CHARS)
    return shown + (f"\n… ({len(text) - len(shown)} more characters)" if cut else "")


def _input_text(call: ReplayItem) -> str:
    value = call.input
    if value is None:
        return ""
    return value if isinstance(value, str) else json_text(value)


_TITLES = {
    ItemKind.USER: "User",
    ItemKind.ASSISTANT: "Assistant",
    ItemKind.THINKING: "Thinking",
    ItemKind.COMPACTION: "Compaction",
    ItemKind.ERROR: "Error",
    ItemKind.NOTE: "Note",
    ItemKind.UNKNOWN: "Unknown line",
    ItemKind.TOOL_RESULT: "Tool result",
}


class _Markdown(_Writer):
    def header(self, snap: SessionSnapshot) -> str:
        lines = [f"# {_one_line(snap.title or 'Session ' + snap.key.session_id)}", ""]
        lines += [f"- **{k}**: {_code(v)}" for k, v in _facts(snap)]
        return "\n".join(lines) + "\n\n---\n\n"

    def footer(self) -> str:
        return ""

    def item(self, item: ReplayItem) -> str:
        title = _TITLES[item.kind]
        if item.kind is ItemKind.NOTE and item.name:
            title = f"Note ({item.name})"
        heading = f"### {title}" + (f" · {_when(item)}" if item.ts else "")
        if item.kind is ItemKind.THINKING:
            return _details("Thinking", item.text) + "\n"
        if item.kind in (ItemKind.UNKNOWN, ItemKind.TOOL_RESULT):
            return f"{heading}\n\n{_fence(_output(item.text), 'json')}\n\n"
        return f"{heading}\n\n{item.text.strip()}\n\n"

    def tool(self, call: ReplayItem, result: ReplayItem | None) -> str:
        name = call.name or "tool"
        head = f"**Tool call** `{_tick_free(name)}`"
        if call.summary:
            head += f": {_code(call.summary)}"
        if call.ts:
            head += f" · {_when(call)}"
        body = head + "\n\n" + _fence(_output(_input_text(call)), "json") + "\n\n"
        if result is not None:
            label = "Result (refused)" if result.denied else "Result"
            label = "Result (error)" if result.is_error and not result.denied else label
            body += _details(label, _fence(_output(result.text), "")) + "\n"
        return body

    def subagent_open(self, item: ReplayItem) -> str:
        link = item.link
        title = (link.description if link else None) or item.text or "sub-agent"
        return f"<details><summary>Sub-agent: {html.escape(_one_line(title))}</summary>\n\n"

    def subagent_close(self) -> str:
        return "</details>\n\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def _tick_free(text: str) -> str:
    return text.replace("`", "'")


def _code(text: str) -> str:
    return f"`{_tick_free(_one_line(text))}`"


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
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


class _Html(_Writer):
    def header(self, snap: SessionSnapshot) -> str:
        title = _one_line(snap.title or "Session " + snap.key.session_id)
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
        label = _TITLES[item.kind]
        if item.kind is ItemKind.NOTE and item.name:
            label = f"Note ({item.name})"
        if item.kind is ItemKind.THINKING:
            text = f'<div class="text">{_e(item.text)}</div>'
            body = f"<details><summary>Thinking</summary>{text}</details>"
            return self._box("thinking", "Thinking", item, body)
        if item.kind in (ItemKind.UNKNOWN, ItemKind.TOOL_RESULT):
            text = _e(_output(item.text))
            body = (
                f"<details><summary>{_e(item.name or 'raw')}</summary><pre>{text}</pre></details>"
            )
            return self._box(str(item.kind), label, item, body)
        return self._box(str(item.kind), label, item, f'<div class="text">{_e(item.text)}</div>')

    def tool(self, call: ReplayItem, result: ReplayItem | None) -> str:
        name = call.name or "tool"
        summary = f": {_e(_one_line(call.summary))}" if call.summary else ""
        body = f"<div><strong>{_e(name)}</strong>{summary}</div>"
        if call.input is not None:
            text = _e(_output(_input_text(call)))
            body += f"<details><summary>Input</summary><pre>{text}</pre></details>"
        if result is not None:
            label = "Result (refused)" if result.denied else "Result"
            label = "Result (error)" if result.is_error and not result.denied else label
            css = ' class="failed"' if result.is_error else ""
            body += (
                f"<details{css}><summary>{_e(label)}</summary>"
                f"<pre>{_e(_output(result.text))}</pre></details>"
            )
        return self._box("tool", "Tool call", call, body)

    def subagent_open(self, item: ReplayItem) -> str:
        link = item.link
        title = (link.description if link else None) or item.text or "sub-agent"
        return (
            f'<details class="subagent" open><summary>Sub-agent: {_e(_one_line(title))}</summary>\n'
        )

    def subagent_close(self) -> str:
        return "</details>\n"
