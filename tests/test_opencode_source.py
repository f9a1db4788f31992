"""opencode's stores read for real (SQLite files and JSON folders recorded from opencode 1.18.33
and 1.1.65 in the conformance scenarios), its records, its plugin, launch and processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from agentbar.core.agents.base import PromptOption, TypedPrompt
from agentbar.core.agents.opencode import KIT, homes
from agentbar.core.agents.opencode.database import DatabaseBusy, DatabaseReader
from agentbar.core.agents.opencode.files import AGENT, OpencodeSnapshot, OpencodeSource
from agentbar.core.agents.opencode.plugin import HOOKS, is_ours, plugin_text
from agentbar.core.agents.opencode.rows import MessageRow, PartRow, Rows, SessionRow
from agentbar.core.agents.opencode.storage import StorageReader
from agentbar.core.agents.opencode.translate import Translator
from agentbar.core.hooks.errors import HooksFileError
from agentbar.core.hooks.spec import HookCommand
from agentbar.core.launch.commands import command_line
from agentbar.core.launch.request import LaunchRequest, Mode, Program
from agentbar.core.records import (
    Asks,
    AssistantText,
    Prompt,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnAborted,
    TurnEnded,
    UsageReport,
)
from agentbar.core.sources.base import ProcessInfo

RECORDED = Path(__file__).parent / "data" / "recorded"
NEW = RECORDED / "opencode-1.18.33"
OLD = RECORDED / "opencode-1.1.65"


def database(scenario: str, mark: str, tmp_path: Path) -> Path:
    """A recorded database copied where a test may touch it (the fixture stays as it is)."""
    target = tmp_path / "opencode" / "opencode.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(NEW / scenario / mark / "opencode.db", target)
    return target


def records_of(rows: Rows) -> list[object]:
    return [r for batch in Translator().translate(rows) for r in batch.records]


# -- the database ------------------------------------------------------------------------------


def test_a_finished_turn_from_the_database(tmp_path: Path) -> None:
    path = database("approve-plugin", "02", tmp_path)
    records = records_of(DatabaseReader(path).read())
    kinds = [type(r).__name__ for r in records]
    assert isinstance(records[0], SessionMeta) and records[0].cli_version == "1.18.33"
    assert any(isinstance(r, Prompt) and r.text == "make a file called made.txt" for r in records)
    call = next(r for r in records if isinstance(r, ToolCall))
    assert (call.name, call.summary, call.asks) == ("bash", "touch made.txt", Asks.NOTHING)
    assert any(isinstance(r, ToolResult) and not r.is_error for r in records)
    end = records[-1]
    assert isinstance(end, TurnEnded) and end.last_message == "Created made.txt.", kinds
    # The step that called the tool does not end the turn: one TurnEnded, after the answer.
    assert kinds.count("TurnEnded") == 1
    assert kinds.index("AssistantText") < kinds.index("TurnEnded")
    assert sum(isinstance(r, UsageReport) for r in records) == 2


def test_a_waiting_permission_is_a_running_call(tmp_path: Path) -> None:
    """opencode stores nothing of the permission it asks: the call is just running."""
    records = records_of(DatabaseReader(database("approve-plugin", "01", tmp_path)).read())
    assert isinstance(records[-1], ToolCall | AssistantText) or not any(
        isinstance(r, TurnEnded) for r in records
    )
    assert not any(isinstance(r, ToolResult | TurnEnded) for r in records)


def test_the_question_tool_asks(tmp_path: Path) -> None:
    records = records_of(DatabaseReader(database("question", "01", tmp_path)).read())
    call = next(r for r in records if isinstance(r, ToolCall))
    assert (call.name, call.summary, call.asks) == ("question", "Tabs or spaces?", Asks.QUESTION)


def test_an_interrupt_is_an_aborted_turn(tmp_path: Path) -> None:
    records = records_of(DatabaseReader(database("interrupt", "02", tmp_path)).read())
    assert isinstance(records[-1], TurnAborted) and records[-1].reason == "interrupted"


def test_each_change_is_said_once(tmp_path: Path) -> None:
    """Rows read again (the overlap window, a second read) say nothing new; the rows that
    changed between two reads say only what changed."""
    first = database("approve-plugin", "01", tmp_path)
    reader, translator = DatabaseReader(first), Translator()
    before = [r for b in translator.translate(reader.read()) for r in b.records]
    assert translator.translate(reader.read()) == []
    shutil.copy(NEW / "approve-plugin" / "02" / "opencode.db", first)
    after = [r for b in translator.translate(reader.read()) for r in b.records]
    assert not any(isinstance(r, SessionMeta | Prompt | ToolCall) for r in after)
    assert any(isinstance(r, ToolResult) for r in after)
    assert isinstance(after[-1], TurnEnded)
    assert before


def test_reading_creates_nothing_beside_the_database(tmp_path: Path) -> None:
    """No -wal or -shm is left in opencode's folder by agentbar (a mode=ro reader would make
    them when opencode is not running), and the database's bytes are unchanged."""
    path = database("answer", "01", tmp_path)
    data = path.read_bytes()
    DatabaseReader(path).read()
    assert sorted(os.listdir(path.parent)) == ["opencode.db"]
    assert path.read_bytes() == data


def test_a_busy_database_is_read_later(tmp_path: Path) -> None:
    """opencode holding the database (an exclusive lock) makes the read give up at once; the
    next read, once it let go, has everything."""
    path = database("answer", "01", tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    snapshot = OpencodeSnapshot(path.parent)
    try:
        with pytest.raises(DatabaseBusy):
            DatabaseReader(path).read()
        assert snapshot.read([path]) == []
    finally:
        holder.execute("COMMIT")
        holder.close()
    batches = snapshot.read([path])
    assert batches and any(isinstance(r, TurnEnded) for b in batches for r in b.records)
    assert batches[0].locator == f"{path}#{batches[0].owner.session_id}"


def test_reading_while_a_writer_commits(tmp_path: Path) -> None:
    """A writer in WAL mode commits while the reader reads as fast as it can: the writer is
    never refused, and the reader ends with every row."""
    path = tmp_path / "opencode.db"
    shutil.copy(NEW / "answer" / "01" / "opencode.db", path)
    writer = sqlite3.connect(path, timeout=0)  # a writer that would fail on any lock
    writer.execute("PRAGMA journal_mode=WAL")
    (sid,) = writer.execute("SELECT id FROM session").fetchone()
    stop = threading.Event()
    reader = DatabaseReader(path)

    def read() -> None:
        while not stop.is_set():
            with contextlib.suppress(DatabaseBusy):
                reader.read()

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for n in range(300):
            writer.execute(
                "INSERT INTO message (id, session_id, time_created, time_updated, data)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    f"msg_z{n:05d}",
                    sid,
                    2_000_000_000_000 + n,
                    2_000_000_000_000 + n,
                    '{"role":"user","time":{"created":2000000000000}}',
                ),
            )
            writer.commit()
    finally:
        stop.set()
        thread.join()
        writer.close()
    rows = DatabaseReader(path).read()
    assert sum(m.id.startswith("msg_z") for m in rows.messages) == 300
    assert reader.reads > 0


# -- the JSON storage (before 1.2) ------------------------------------------------------------


def test_the_storage_layout(tmp_path: Path) -> None:
    shutil.copytree(OLD / "approve-plugin" / "02" / "storage", tmp_path / "storage")
    records = records_of(StorageReader(tmp_path).read())
    assert isinstance(records[0], SessionMeta) and records[0].cli_version == "1.1.65"
    assert isinstance(records[-1], TurnEnded) and records[-1].last_message == "Created made.txt."


def test_a_half_written_file_waits_for_its_next_change(tmp_path: Path) -> None:
    shutil.copytree(OLD / "answer" / "01" / "storage", tmp_path / "storage")
    reader = StorageReader(tmp_path)
    part = next((tmp_path / "storage" / "part").glob("*/*.json"))
    whole = part.read_bytes()
    part.write_bytes(whole[: len(whole) // 2])
    first = reader.read()
    assert part.stem not in {p.id for p in first.parts}
    part.write_bytes(whole)
    assert [p.id for p in reader.read([part]).parts] == [part.stem]


# -- translation of odd shapes -----------------------------------------------------------------


def test_odd_shapes_are_skipped_not_raised() -> None:
    rows = Rows(
        sessions=[SessionRow("ses_1", None, None, None, None, None, None)],
        messages=[
            MessageRow("msg_1", "ses_1", {"role": 5, "time": "x"}),
            MessageRow("msg_2", "ses_1", {"role": "assistant", "error": {"name": 3}}),
        ],
        parts=[
            PartRow("prt_1", "msg_2", "ses_1", {"type": "tool", "state": "running"}),
            PartRow("prt_2", "msg_9", "ses_1", {"type": "text", "text": "later"}),
            PartRow("prt_3", "msg_2", "ses_1", {"type": ["odd"]}),
        ],
    )
    records = records_of(rows)
    assert isinstance(records[-1], TurnEnded) and records[-1].error == "3"


def test_a_sub_agent_session_belongs_to_its_parent() -> None:
    rows = Rows(
        sessions=[
            SessionRow("ses_root", "/w", "Root", None, "1.18.33", 1, 1),
            SessionRow("ses_child", "/w", "Child session - x", "ses_root", "1.18.33", 2, 2),
        ],
        messages=[
            MessageRow("msg_0", "ses_root", {"role": "user", "time": {"created": 2}}),
            MessageRow("msg_1", "ses_child", {"role": "user", "time": {"created": 3}}),
        ],
        parts=[PartRow("prt_1", "msg_1", "ses_child", {"type": "text", "text": "go"})],
    )
    batches = Translator().translate(rows)
    owners = {(b.owner.session_id, b.owner.agent_id) for b in batches}
    assert owners == {("ses_root", None), ("ses_root", "ses_child")}


def test_a_session_is_told_once_it_has_a_message() -> None:
    """opencode writes the session's row before its prompt's: no session without a turn."""
    translator = Translator()
    session = SessionRow("ses_1", "/w", "New session - x", None, "1.18.33", 1, 1)
    assert translator.translate(Rows(sessions=[session])) == []
    message = MessageRow("msg_1", "ses_1", {"role": "user", "time": {"created": 2}})
    part = PartRow("prt_1", "msg_1", "ses_1", {"type": "text", "text": "hi"})
    (batch,) = translator.translate(Rows(messages=[message], parts=[part]))
    assert [type(r).__name__ for r in batch.records] == ["SessionMeta", "Prompt"]


# -- the plugin --------------------------------------------------------------------------------


def test_the_plugin_is_agentbars_own_file(tmp_path: Path) -> None:
    command = HookCommand(python="/usr/bin/python3", script="/x/hook.py", data_dir=str(tmp_path))
    edit = HOOKS.add(None, "agentbar.js", command, version=None, notify=True)
    assert edit.after is not None and is_ours(edit.after)
    assert str(tmp_path / "events" / "opencode") in edit.after
    assert HOOKS.add(edit.after, "agentbar.js", command, version=None, notify=True).after is None
    with pytest.raises(HooksFileError):
        HOOKS.add("export const Mine = 1\n", "agentbar.js", command, version=None, notify=True)
    assert HOOKS.remove(edit.after, "agentbar.js", None).after is None
    assert HOOKS.remove("mine\n", "agentbar.js", None).removed == 0
    assert plugin_text(command) == edit.after


# -- launch and processes ----------------------------------------------------------------------


def test_launch_lines() -> None:
    assert KIT.launch is not None and isinstance(KIT.launch, PromptOption)
    program = Program(("opencode",), "1.18.33")
    new = command_line(KIT.launch, LaunchRequest(AGENT, "/w", prompt="-v now"), program, hooks=None)
    assert new.argv == ("opencode", "--prompt=-v now")
    fork = LaunchRequest(AGENT, "/w", mode=Mode.FORK, source="ses_1")
    assert command_line(KIT.launch, fork, program, hooks=None).argv == (
        "opencode",
        "-s",
        "ses_1",
        "--fork",
    )
    # A resume's prompt is typed into the TUI once it is ready, never given to -s.
    resume = LaunchRequest(AGENT, "/w", mode=Mode.RESUME, source="ses_1", prompt="go on")
    assert isinstance(KIT.launch, TypedPrompt) and KIT.launch.types_prompt(resume)
    assert not KIT.launch.types_prompt(LaunchRequest(AGENT, "/w", prompt="go"))
    assert command_line(KIT.launch, resume, program, hooks=None).argv == ("opencode", "-s", "ses_1")


def proc(*argv: str, name: str = "opencode", cwd: str = "/w") -> ProcessInfo:
    return ProcessInfo(pid=10, ppid=1, create_time=1.0, name=name, cmdline=argv, cwd=cwd)


def test_which_processes_are_opencode_clients(tmp_path: Path) -> None:
    source = OpencodeSource(tmp_path)
    exe = "/x/node_modules/opencode-ai/bin/opencode.exe"
    assert source.is_client_process(proc(exe))
    assert source.is_client_process(proc(exe, "-s", "ses_1"))
    assert source.is_client_process(proc("node", "/x/.bin/opencode", name="node"))
    assert source.is_client_process(proc("opencode", "run", "hi"))
    assert not source.is_client_process(proc("opencode", "serve"))
    assert not source.is_client_process(proc("opencode", "db", "path"))
    assert not source.is_client_process(proc("opencode", "--version"))
    assert source.process_session_hint(proc("opencode", "--session", "ses_9")) == "ses_9"
    assert source.process_cwd(proc("opencode", "sub", cwd="/w")) == "/w/sub"
    assert source.process_cwd(proc("opencode", "-s", "ses_1", cwd="/w")) == "/w"


def test_homes_follow_xdg() -> None:
    assert homes({"HOME": "/h"}) == (Path("/h/.config/opencode"), Path("/h/.local/share/opencode"))
    assert homes({"HOME": "/h", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"}) == (
        Path("/c/opencode"),
        Path("/d/opencode"),
    )


def test_an_event_without_a_move_is_not_read_again(tmp_path: Path) -> None:
    """agentbar's own read closes the WAL SQLite opened for writing, which raises a file
    event: told of it while neither the database nor its WAL moved, the snapshot reads nothing
    (it had read in a loop)."""
    path = database("answer", "01", tmp_path)
    writer = sqlite3.connect(path)  # opencode, holding the database open: its WAL stays
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("SELECT 1").fetchall()
    wal = Path(f"{path}-wal")
    snapshot = OpencodeSnapshot(path.parent)
    try:
        assert snapshot.read([wal])
        reads = snapshot._databases[str(path)].reads
        assert snapshot.read([wal]) == []
        assert snapshot._databases[str(path)].reads == reads
    finally:
        writer.close()


def test_the_tools_a_hand_off_reads() -> None:
    tools = KIT.tools
    assert tools is not None
    assert tools.changed_files("edit", {"filePath": "/w/a.py", "oldString": "x"}) == ["/w/a.py"]
    assert tools.changed_files("write", {"filePath": "/w/b.py", "content": ""}) == ["/w/b.py"]
    patch = "*** Begin Patch\n*** Update File: c.py\n*** End Patch"
    assert tools.changed_files("apply_patch", {"patchText": patch}) == ["c.py"]
    assert tools.changed_files("bash", {"command": "rm x"}) == []
    todos = {"todos": [{"content": "Write it", "status": "in_progress", "priority": "high"}]}
    assert tools.todos("todowrite", todos) == [("in_progress", "Write it")]
    assert tools.todos("read", {}) is None


def test_its_permission_dialog_is_an_approval_prompt() -> None:
    """The dialog as opencode 1.18.33 draws it (rows copied from its screen)."""
    from agentbar.core.agents.opencode.launch import LAUNCH

    find_prompt = LAUNCH.find_prompt

    rows = [
        "     $ touch made.txt",
        "  ┃  △ Permission required",
        "  ┃    # Shell command",
        "  ┃",
        "  ┃  $ touch made.txt",
        "  ┃",
        "  ┃   Allow once   Allow always   Reject           ctrl+f fullscreen  ⇆ select",
    ]
    prompt = find_prompt(rows)
    assert prompt is not None and prompt.question == "Permission required"
    assert "$ touch made.txt" in "\n".join(prompt.rows)
    assert find_prompt(rows[:-1]) is None  # answered: the buttons are gone


def test_a_cursor_is_taken_only_by_its_own_file(tmp_path: Path) -> None:
    path = database("answer", "01", tmp_path)
    first = DatabaseReader(path)
    assert first.cursor() == {}  # nothing read: nothing to resume from
    rows = first.read()
    cursor = first.cursor()
    assert rows.parts and cursor["since_ms"] > 0
    resumed = DatabaseReader(path)
    assert resumed.resume(cursor)
    # Its session is within the overlap of the cursor: read whole, its records as before.
    assert records_of(resumed.read()) == records_of(rows)
    assert not DatabaseReader(path).resume({"since_ms": "soon", "ino": cursor["ino"]})
    other = shutil.copy(NEW / "answer" / "01" / "opencode.db", tmp_path / "other.db")
    os.replace(other, path)  # another file in its place (made while the first was there)
    assert not DatabaseReader(path).resume(cursor)
    assert not DatabaseReader(tmp_path / "missing.db").resume(cursor)
