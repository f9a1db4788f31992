"""JSON round-trip for the frozen dataclasses the engine persists (pure; any thread).

Reducer states are plain frozen dataclasses of str/int/float/bool, enums, tuples, frozensets,
optionals and nested dataclasses. Rather than hand-writing a serialiser per type (and keeping it
in step with every field change), this reads the type hints once per class.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from functools import cache
from typing import Any, TypeVar, get_args, get_origin

import orjson

T = TypeVar("T")


def dumps(value: Any) -> bytes:
    return orjson.dumps(_encode(value))


def loads(cls: type[T], data: bytes | str) -> T:
    """Decode ``data`` as ``cls``; raises ``ValueError`` when it does not fit."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValueError(str(exc)) from None
    result: T = _decode(cls, raw)
    return result


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(_encode(v) for v in value)
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, raw: Any) -> Any:
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        if raw is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _decode(arg, raw)
            except (TypeError, ValueError, KeyError) as exc:
                errors.append(str(exc))
        raise ValueError(f"{raw!r} fits none of {tp}: {errors}")
    if origin is tuple:
        args = get_args(tp)
        if not isinstance(raw, list):
            raise ValueError(f"expected a list for {tp}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in raw)
        if len(args) != len(raw):
            raise ValueError(f"expected {len(args)} items for {tp}")
        return tuple(_decode(a, v) for a, v in zip(args, raw, strict=True))
    if origin is frozenset:
        (arg,) = get_args(tp)
        if not isinstance(raw, list):
            raise ValueError(f"expected a list for {tp}")
        return frozenset(_decode(arg, v) for v in raw)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(raw, dict):
            raise ValueError(f"expected an object for {tp.__name__}")
        hints = _hints(tp)
        kwargs = {
            f.name: _decode(hints[f.name], raw[f.name])
            for f in dataclasses.fields(tp)
            if f.name in raw
        }
        return tp(**kwargs)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(raw)
    if tp is float:
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return float(raw)
        raise ValueError(f"expected a number, got {raw!r}")
    if tp in (int, str, bool):
        if type(raw) is not tp:
            raise ValueError(f"expected {tp.__name__}, got {raw!r}")
        return raw
    if tp is Any:
        return raw
    raise TypeError(f"cannot decode {tp}")
