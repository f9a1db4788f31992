"""The records' quick ``__init__`` (core/records.py ``_quick_init``) builds exactly what the
dataclass-generated one did: same keyword-only signature, defaults, errors, frozen values."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from agentbar.core import records

RECORD_TYPES = [
    value
    for value in vars(records).values()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
]


def _plain_twin(cls: type) -> type:
    """The same fields in a dataclass built the ordinary way: the reference signature."""
    spec = [
        (f.name, f.type, dataclasses.field(default=f.default))
        if f.default is not dataclasses.MISSING
        else (f.name, f.type)
        for f in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass(cls.__name__, spec, frozen=True, slots=True, kw_only=True)


def test_every_record_type_is_covered() -> None:
    names = {cls.__name__ for cls in RECORD_TYPES}
    assert {"Record", "Usage", "ToolCall", "HookEvent", "UsageReport"} <= names
    assert len(RECORD_TYPES) == 20


@pytest.mark.parametrize("cls", RECORD_TYPES, ids=lambda c: c.__name__)
def test_signature_defaults_and_errors_match_a_plain_dataclass(cls: type) -> None:
    twin = _plain_twin(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    fields = dataclasses.fields(cls)
    required = {f.name: f"v-{f.name}" for f in fields if f.default is dataclasses.MISSING}
    made, reference = cls(**required), twin(**required)
    for field in fields:
        assert getattr(made, field.name) == getattr(reference, field.name)
    full = {f.name: f"w-{f.name}" for f in fields}
    made = cls(**full)
    assert [getattr(made, f.name) for f in fields] == list(full.values())
    assert made == cls(**full) and hash(made) == hash(cls(**full))
    assert repr(made).startswith(f"{cls.__name__}(")
    with pytest.raises(TypeError):
        cls(**full, no_such_field=1)
    with pytest.raises(TypeError):
        cls(*full.values())
    if required:
        with pytest.raises(TypeError):
            cls()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, fields[0].name, 1.0)
    assert dataclasses.replace(made) == made


def test_a_default_factory_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class WithFactory:
        items: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="default_factory"):
        records._quick_init(WithFactory)
