"""JSON out of values read from agents' lines, whatever they hold (pure; any thread).

``orjson.dumps`` refuses values nested deeper than 254 levels, integers past 64 bits and strings
with lone surrogates, and a model can write any of them in a tool's input. ``dumps`` writes such a
value anyway: containers below ``MAX_DEPTH`` become the ``TRUNCATED`` marker, integers too wide
become their decimal text and broken strings get U+FFFD. ``tame`` is that copy on its own, built
without recursion (a Python walker would hit the interpreter's recursion limit first).
"""

from __future__ import annotations

from typing import Any

import orjson

MAX_DEPTH = 100  # far deeper than any tool input seen; well inside orjson's 254
TRUNCATED = "[nested too deep: cut here]"
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


def dumps(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps(value, option)``, or the same of ``tame(value)`` when orjson refuses."""
    try:
        return orjson.dumps(value, option=option)
    except TypeError:  # orjson.JSONEncodeError: too deep, too wide, not UTF-8, unknown type
        return orjson.dumps(tame(value), option=option, default=str)


def tame(value: Any, max_depth: int = MAX_DEPTH) -> Any:
    """A copy of a JSON-like ``value`` that ``orjson`` can write (see the module's note)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, dict):
            if depth >= max_depth:
                parent[key] = TRUNCATED
                continue
            copy: dict[str, Any] = {}
            parent[key] = copy
            for name, member in item.items():
                text = fix_text(name if isinstance(name, str) else str(name))
                copy[text] = None  # keeps the keys' order; filled when popped
                stack.append((member, copy, text, depth + 1))
        elif isinstance(item, list | tuple):
            if depth >= max_depth:
                parent[key] = TRUNCATED
                continue
            items: list[Any] = [None] * len(item)
            parent[key] = items
            stack.extend((member, items, i, depth + 1) for i, member in enumerate(item))
        else:
            parent[key] = _scalar(item)
    return root[0]


def fix_text(text: str) -> str:
    """``text`` with any lone surrogate (a ``\\ud800`` escape) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return fix_text(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value if _INT_MIN <= value <= _INT_MAX else str(value)
    return value
