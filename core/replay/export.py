"""A session's replay as a file to keep or share: Markdown, JSON or one self-contained HTML page
(any thread but the engine's).

Each export is a stream of text chunks (a 50 MB transcript is never held whole). Sub-agent
threads are nested where they were spawned. Markdown (``export_md.py``) and HTML
(``export_html.py``) share their walk through the threads (``export_writer.py``) and the parts a
call is made of (``export_parts.py``); JSON is every item whole, as the API gives it. The format
of a file follows its name (``format_for``).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from enum import StrEnum

from .. import jsonsafe
from ..model import SessionSnapshot, iso
from .export_html import HtmlWriter
from .export_md import MarkdownWriter
from .export_writer import Options, Writer, thread_items
from .model import ReplayItem, ThreadInfo
from .pages import Replay

__all__ = ["MEDIA_TYPES", "Format", "FormatError", "Options", "export", "filename", "format_for"]


class Format(StrEnum):
    MARKDOWN = "md"
    JSON = "json"
    HTML = "html"


MEDIA_TYPES = {
    Format.MARKDOWN: "text/markdown; charset=utf-8",
    Format.JSON: "application/json",
    Format.HTML: "text/html; charset=utf-8",
}


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
    writer: Writer = MarkdownWriter(options) if fmt is Format.MARKDOWN else HtmlWriter(options)
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
        yield from _json_items(thread_items(replay, snap, info.thread))
        yield "]}"
    yield "]}\n"


def _json_items(items: Iterable[ReplayItem]) -> Iterator[str]:
    for number, item in enumerate(items):
        yield ("," if number else "") + jsonsafe.dumps(item.to_json()).decode()
