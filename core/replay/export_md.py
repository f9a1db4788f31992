"""A session's replay as Markdown: headings with times, each tool call with its parts fenced
by what they are and its own result collapsed under it (any thread but the engine's).

Transcript text is untrusted: tool inputs and outputs go in fences longer than any run of
backticks inside them, and short texts put in a heading or a list are escaped.
"""

from __future__ import annotations

import html
import re

from ..model import SessionSnapshot
from .export_parts import (
    Checklist,
    Code,
    Part,
    Questions,
    call_parts,
    output,
    result_parts,
    todo_mark,
)
from .export_writer import (
    Writer,
    facts,
    one_line,
    result_label,
    subagent_title,
    title_of,
    when,
)
from .model import ItemKind, ReplayItem


class MarkdownWriter(Writer):
    def header(self, snap: SessionSnapshot, title: str) -> str:
        lines = [f"# {title}", ""]
        lines += [f"- **{k}**: {_code(v)}" for k, v in facts(snap)]
        return "\n".join(lines) + "\n\n---\n\n"

    def footer(self) -> str:
        return ""

    def item(self, item: ReplayItem) -> str:
        heading = f"### {title_of(item)}" + (f" · {when(item)}" if item.ts else "")
        if item.kind is ItemKind.THINKING:
            return _details("Thinking", item.text) + "\n"
        if item.view is not None and item.view.folded:
            return _details(item.summary or title_of(item), _fence(output(item.text), "json"))
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
            head += f" · {when(call)}"
        view = call.view
        if view is not None and view.description and view.description != call.summary:
            head += f"\n\n_{_md_escape(one_line(view.description))}_"
        body = head + "\n\n"
        if parts := call_parts(call, result):
            body += self.parts(parts) + "\n\n"
        if result is not None:
            body += _details(result_label(result), self.parts(result_parts(call, result))) + "\n"
        return body

    def parts(self, parts: list[Part]) -> str:
        out = []
        for part in parts:
            if isinstance(part, Code):
                out.append(_fence(part.text, part.lang))
            elif isinstance(part, Checklist):
                out.append(
                    "\n".join(
                        f"- [{todo_mark(t)}] {_md_escape(one_line(t.content))}" for t in part.todos
                    )
                )
            else:
                out.append(_md_questions(part))
        return "\n\n".join(out)

    def subagent_open(self, item: ReplayItem) -> str:
        return f"<details><summary>Sub-agent: {html.escape(subagent_title(item))}</summary>\n\n"

    def subagent_close(self) -> str:
        return "</details>\n\n"


def _md_questions(part: Questions) -> str:
    chosen = {a.question: a.answer for a in part.answers}
    lines = []
    for q in part.questions:
        lines.append(f"- **{_md_escape(one_line(q.question))}**")
        for option in q.options:
            about = f": {_md_escape(one_line(option.description))}" if option.description else ""
            lines.append(f"  - {_md_escape(one_line(option.label))}{about}")
        if q.question in chosen:
            lines.append(f"  - Answer: **{_md_escape(one_line(chosen.pop(q.question)))}**")
    for question, answer in chosen.items():
        lines.append(f"- {_md_escape(one_line(question))}: **{_md_escape(one_line(answer))}**")
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    """Text that Markdown shows as written (no emphasis, links or HTML from the transcript)."""
    return re.sub(r"([\\`*_{}\[\]<>#|!])", r"\\\1", text)


def _tick_free(text: str) -> str:
    return text.replace("`", "'")


def _code(text: str) -> str:
    return f"`{_tick_free(one_line(text)[:200])}`"


def _fence(text: str, lang: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{html.escape(summary)}</summary>\n\n{body}\n\n</details>\n"
