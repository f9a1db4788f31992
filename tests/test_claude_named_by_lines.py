"""Claude transcripts whose file name is not a session id (other tools write them into
Claude's folders): a session when their lines name one, counted as ignored when they do not.
Real files, the real engine over a temporary HOME."""

from __future__ import annotations

from pathlib import Path

from claude_lines import write_lines
from engine_harness import make_rig, new_transcript

from agentbar.core.agents.claude import AGENT as CLAUDE
from agentbar.core.listing import diagnostics
from agentbar.core.model import SessionKey

UUID = "aaaaaaaa-0000-4000-8000-00000000000a"


def test_a_file_named_otherwise_is_the_session_its_lines_name(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    t = new_transcript(UUID, "/work/tool-made")
    folder = rig.claude / "projects" / "-work-tool-made"
    write_lines(
        folder / "export-2026-12-01.jsonl",
        [t.prompt("a prompt from another tool"), t.text("Done.", stop_reason="end_turn")],
    )
    engine = rig.open()
    snap = rig.sessions()[UUID]
    assert snap.key == SessionKey(CLAUDE, UUID)
    assert (snap.project, snap.title) == ("/work/tool-made", "a prompt from another tool")
    assert snap.transcript == str(folder / "export-2026-12-01.jsonl")
    assert diagnostics(engine.stats())["ignored_files"] == 0
    rig.close()


def test_a_session_id_that_is_no_uuid(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    t = new_transcript("tool-session-42", "/work/other")
    write_lines(
        rig.claude / "projects" / "-work-other" / "run.jsonl",
        [t.prompt("hello"), t.text("Hi.", stop_reason="end_turn")],
    )
    rig.open()
    snap = rig.sessions()["tool-session-42"]
    assert (snap.project, snap.title, str(snap.state.state)) == ("/work/other", "hello", "done")
    rig.close()


def test_lines_naming_no_session_are_counted_as_ignored(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    folder = rig.claude / "projects" / "-work-x"
    write_lines(folder / "notes.jsonl", [{"type": "note", "text": "no session here"}] * 3)
    bad_id = new_transcript("has spaces/and slashes", "/work/x")  # no id the API could name
    write_lines(folder / "odd.jsonl", [bad_id.prompt("hi")])
    t = new_transcript(UUID, "/work/x")
    write_lines(folder / f"{UUID}.jsonl", [t.prompt("the real one")])
    engine = rig.open()
    assert list(rig.sessions()) == [UUID]
    assert sorted(Path(p).name for p in engine.ignored_files()) == ["notes.jsonl", "odd.jsonl"]
    assert diagnostics(engine.stats())["ignored_files"] == 2
    rig.close()
    # The count comes back from the index: a second start reads nothing again and says the same.
    engine = rig.open()
    assert diagnostics(engine.stats())["ignored_files"] == 2
    rig.close()


def test_claudes_own_file_keeps_its_name_as_its_id(tmp_path: Path) -> None:
    """A 2.x line naming another session in a file named by a UUID is a damaged line: the
    file's name decides, as before."""
    rig = make_rig(tmp_path)
    other = "bbbbbbbb-0000-4000-8000-00000000000b"
    t = new_transcript(UUID, "/work/y")
    stray = new_transcript(other, "/work/y")
    write_lines(rig.transcript_path(UUID), [stray.prompt("stray first"), t.prompt("mine")])
    rig.open()
    assert list(rig.sessions()) == [UUID]
    rig.close()
