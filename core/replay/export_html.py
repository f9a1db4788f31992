"""A session's replay as one self-contained HTML page: inline CSS, no script at all and a
Content-Security-Policy forbidding any, every transcript string escaped (any thread but the
engine's)."""

from __future__ import annotations

import html

from ..model import SessionSnapshot
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


class HtmlWriter(Writer):
    def header(self, snap: SessionSnapshot, title: str) -> str:
        rows = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts(snap))
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">"
            '<meta name="referrer" content="no-referrer">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
            f"<body><main><h1>{_e(title)}</h1><dl>{rows}</dl>\n"
        )

    def footer(self) -> str:
        return "</main></body></html>\n"

    def _box(self, css: str, label: str, ts_item: ReplayItem, body: str) -> str:
        stamp_text = when(ts_item)
        stamp = f" · {_e(stamp_text)}" if stamp_text else ""
        return f'<section class="item {css}"><header>{_e(label)}{stamp}</header>{body}</section>\n'

    def item(self, item: ReplayItem) -> str:
        label = title_of(item)
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
        summary = f": {_e(one_line(call.summary))}" if call.summary else ""
        body = f"<div><strong>{_e(name)}</strong>{summary}</div>"
        view = call.view
        if view is not None and view.description and view.description != call.summary:
            body += f'<div class="about">{_e(view.description)}</div>'
        body += self.parts(call_parts(call, result))
        if result is not None:
            css = ' class="failed"' if result.is_error else ""
            body += (
                f"<details{css}><summary>{_e(result_label(result))}</summary>"
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
        title = _e(subagent_title(item))
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
