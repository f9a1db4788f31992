"""Codex adapter tests: paths, scan, processes and the rollout parser (records, owner, resume)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbar.core.agents.codex.files import CodexSource, default_codex_home, rollout_session_hint
from agentbar.core.agents.codex.rollout import CodexRolloutParser
from agentbar.core.model import Agent
from agentbar.core.records import Asks, Record, UsageReport
from agentbar.core.sources.base import (
    MalformedLine,
    Owner,
    ProcessInfo,
    StreamKind,
    StreamSpec,
    WatchRoot,
    parse_timestamp,
    scan_source,
)
from agentbar.core.tail import ZstdFileReader

DATA = Path(__file__).parent / "data" / "synthetic" / "codex"

MAIN = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01"
WAIT = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c02"
QUESTION = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c03"
ABORT = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c04"
ERR = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c05"
LEGACY = "5f3c2a10-8e4b-4c1d-9a7e-2b6d0f1e3a44"
PAGED = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c07"
SUB = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c08"
PARENT = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c09"
FORK = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c0a"
FORK_SRC = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c0b"
SUFFIX = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c0c"
ROLLOUT_ID = "019ad3f2-0a0b-7c0d-8e0f-101112131415"
BAD = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c0d"
SUFFIXED_NAME = f"rollout-2026-09-01T10-11-12-{SUFFIX}_{ROLLOUT_ID}.jsonl"


# -- helpers -----------------------------------------------------------------------------------


def spec_for(path: Path, hint: str | None = None, *, compressed: bool = False) -> StreamSpec:
    return StreamSpec(
        agent=Agent("codex"),
        kind=StreamKind.TRANSCRIPT,
        path=path,
        session_hint=hint if hint is not None else rollout_session_hint(path.name),
        compressed=compressed,
    )


def new_parser(hint: str | None = None, checkpoint: dict[str, Any] | None = None):
    return CodexRolloutParser(spec_for(Path("/h/.codex/sessions/x.jsonl"), hint), checkpoint)


def fixture_lines(name: str) -> list[bytes]:
    return [line for line in (DATA / name).read_bytes().split(b"\n") if line]


def parse_all(parser: CodexRolloutParser, lines: Iterable[bytes]) -> tuple[list[Record], int]:
    records: list[Record] = []
    malformed = 0
    for line in lines:
        try:
            records.extend(parser.parse(line))
        except MalformedLine:
            malformed += 1
    return records, malformed


def line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj)


def env(kind: str, payload: Any, ts: str = "2026-11-29T10:00:00.000Z") -> bytes:
    return line({"timestamp": ts, "type": kind, "payload": payload})


def event(kind: str, **fields: Any) -> bytes:
    return env("event_msg", {"type": kind, **fields})


def item(payload: dict[str, Any]) -> bytes:
    return env("response_item", payload)


def user_item(text: str) -> bytes:
    content = [{"type": "text", "text": text, "text_elements": []}]
    return event("item_completed", turn_id="t", item={"type": "UserMessage", "content": content})


def meta_line(sid: str = MAIN, **extra: Any) -> bytes:
    return env("session_meta", {"id": sid, "cwd": "/w", "cli_version": "0.171.0", **extra})


def fn_call(name: str, args: Any, call_id: str = "c1") -> bytes:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return item({"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id})


def R(record_type: str, /, **fields: Any) -> tuple[str, dict[str, Any]]:
    """An expected record: its type name and the fields to check."""
    return record_type, fields


def assert_records(records: list[Record], expected: list[tuple[str, dict[str, Any]]]) -> None:
    got = [type(r).__name__ for r in records]
    assert got == [kind for kind, _ in expected]
    for index, (record, (_, fields)) in enumerate(zip(records, expected, strict=True)):
        actual = {key: getattr(record, key) for key in fields}
        assert actual == fields, f"record {index}: {record}"


# -- fixtures: the exact record sequences -------------------------------------------------------

EXPECTED: dict[str, tuple[list[tuple[str, dict[str, Any]]], int]] = {
    "approved_exec.jsonl": (
        [
            R(
                "SessionMeta",
                session_id=MAIN,
                cwd="/home/dev/proj",
                cli_version="0.171.0",
                parent_session_id=None,
                forked_from=None,
                originator="codex_cli_rs",
            ),
            R("TurnStarted", turn_id="turn-1"),
            R("Bookkeeping", kind="context"),
            R("Bookkeeping", kind="context"),
            R("Bookkeeping", kind="world_state"),
            R("ModelSeen", model="gpt-5.2-codex"),
            R("Bookkeeping", kind="thread_settings_applied"),
            R("Bookkeeping", kind="context"),
            R("Prompt", text="list the files in /etc"),
            R(
                "ToolCall",
                call_id="call_exec_1",
                name="exec_command",
                summary="ls /etc",
                asks=Asks.APPROVAL,
            ),
            R("Bookkeeping", kind="token_usage_record"),
            R("Activity", kind="CommandExecution"),
            R("ToolResult", call_id="call_exec_1", is_error=False, denied=False),
            R("UsageReport", key=None),
            R("LimitsSeen"),  # the rate_limits of the same token_count
            R(
                "AssistantText",
                text="/etc contains hosts and passwd.",
                message_id="msg_01",
                final=True,
            ),
            R("TurnEnded", last_message="/etc contains hosts and passwd.", error=None),
        ],
        0,
    ),
    "escalated_exec_waiting.jsonl": (
        [
            R("SessionMeta", session_id=WAIT, cwd="/home/dev/app", cli_version="0.46.0"),
            R("Bookkeeping", kind="context"),
            R("TurnStarted", turn_id=None),
            R("ModelSeen", model="gpt-5-codex"),
            R("Bookkeeping", kind="context"),
            R("Prompt", text="install the dependencies"),
            R("Thinking", text="**Installing packages**"),
            R("Activity", kind="agent_reasoning"),
            R(
                "ToolCall",
                call_id="call_sh_1",
                name="shell",
                summary="npm install",
                asks=Asks.APPROVAL,
            ),
        ],
        0,
    ),
    "request_user_input.jsonl": (
        [
            R("SessionMeta", session_id=QUESTION),
            R("TurnStarted", turn_id="turn-7"),
            R("ModelSeen", model="gpt-5.2-codex"),
            R("Prompt", text="set up CI for this service"),
            R(
                "ToolCall",
                call_id="call_ask_1",
                name="request_user_input",
                summary="Which CI provider should I configure?",
                asks=Asks.QUESTION,
            ),
        ],
        0,
    ),
    "turn_aborted.jsonl": (
        [
            R("SessionMeta", session_id=ABORT, cli_version="0.77.0"),
            R("TurnStarted", turn_id="t1"),
            R("ModelSeen", model="gpt-5.1-codex-max"),
            R("Prompt", text="delete the build folder"),
            R("ToolCall", call_id="call_rm", summary="rm -rf build", asks=Asks.APPROVAL),
            R("ToolResult", call_id="call_rm", is_error=True, denied=True),
            R("TurnAborted", reason="interrupted"),
            R("Bookkeeping", kind="context"),
            R("TurnStarted", turn_id="t2"),
            R("Bookkeeping", kind="turn_context"),  # same model: no second ModelSeen
            R("Prompt", text="ok, just show me what is in it"),
            R("ToolCall", call_id="call_ls", summary="ls build", asks=Asks.NOTHING),
            R("ToolResult", call_id="call_ls", is_error=True, denied=False),
            R("ToolCall", call_id="call_sleep", summary="sleep 100 && ls", asks=Asks.NOTHING),
            R("ToolResult", call_id="call_sleep", is_error=True, denied=True),
            R("TurnAborted", reason="interrupted"),
        ],
        0,
    ),
    "task_complete_error.jsonl": (
        [
            R("SessionMeta", session_id=ERR, originator="codex_exec"),
            R("TurnStarted", turn_id="turn-1"),
            R("ModelSeen", model="gpt-5.2-codex"),
            R("Prompt", text="summarize the repo"),
            R("Bookkeeping", kind="token_count"),
            R("LimitsSeen"),  # rate_limits with no token info
            R("ApiError", message="Reconnecting... 1/5", retrying=True),
            R("ApiError", message="unexpected status 500 Internal Server Error", retrying=False),
            R("TurnEnded", last_message=None, error="unexpected status 500 Internal Server Error"),
        ],
        0,
    ),
    "legacy_bare.jsonl": (
        [
            R("Bookkeeping", kind="session_meta"),  # the header: SessionMeta waits for the cwd
            R("Bookkeeping", kind="state"),
            R("Bookkeeping", kind="context"),  # <user_instructions>
            R("SessionMeta", session_id=LEGACY, cwd="/home/dev/app"),
            R("Bookkeeping", kind="context"),  # <environment_context>
            R("Bookkeeping", kind="state"),
            R("Prompt", text="run the tests"),
            R("Bookkeeping", kind="state"),
            R("Thinking", text="**Running tests**"),
            R("ToolCall", call_id="call_1", name="shell", summary="pytest -q", asks=Asks.NOTHING),
            R("ToolResult", call_id="call_1", is_error=True, denied=False),
            R("ToolCall", call_id="call_2", name="local_shell", summary="git status"),
            R("ToolResult", call_id="call_2", is_error=False),
            R(
                "AssistantText",
                text="3 tests fail in test_api.py.",
                message_id="msg_1",
                final=False,
            ),
            R("Bookkeeping", kind="state"),
        ],
        0,
    ),
    "paginated.jsonl": (
        [
            R("SessionMeta", session_id=PAGED, cli_version="0.153.4"),
            R("TurnStarted", turn_id="turn-1"),
            R("ModelSeen", model="gpt-5.2-codex"),
            R("Bookkeeping", kind="context"),
            R("Bookkeeping", kind="context"),
            R("Prompt", text="fix the flaky test"),
            R("Thinking", text="**Finding the race**\nThe test sleeps instead of waiting."),
            R("Activity", kind="Reasoning"),
            # policy "never": Codex refuses the escalation itself, no prompt comes up
            R(
                "ToolCall",
                call_id="call_t1",
                summary="pytest tests/test_io.py -q",
                asks=Asks.NOTHING,
            ),
            R("Activity", kind="CommandExecution"),
            R("ToolResult", call_id="call_t1", is_error=True, denied=False),
            R(
                "ToolCall",
                call_id="call_patch",
                name="apply_patch",
                summary="apply_patch tests/test_io.py, tests/helpers.py",
                asks=Asks.NOTHING,
            ),
            R("ToolResult", call_id="call_patch", is_error=False, denied=False),
            R("Activity", kind="FileChange"),
            R("AssistantText", message_id="msg_p1", final=True),
            R("Activity", kind="AgentMessage"),
            R("Bookkeeping", kind="token_usage_record"),
            R("UsageReport", key=None),
            R("LimitsSeen"),  # the rate_limits of the same token_count
            R("TurnEnded", last_message="The test now waits for the ready event."),
            R("TitleSet", title="Fix flaky IO test", rank=2),
            R("TurnStarted", turn_id="turn-2"),
            R("Prompt", text="also update the changelog"),
            R("Prompt", text="and bump the version"),  # steering: same source, both count
            R("AssistantText", message_id="msg_p2", final=True),
            R("TurnEnded", last_message="Updated CHANGELOG.md and bumped to 1.4.1."),
        ],
        0,
    ),
    "subagent.jsonl": (
        [
            R("SessionMeta", session_id=SUB, parent_session_id=PARENT, agent_id=SUB),
            R("Bookkeeping", kind="session_meta", agent_id=SUB),  # the parent's meta, copied
            R("TurnStarted", turn_id="sub-turn-1", agent_id=SUB),
            R("ModelSeen", model="gpt-5.2-codex-mini", agent_id=SUB),
            R("Prompt", text="Find where the config is loaded", agent_id=SUB),
            R("ToolCall", call_id="call_rg", summary="rg -n load_config", agent_id=SUB),
            R("ToolResult", call_id="call_rg", is_error=False, agent_id=SUB),
            R("AssistantText", final=True, agent_id=SUB),
            R("TurnEnded", agent_id=SUB),
        ],
        0,
    ),
    "fork.jsonl": (
        [
            R("SessionMeta", session_id=FORK, forked_from=FORK_SRC, parent_session_id=None),
            R("Bookkeeping", kind="session_meta"),
            R("Bookkeeping", kind="context"),
            R("TurnStarted", turn_id="src-1"),
            R("ModelSeen", model="gpt-5.2-codex"),
            R("Prompt", text="write a haiku about tests"),
            R("AssistantText", text="Green bars at midnight", final=True),
            R("TurnEnded", last_message="Green bars at midnight"),
            R("TurnStarted", turn_id="fork-1"),
            R("Bookkeeping", kind="turn_context"),
            R("Prompt", text="now make it rhyme"),
            R("AssistantText", final=True),
            R("TurnEnded", last_message="Tests pass, all green, serene"),
        ],
        0,
    ),
    SUFFIXED_NAME: (
        [
            R("SessionMeta", session_id=SUFFIX, cwd="/home/dev/rev"),
            R("TurnStarted", turn_id="r1"),
            R("Prompt", text="hello"),
            R("AssistantText", text="Hi! What should we work on?", final=True),
            R("TurnEnded", last_message="Hi! What should we work on?"),
        ],
        0,
    ),
    "malformed.jsonl": (
        [
            R("SessionMeta", session_id=BAD, originator="codex_exec"),
            R("Unknown", kind="brand_new_record"),
            R("Unknown", kind="event_msg/galaxy_brain_event"),
            R("Unknown", kind="response_item/hologram"),
            R("Unknown", kind="event_msg"),  # payload null
            R("Bookkeeping", kind="turn_context", ts=1795946400.0),  # fields of the wrong type
            R("Bookkeeping", kind="token_count", ts=None),  # info null; unreadable timestamp
            R("ToolCall", call_id="call_bad", summary='{"cmd": "ls -la', asks=Asks.NOTHING),
            R("ToolResult", call_id="call_bad", is_error=False, denied=False),
            R("Prompt", text="caf\ufffd ok"),  # a broken UTF-8 byte is replaced, not fatal
            R("AssistantText", text=""),
            R("Bookkeeping", kind="session_meta", ts=None),
            R("TurnEnded", last_message=None, error=None),
        ],
        4,  # truncated JSON, binary garbage, an array, a bare string
    ),
}

OWNERS = {
    "approved_exec.jsonl": Owner(MAIN),
    "escalated_exec_waiting.jsonl": Owner(WAIT),
    "request_user_input.jsonl": Owner(QUESTION),
    "turn_aborted.jsonl": Owner(ABORT),
    "task_complete_error.jsonl": Owner(ERR),
    "legacy_bare.jsonl": Owner(LEGACY),
    "paginated.jsonl": Owner(PAGED),
    "subagent.jsonl": Owner(PARENT, SUB),
    "fork.jsonl": Owner(FORK),
    SUFFIXED_NAME: Owner(SUFFIX),
    "malformed.jsonl": Owner(BAD),
}


def test_every_fixture_is_covered() -> None:
    assert {p.name for p in DATA.iterdir()} == set(EXPECTED) == set(OWNERS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_records(name: str) -> None:
    expected, expected_malformed = EXPECTED[name]
    parser = CodexRolloutParser(spec_for(DATA / name), None)
    records, malformed = parse_all(parser, fixture_lines(name))
    assert_records(records, expected)
    assert malformed == expected_malformed


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_owner_and_agent_ids(name: str) -> None:
    parser = CodexRolloutParser(spec_for(DATA / name), None)
    records, _ = parse_all(parser, fixture_lines(name))
    owner = OWNERS[name]
    assert parser.owner == owner
    assert {r.agent_id for r in records} == {owner.agent_id}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_checkpoint_round_trip_at_every_line(name: str) -> None:
    lines = fixture_lines(name)
    spec = spec_for(DATA / name)
    one_pass, _ = parse_all(CodexRolloutParser(spec, None), lines)
    for split in range(len(lines) + 1):
        first = CodexRolloutParser(spec, None)
        head, _ = parse_all(first, lines[:split])
        saved = orjson.loads(orjson.dumps(first.checkpoint()))
        second = CodexRolloutParser(spec, saved)
        assert second.owner == first.owner
        tail, _ = parse_all(second, lines[split:])
        assert head + tail == one_pass, f"split at line {split}"


def test_usage_is_the_responses_own_and_excludes_cached_input() -> None:
    records, _ = parse_all(new_parser(), fixture_lines("approved_exec.jsonl"))
    (report,) = [r for r in records if type(r).__name__ == "UsageReport"]
    usage = report.usage  # type: ignore[attr-defined]
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (2200, 3200, 120)


def test_timestamps_come_from_each_line() -> None:
    lines = fixture_lines("approved_exec.jsonl")
    parser = new_parser()
    for raw in lines:
        ts = parse_timestamp(orjson.loads(raw)["timestamp"])
        assert all(r.ts == ts for r in parser.parse(raw))


# -- owner resolution -------------------------------------------------------------------------


def test_owner_before_meta_is_the_file_name_hint_or_none() -> None:
    assert new_parser(hint=MAIN).owner == Owner(MAIN)
    assert new_parser().owner is None


def test_content_wins_over_the_file_name() -> None:
    parser = new_parser(hint=MAIN)
    parser.parse(meta_line(WAIT))
    assert parser.owner == Owner(WAIT)


def test_meta_without_an_id_uses_session_id_then_the_hint() -> None:
    parser = new_parser(hint=MAIN)
    assert_records(
        parser.parse(env("session_meta", {"session_id": WAIT})), [R("SessionMeta", session_id=WAIT)]
    )
    parser = new_parser(hint=MAIN)
    assert_records(
        parser.parse(env("session_meta", {"cwd": "/x"})),
        [R("SessionMeta", session_id=MAIN, cwd="/x")],
    )
    parser = new_parser()
    assert_records(
        parser.parse(env("session_meta", {"cwd": "/x"})), [R("Unknown", kind="session_meta")]
    )
    assert parser.owner is None


@pytest.mark.parametrize(
    ("payload", "owner"),
    [
        ({"parent_thread_id": PARENT}, Owner(PARENT, SUB)),
        (
            {"source": {"subagent": {"thread_spawn": {"parent_thread_id": PARENT}}}},
            Owner(PARENT, SUB),
        ),
        (
            {"source": {"subagent": {"other": [{"deep": {"parent_thread_id": PARENT}}]}}},
            Owner(PARENT, SUB),
        ),
        # no parent id anywhere: newer builds name the root thread in session_id
        ({"session_id": PARENT, "source": {"subagent": "review"}}, Owner(PARENT, SUB)),
        ({"source": {"subagent": "review"}}, Owner(SUB)),
        ({"session_id": PARENT, "source": "cli"}, Owner(SUB)),  # not a sub-agent
        ({"source": "exec"}, Owner(SUB)),
        ({"parent_thread_id": SUB}, Owner(SUB)),  # its own id is no parent
    ],
)
def test_sub_agent_owner(payload: dict[str, Any], owner: Owner) -> None:
    parser = new_parser()
    (meta,) = parser.parse(env("session_meta", {"id": SUB, **payload}))
    assert parser.owner == owner
    assert meta.agent_id == owner.agent_id
    assert meta.parent_session_id == (owner.session_id if owner.agent_id else None)  # type: ignore[attr-defined]


# -- prompts: one per typed prompt, whichever copies the file holds ----------------------------


@pytest.mark.parametrize(
    ("lines", "prompts"),
    [
        pytest.param(
            [event("user_message", message="fix it"), user_item("fix it")],
            ["fix it"],
            id="event-then-item",
        ),
        pytest.param(
            [user_item("fix it"), event("user_message", message="fix it")],
            ["fix it"],
            id="item-then-event",
        ),
        pytest.param(
            [event("user_message", message="fix  it\n"), user_item("fix it")],
            ["fix  it\n"],
            id="whitespace-differs",
        ),
        pytest.param(
            [
                event("user_message", message="go"),
                event("user_message", message="go"),
                user_item("go"),
                user_item("go"),
            ],
            ["go", "go"],
            id="steered-twice",
        ),
        pytest.param(
            [event("user_message", message="a"), event("task_complete"), user_item("a")],
            ["a", "a"],
            id="turn-end-clears",
        ),
        pytest.param(
            [event("user_message", message="a"), event("turn_aborted", reason="x"), user_item("b")],
            ["a", "b"],
            id="shape-changes-midway",
        ),
        pytest.param(
            [event("user_message", message="a"), event("task_started"), user_item("b")],
            ["a", "b"],
            id="crashed-turn-then-new-build",
        ),
        pytest.param([event("user_message", message=""), user_item("")], [], id="empty"),
        pytest.param(
            [event("user_message", message="", images=["data:image/png;base64,AA"])],
            ["[image]"],
            id="image-only",
        ),
        pytest.param(
            [
                event(
                    "item_completed",
                    item={
                        "type": "UserMessage",
                        "content": [{"type": "local_image", "path": "/tmp/shot.png"}],
                    },
                )
            ],
            ["[image]"],
            id="image-only-item",
        ),
    ],
)
def test_prompt_deduplication(lines: list[bytes], prompts: list[str]) -> None:
    records, _ = parse_all(new_parser(), [meta_line(), *lines])
    assert [r.text for r in records if type(r).__name__ == "Prompt"] == prompts  # type: ignore[attr-defined]


def test_injected_context_is_never_a_prompt_in_the_envelope_format() -> None:
    user_msg = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "plain words"}],
    }
    records, _ = parse_all(new_parser(), [meta_line(), item(user_msg)])
    assert_records(records[1:], [R("Bookkeeping", kind="context")])


# -- tool calls: summary and what they ask ------------------------------------------------------

PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Delete File: b.py\n*** End Patch"


def turn_context(policy: Any = None, sandbox: Any = None) -> list[bytes]:
    payload: dict[str, Any] = {"model": "gpt-5.2-codex"}
    if policy is not None:
        payload["approval_policy"] = policy
    if sandbox is not None:
        payload["sandbox_policy"] = sandbox
    return [env("turn_context", payload)]


ESCALATED = {"cmd": "git push", "sandbox_permissions": "require_escalated"}


@pytest.mark.parametrize(
    ("context", "call", "summary", "asks"),
    [
        (turn_context("on-request"), fn_call("exec_command", ESCALATED), "git push", Asks.APPROVAL),
        ([], fn_call("exec_command", ESCALATED), "git push", Asks.APPROVAL),  # policy unknown
        (turn_context("untrusted"), fn_call("exec_command", ESCALATED), "git push", Asks.NOTHING),
        (turn_context("never"), fn_call("exec_command", ESCALATED), "git push", Asks.NOTHING),
        (turn_context("on-failure"), fn_call("exec_command", ESCALATED), "git push", Asks.NOTHING),
        (
            turn_context({"granular": {"sandbox_approval": True}}),
            fn_call("exec_command", ESCALATED),
            "git push",
            Asks.NOTHING,
        ),
        (
            turn_context("on-request"),
            fn_call("exec_command", {"cmd": "git push"}),
            "git push",
            Asks.NOTHING,
        ),
        (
            turn_context("on-request"),
            fn_call(
                "shell", {"command": ["bash", "-lc", "npm ci"], "with_escalated_permissions": True}
            ),
            "npm ci",
            Asks.APPROVAL,
        ),
        (
            turn_context("on-request"),
            fn_call("shell", {"command": ["ls", "-la"], "with_escalated_permissions": False}),
            "ls -la",
            Asks.NOTHING,
        ),
        (
            turn_context("on-request"),
            fn_call(
                "shell_command", {"command": "make", "sandbox_permissions": "require_escalated"}
            ),
            "make",
            Asks.APPROVAL,
        ),
        (
            turn_context("on-request"),
            fn_call("container.exec", {"cmd": ["sh", "-c", "make test"]}),
            "make test",
            Asks.NOTHING,
        ),
        (
            turn_context("on-request", {"type": "read-only"}),
            item(
                {"type": "custom_tool_call", "name": "apply_patch", "input": PATCH, "call_id": "c1"}
            ),
            "apply_patch a.py, b.py",
            Asks.APPROVAL,
        ),
        (
            [],
            item(
                {"type": "custom_tool_call", "name": "apply_patch", "input": PATCH, "call_id": "c1"}
            ),
            "apply_patch a.py, b.py",
            Asks.NOTHING,
        ),  # sandbox unknown
        (
            turn_context(None, {"mode": "read-only"}),
            fn_call("apply_patch", {"input": PATCH}),
            "apply_patch a.py, b.py",
            Asks.APPROVAL,
        ),
        (
            turn_context("never", {"type": "read-only"}),
            fn_call("apply_patch", {"input": PATCH}),
            "apply_patch a.py, b.py",
            Asks.NOTHING,
        ),
        (
            turn_context("on-request", {"type": "workspace-write"}),
            fn_call("apply_patch", {"input": PATCH}),
            "apply_patch a.py, b.py",
            Asks.NOTHING,
        ),
        (
            turn_context("never"),
            fn_call(
                "request_user_input", {"questions": [{"header": "Pick", "question": "Which one?"}]}
            ),
            "Which one?",
            Asks.QUESTION,
        ),
        (
            turn_context("never"),
            fn_call("request_user_input", {"questions": []}),
            "request_user_input questions=[]",
            Asks.QUESTION,
        ),
        (
            [],
            fn_call("mcp__github__create_issue", {"title": "Crash", "labels": ["bug"]}),
            'mcp__github__create_issue title=Crash labels=["bug"]',
            Asks.NOTHING,
        ),
        ([], fn_call("exec_command", "{not json"), "{not json", Asks.NOTHING),
        ([], fn_call("exec_command", "[1, 2]"), "[1, 2]", Asks.NOTHING),
        (
            [],
            item(
                {
                    "type": "custom_tool_call",
                    "name": "js",
                    "input": "console.log(1)\nmore",
                    "call_id": "c1",
                }
            ),
            "js console.log(1)",
            Asks.NOTHING,
        ),
        (
            [],
            item(
                {
                    "type": "local_shell_call",
                    "call_id": "c1",
                    "status": "in_progress",
                    "action": {"type": "exec", "command": ["bash", "-lc", "cargo build"]},
                }
            ),
            "cargo build",
            Asks.NOTHING,
        ),
    ],
)
def test_tool_call_summary_and_asks(
    context: list[bytes], call: bytes, summary: str, asks: Asks
) -> None:
    parser = new_parser()
    parse_all(parser, [meta_line(), *context])
    (record,) = parser.parse(call)
    assert_records([record], [R("ToolCall", call_id="c1", summary=summary, asks=asks)])


def test_policy_and_sandbox_survive_a_checkpoint() -> None:
    parser = new_parser()
    parse_all(parser, [meta_line(), *turn_context("on-request", {"type": "read-only"})])
    restored = new_parser(checkpoint=orjson.loads(orjson.dumps(parser.checkpoint())))
    (record,) = restored.parse(fn_call("apply_patch", {"input": PATCH}))
    assert record.asks is Asks.APPROVAL  # type: ignore[attr-defined]
    assert restored.parse(env("turn_context", {"model": "gpt-5.2-codex"}))[0].kind == "turn_context"  # type: ignore[attr-defined]


def test_an_unmarked_turn_end_is_inferred_across_a_checkpoint() -> None:
    """The inference's memory (the request's output so far, its answer, the collaboration
    mode) survives the engine stopping between any two lines."""
    from codex_lines import CodexRollout

    from agentbar.core.records import TurnEnded

    r = CodexRollout(MAIN)
    lines = [
        orjson.dumps(line)
        for line in [
            r.meta(),
            r.prompt("hi"),
            r.context(mode="default"),
            r.exec("ls"),
            r.tokens(10, 0, 5),
            r.output(),
            r.context(mode="default"),
            r.tokens(10, 0, 5),  # the next request starting: completes nothing
            r.event("agent_message", message="Hello."),
            r.answer("Hello."),
            r.tokens(20, 0, 10),
        ]
    ]
    for cut in range(len(lines)):
        parser = new_parser()
        before, _ = parse_all(parser, lines[:cut])
        restored = new_parser(checkpoint=orjson.loads(orjson.dumps(parser.checkpoint())))
        assert restored.checkpoint() == parser.checkpoint()
        after, _ = parse_all(restored, lines[cut:])
        ends = [rec for rec in [*before, *after] if isinstance(rec, TurnEnded)]
        assert [e.last_message for e in ends] == ["Hello."], cut
        assert ends[0] is after[-1] or ends[0] is before[-1]
    (call,) = restored.parse(orjson.dumps(r.call("request_user_input", {"questions": []})))
    assert call.asks is Asks.NOTHING  # type: ignore[attr-defined]


def test_long_summaries_are_one_short_line() -> None:
    parser = new_parser()
    (record,) = parser.parse(fn_call("exec_command", {"cmd": "echo " + "x" * 500 + "\nsecond"}))
    summary = record.summary  # type: ignore[attr-defined]
    assert "\n" not in summary and len(summary) <= 200 and summary.startswith("echo xxx")


# -- tool results: errors and denials ----------------------------------------------------------

GUARDIAN = (
    "This action was rejected due to unacceptable risk.\nReason: deletes user data\n"
    "The agent must not attempt to achieve the same outcome via workaround."
)
POLICY = (
    "approval policy is Never; reject command — you should not ask for escalated permissions "
    "if the approval policy is Never"
)


def test_a_command_that_failed_to_start_was_not_refused() -> None:
    for text in (
        'exec_command failed: CreateProcess { message: "No such file or directory" }',
        'exec_command failed: CreateProcess { message: "Rejected(\\"sandbox: no\\")" }',
    ):
        (record,) = new_parser().parse(
            item({"type": "function_call_output", "call_id": "c1", "output": text})
        )
        assert record.denied is False  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("output", "is_error", "denied"),
    [
        ("exec command rejected by user", True, True),
        ("patch rejected by user", True, True),
        ("rejected by user", True, True),
        ("user rejected MCP tool call", True, True),
        ({"content": "patch rejected by user", "success": False}, True, True),
        ([{"type": "input_text", "text": "exec command rejected by user"}], True, True),
        (GUARDIAN, True, True),
        (POLICY, True, True),
        ("aborted by user after 3.2s", True, True),
        ("Wall time: 4.1 seconds\naborted by user", True, True),
        ("aborted", True, True),
        (
            'exec_command failed: CreateProcess { message: "Rejected(\\"rejected by user\\")" }',
            True,
            True,
        ),
        # only the whole output counts: these commands ran and printed the words
        ("Process exited with code 0\nOutput:\nexec command rejected by user\n", False, False),
        ("grep: rejected by user", False, False),
        ("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\n", True, False),
        ("Exit code: 2\nWall time: 0.1 seconds\nOutput:\nboom", True, False),
        ("Process exited with code 0\nOutput:\nProcess exited with code 1\n", False, False),
        ('{"output":"ok\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}', False, False),
        ('{"output":"nope\\n","metadata":{"exit_code":127,"duration_seconds":0.1}}', True, False),
        ({"content": "failed to parse patch", "success": False}, True, False),
        ({"content": "ok", "success": True}, False, False),
        ("plain output", False, False),
        (None, False, False),
        (42, False, False),
    ],
)
def test_tool_result_flags(output: Any, is_error: bool, denied: bool) -> None:
    for kind in ("function_call_output", "custom_tool_call_output"):
        (record,) = new_parser().parse(item({"type": kind, "call_id": "c1", "output": output}))
        assert_records([record], [R("ToolResult", call_id="c1", is_error=is_error, denied=denied)])


def test_outputs_without_a_call_id_are_unknown() -> None:
    (record,) = new_parser().parse(item({"type": "function_call_output", "output": "x"}))
    assert_records([record], [R("Unknown", kind="response_item/function_call_output")])


def test_completed_local_shell_call_is_also_its_result() -> None:
    call = item(
        {
            "type": "local_shell_call",
            "call_id": "c9",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls"]},
        }
    )
    assert_records(
        new_parser().parse(call),
        [
            R("ToolCall", call_id="c9", name="local_shell", summary="ls"),
            R("ToolResult", call_id="c9", is_error=False),
        ],
    )


# -- other event and item kinds ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (event("turn_started", turn_id="t9"), R("TurnStarted", turn_id="t9")),
        (event("turn_complete", last_agent_message="done"), R("TurnEnded", last_message="done")),
        (event("task_complete", error={"codex_error_info": "x"}), R("TurnEnded", error="error")),
        (event("task_complete", error="quota"), R("TurnEnded", error="quota")),
        (event("turn_aborted"), R("TurnAborted", reason="interrupted")),
        (event("turn_aborted", reason="budget_limited"), R("TurnAborted", reason="budget_limited")),
        (event("context_compacted"), R("Compaction")),
        (event("thread_name_updated", name="Renamed"), R("TitleSet", title="Renamed", rank=2)),
        (
            event("thread_name_updated", thread_name=" "),
            R("Bookkeeping", kind="thread_name_updated"),
        ),
        (event("agent_message", message="hi"), R("Activity", kind="agent_message")),
        (
            event("agent_reasoning_raw_content", text="r"),
            R("Activity", kind="agent_reasoning_raw_content"),
        ),
        (
            event("exec_command_end", call_id="c1", exit_code=0),
            R("Activity", kind="exec_command_end"),
        ),
        (event("patch_apply_end", call_id="c1"), R("Activity", kind="patch_apply_end")),
        (event("warning", message="w"), R("Bookkeeping", kind="warning")),
        (event("hook_completed"), R("Bookkeeping", kind="hook_completed")),
        (
            event("item_completed", item={"type": "Plan", "text": "1. x"}),
            R("Activity", kind="Plan"),
        ),
        (event("item_completed", item=None), R("Unknown", kind="event_msg/item_completed")),
        (event("error"), R("ApiError", message="error", retrying=False)),
        (
            event("token_count", info={"total_token_usage": None}),
            R("Bookkeeping", kind="token_count"),
        ),
        (env("event_msg", {"type": 7}), R("Unknown", kind="event_msg/?")),
        (env("compacted", {"message": "summary", "replacement_history": []}), R("Compaction")),
        (env("inter_agent_communication", {}), R("Bookkeeping", kind="inter_agent_communication")),
        (env("realtime_item", {}), R("Bookkeeping", kind="realtime_item")),
        (item({"type": "compaction", "encrypted_content": "x"}), R("Compaction")),
        (item({"type": "context_compaction"}), R("Compaction")),
        (
            item({"type": "ghost_snapshot", "ghost_commit": {}}),
            R("Bookkeeping", kind="ghost_snapshot"),
        ),
        (
            item({"type": "web_search_call", "status": "completed"}),
            R("Activity", kind="web_search_call"),
        ),
        (item({"type": "tool_search_output"}), R("Activity", kind="tool_search_output")),
        (item({"type": "image_generation_call"}), R("Activity", kind="image_generation_call")),
        (
            item(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": "a"},
                        {"type": "output_text", "text": "b"},
                    ],
                    "phase": "commentary",
                }
            ),
            R("AssistantText", text="ab", final=False),
        ),
        (
            item({"type": "message", "role": "assistant", "content": [], "phase": "final"}),
            R("AssistantText", final=True),
        ),
        (item({"type": "message", "role": 5}), R("Unknown", kind="response_item/message/?")),
        (
            item({"type": "reasoning", "summary": [], "encrypted_content": "x"}),
            R("Thinking", text=""),
        ),
        (
            item({"type": "function_call", "name": "x", "arguments": "{}"}),
            R("Unknown", kind="response_item/function_call"),
        ),
        (
            env(
                "turn_context",
                {"approval_policy": "never", "sandbox_policy": {"type": "read-only"}},
            ),
            R("Bookkeeping", kind="turn_context"),
        ),
        (line({"timestamp": "2026-11-29T10:00:00Z", "type": 3}), R("Unknown", kind="?")),
    ],
)
def test_single_lines(raw: bytes, expected: tuple[str, dict[str, Any]]) -> None:
    parser = new_parser()
    parser.parse(meta_line())
    assert_records(parser.parse(raw), [expected])


def test_model_seen_only_on_change() -> None:
    parser = new_parser()
    lines = [
        meta_line(),
        *turn_context(),
        *turn_context(),
        env("turn_context", {"model": "o3"}),
        *turn_context(),
    ]
    records, _ = parse_all(parser, lines)
    assert [r.model for r in records if type(r).__name__ == "ModelSeen"] == [  # type: ignore[attr-defined]
        "gpt-5.2-codex",
        "o3",
        "gpt-5.2-codex",
    ]


# -- legacy bare format ------------------------------------------------------------------------

LEGACY_HEADER = line({"id": LEGACY, "timestamp": "2025-07-14T09:30:00.123Z", "instructions": None})


def bare_user(text: str, role: str = "user") -> bytes:
    return line(
        {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
    )


def test_legacy_meta_without_environment_context_comes_before_the_first_real_line() -> None:
    records, _ = parse_all(
        new_parser(),
        [
            LEGACY_HEADER,
            line({"record_type": "state"}),
            bare_user("# AGENTS.md instructions for /w\n\nbe nice"),
            bare_user("hello"),
        ],
    )
    assert_records(
        records,
        [
            R("Bookkeeping", kind="session_meta"),
            R("Bookkeeping", kind="state"),
            R("Bookkeeping", kind="context"),
            R("SessionMeta", session_id=LEGACY, cwd=None, ts=None),
            R("Prompt", text="hello"),
        ],
    )


def test_legacy_header_with_cwd_is_the_session_meta() -> None:
    header = line(
        {
            "id": LEGACY,
            "timestamp": "2025-09-13T01:00:00.000Z",
            "cwd": "/p",
            "originator": "codex_cli_rs",
            "cli_version": "0.34.0",
        }
    )
    records, _ = parse_all(
        new_parser(),
        [header, bare_user("<environment_context>\n<cwd>/elsewhere</cwd>\n</environment_context>")],
    )
    assert_records(
        records,
        [
            R(
                "SessionMeta",
                session_id=LEGACY,
                cwd="/p",
                cli_version="0.34.0",
                originator="codex_cli_rs",
                ts=parse_timestamp("2025-09-13T01:00:00.000Z"),
            ),
            R("Bookkeeping", kind="context"),
        ],
    )


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        ("<user_instructions>x</user_instructions>", "user", "Bookkeeping"),
        ("<permissions instructions>x", "user", "Bookkeeping"),
        ("  # AGENTS.md instructions for /w", "user", "Bookkeeping"),
        ("anything", "developer", "Bookkeeping"),
        ("   ", "user", "Bookkeeping"),
        ("please fix <environment_context>", "user", "Prompt"),
    ],
)
def test_legacy_user_messages(text: str, role: str, kind: str) -> None:
    parser = new_parser()
    parse_all(parser, [LEGACY_HEADER, bare_user("<environment_context><cwd>/w</cwd>")])
    assert [type(r).__name__ for r in parser.parse(bare_user(text, role))] == [kind]


def test_legacy_unknown_lines() -> None:
    parser = new_parser()
    parser.parse(LEGACY_HEADER)
    assert_records(parser.parse(line({"type": "teleport"})), [R("Unknown", kind="teleport")])
    assert_records(parser.parse(line({"id": "again"})), [R("Unknown", kind="?")])
    assert_records(parser.parse(line({"record_type": 5})), [R("Bookkeeping", kind="?")])


def test_format_is_decided_by_the_first_recognisable_line() -> None:
    parser = new_parser()
    assert_records(parser.parse(line({"hello": "world"})), [R("Unknown", kind="?")])
    assert parser.checkpoint()["format"] is None
    parser.parse(LEGACY_HEADER)
    assert parser.checkpoint()["format"] == "legacy"
    assert parser.owner == Owner(LEGACY)


# -- lines too long to buffer ------------------------------------------------------------------

BIG = 17_300_000


def head_of(obj: dict[str, Any]) -> bytes:
    """The first 64 KiB of an over-long line, as the tailer hands them over."""
    return orjson.dumps(obj)[:65_536]


def test_oversized_tool_output_keeps_its_call_id_and_timestamp() -> None:
    output = {"type": "function_call_output", "call_id": "call_big", "output": "x" * 70_000}
    prefix = head_of(
        {"timestamp": "2026-11-29T10:00:00.000Z", "type": "response_item", "payload": output}
    )
    ts = parse_timestamp("2026-11-29T10:00:00.000Z")
    assert_records(
        new_parser().parse_oversized(prefix, BIG),
        [
            R("ToolResult", call_id="call_big", is_error=False, ts=ts),
        ],
    )


def test_oversized_prompt_counts_once_whichever_copies_exist() -> None:
    text = "a" * 70_000
    event_prefix = head_of(
        {"type": "event_msg", "payload": {"type": "user_message", "message": text}}
    )
    user_message = {"type": "UserMessage", "id": "i", "content": [{"type": "text", "text": text}]}
    item_prefix = head_of(
        {
            "type": "event_msg",
            "payload": {
                "type": "item_completed",
                "thread_id": "t",
                "turn_id": "u",
                "item": user_message,
            },
        }
    )
    prompt = R("Prompt", text="[message of 17.3 MB]")
    parser = new_parser()
    assert_records(parser.parse_oversized(event_prefix, BIG), [prompt])
    assert_records(
        parser.parse_oversized(item_prefix, BIG + 80), [R("Bookkeeping", kind="prompt-copy")]
    )
    assert_records(new_parser().parse_oversized(item_prefix, BIG), [prompt])  # paginated mode


def test_oversized_other_lines_are_activity() -> None:
    quoted = '"type":"user_message","call_id":"fake"' * 2000  # inside a string: escaped, ignored
    message = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": quoted}],
    }
    prefix = head_of({"type": "response_item", "payload": message})
    assert_records(
        new_parser().parse_oversized(prefix, BIG), [R("Activity", kind="oversized", ts=None)]
    )
    assert_records(
        new_parser().parse_oversized(b"\xff" * 100, BIG), [R("Activity", kind="oversized")]
    )


def test_oversized_first_session_meta_still_names_the_owner() -> None:
    payload = {
        "id": SUB,
        "cwd": "C:\\work\\repo",
        "cli_version": "0.171.0",
        "parent_thread_id": PARENT,
        "base_instructions": {"text": "y" * 70_000},
    }
    prefix = head_of(
        {"timestamp": "2026-11-29T10:00:00Z", "type": "session_meta", "payload": payload}
    )
    parser = new_parser(hint=SUB)
    assert_records(
        parser.parse_oversized(prefix, BIG),
        [
            R(
                "SessionMeta",
                session_id=SUB,
                cwd="C:\\work\\repo",
                parent_session_id=PARENT,
                agent_id=SUB,
            ),
        ],
    )
    assert parser.owner == Owner(PARENT, SUB)


# -- checkpoints -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "checkpoint",
    [
        {},
        {"v": 99, "format": "legacy", "session_id": "x"},
        {"v": 1, "format": "bogus", "session_id": 5, "event_prompts": "nope", "pending_meta": 3},
        {"v": 1, "pending_meta": {"no": "id"}, "meta_seen": "yes"},
    ],
)
def test_bad_checkpoints_start_fresh(checkpoint: dict[str, Any]) -> None:
    name = "approved_exec.jsonl"
    fresh, _ = parse_all(new_parser(), fixture_lines(name))
    restored, _ = parse_all(new_parser(checkpoint=checkpoint), fixture_lines(name))
    assert restored == fresh


def test_checkpoint_is_small_and_json() -> None:
    parser = new_parser()
    parse_all(parser, fixture_lines("paginated.jsonl"))
    saved = parser.checkpoint()
    assert orjson.loads(orjson.dumps(saved)) == saved
    assert len(orjson.dumps(saved)) < 1024


def test_pending_prompt_memory_is_bounded() -> None:
    parser = new_parser()
    parse_all(parser, [meta_line(), *(event("user_message", message=f"p{i}") for i in range(100))])
    assert len(parser.checkpoint()["event_prompts"]) == 16


# -- paths: home, watch roots, classify, scan --------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"CODEX_HOME": "/srv/codex", "HOME": "/home/u"}, Path("/srv/codex")),
        ({"CODEX_HOME": "", "HOME": "/home/u"}, Path("/home/u/.codex")),
        ({"HOME": "/home/u"}, Path("/home/u/.codex")),
        ({"USERPROFILE": "C:/Users/u"}, Path("C:/Users/u/.codex")),
    ],
)
def test_default_codex_home(environ: dict[str, str], expected: Path) -> None:
    assert default_codex_home(environ) == expected


def test_default_codex_home_without_any_variable_uses_the_user_folder() -> None:
    assert default_codex_home({}) == Path(os.path.expanduser("~")) / ".codex"


HOME = Path("/h/.codex")
U = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01"


def test_watch_roots() -> None:
    assert CodexSource(HOME).watch_roots() == [
        WatchRoot(HOME / "sessions", recursive=True),
        WatchRoot(HOME / "archived_sessions", recursive=True),
    ]
    assert CodexSource(HOME).agent == Agent("codex")
    assert CodexSource(HOME).parse_registry(b'{"pid": 1}') is None


@pytest.mark.parametrize(
    ("path", "hint", "compressed"),
    [
        (f"sessions/2026/09/01/rollout-2026-09-01T10-11-12-{U}.jsonl", U, False),
        (f"sessions/rollout-2025-07-14T09-30-00-{U}.jsonl", U, False),  # flat legacy layout
        (f"archived_sessions/2026/08/01/rollout-2026-08-01T10-11-12-{U}.jsonl.zst", U, True),
        (f"archived_sessions/rollout-2026-08-01T10-11-12-{U}.jsonl", U, False),
        (f"sessions/2026/09/01/rollout-2026-09-01T10-11-12-{U}_{ROLLOUT_ID}.jsonl", U, False),
        (f"sessions/2026/09/01/rollout-2026-09-01T10-11-12-{U}_{ROLLOUT_ID}.jsonl.zst", U, True),
        ("sessions/2026/09/01/rollout-2026-09-01T10-11-12-notauuid.jsonl", None, False),
        (f"sessions/2026/09/01/rollout-{U.upper()}.jsonl", U.upper(), False),
    ],
)
def test_classify_rollouts(path: str, hint: str | None, compressed: bool) -> None:
    spec = CodexSource(HOME).classify(HOME / path)
    assert spec == StreamSpec(
        agent=Agent("codex"),
        kind=StreamKind.TRANSCRIPT,
        path=HOME / path,
        session_hint=hint,
        compressed=compressed,
    )


@pytest.mark.parametrize(
    "path",
    [
        f"/h/.codex/sessions/2026/09/01/rollout-2026-09-01T10-11-12-{U}.json",
        f"/h/.codex/sessions/2026/09/01/rollout-2026-09-01T10-11-12-{U}.jsonl.tmp",
        f"/h/.codex/sessions/2026/09/01/{U}.jsonl",
        "/h/.codex/sessions/rollout-.jsonl",
        "/h/.codex/history.jsonl",
        "/h/.codex/session_index.jsonl",
        f"/h/.codex/log/rollout-2026-09-01T10-11-12-{U}.jsonl",
        f"/h/.codex/rollout-2026-09-01T10-11-12-{U}.jsonl",
        f"/elsewhere/sessions/rollout-2026-09-01T10-11-12-{U}.jsonl",
        "/h/.codex/sessions",
    ],
)
def test_classify_ignores_everything_else(path: str) -> None:
    assert CodexSource(HOME).classify(Path(path)) is None


def make_rollout(path: Path, content: bytes = b"{}\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def compress(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


def scanned(home: Path) -> set[tuple[str, str | None, bool]]:
    return {
        (spec.path.relative_to(home).as_posix(), spec.session_hint, spec.compressed)
        for spec in scan_source(CodexSource(home))
    }


def build_home(home: Path) -> None:
    a, b, c, legacy = (f"019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c1{i}" for i in range(4))
    make_rollout(home / f"sessions/2026/09/01/rollout-2026-09-01T10-11-12-{a}.jsonl")
    make_rollout(home / f"sessions/rollout-2025-07-14T09-30-00-{legacy}.jsonl")
    make_rollout(home / "sessions/2026/09/01/notes.txt")
    (home / "sessions/2026/09/02/rollout-a-folder.jsonl").mkdir(parents=True)
    make_rollout(home / f"archived_sessions/2026/08/01/rollout-2026-08-01T10-00-00-{b}.jsonl")
    make_rollout(
        home / f"archived_sessions/2026/08/01/rollout-2026-08-01T10-00-00-{b}.jsonl.zst",
        compress(b"{}\n"),
    )
    make_rollout(
        home / f"archived_sessions/2026/07/01/rollout-2026-07-01T10-00-00-{c}.jsonl.zst",
        compress(b"{}\n"),
    )
    make_rollout(home / "history.jsonl")


SCANNED = {
    (
        "sessions/2026/09/01/rollout-2026-09-01T10-11-12-019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c10.jsonl",
        "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c10",
        False,
    ),
    (
        "sessions/rollout-2025-07-14T09-30-00-019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c13.jsonl",
        "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c13",
        False,
    ),
    (
        "archived_sessions/2026/08/01/rollout-2026-08-01T10-00-00-019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c11.jsonl",
        "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c11",
        False,
    ),
    (
        "archived_sessions/2026/07/01/rollout-2026-07-01T10-00-00-019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c12.jsonl.zst",
        "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c12",
        True,
    ),
}


def test_scan_finds_every_rollout_and_prefers_the_plain_copy(tmp_path: Path) -> None:
    build_home(tmp_path)
    assert scanned(tmp_path) == SCANNED


def test_scan_of_an_empty_home_yields_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert list(scan_source(CodexSource(tmp_path / "missing"))) == []
    assert caplog.records == []  # folders Codex has not created yet are not a problem


def test_scan_skips_a_root_that_is_a_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    build_home(tmp_path)
    archived = tmp_path / "archived_sessions"
    for path in sorted(archived.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    archived.rmdir()
    archived.write_text("not a folder")
    with caplog.at_level(logging.WARNING):
        found = scanned(tmp_path)
    assert found == {entry for entry in SCANNED if entry[0].startswith("sessions/")}
    assert any("archived_sessions" in r.getMessage() for r in caplog.records)


def test_scan_survives_a_dangling_symlink_root(tmp_path: Path) -> None:
    build_home(tmp_path)
    sessions = tmp_path / "sessions"
    sessions.rename(tmp_path / "moved")
    sessions.symlink_to(tmp_path / "gone")
    assert scanned(tmp_path) == {e for e in SCANNED if e[0].startswith("archived_sessions/")}


def test_scan_skips_an_unreadable_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # These machines run as root, where chmod 000 does not stop reading: simulate EACCES.
    build_home(tmp_path)
    locked = tmp_path / "archived_sessions" / "2026" / "08"
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with caplog.at_level(logging.WARNING):
        found = scanned(tmp_path)
    assert found == {e for e in SCANNED if "2026/08/01" not in e[0]}
    assert any("Permission denied" in r.getMessage() for r in caplog.records)


def test_compressed_archive_reads_like_the_plain_file(tmp_path: Path) -> None:
    plain = DATA / "approved_exec.jsonl"
    name = f"rollout-2026-11-22T10-00-00-{MAIN}.jsonl.zst"
    archive = make_rollout(
        tmp_path / "archived_sessions/2026/11/22" / name, compress(plain.read_bytes())
    )
    (spec,) = scan_source(CodexSource(tmp_path))
    assert spec.path == archive and spec.compressed and spec.session_hint == MAIN
    lines = ZstdFileReader(archive).read().lines
    assert all(isinstance(raw, bytes) for raw in lines)
    from_archive, _ = parse_all(CodexSource(tmp_path).parser(spec, None), lines)  # type: ignore[arg-type]
    from_plain, _ = parse_all(new_parser(), fixture_lines("approved_exec.jsonl"))
    assert from_archive == from_plain


def test_suffixed_fixture_name_gives_the_thread_uuid() -> None:
    assert rollout_session_hint(SUFFIXED_NAME) == SUFFIX
    assert rollout_session_hint("notes.txt") is None


# -- processes --------------------------------------------------------------------------------

SID = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9cff"
DAEMON = "/root/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex"
NODE_CODEX = "/usr/lib/node_modules/@openai/codex/bin/codex.js"


def proc(*cmdline: str, name: str = "codex", cwd: str | None = "/home/dev/proj") -> ProcessInfo:
    return ProcessInfo(pid=4242, ppid=1, create_time=1.0, name=name, cmdline=cmdline, cwd=cwd)


@pytest.mark.parametrize(
    ("info", "client", "hint", "cwd"),
    [
        pytest.param(proc("codex"), True, None, "/home/dev/proj", id="tui"),
        pytest.param(
            proc("/usr/local/bin/codex", "fix the build"),
            True,
            None,
            "/home/dev/proj",
            id="tui-with-prompt",
        ),
        pytest.param(
            proc("codex", "-m", "o3", "-a", "on-request", "explain"),
            True,
            None,
            "/home/dev/proj",
            id="tui-options",
        ),
        pytest.param(
            proc("codex", "exec", "--json", "summarize"), True, None, "/home/dev/proj", id="exec"
        ),
        pytest.param(proc("codex", "e", "hi"), True, None, "/home/dev/proj", id="exec-alias"),
        pytest.param(proc("codex", "review"), True, None, "/home/dev/proj", id="review"),
        pytest.param(proc("codex", "resume", SID), True, SID, "/home/dev/proj", id="resume-id"),
        pytest.param(
            proc("codex", "-c", "model=o3", "resume", "--all", SID),
            True,
            SID,
            "/home/dev/proj",
            id="resume-after-options",
        ),
        pytest.param(
            proc("codex", "resume", "--last"), True, None, "/home/dev/proj", id="resume-last"
        ),
        pytest.param(
            proc("codex", "resume", "my-thread-name"),
            True,
            None,
            "/home/dev/proj",
            id="resume-by-name",
        ),
        pytest.param(
            proc("codex", "exec", "resume", SID, "go on"),
            True,
            SID,
            "/home/dev/proj",
            id="exec-resume",
        ),
        pytest.param(
            proc("codex", "exec", "--json", "-o", "out.txt", "resume", SID),
            True,
            SID,
            "/home/dev/proj",
            id="exec-options-resume",
        ),
        pytest.param(
            proc("codex", "exec", "resume", "--last", "go on"),
            True,
            None,
            "/home/dev/proj",
            id="exec-resume-last",
        ),
        pytest.param(proc("codex", "fork", SID), True, None, "/home/dev/proj", id="fork"),
        pytest.param(
            proc("codex", "-C", "sub/dir", "do it"),
            True,
            None,
            "/home/dev/proj/sub/dir",
            id="cd-relative",
        ),
        pytest.param(
            proc("codex", "exec", "--cd", "../other", "x"),
            True,
            None,
            "/home/dev/other",
            id="cd-long-after-subcommand",
        ),
        pytest.param(proc("codex", "--cd=/srv/app"), True, None, "/srv/app", id="cd-equals"),
        pytest.param(proc("codex", "-C/srv/app"), True, None, "/srv/app", id="cd-attached"),
        pytest.param(proc("codex", "-C", "rel", cwd=None), True, None, "rel", id="cd-no-proc-cwd"),
        pytest.param(
            proc("codex", "--", "-C", "x"), True, None, "/home/dev/proj", id="after-dashes"
        ),
        pytest.param(
            proc(DAEMON, "app-server", "--listen", "unix://", "--managed-daemon"),
            False,
            None,
            "/home/dev/proj",
            id="app-server-daemon",
        ),
        pytest.param(
            proc("codex", "daemon", "pid-update-loop"),
            False,
            None,
            "/home/dev/proj",
            id="daemon-helper",
        ),
        pytest.param(
            proc("codex", "-c", "x=1", "mcp-server"), False, None, "/home/dev/proj", id="mcp-server"
        ),
        pytest.param(proc("codex", "mcp", "list"), False, None, "/home/dev/proj", id="mcp"),
        pytest.param(proc("codex", "login"), False, None, "/home/dev/proj", id="login"),
        pytest.param(
            proc("codex", "sandbox", "linux", "ls"), False, None, "/home/dev/proj", id="sandbox"
        ),
        pytest.param(
            proc("codex", "completion", "bash"), False, None, "/home/dev/proj", id="completion"
        ),
        pytest.param(proc("codex", "apply", "task_123"), False, None, "/home/dev/proj", id="apply"),
        pytest.param(proc("codex", "cloud"), False, None, "/home/dev/proj", id="cloud"),
        pytest.param(
            proc("codex", "migrate-rollouts"), False, None, "/home/dev/proj", id="migrate-rollouts"
        ),
        pytest.param(proc("codex", "--version"), False, None, "/home/dev/proj", id="version"),
        pytest.param(
            proc("node", NODE_CODEX, "resume", SID, name="node"),
            True,
            SID,
            "/home/dev/proj",
            id="node-wrapper",
        ),
        pytest.param(
            proc("node", "--no-warnings", "/usr/local/bin/codex", name="node"),
            True,
            None,
            "/home/dev/proj",
            id="node-bin-shim",
        ),
        pytest.param(
            proc("node", NODE_CODEX, "app-server", name="node"),
            False,
            None,
            "/home/dev/proj",
            id="node-wrapper-daemon",
        ),
        pytest.param(
            proc("node", "/srv/app/server.js", name="node"),
            False,
            None,
            "/home/dev/proj",
            id="other-node",
        ),
        pytest.param(
            proc("C:\\Program Files\\OpenAI\\codex.exe", "exec", "hi", name="codex.exe"),
            True,
            None,
            "/home/dev/proj",
            id="windows",
        ),
        pytest.param(
            proc("/proc/self/exe", "resume", SID), True, SID, "/home/dev/proj", id="argv0-rewritten"
        ),
        pytest.param(
            proc("claude", "--resume", SID, name="claude"),
            False,
            None,
            "/home/dev/proj",
            id="not-codex",
        ),
        pytest.param(proc(name="codex"), False, None, "/home/dev/proj", id="no-cmdline"),
        pytest.param(
            proc(
                "/usr/lib/node_modules/@openai/codex/bin/codex-x86_64-unknown-linux-musl",
                "resume",
                SID,
                name="codex-x86_64-un",
            ),
            True,
            SID,
            "/home/dev/proj",
            id="native-binary-with-target-triple",
        ),
    ],
)
def test_processes(info: ProcessInfo, client: bool, hint: str | None, cwd: str | None) -> None:
    source = CodexSource(HOME)
    assert source.is_client_process(info) is client
    assert source.process_session_hint(info) == hint
    if client:
        assert source.process_cwd(info) == cwd


def test_process_cwd_of_a_foreign_process_is_its_own() -> None:
    assert CodexSource(HOME).process_cwd(proc("vim", "-C", "x", name="vim")) == "/home/dev/proj"


# -- robustness ---------------------------------------------------------------------------------

# fmt: off
KEYS = [
    "type", "payload", "timestamp", "id", "session_id", "cwd", "source", "subagent",
    "parent_thread_id", "role", "content", "text", "name", "arguments", "call_id", "output",
    "input", "message", "info", "total_token_usage", "input_tokens", "cached_input_tokens",
    "item", "error", "reason", "model", "approval_policy", "sandbox_policy", "summary", "phase",
    "action", "command", "status", "record_type", "images", "thread_name", "success",
    "questions", "cmd", "sandbox_permissions", "with_escalated_permissions", "turn_id",
]
STRINGS = [
    "session_meta", "turn_context", "event_msg", "response_item", "compacted", "world_state",
    "message", "function_call", "function_call_output", "custom_tool_call", "local_shell_call",
    "custom_tool_call_output", "reasoning", "user_message", "item_completed", "UserMessage",
    "task_started", "task_complete", "turn_aborted", "token_count", "error", "stream_error",
    "thread_name_updated", "assistant", "user", "developer", "exec_command", "shell",
    "apply_patch", "request_user_input", "require_escalated", "on-request", "never",
    "read-only", "completed", "final_answer", "exec command rejected by user",
    "<environment_context><cwd>/x</cwd>", "*** Add File: a", "state", "",
    "2026-11-29T10:00:00Z", "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59",
]
# fmt: on
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(STRINGS)
)
json_values = st.recursive(
    json_leaf,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), children, max_size=6)
    ),
    max_leaves=25,
)
json_objects = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), json_values, max_size=7)
shaped_objects = st.fixed_dictionaries(
    {"type": st.sampled_from(STRINGS)},
    optional={
        "timestamp": json_values,
        "payload": st.fixed_dictionaries(
            {"type": st.sampled_from(STRINGS)},
            optional={key: json_values for key in KEYS if key != "type"},
        )
        | json_values,
    },
)
PRIMERS = [
    [],
    [meta_line()],
    [meta_line(SUB, parent_thread_id=PARENT)],
    [LEGACY_HEADER],
    [LEGACY_HEADER, line({"record_type": "state"})],
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    objects=st.lists(json_objects | shaped_objects, min_size=1, max_size=8),
    primer=st.sampled_from(PRIMERS),
)
def test_parse_never_raises_on_any_json_object(
    objects: list[dict[str, Any]], primer: list[bytes]
) -> None:
    parser = new_parser(hint=MAIN)
    parse_all(parser, primer)
    for obj in objects:
        try:
            records = parser.parse(json.dumps(obj).encode())
        except MalformedLine:
            continue  # e.g. an integer orjson will not read
        assert records and all(isinstance(r, Record) for r in records)
        assert all(isinstance(msgspec.structs.asdict(r), dict) for r in records)
    saved = orjson.loads(orjson.dumps(parser.checkpoint()))
    restored = new_parser(hint=MAIN, checkpoint=saved)
    assert restored.checkpoint() == parser.checkpoint()


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300), primer=st.sampled_from(PRIMERS))
def test_parse_never_raises_on_any_bytes(data: bytes, primer: list[bytes]) -> None:
    parser = new_parser()
    parse_all(parser, primer)
    with contextlib.suppress(MalformedLine):
        parser.parse(data)
    parser.parse_oversized(data, 20_000_000)


# -- token counts: each response's own, whatever the running total does ----------------------


def _count_line(total: list[int] | None, last: list[int] | None) -> bytes:
    def counts(c: list[int] | None) -> dict[str, int] | None:
        if c is None:
            return None
        return {"input_tokens": c[0], "cached_input_tokens": c[1], "output_tokens": c[2]}

    info: dict[str, Any] = {"total_token_usage": counts(total)}
    if last is not None:
        info["last_token_usage"] = counts(last)
    payload = {"type": "token_count", "info": info, "rate_limits": None}
    return orjson.dumps(
        {"timestamp": "2026-11-30T10:00:00.000Z", "type": "event_msg", "payload": payload}
    )


def _spent(
    lines: list[tuple[list[int] | None, list[int] | None]], *, cut_at: int = -1
) -> list[Any]:
    """The usage each line reports, read by one parser (or by two, the second restored from
    the first's checkpoint after ``cut_at`` lines: a restart mid-file)."""
    session = {"id": "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01", "cwd": "/w"}
    meta = orjson.dumps(
        {"timestamp": "2026-11-30T10:00:00.000Z", "type": "session_meta", "payload": session}
    )
    parser = new_parser()
    parser.parse(meta)
    out = []
    for n, (total, last) in enumerate(lines):
        if n == cut_at:
            parser = new_parser(checkpoint=orjson.loads(orjson.dumps(parser.checkpoint())))
        for r in parser.parse(_count_line(total, last)):
            if isinstance(r, UsageReport):
                out.append((r.usage.input_tokens, r.usage.cache_read_tokens, r.usage.output_tokens))
    return out


def test_token_counts_follow_each_response_when_the_total_goes_back() -> None:
    lines = [
        ([12_757, 0, 300], [12_757, 0, 300]),
        ([12_757, 0, 300], [12_757, 0, 300]),  # a request starts: the previous count again
        ([1_200, 200, 30], [1_200, 200, 30]),  # resumed: a new running total
        ([2_000, 300, 60], [800, 100, 30]),
    ]
    expected = [(12_757, 0, 300), (1_000, 200, 30), (700, 100, 30)]
    assert _spent(lines) == expected
    assert _spent(lines, cut_at=2) == expected  # the checkpoint keeps the previous count


def test_a_total_that_never_moves_still_counts_each_response() -> None:
    lines = [([0, 0, 0], [5_000, 0, 100]), ([0, 0, 0], [7_757, 0, 50])]
    assert _spent(lines) == [(5_000, 0, 100), (7_757, 0, 50)]


def test_totals_alone_count_what_grew() -> None:
    lines = [([3_000, 1_000, 100], None), ([4_000, 1_500, 150], None), ([500, 0, 10], None)]
    assert _spent(lines) == [(2_000, 1_000, 100), (500, 500, 50), (0, 0, 0)]


def test_a_count_reset_to_zero_keeps_what_was_counted() -> None:
    # What read 0 tokens before: the last total of the file was a fresh, empty count (a resumed
    # session), and the last total was all that counted.
    lines = [([12_757, 0, 300], [12_757, 0, 300]), ([0, 0, 0], [0, 0, 0])]
    spent = _spent(lines)
    assert [sum(col) for col in zip(*spent, strict=True)] == [12_757, 0, 300]
