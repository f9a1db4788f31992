"""The records as msgspec Structs keep what they did as frozen dataclasses: keyword construction
and defaults, equality and hashing, refusal to change, pickling (cold-read workers), the parsers'
in-place ``ts`` / ``agent_id`` stores, and the index's bytes for ``Usage`` (issue 14)."""

from __future__ import annotations

import pickle

import msgspec
import pytest

from agentbar.core import codec
from agentbar.core.agents.codex import rollout
from agentbar.core.facts import SessionFacts
from agentbar.core.limits import LimitsSeen
from agentbar.core.records import (
    Activity,
    Asks,
    Prompt,
    Record,
    ToolCall,
    Usage,
    UsageReport,
)
from agentbar.core.usage.ledger import UsageLine

# ``codec.dumps`` of ``FACTS`` by the tree before this change (records as frozen dataclasses):
# what an index written then holds, and what a warm start now must read back.
FACTS = SessionFacts(
    model="gpt-5",
    summed_usage=Usage(
        input_tokens=12,
        output_tokens=2**53 - 1,
        cache_read_tokens=3,
        cache_creation_tokens=40,
        cache_creation_1h_tokens=7,
    ),
    recent_usage=(("msg_1:req_1", Usage(input_tokens=5)),),
    ledger=(UsageLine(day="2026-11-30", model="gpt-5", usage=Usage(output_tokens=9), cost=0.25),),
)
FACTS_AS_STORED = (
    b'{"project":null,"title":null,"title_rank":-1,"model":"gpt-5","cli_version":null,'
    b'"forked_from":null,"started_at":null,"last_activity":null,"summed_usage":{"input_tokens":'
    b'12,"output_tokens":9007199254740991,"cache_read_tokens":3,"cache_creation_tokens":40,'
    b'"cache_creation_1h_tokens":7},"recent_usage":[["msg_1:req_1",{"input_tokens":5,'
    b'"output_tokens":0,"cache_read_tokens":0,"cache_creation_tokens":0,'
    b'"cache_creation_1h_tokens":0}]],"thread_models":[],"ledger":[{"day":"2026-11-30","model":'
    b'"gpt-5","usage":{"input_tokens":0,"output_tokens":9,"cache_read_tokens":0,'
    b'"cache_creation_tokens":0,"cache_creation_1h_tokens":0},"cost":0.25}],"limits":[]}'
)


def test_keyword_construction_takes_the_defaults() -> None:
    call = ToolCall(call_id="c1", name="Bash", summary="ls")
    assert (call.ts, call.agent_id, call.asks) == (None, None, Asks.NOTHING)
    assert Usage() == Usage(input_tokens=0, cache_creation_1h_tokens=0)
    with pytest.raises(TypeError):
        Prompt("positional")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Prompt()  # type: ignore[call-arg]


def test_equal_records_hash_alike_and_types_stay_apart() -> None:
    a, b = Activity(ts=1.0, kind="tick"), Activity(ts=1.0, kind="tick")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Activity(ts=2.0, kind="tick")
    assert Prompt(text="x") != Activity(kind="x")
    assert hash(Usage(input_tokens=1)) == hash(Usage(input_tokens=1))
    assert Usage(input_tokens=1) + Usage(input_tokens=2) == Usage(input_tokens=3)


def test_records_refuse_to_change() -> None:
    record = Prompt(text="x")
    with pytest.raises(AttributeError):
        record.text = "y"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        record.ts = 1.0  # type: ignore[misc]


def test_records_pickle_as_themselves() -> None:
    records: list[Record] = [
        Prompt(ts=1.5, agent_id="sub", text="hi"),
        UsageReport(usage=Usage(output_tokens=7), key="k"),
        LimitsSeen(ts=2.0, rate_limits={"primary": {"used_percent": 3.0}}),
    ]
    back = pickle.loads(pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == records
    assert [type(r) for r in back] == [type(r) for r in records]


def test_the_codex_parser_stamps_time_and_agent_in_place() -> None:
    """``rollout``'s slot stores set a fresh record's ``ts`` and ``agent_id`` exactly as if it
    had been built with them: equal, hashed alike, pickled with them."""
    built = ToolCall(call_id="c1", name="Bash", summary="ls")
    rollout._SET_TS(built, 12.5)
    rollout._SET_AGENT(built, "agent-1")
    wanted = ToolCall(ts=12.5, agent_id="agent-1", call_id="c1", name="Bash", summary="ls")
    assert built == wanted and hash(built) == hash(wanted)
    assert (built.ts, built.agent_id) == (12.5, "agent-1")
    assert pickle.loads(pickle.dumps(built)) == wanted
    assert msgspec.structs.asdict(built) == msgspec.structs.asdict(wanted)


def test_replace_and_fields_read_the_record() -> None:
    record = Prompt(ts=1.0, text="x")
    assert msgspec.structs.replace(record, text="y") == Prompt(ts=1.0, text="y")
    assert [f.name for f in msgspec.structs.fields(record)] == ["ts", "agent_id", "text"]


def test_the_index_bytes_of_usage_are_the_old_ones() -> None:
    assert codec.dumps(FACTS) == FACTS_AS_STORED
    assert codec.loads(SessionFacts, FACTS_AS_STORED) == FACTS
