"""What a person reads in a replay beyond raw JSON, on a Claude session written as the CLI
writes one: slash commands as prompts (and titles, and the hand-off's goal), diffs for edits, a
checklist for todos, questions with their answers, commands and patterns, ANSI taken out, turn
times in words; parallel calls each exported with its own result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_lines import ClaudeTranscript, write_lines
from export_check import LOOSE, check_exports
from replay_rig import Home, make_home, snapshot

from agentbar.core.agents.claude.tools import TOOLS
from agentbar.core.launch.handoff import brief
from agentbar.core.model import SessionSnapshot
from agentbar.core.replay.export import Format, Options, export
from agentbar.core.replay.model import MAIN_THREAD, ItemKind, ReplayItem

RICH = "92000000-0000-4000-8000-000000000001"
ONLY_COMMANDS = "92000000-0000-4000-8000-000000000002"


def command_line(t: ClaudeTranscript, name: str, args: str = "") -> dict[str, Any]:
    content = (
        f"<command-message>{name} is running…</command-message>\n"
        f"<command-name>/{name}</command-name>\n<command-args>{args}</command-args>"
    )
    return t._base("user", message={"role": "user", "content": content})


def stdout_line(t: ClaudeTranscript, text: str) -> dict[str, Any]:
    content = f"<local-command-stdout>{text}</local-command-stdout>"
    return t._base("user", message={"role": "user", "content": content})


def answered(t: ClaudeTranscript, call_id: str) -> dict[str, Any]:
    line = t.tool_result(call_id, 'User has answered your questions: "Which DB?"="Postgres".')
    line["toolUseResult"] = {"answers": {"Which DB?": "Postgres"}}
    return line


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = make_home(tmp_path, claude=())
    t = ClaudeTranscript(RICH, "/work/views")
    duration = t.turn_duration()
    duration["durationMs"] = 1_528_500
    write_lines(
        home.claude / "projects" / "-work-views" / f"{RICH}.jsonl",
        [
            command_line(t, "review:pr", "42 --strict"),
            t.meta("Review the pull request 42 strictly."),
            # Three calls at once, their results back in another order, with noise between.
            t.tool_use("Read", {"file_path": "/work/views/app.py"}, "toolu_read"),
            t.tool_use("Bash", {"command": "pytest -q", "description": "Run tests"}, "toolu_sh"),
            t.tool_use("Grep", {"pattern": "def main", "path": "/work/views"}, "toolu_grep"),
            t.progress(),
            t.tool_result("toolu_grep", "app.py:3:def main():"),
            t.thinking("waiting for the tests"),
            t.tool_result("toolu_sh", "\x1b[32m3 passed\x1b[0m in 0.1s"),
            t.tool_result("toolu_read", "def main():\n    return 1\n"),
            t.tool_use(
                "Edit",
                {
                    "file_path": "/work/views/app.py",
                    "old_string": "return 1",
                    "new_string": "return 2",
                },
                "toolu_edit",
            ),
            t.tool_result("toolu_edit", "The file was updated."),
            t.tool_use(
                "MultiEdit",
                {
                    "file_path": "/work/views/b.py",
                    "edits": [
                        {"old_string": "a", "new_string": "b"},
                        {"old_string": 3, "new_string": None},
                    ],
                },
                "toolu_multi",
            ),
            t.tool_result("toolu_multi", '{"applied": 1}'),
            t.tool_use(
                "Write", {"file_path": "/work/views/new.rs", "content": "fn main() {}\n"}, "toolu_w"
            ),
            t.tool_result("toolu_w", "File created"),
            t.tool_use(
                "TodoWrite",
                {
                    "todos": [
                        {"content": "Fix main", "status": "completed", "activeForm": "Fixing main"},
                        {"content": "Ship", "status": "in_progress", "activeForm": "Shipping"},
                    ]
                },
                "toolu_todo",
            ),
            t.tool_result("toolu_todo", "Todos have been modified successfully."),
            t.tool_use(
                "AskUserQuestion",
                {
                    "questions": [
                        {
                            "question": "Which DB?",
                            "header": "DB",
                            "multiSelect": False,
                            "options": [
                                {"label": "Postgres", "description": "the usual"},
                                {"label": "SQLite", "description": "small"},
                            ],
                        }
                    ]
                },
                "toolu_ask",
            ),
            answered(t, "toolu_ask"),
            t.text("Done."),
            duration,
            command_line(t, "exit"),
            stdout_line(t, "\x1b[2mBye!\x1b[22m"),
        ],
    )
    c = ClaudeTranscript(ONLY_COMMANDS, "/work/views")
    write_lines(
        home.claude / "projects" / "-work-views" / f"{ONLY_COMMANDS}.jsonl",
        [
            command_line(c, "init"),
            c.meta("Please analyse this codebase."),
            c.text("Wrote CLAUDE.md."),
        ],
    )
    return home


def items_of(home: Home, session_id: str) -> tuple[list[ReplayItem], Any]:
    engine = home.caught_up()
    try:
        snap = snapshot(engine, session_id)
    finally:
        engine.stop()
    return list(home.replay().items(snap, MAIN_THREAD)), snap


def the_session(home: Home) -> SessionSnapshot:
    """The one session with a transcript in ``home``, read by a fresh engine."""
    engine = home.caught_up()
    try:
        (snap,) = [s for s in engine.sessions() if s.transcript]
    finally:
        engine.stop()
    return snap


def by_call(items: list[ReplayItem], call_id: str) -> ReplayItem:
    return next(i for i in items if i.kind is ItemKind.TOOL_CALL and i.call_id == call_id)


def test_slash_commands_are_prompts_with_name_and_arguments(home: Home) -> None:
    items, snap = items_of(home, RICH)
    prompts = [i for i in items if i.kind is ItemKind.USER]
    assert [(p.text, p.view and p.view.command, p.view and p.view.args) for p in prompts] == [
        ("/review:pr 42 --strict", "/review:pr", "42 --strict"),
        ("/exit", "/exit", ""),
    ]
    assert prompts[0].to_json()["command"] == "/review:pr"
    assert snap.title == "/review:pr 42 --strict"  # the first command names it, not /exit
    printed = [i for i in items if i.name == "command_output"]
    assert [i.text for i in printed] == ["Bye!"]  # and no escape codes
    assert not any("<command-" in i.text for i in items)
    only, only_snap = items_of(home, ONLY_COMMANDS)
    assert only_snap.title == "/init"
    goal = brief(only_snap, only, TOOLS)
    assert "## Goal\n\n/init\n" in goal
    rich = brief(snap, items, TOOLS)  # /exit tends the session: neither goal nor decision
    assert "## Goal\n\n/review:pr 42 --strict\n" in rich and "/exit" not in rich


def test_tool_calls_carry_what_a_page_renders(home: Home) -> None:
    items, _ = items_of(home, RICH)
    edit = by_call(items, "toolu_edit").to_json()
    assert edit["path"] == "/work/views/app.py"
    assert [(d["kind"], d["text"]) for d in edit["diff"]] == [
        ("file", "/work/views/app.py"),
        ("hunk", "@@ -1 +1 @@"),
        ("del", "return 1"),
        ("add", "return 2"),
    ]
    multi = by_call(items, "toolu_multi").to_json()  # the malformed second edit is skipped
    assert [d["kind"] for d in multi["diff"]] == ["file", "hunk", "del", "add"]
    write = by_call(items, "toolu_w").to_json()
    assert [d["kind"] for d in write["diff"]][-1] == "add" and write["path"].endswith("new.rs")
    todos = by_call(items, "toolu_todo").to_json()["todos"]
    assert todos[0] == {"content": "Fix main", "status": "completed", "activeForm": "Fixing main"}
    ask = by_call(items, "toolu_ask").to_json()["questions"][0]
    assert ask["question"] == "Which DB?" and [o["label"] for o in ask["options"]] == [
        "Postgres",
        "SQLite",
    ]
    answer = next(i for i in items if i.kind is ItemKind.TOOL_RESULT and i.call_id == "toolu_ask")
    assert answer.to_json()["answers"] == [{"question": "Which DB?", "answer": "Postgres"}]
    bash = by_call(items, "toolu_sh").to_json()
    assert (bash["command"], bash["description"]) == ("pytest -q", "Run tests")
    grep = by_call(items, "toolu_grep").to_json()
    assert (grep["pattern"], grep["path"]) == ("def main", "/work/views")
    out = next(i for i in items if i.kind is ItemKind.TOOL_RESULT and i.call_id == "toolu_sh")
    assert out.text == "3 passed in 0.1s"
    turn = next(i for i in items if i.name == "turn_end")
    assert (
        turn.text == "Turn finished in 25 min 28 s" and turn.to_json()["label"] == "Turn finished"
    )
    plain = next(i for i in items if i.kind is ItemKind.ASSISTANT).to_json()
    assert plain["diff"] is None and plain["folded"] is False  # every item has every key


def test_parallel_calls_export_each_result_under_its_call(home: Home) -> None:
    engine = home.caught_up()
    try:
        snap = snapshot(engine, RICH)
    finally:
        engine.stop()
    md, page, doc = check_exports(home.replay(), snap)
    assert LOOSE not in md and LOOSE not in page
    calls = [i for i in doc["items"] if i["kind"] == "tool_call"]
    for number, call in enumerate(calls):  # each result sits between its call and the next
        start = md.index(f"**Tool call** `{call['name']}`")
        end = md.index("**Tool call**", start + 1) if number + 1 < len(calls) else len(md)
        result = next(
            i
            for i in doc["items"]
            if i["call_id"] == call["call_id"] and i["kind"] == "tool_result"
        )
        assert result["text"].splitlines()[0] in md[start:end], call["name"]
    # Fenced by what each is: the command's output, the file's language, a diff, JSON only
    # when it parses.
    assert "**Tool call** `Grep`: `def main in /work/views`" in md
    assert "**Tool call** `TodoWrite`: `2 todos: 1 done, 1 in progress`" in md
    assert "```console\n$ pytest -q\n```" in md and "```console\n3 passed in 0.1s\n```" in md
    assert "```python\ndef main():" in md
    assert "```diff\n+++ /work/views/app.py\n@@ -1 +1 @@\n-return 1\n+return 2\n```" in md
    assert '```json\n{"applied": 1}\n```' in md
    assert "```text\nThe file was updated.\n```" in md
    assert "- [x] Fix main\n- [~] Ship\n" in md
    assert "  - Answer: **Postgres**" in md
    assert md.startswith("# /review:pr 42 --strict\n")
    assert "### User · command" in md and "/review:pr 42 --strict" in md
    assert '<span class="del">-return 1</span>' in page
    assert '<p class="answer">Answer: Postgres</p>' in page


def test_subagents_are_named_by_their_calls_and_helpers_are_told_apart(tmp_path: Path) -> None:
    from replay_rig import V20, V21

    home = make_home(tmp_path, claude=("v2.0", "v2.1"))
    folder = home.claude / "projects" / "-work-new" / V21 / "subagents"
    helper = ClaudeTranscript(V21, "/work/new", sidechain=True, agent_id="acompact-1f2e")
    write_lines(
        folder / "agent-acompact-1f2e.jsonl",
        [helper.prompt("Your task is to create a detailed summary of the conversation so far.")],
    )
    engine = home.caught_up()
    try:
        mid, new = snapshot(engine, V20), snapshot(engine, V21)
    finally:
        engine.stop()
    replay = home.replay()
    # 2.0's sub-agent file names nothing: its Task call's description names it.
    (thread,) = replay.threads(mid)
    assert (thread.description, thread.first_prompt, thread.helper) == (
        "Write tests",
        "tests",
        None,
    )
    links = [i.link for i in replay.items(mid) if i.kind is ItemKind.SUBAGENT]
    assert [link.description for link in links if link] == ["Write tests"]
    assert replay.threads(mid) == [thread]  # read again from where the last scan stopped
    named = {t.thread: t for t in replay.threads(new)}
    assert named["a4c2d9"].description == "Profile the build" and named["a4c2d9"].helper is None
    assert named["acompact-1f2e"].helper == "compaction"
    assert named["acompact-1f2e"].to_json()["helper"] == "compaction"


def test_warmup_sidechains_of_real_claude_2_0_are_helpers(tmp_path: Path) -> None:
    import shutil

    from replay_rig import DATA

    home = make_home(tmp_path, claude=())
    folder = DATA / "recorded" / "claude-2.0.77" / "answer" / "projects"
    shutil.copytree(folder, home.claude / "projects")
    snap = the_session(home)
    threads = home.replay().threads(snap)
    assert threads and {t.helper for t in threads} == {"warmup"}


def test_codex_reviewer_and_subagent_records_fold_to_one_line(tmp_path: Path) -> None:
    from codex_lines import CodexRollout

    home = make_home(tmp_path, claude=())
    r = CodexRollout("019ad3f1-7c2e-7b10-9a41-00000000fold")
    patch = (
        "*** Begin Patch\n*** Update File: api/conf.py\n@@\n-DEBUG = True\n+DEBUG = False\n"
        "*** End Patch"
    )
    lines = [
        r.meta(),
        r.started(),
        r.prompt("tidy the config"),
        r.exec("git status", "call_sh"),
        r.output("call_sh", "\x1b[1mOn branch main\x1b[0m"),
        r.item(
            {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "call_p"}
        ),
        r.item({"type": "custom_tool_call_output", "call_id": "call_p", "output": "Done!"}),
        r.event("guardian_assessment", status="approved", risk_level="low", rationale="x" * 5000),
        r.event("sub_agent_activity", agent_name="scout", message="exploring the repo"),
        r.item(
            {"type": "web_search_call", "status": "completed", "action": {"query": "toml spec"}}
        ),
        r.complete("Done.", duration_ms=754_300),
    ]
    target = home.codex / "sessions" / "2026" / "11" / "29"
    write_lines(target / f"rollout-2026-11-29T10-00-00-{r.session_id}.jsonl", lines)
    snap = the_session(home)
    items = list(home.replay().items(snap))
    folded = [i for i in items if i.view is not None and i.view.folded]
    guardian = folded[0].summary or ""
    assert guardian.startswith("Guardian assessment: approved · low · xxx")
    assert len(guardian) == 200 and guardian.endswith("…")  # one short line, however long
    assert [i.summary for i in folded[1:]] == [
        "Sub agent activity: exploring the repo · scout",
        "Web search call: completed · toml spec",
    ]
    assert all(i.kind is ItemKind.NOTE and i.text.startswith("{") for i in folded)  # kept whole
    assert not [i for i in items if i.kind is ItemKind.UNKNOWN]
    assert [i.text for i in items if i.name == "turn_end"] == ["Turn finished in 12 min 34 s"]
    shell = by_call(items, "call_sh").to_json()
    assert shell["command"] == "git status"
    result = next(i for i in items if i.kind is ItemKind.TOOL_RESULT and i.call_id == "call_sh")
    assert result.text == "On branch main"
    diff = by_call(items, "call_p").to_json()["diff"]
    assert [(d["kind"], d["text"]) for d in diff] == [
        ("file", "api/conf.py (update)"),
        ("hunk", "@@"),
        ("del", "DEBUG = True"),
        ("add", "DEBUG = False"),
    ]
    md, _, _ = check_exports(home.replay(), snap)
    assert "```diff\n+++ api/conf.py (update)" in md
    every = "".join(export(home.replay(), snap, Format.MARKDOWN, Options(notes=True)))
    assert "<details><summary>Sub agent activity: exploring the repo · scout</summary>" in every


@pytest.mark.parametrize("version", ["claude-2.0.77", "claude-2.1.332"])
def test_a_real_question_shows_its_options_and_the_answer_chosen(
    tmp_path: Path, version: str
) -> None:
    import shutil

    from replay_rig import DATA

    home = make_home(tmp_path, claude=())
    shutil.copytree(DATA / "recorded" / version / "ask_tool" / "projects", home.claude / "projects")
    snap = the_session(home)
    items = list(home.replay().items(snap))
    ask = next(i for i in items if i.kind is ItemKind.TOOL_CALL and i.name == "AskUserQuestion")
    assert ask.view is not None and ask.view.questions
    options = [o.label for o in ask.view.questions[0].options]
    answer = next(i for i in items if i.kind is ItemKind.TOOL_RESULT and i.call_id == ask.call_id)
    assert answer.view is not None and answer.view.answers
    (chosen,) = answer.view.answers
    assert chosen.question == ask.view.questions[0].question and chosen.answer in options
    md, _, _ = check_exports(home.replay(), snap)
    assert f"  - Answer: **{chosen.answer}**" in md


def test_a_bash_mode_command_is_the_persons_prompt_and_its_output_a_note(tmp_path: Path) -> None:
    home = make_home(tmp_path, claude=())
    t = ClaudeTranscript("95000000-0000-4000-8000-000000000001", "/work/bash")
    typed = t._base("user", message={"role": "user", "content": "<bash-input>ls -la</bash-input>"})
    printed = t._base(
        "user",
        message={
            "role": "user",
            "content": "<bash-stdout>\x1b[34mREADME\x1b[0m</bash-stdout>"
            "<bash-stderr></bash-stderr>",
        },
    )
    write_lines(
        home.claude / "projects" / "-work-bash" / f"{t.session_id}.jsonl",
        [typed, printed, t.prompt("now explain the files"), t.text("Sure.")],
    )
    snap = the_session(home)
    assert snap.title == "now explain the files"  # a typed prompt names it over a command
    items = list(home.replay().items(snap))
    first = items[0].to_json()
    assert (first["kind"], first["text"], first["command"], first["args"]) == (
        "user",
        "! ls -la",
        "!",
        "ls -la",
    )
    assert (items[1].name, items[1].text, items[1].to_json()["label"]) == (
        "command_output",
        "README",
        "Command output",
    )
