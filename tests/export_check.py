"""What every Markdown and HTML export must keep (used on every fixture): each tool result
under its own call, as the JSON export pairs them, none loose; the HTML well formed and
without script."""

from __future__ import annotations

import html.parser
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentbar.core.model import SessionSnapshot
from agentbar.core.replay.export import Format, export
from agentbar.core.replay.pages import Replay

LOOSE = "Result of an earlier call"
VOID = frozenset({"meta", "br", "img", "hr", "input", "link"})


@dataclass
class HtmlShape(html.parser.HTMLParser):
    """Sections, the result blocks inside tool sections, loose results, tags left open."""

    stack: list[tuple[str, str]] = field(default_factory=list)
    results_under_calls: int = 0
    loose: int = 0
    scripts: int = 0
    mismatched: list[str] = field(default_factory=list)
    _summary: list[str] = field(default_factory=list)
    _header: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag in VOID:
            return
        css = dict(attrs).get("class") or ""
        self.stack.append((tag, css))
        if tag == "summary":
            self._summary = []
        if tag == "header":
            self._header = []

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.mismatched.append(tag)
            return
        self.stack.pop()
        under_call = any(t == "section" and "tool" in c.split() for t, c in self.stack)
        if tag == "summary" and under_call and "".join(self._summary).startswith("Result"):
            self.results_under_calls += 1
        if tag == "header" and "".join(self._header).startswith(LOOSE):
            self.loose += 1

    def handle_data(self, data: str) -> None:
        tags = [t for t, _ in self.stack]
        if "summary" in tags:
            self._summary.append(data)
        if "header" in tags:
            self._header.append(data)


def html_shape(page: str) -> HtmlShape:
    shape = HtmlShape()
    shape.feed(page)
    shape.close()
    return shape


def paired_results(doc: dict[str, Any]) -> tuple[int, int]:
    """(results whose call is in the same thread, results without one) over all threads."""
    paired = unpaired = 0
    for items in _thread_items(doc):
        calls = {i["call_id"] for i in items if i["kind"] == "tool_call" and i["call_id"]}
        for item in items:
            if item["kind"] == "tool_result":
                if item["call_id"] in calls:
                    paired += 1
                else:
                    unpaired += 1
    return paired, unpaired


def _thread_items(doc: dict[str, Any]) -> Iterable[list[dict[str, Any]]]:
    yield doc["items"]
    for thread in doc["threads"]:
        yield thread["items"]


def check_exports(replay: Replay, snap: SessionSnapshot) -> tuple[str, str, dict[str, Any]]:
    """Export in every format and check the pairing; returns (md, html, json doc)."""
    doc = orjson.loads("".join(export(replay, snap, Format.JSON)))
    md = "".join(export(replay, snap, Format.MARKDOWN))
    page = "".join(export(replay, snap, Format.HTML))
    _, unpaired = paired_results(doc)
    assert md.count(LOOSE) <= unpaired, "a Markdown result was cut off from its call"
    shape = html_shape(page)
    assert shape.loose == md.count(LOOSE)
    assert not shape.scripts and not shape.mismatched and not shape.stack, shape.mismatched
    in_md = md.count("<details><summary>Result")
    assert shape.results_under_calls == in_md
    main_calls = {i["call_id"] for i in doc["items"] if i["kind"] == "tool_call"}
    main_paired = sum(
        1 for i in doc["items"] if i["kind"] == "tool_result" and i["call_id"] in main_calls
    )
    assert in_md >= main_paired, (in_md, main_paired)
    return md, page, doc
