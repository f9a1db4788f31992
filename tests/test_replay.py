"""Replay: items of every fixture layout, paging by byte cursors, cut lines and outputs, sub-agent
threads, whole items, and reading only inside the agent roots."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from claude_lines import ClaudeTranscript, write_lines
from codex_lines import CodexRollout
from replay_rig import SYNTHETIC, V10, V20, V21, Home, make_home, snapshot

from agentbar.core.agents.base import replay_adapters
from agentbar.core.agents.claude import AGENT as CLAUDE
from agentbar.core.agents.registry import KITS
from agentbar.core.model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
    WaitingFor,
)
from agentbar.core.records import Usage
from agentbar.core.replay.files import AgentRoots, OutsideRoots
from agentbar.core.replay.model import OUTPUT_CHARS, ItemKind, ReplayItem
from agentbar.core.replay.pages import NotFound, Replay
from agentbar.core.tail import FileTailer

CODEX_PARENT = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c09"
CODEX_CHILD = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c08"


def kinds(items: tuple[ReplayItem, ...] | list[ReplayItem]) -> list[str]:
    return [str(i.kind) for i in items]


def fake_snapshot(path: Path, agent: Agent = CLAUDE, **kw: object) -> SessionSnapshot:
    state = kw.pop("state", SessionState(state=State.DONE, source=Source.TRANSCRIPT))
    return SessionSnapshot(
        key=SessionKey(agent, "s"),
        project=None,
        title=None,
        state=state,  # type: ignore[arg-type]
        state_since=0.0,
        started_at=None,
        last_activity=None,
        model=None,
        usage=Usage(),
        transcript=str(path),
        process=None,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


# -- every layout ----------------------------------------------------------------------------


def test_claude_2_1_subagent_file_is_linked_at_its_call_and_paged_as_a_thread(home: Home):
    engine = home.caught_up()
    snap = snapshot(engine, V21)
    replay = home.replay()
    page = replay.page(snap)
    assert kinds(page.items) == [
        "note", "user", "tool_call", "subagent", "tool_result", "assistant", "note", "note",
    ]  # fmt: skip
    call, link = page.items[2], page.items[3]
    assert call.name == "Agent" and call.input["prompt"] == "profile"
    assert call.usage is not None and call.usage.output_tokens == 20
    assert link.link is not None and link.link.thread == "a4c2d9"
    assert link.link.description == "Profile the build" and link.link.call_id == "toolu_agent"
    assert link.offset == call.offset and link.index == 1
    (info,) = replay.threads(snap)
    assert info.agent_type == "general-purpose" and info.first_prompt == "profile"
    thread = replay.page(snap, "a4c2d9")
    assert kinds(thread.items) == ["user", "tool_call", "tool_result", "assistant"]
    assert {i.agent_id for i in thread.items} == {"a4c2d9"}
    assert thread.items[1].input == {
        "command": "npm run build -- --profile",
        "description": "run it",
    }
    assert thread.items[2].text == "minify 80%"
    engine.stop()


def test_claude_2_0_sibling_agent_file_is_linked_by_its_first_prompt(home: Home):
    engine = home.caught_up()
    snap = snapshot(engine, V20)
    assert snap.threads and snap.threads[0][0] == "b7e1"
    page = home.replay().page(snap)
    links = [i for i in page.items if i.kind is ItemKind.SUBAGENT]
    assert len(links) == 1 and links[0].link is not None
    assert links[0].link.thread == "b7e1" and links[0].call_id == "toolu_t"
    assert page.items[1].kind is ItemKind.THINKING
    assert page.items[1].text == "Look at argparse setup first."
    # The thinking line and the tool call share one response: its usage counts once.
    assert page.items[1].usage is not None and page.items[2].usage is None
    assert kinds(home.replay().page(snap, "b7e1").items) == [
        "user", "tool_call", "tool_result", "assistant",
    ]  # fmt: skip
    engine.stop()


def test_claude_1_0_inline_sidechain_is_a_thread_of_its_own(home: Home):
    engine = home.caught_up()
    snap = snapshot(engine, V10)
    replay = home.replay()
    page = replay.page(snap)
    assert kinds(page.items) == [
        "note",
        "user",
        "tool_call",
        "subagent",
        "tool_result",
        "assistant",
    ]
    link = page.items[3]
    assert link.link is not None and link.link.thread.startswith("inline:")
    assert link.link.call_id == "toolu_task" and link.agent_id is None
    assert all(i.agent_id is None for i in page.items)  # no sidechain line in the main thread
    inline = replay.page(snap, link.link.thread)
    assert kinds(inline.items) == ["user", "tool_call", "tool_result", "assistant"]
    assert inline.items[0].text == "search" and inline.items[-1].text == "Found one call site."
    with pytest.raises(NotFound):
        replay.page(snap, f"inline:{page.items[1].offset}")  # a main-thread line starts none
    engine.stop()


def test_codex_fixtures_give_items_for_every_kind_of_line(home: Home):
    paths = {
        name: home.codex_rollout(name, f"019ad3f1-7c2e-7b10-9a41-{n:012d}")
        for n, name in enumerate(sorted(os.listdir(SYNTHETIC / "codex")))
    }
    replay = home.replay()

    def items(name: str) -> list[ReplayItem]:
        return list(replay.page(fake_snapshot(paths[name], Agent("codex"))).items)

    paginated = items("paginated.jsonl")
    assert [i.text for i in paginated if i.kind is ItemKind.USER] == [
        "fix the flaky test", "also update the changelog", "and bump the version",
    ]  # fmt: skip
    calls = [i for i in paginated if i.kind is ItemKind.TOOL_CALL]
    assert calls[0].input == {
        "cmd": "pytest tests/test_io.py -q",
        "sandbox_permissions": "require_escalated",
    }
    assert calls[1].name == "apply_patch" and "*** Begin Patch" in calls[1].input
    results = [i for i in paginated if i.kind is ItemKind.TOOL_RESULT]
    assert results[0].is_error and "1 failed" in results[0].text
    assert any(i.kind is ItemKind.THINKING and "race" in i.text for i in paginated)
    ends = [i for i in paginated if i.name == "turn_end"]
    assert ends and ends[0].usage is not None and ends[0].usage.output_tokens == 410
    legacy = items("legacy_bare.jsonl")
    assert "run the tests" in [i.text for i in legacy if i.kind is ItemKind.USER]
    assert [i.summary for i in legacy if i.kind is ItemKind.TOOL_CALL] == [
        "pytest -q",
        "git status",
    ]
    malformed = items("malformed.jsonl")
    unknown = [i for i in malformed if i.kind is ItemKind.UNKNOWN]
    assert len(unknown) >= 6
    assert any(i.name == "brand_new_record" and '"brand_new_record"' in i.text for i in unknown)
    assert any((i.name or "").startswith("malformed") for i in unknown)
    failed = items("task_complete_error.jsonl")
    assert [i.name for i in failed if i.kind is ItemKind.ERROR] == [
        "retrying", None, "turn_failed",
    ]  # fmt: skip
    aborted = items("turn_aborted.jsonl")
    denied = [i for i in aborted if i.kind is ItemKind.TOOL_RESULT and i.denied]
    assert denied and denied[0].text == "exec command rejected by user"
    assert any(i.name == "interrupted" for i in aborted)
    for name in paths:
        assert items(name), name  # every fixture shows something


def test_codex_subagent_rollout_is_linked_from_the_spawning_call(home: Home):
    home.codex_rollout("subagent.jsonl", CODEX_CHILD)
    parent = CodexRollout(CODEX_PARENT, "/home/dev/mono")
    spawn_output = orjson.dumps({"agent_id": CODEX_CHILD, "nickname": "Scout"}).decode()
    path = (
        home.codex
        / "sessions"
        / "2026"
        / "11"
        / "29"
        / (f"rollout-2026-11-29T09-00-00-{CODEX_PARENT}.jsonl")
    )
    write_lines(
        path,
        [
            parent.meta(),
            parent.started(),
            parent.prompt("find the config loader"),
            parent.call("spawn_agent", {"message": "Find where the config is loaded"}, "call_sp"),
            parent.output("call_sp", spawn_output),
            parent.answer("The scout found it in src/config.py.", phase="final_answer"),
            parent.complete("The scout found it in src/config.py."),
        ],
    )
    engine = home.caught_up()
    snap = snapshot(engine, CODEX_PARENT)
    assert [thread for thread, _ in snap.threads] == [CODEX_CHILD]
    replay = home.replay()
    (info,) = replay.threads(snap)
    assert info.description == "Scout" and info.agent_type == "explorer"
    assert info.first_prompt == "Find where the config is loaded"
    page = replay.page(snap)
    links = [i for i in page.items if i.kind is ItemKind.SUBAGENT]
    assert len(links) == 1 and links[0].link is not None
    assert links[0].link.thread == CODEX_CHILD and links[0].call_id == "call_sp"
    child = replay.page(snap, CODEX_CHILD)
    assert {i.agent_id for i in child.items} == {CODEX_CHILD}
    assert "It is loaded in src/config.py:12." in [i.text for i in child.items]
    engine.stop()


# -- paging ----------------------------------------------------------------------------------


def big_transcript(path: Path, turns: int) -> ClaudeTranscript:
    t = ClaudeTranscript("44444444-0000-4000-8000-000000000004", "/work/big")
    lines = []
    for n in range(turns):
        lines += [
            t.prompt(f"prompt number {n}"),
            t.bash(f"echo {n}", call_id=f"toolu_{n}"),
            t.tool_result(f"toolu_{n}", f"output {n} " + "x" * 2000),
            t.text(f"answer number {n}", stop_reason="end_turn"),
            t.progress(),
        ]
    write_lines(path, lines)
    return t


def test_pages_cover_a_multi_megabyte_transcript_forward_and_backward(tmp_path: Path):
    path = tmp_path / "root" / "t.jsonl"
    big_transcript(path, 1500)  # 4 items a turn, about 4 MB
    assert path.stat().st_size > 3_000_000
    replay = Replay(AgentRoots([tmp_path / "root"]), replay_adapters(KITS))
    snap = fake_snapshot(path)
    last = replay.page(snap, limit=100)
    assert last.end == last.size == path.stat().st_size
    assert last.after is None and last.before == last.start > 0
    assert 100 <= len(last.items) < 104
    assert last.items[-1].text == "answer number 1499"
    backward: list[ReplayItem] = list(last.items)
    page = last
    pages = 1
    while page.before is not None:
        page = replay.page(snap, before=page.before, limit=100)
        assert page.end <= backward[0].offset
        backward[:0] = page.items
        pages += 1
    forward: list[ReplayItem] = []
    cursor: int | None = 0
    while cursor is not None:
        page = replay.page(snap, after=cursor, limit=137)
        forward += page.items
        cursor = page.after
    assert [i.key for i in forward] == [i.key for i in backward]
    assert len(forward) == 1500 * 4
    assert [i.text for i in forward if i.kind is ItemKind.USER] == [
        f"prompt number {n}" for n in range(1500)
    ]
    assert pages >= 60
    # A byte budget bounds a page even when the limit is high.
    wide = replay.page(snap, after=0, limit=1000)
    assert wide.end - wide.start < 300_000


def test_cursors_stay_valid_while_the_agent_writes(tmp_path: Path):
    path = tmp_path / "root" / "t.jsonl"
    t = big_transcript(path, 50)
    replay = Replay(AgentRoots([tmp_path / "root"]), replay_adapters(KITS))
    snap = fake_snapshot(path)
    first = replay.page(snap, after=0, limit=20)
    last = replay.page(snap)
    write_lines(path, [t.prompt("a new prompt"), t.text("a new answer")])
    assert replay.page(snap, after=0, limit=20).items == first.items
    newer = replay.page(snap, after=last.end)
    assert [i.text for i in newer.items] == ["a new prompt", "a new answer"]
    # A cursor inside a line moves to the next line start.
    inside = replay.page(snap, after=first.items[0].offset + 5, limit=1)
    assert inside.start == first.items[1].offset


def test_a_line_cut_mid_write_is_not_shown(tmp_path: Path):
    path = tmp_path / "root" / "t.jsonl"
    t = ClaudeTranscript()
    write_lines(path, [t.prompt("complete prompt"), t.text("complete answer")])
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(t.text("half written answer"))[:60])
    replay = Replay(AgentRoots([tmp_path / "root"]), replay_adapters(KITS))
    page = replay.page(fake_snapshot(path))
    assert [i.text for i in page.items] == ["complete prompt", "complete answer"]
    assert page.size < path.stat().st_size
    assert replay.page(fake_snapshot(path), after=page.end).items == ()


def test_huge_outputs_are_cut_and_served_whole_by_offset(tmp_path: Path):
    path = tmp_path / "root" / "t.jsonl"
    t = ClaudeTranscript()
    huge = "line of output\n" * 20_000  # 300 KB
    big_input = {"command": "cat", "content": "y" * 50_000}
    write_lines(
        path,
        [
            t.prompt("show me"),
            t.tool_use("Write", big_input, "toolu_w"),
            t.tool_result("toolu_w", huge),
        ],
    )
    replay = Replay(AgentRoots([tmp_path / "root"]), replay_adapters(KITS))
    snap = fake_snapshot(path)
    assert len(replay.page(snap).items) == 1  # the last page: one line of 600 KB is enough
    page = replay.page(snap, after=0)
    call, result = page.items[1], page.items[2]
    assert result.truncated and result.chars == len(huge) and len(result.text) == OUTPUT_CHARS
    assert call.truncated and isinstance(call.input, str) and len(call.input) == OUTPUT_CHARS
    whole = replay.item(snap, "main", result.offset, result.index)
    assert whole.text == huge and not whole.truncated
    assert replay.item(snap, "main", call.offset, 0).input == big_input
    with pytest.raises(NotFound):
        replay.item(snap, "main", result.offset + 1, 0)  # not a line start
    with pytest.raises(NotFound):
        replay.item(snap, "main", result.offset, 5)


def test_the_replay_opens_at_the_call_that_needs_the_user(tmp_path: Path):
    path = tmp_path / "root" / "t.jsonl"
    t = ClaudeTranscript()
    write_lines(
        path,
        [
            t.prompt("clean up"),
            t.bash("ls", call_id="toolu_1"),
            t.tool_result("toolu_1", "build"),
            t.bash("rm -rf build", call_id="toolu_2"),
            t.progress("hook_progress"),
        ],
    )
    waiting = SessionState(
        state=State.INPUT_REQUIRED, source=Source.REGISTRY, waiting_for=WaitingFor.APPROVAL
    )
    replay = Replay(AgentRoots([tmp_path / "root"]), replay_adapters(KITS))
    page = replay.page(fake_snapshot(path, state=waiting))
    assert page.focus is not None and page.focus.reason == "approval"
    focused = next(i for i in page.items if i.key == (page.focus.offset, page.focus.index))
    assert focused.call_id == "toolu_2"
    assert replay.page(fake_snapshot(path)).focus is None  # not waiting: no focus


# -- files -----------------------------------------------------------------------------------


def test_a_transcript_that_links_out_of_the_agent_root_is_refused(tmp_path: Path):
    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"type":"user","message":{"role":"user","content":"secret"}}\n')
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.jsonl").symlink_to(outside)
    roots = AgentRoots([root])
    with pytest.raises(OutsideRoots):
        roots.open(root / "link.jsonl")
    with pytest.raises(OutsideRoots):
        roots.open(root / ".." / "secret.jsonl")
    with pytest.raises(NotFound):
        Replay(roots, replay_adapters(KITS)).page(fake_snapshot(root / "link.jsonl"))


def test_compressed_archives_are_replayed(tmp_path: Path):
    import zstandard

    path = tmp_path / "root" / "rollout.jsonl"
    c = CodexRollout()
    write_lines(path, [c.meta(), c.prompt("archived prompt"), c.answer("archived answer")])
    packed = path.with_suffix(".jsonl.zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    path.unlink()
    page = Replay(AgentRoots([tmp_path / "root"]), replay_adapters(KITS)).page(
        fake_snapshot(packed, Agent("codex"))
    )
    assert [i.text for i in page.items if i.kind is not ItemKind.NOTE] == [
        "archived prompt", "archived answer",
    ]  # fmt: skip


def test_tail_reports_where_each_line_starts(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    data = b'{"a":1}\n\n   \n{"b":2}\n' + b'{"c":"' + b"z" * 3000 + b'"}\n{"d":'
    path.write_bytes(data)
    tailer = FileTailer(path, max_line_bytes=1000)
    first = tailer.read()
    assert first.offsets == [data.index(b'{"a"'), data.index(b'{"b"'), data.index(b'{"c"')]
    with open(path, "ab") as fh:
        fh.write(b"4}\n")
    assert tailer.read().offsets == [data.index(b'{"d"')]
