"""The persisted reducer states round-trip exactly, and a row that does not fit is refused."""

from __future__ import annotations

import dataclasses
from enum import Enum

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentbar.core import codec, jsonsafe
from agentbar.core.facts import SessionFacts
from agentbar.core.records import Asks, Usage
from agentbar.core.state.hooks import HookState
from agentbar.core.state.turns import PendingCall, Phase, SubagentStatus, TurnState
from agentbar.core.usage.ledger import UsageLine

usages = st.builds(
    Usage,
    input_tokens=st.integers(0, 10**9),
    output_tokens=st.integers(0, 10**9),
    cache_read_tokens=st.integers(0, 10**9),
    cache_creation_tokens=st.integers(0, 10**9),
)
times = st.none() | st.floats(0, 4e9, allow_nan=False)
texts = st.none() | st.text(max_size=30)
turn_states = st.builds(
    TurnState,
    phase=st.sampled_from(Phase),
    pending=st.tuples(
        *[
            st.builds(
                PendingCall,
                st.text(max_size=8),
                st.text(max_size=8),
                st.text(max_size=20),
                st.sampled_from(Asks),
                times,
            )
        ]
        * 2
    ),
    answer=texts,
    answer_final=st.booleans(),
    failure=texts,
    retrying=texts,
    denied=texts,
    subagents=st.lists(
        st.tuples(
            st.text(max_size=6),
            st.builds(
                SubagentStatus, st.frozensets(st.text(max_size=5), max_size=3), st.booleans(), times
            ),
        ),
        max_size=3,
    ).map(tuple),
    background_agents=st.none() | st.integers(0, 9),
)
facts = st.builds(
    SessionFacts,
    project=texts,
    title=texts,
    title_rank=st.integers(-1, 3),
    model=texts,
    started_at=times,
    last_activity=times,
    summed_usage=usages,
    recent_usage=st.lists(st.tuples(st.text(max_size=10), usages), max_size=4).map(tuple),
    thread_models=st.lists(st.tuples(st.text(max_size=10), st.text(max_size=10)), max_size=3).map(
        tuple
    ),
    ledger=st.lists(
        st.builds(
            UsageLine,
            day=st.text(max_size=10),
            model=st.text(max_size=10),
            usage=usages,
            cost=st.none() | st.floats(min_value=0, max_value=1e6),
        ),
        max_size=3,
    ).map(tuple),
)


@given(turn_states)
def test_turn_state_round_trips(state: TurnState) -> None:
    assert codec.loads(TurnState, codec.dumps(state)) == state


@given(facts)
def test_facts_round_trip(value: SessionFacts) -> None:
    assert codec.loads(SessionFacts, codec.dumps(value)) == value


@pytest.mark.parametrize(
    "data",
    [
        b"{",
        b"[]",
        b'{"phase": 3}',
        b'{"phase": "sleeping"}',
        b'{"pending": [["a", "b"]]}',
        b'{"answer_final": "yes"}',
        b'{"subagents": [["x", {"pending": "c", "finished": false, "last_ts": null}]]}',
    ],
)
def test_rows_that_do_not_fit_are_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        codec.loads(TurnState, data)


def test_missing_fields_take_their_defaults() -> None:
    assert codec.loads(TurnState, b'{"phase": "done"}') == TurnState(phase=Phase.DONE)


def _walk(value: object) -> object:
    """The encoding as a walk asking ``dataclasses`` or ``msgspec.structs`` per value (what
    ``codec`` caches)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _walk(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, msgspec.Struct):
        return {f.name: _walk(getattr(value, f.name)) for f in msgspec.structs.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_walk(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(_walk(v) for v in value)  # type: ignore[type-var]
    return value


@given(turn_states, facts)
def test_the_cached_encoding_equals_the_walk(state: TurnState, value: SessionFacts) -> None:
    for item in (state, value, HookState()):
        assert codec.dumps(item) == jsonsafe.dumps(_walk(item))
