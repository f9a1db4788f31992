"""Hostile tool inputs and slash commands: huge edits, malformed ones, fields of the wrong type,
escape codes everywhere. Nothing raises, every view stays bounded, and nothing is lost (the
input is still there whole, the item endpoint gives what a page cut)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import ClaudeTranscript, write_lines
from export_check import check_exports
from replay_rig import Home, make_home, snapshot

from agentbar.core import jsonsafe
from agentbar.core.agents.claude.commands import command_output, slash_command
from agentbar.core.replay.diffs import DIFF_LINES, DiffKind, DiffLine, unified_diff
from agentbar.core.replay.model import MAIN_THREAD, VIEW_CHARS, ItemKind
from agentbar.core.replay.readable import human_duration, plain
from agentbar.core.replay.views import answers_of, fold_summary, patch_view, tool_view

HOSTILE = "93000000-0000-4000-8000-000000000001"
ODD_INPUTS: list[Any] = [
    None, 3, "text", [], [1, 2], {"old_string": 1, "new_string": None},
    {"edits": "not a list"}, {"edits": [None, 3, {"old_string": "a"}]},
    {"todos": "x"}, {"todos": [None, {"content": 3}, {"status": "done"}]},
    {"plan": [{"step": ["a"], "status": 5}]},
    {"questions": [None, {"question": 5}, {"question": "Q", "options": [None, 7, {"label": 1}]}]},
    {"command": ["ls", 3, None]}, {"command": {"a": 1}}, {"pattern": 7, "path": ["x"]},
    {"content": {"nested": True}, "file_path": 12},
    {"old_string": "\x00\x1b[31m", "new_string": "\ud800"},
]  # fmt: skip


@pytest.mark.parametrize("name", ["Edit", "MultiEdit", "Write", "TodoWrite", "Bash", "x", None])
@pytest.mark.parametrize("value", ODD_INPUTS, ids=range(len(ODD_INPUTS)))
def test_odd_inputs_never_raise_and_views_are_json(name: str | None, value: Any) -> None:
    view = tool_view(name, value)
    if view is not None:
        jsonsafe.dumps(view.to_json())  # as the server writes items
    patch_view(value)


def test_diffs_are_bounded() -> None:
    old = "\n".join(f"line {n}" for n in range(10_000))
    new = "\n".join(f"LINE {n}" for n in range(10_000))
    lines = unified_diff([(old, new)], "big.txt")
    assert len(lines) == DIFF_LINES + 1 and lines[-1].kind is DiffKind.CUT
    assert lines[-1].text.endswith("more lines")
    huge = unified_diff([("a" * 300_000, "b" * 300_000)], None)
    assert [d.kind for d in huge] == [DiffKind.CUT]  # not diffed at all: difflib is quadratic
    wide = unified_diff([("x", "y" * 100_000)], None)
    assert max(len(d.text) for d in wide) <= 2000
    assert unified_diff([("same", "same")], "f") == (unified_diff([], "f")[0],)
    patch = patch_view("*** Begin Patch\n" + "+x\n" * 5000)
    assert patch is not None and patch.diff is not None and len(patch.diff) == DIFF_LINES + 1


def test_answers_durations_summaries_and_commands_of_odd_values() -> None:
    assert answers_of({"answers": {"Q": ["a", "b"], 5: None}}, "") is not None
    assert answers_of("User rejected", 'x "Q"="A" y') is not None
    assert answers_of(None, "nothing here") is None
    assert [human_duration(s) for s in (0, 0.4, 9.96, 59.6, 60, 1528.5, 3600, 7260, 90061)] == [
        "0 s", "0.4 s", "10 s", "1 min", "1 min", "25 min 28 s", "1 h", "2 h 1 min", "1 d 1 h",
    ]  # fmt: skip
    assert human_duration(float("nan")) == "?" and human_duration(-1) == "?"
    assert fold_summary("event_msg/guardian_assessment", {"status": 3, "x": [1]}) == (
        "Guardian assessment"
    )
    assert plain("\x1b[1;31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07") == "red link"
    assert slash_command("<command-name></command-name>") is None
    assert slash_command("hello <command-name>/x</command-name>") is None
    nested = slash_command("<command-name>/a<command-name>/b</command-name></command-name>")
    assert nested is not None and nested.name.startswith("/a")
    big = slash_command("<command-message>go</command-message><command-args>" + "y" * 50_000)
    assert big is not None and big.name == "/go" and big.args == ""  # unclosed: no args
    assert command_output("<local-command-stderr>boom") == "boom"
    assert command_output("plain") is None


def hostile_lines(t: ClaudeTranscript) -> list[dict[str, Any]]:
    old = "\n".join(f"old {n} " + "x" * 40 for n in range(3000))
    new = "\n".join(f"new {n} " + "x" * 40 for n in range(3000))
    deep: Any = "bottom"
    for _ in range(200):
        deep = {"d": deep}
    return [
        t._base(
            "user",
            message={"role": "user", "content": "<command-name>/" + "n" * 5000 + "</command-name>"},
        ),
        t.tool_use("Edit", {"file_path": "/w/a.txt", "old_string": old, "new_string": new}, "t1"),
        t.tool_result("t1", "\x1b[31m" + "e" * 100_000 + "\x1b[0m"),
        t.tool_use("Edit", {"file_path": 5, "old_string": None, "new_string": 7}, "t2"),
        t.tool_result("t2", "bad input"),
        t.tool_use("TodoWrite", {"todos": [{"content": "t" * 3000, "status": "x"}] * 150}, "t3"),
        t.tool_result("t3", "ok"),
        t.tool_use("Mystery", {"deep": deep}, "t4"),
        t.tool_result("t4", "[1, 2"),  # looks like JSON, is not
        t.text("\x1b[2Jcleared"),
    ]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = make_home(tmp_path, claude=())
    t = ClaudeTranscript(HOSTILE, "/w")
    write_lines(home.claude / "projects" / "-w" / f"{HOSTILE}.jsonl", hostile_lines(t))
    return home


def test_a_hostile_session_replays_pages_and_exports_losing_nothing(home: Home) -> None:
    engine = home.caught_up()
    try:
        snap = snapshot(engine, HOSTILE)
    finally:
        engine.stop()
    replay = home.replay()
    items = list(replay.items(snap, MAIN_THREAD))
    (prompt,) = [i for i in items if i.kind is ItemKind.USER]
    assert prompt.view is not None and prompt.view.command == "/" + "n" * 199
    assert snap.title and len(snap.title) <= 120
    edit = next(i for i in items if i.call_id == "t1" and i.kind is ItemKind.TOOL_CALL)
    assert edit.view is not None and edit.view.diff is not None
    assert isinstance(edit.input, dict) and len(edit.input["old_string"]) > 20_000  # whole
    assert next(i for i in items if i.call_id == "t2").view is None
    assert "\x1b" not in "".join(i.text for i in items)
    # A page cuts the big views and says so; the item endpoint gives them whole.
    page = replay.page(snap, MAIN_THREAD, after=0)
    for cut in page.items:
        size = len(orjson.dumps(cut.to_json()))
        assert size < 4 * VIEW_CHARS + 40_000, (cut.call_id, size)
    cut_edit = next(i for i in page.items if i.key == edit.key)
    assert cut_edit.truncated and cut_edit.view is not None and cut_edit.view.diff is not None
    assert cut_edit.view.diff[-1].text == "the rest: open the whole item"
    assert len(cut_edit.view.diff) < len(edit.view.diff)
    assert replay.item(snap, MAIN_THREAD, *edit.key).view == edit.view
    md, page_html, _ = check_exports(replay, snap)
    assert "```text\n[1, 2\n```" in md  # JSON only when it parses
    assert "more characters)" in md and len(md) < 1_000_000
    assert "\x1b" not in md and "\x1b" not in page_html


def test_a_deleted_line_that_starts_with_dashes_stays_in_the_diff() -> None:
    lines = unified_diff([("-- old comment\nkeep", "++ new\nkeep")], None)
    assert [(d.kind, d.text) for d in lines][1:3] == [
        (DiffKind.DEL, "-- old comment"),
        (DiffKind.ADD, "++ new"),
    ]


def test_note_names_read_as_words() -> None:
    from agentbar.core.replay.model import note_label

    assert [note_label(n) for n in ("turn_end", "system/stop_hook_summary", None, "", "//")] == [
        "Turn finished",
        "Stop hook summary",
        "Note",
        "Note",
        "Note",
    ]


def test_an_edit_too_big_to_match_is_one_correct_hunk() -> None:
    head = [f"head {n}" for n in range(700)]
    tail = [f"tail {n}" for n in range(700)]
    old = head + [f"old {n}" for n in range(600)] + tail
    new = head + [f"new {n}" for n in range(500)] + tail
    lines = unified_diff([("\n".join(old), "\n".join(new))], None)
    assert lines[0] == DiffLine(DiffKind.HUNK, "@@ -698,606 +698,506 @@")
    kept = [d.text for d in lines if d.kind is DiffKind.CONTEXT]
    assert kept == head[-3:] + tail[:3]
    assert [d.text for d in lines if d.kind is DiffKind.DEL] == old[700:1300]
    assert [d.text for d in lines if d.kind is DiffKind.ADD] == new[700:1200]
    assert unified_diff([("\n".join(old), "\n".join(old))], None) == ()


def test_a_call_whose_result_never_comes_holds_back_nothing_for_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from export_check import LOOSE

    from agentbar.core.replay import export_writer as export_module
    from agentbar.core.replay.export import Format, export

    home = make_home(tmp_path, claude=())
    t = ClaudeTranscript("93000000-0000-4000-8000-000000000002", "/w")
    lines = [t.prompt("go"), t.bash("sleep 1000", "t_slow"), t.bash("echo hi", "t_fast")]
    lines += [t.tool_result("t_fast", "hi")] + [t.text(f"answer {n}") for n in range(6)]
    lines += [t.tool_result("t_slow", "finally"), t.bash("never answered", "t_never")]
    write_lines(home.claude / "projects" / "-w" / f"{t.session_id}.jsonl", lines)
    engine = home.caught_up()
    try:
        snap = snapshot(engine, t.session_id)
    finally:
        engine.stop()
    whole = "".join(export(home.replay(), snap, Format.MARKDOWN))
    assert LOOSE not in whole and whole.index("finally") < whole.index("echo hi")
    assert whole.index("never answered") > whole.index("answer 5")  # written at the end
    monkeypatch.setattr(export_module, "WAITING_ITEMS", 3)
    md = "".join(export(home.replay(), snap, Format.MARKDOWN))
    assert md.count(LOOSE) == 1 and md.index("sleep 1000") < md.index("answer 2")
    for text in ("hi", "finally", *(f"answer {n}" for n in range(6)), "never answered"):
        assert text in md  # given up on, the late result is still written, alone
