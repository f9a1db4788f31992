"""TOML inline values for per-launch config layers given on a command line (pure).

Each agent's per-launch layer (agentbar's hooks for an agent agentbar starts itself, without
touching the user's files) is in its own package (``agents/<agent>/launch.py``); an agent that
reads ``-c key=value`` overrides as TOML writes its values with ``toml_value``.
"""

from __future__ import annotations

import json


def toml_value(value: object) -> str:
    """A TOML inline value (strings, integers, booleans, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "_-" for c in key) and key.isascii()
    return key if bare else json.dumps(key)
