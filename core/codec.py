"""JSON round-trip for the frozen dataclasses the engine persists (pure; any thread).

Reducer states are plain frozen dataclasses of str/int/float/bool, enums, tuples, frozensets,
optionals and nested dataclasses or msgspec Structs (``records.Usage``), each written as an
object of its fields in order, whichever of the two it is. Rather than hand-writing a serialiser
per type (and keeping it in step with every field change), this builds a decoder from the type
hints once per type.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Hashable
from enum import Enum
from functools import cache
from typing import Any, TypeVar, cast, get_args, get_origin

import msgspec
import orjson

from . import jsonsafe

T = TypeVar("T")


def dumps(value: Any) -> bytes:
    """JSON of ``value``; never raises for what a transcript put in it (see ``jsonsafe``), so
    a save cannot fail on a value's shape (a row that then fails to decode rebuilds the index)."""
    return jsonsafe.dumps(_encode(value))


def loads(cls: type[T], data: bytes | str) -> T:
    """Decode ``data`` as ``cls``; raises ``ValueError`` when it does not fit."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValueError(str(exc)) from None
    result: T = _decoder(cast(Hashable, cls))(raw)
    return result


def _encode(value: Any) -> Any:
    cls = type(value)
    if cls in _SCALARS:
        return value
    names = _field_names(cast(Hashable, cls))
    if names is not None:
        return {name: _encode(getattr(value, name)) for name in names}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(_encode(v) for v in value)
    return value


# Values written as they are, by exact type (an enum or any subclass takes the checks above).
_SCALARS = frozenset({str, int, float, bool, type(None)})


@cache
def _field_names(cls: Any) -> tuple[str, ...] | None:
    """A dataclass's or a Struct's field names, in order; None for any other type. (Asking
    ``dataclasses`` per value was most of the cost of saving a large index: one call per nested
    value.)"""
    if isinstance(cls, type) and issubclass(cls, msgspec.Struct):
        return cls.__struct_fields__
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


Decoder = Callable[[Any], Any]


@cache
def _decoder(tp: Any) -> Decoder:
    """A decoding function for type ``tp``, built once per type: reading the type hints on
    every call made a warm start spend most of its time in ``typing``."""
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(tp)
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            return lambda raw: tuple(item(v) for v in _list(raw, tp))
        items = [_decoder(a) for a in args]

        def fixed(raw: Any) -> tuple[Any, ...]:
            values = _list(raw, tp)
            if len(values) != len(items):
                raise ValueError(f"expected {len(items)} items for {tp}")
            return tuple(d(v) for d, v in zip(items, values, strict=True))

        return fixed
    if origin is frozenset:
        member = _decoder(get_args(tp)[0])
        return lambda raw: frozenset(member(v) for v in _list(raw, tp))
    if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or issubclass(tp, msgspec.Struct)):
        return _fields_decoder(tp)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    if tp is float:
        return _float
    if tp in (int, str, bool):
        return lambda raw: _exact(tp, raw)
    if tp is Any:
        return lambda raw: raw
    raise TypeError(f"cannot decode {tp}")


def _union_decoder(tp: Any) -> Decoder:
    args = get_args(tp)
    optional = type(None) in args
    choices = [_decoder(a) for a in args if a is not type(None)]

    def decode(raw: Any) -> Any:
        if raw is None and optional:
            return None
        errors = []
        for choice in choices:
            try:
                return choice(raw)
            except (TypeError, ValueError, KeyError) as exc:
                errors.append(str(exc))
        raise ValueError(f"{raw!r} fits none of {tp}: {errors}")

    return decode


def _fields_decoder(cls: type) -> Decoder:
    hints = typing.get_type_hints(cls)
    names = _field_names(cls)
    assert names is not None, cls
    fields = [(name, _decoder(hints[name])) for name in names]

    def decode(raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise ValueError(f"expected an object for {cls.__name__}")
        return cls(**{name: d(raw[name]) for name, d in fields if name in raw})

    return decode


def _list(raw: Any, tp: Any) -> list[Any]:
    if not isinstance(raw, list):
        raise ValueError(f"expected a list for {tp}")
    return raw


def _float(raw: Any) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    raise ValueError(f"expected a number, got {raw!r}")


def _exact(tp: type, raw: Any) -> Any:
    if type(raw) is not tp:
        raise ValueError(f"expected {tp.__name__}, got {raw!r}")
    return raw
