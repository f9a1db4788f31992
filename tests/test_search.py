"""Search: the engine keeps an FTS5 index of prompts, answers and tool calls current; queries are
plain words, ranked, with marked snippets; rows follow rebuilds and deletions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claude_lines import ClaudeTranscript, write_lines
from replay_rig import V10, V20, V21, Home, make_home

from agentbar.core.engine import Engine, PathTouched
from agentbar.core.model import Agent
from agentbar.core.search import Searcher, fts_query, snippet_segments

S1 = "51000000-0000-4000-8000-000000000001"
S2 = "52000000-0000-4000-8000-000000000002"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def found(searcher: Searcher, text: str, **kw: object) -> list[tuple[str, str, str]]:
    return [(h.kind, h.key.session_id, h.thread) for h in searcher.search(text, **kw)]  # type: ignore[arg-type]


def test_prompts_answers_and_commands_are_found_with_their_place(home: Home):
    engine = home.caught_up()
    searcher = Searcher(home.settings.index_path)
    assert found(searcher, "esbuild") == [("answer", V21, "main")]
    assert found(searcher, "cli flag") == [("prompt", V20, "main")]
    assert ("tool", V10, "main") in found(searcher, "grep")
    assert found(searcher, "minify") == [("answer", V21, "a4c2d9")]  # a sub-agent's answer
    (hit,) = searcher.search("esbuild")
    assert hit.key.agent == Agent("claude") and hit.ts is not None
    # The hit's offset is where its line starts: the replay opens there.
    replay = home.replay()
    snap = next(s for s in engine.sessions() if s.key == hit.key)
    page = replay.page(snap, hit.thread, after=hit.offset, limit=1)
    assert "esbuild" in page.items[0].text
    assert [(t, m) for t, m in hit.snippet if m] == [("esbuild", True)]
    assert "".join(t for t, _ in hit.snippet).startswith("Minification dominates. Should I")
    counts = searcher.counts()
    assert counts[snap.key] == {"prompt": 2, "answer": 2, "tool": 2}
    searcher.close()
    engine.stop()


def test_a_slash_command_is_found_as_the_prompt_the_person_typed(home: Home):
    t = ClaudeTranscript(S2, "/work/cmd")
    path = home.claude / "projects" / "-work-cmd" / f"{S2}.jsonl"
    command = (
        "<command-message>review is running…</command-message>\n"
        "<command-name>/review</command-name>\n<command-args>src/quokka.py</command-args>"
    )
    write_lines(path, [t.prompt(command), t.text("looks fine"), t.prompt("and the wombat?")])
    engine = home.caught_up()
    searcher = Searcher(home.settings.index_path)
    assert found(searcher, "quokka") == [("prompt", S2, "main")]
    (hit,) = searcher.search("review quokka")
    assert "".join(text for text, _ in hit.snippet) == "/review src/quokka.py"
    # The hit opens the replay at the command, shown as the person's own item.
    snap = next(s for s in engine.sessions() if s.key == hit.key)
    (item,) = home.replay().page(snap, hit.thread, after=hit.offset, limit=1).items
    assert item.kind == "user" and item.view is not None
    assert item.to_json()["command"] == "/review" and item.text == "/review src/quokka.py"
    # Still a title, not a prompt: the session's own prompts count as before.
    assert searcher.counts()[snap.key] == {"prompt": 2, "answer": 1}
    searcher.close()
    engine.stop()


def test_the_best_match_comes_first_and_filters_apply(home: Home):
    t = ClaudeTranscript(S1, "/work/rank")
    path = home.claude / "projects" / "-work-rank" / f"{S1}.jsonl"
    write_lines(
        path,
        [
            t.prompt("the deploy script"),
            t.text("deploy deploy deploy: the deploy is ready to deploy"),
            t.text("Many words here and only one mention of deploy among a great many others"),
        ],
    )
    engine = home.caught_up()
    searcher = Searcher(home.settings.index_path)
    hits = searcher.search("deploy")
    assert len(hits) == 3
    assert hits[0].kind == "answer" and hits[0].score >= hits[1].score >= hits[2].score
    assert "deploy deploy" in "".join(t for t, _ in hits[0].snippet)
    assert found(searcher, "deploy", session_id=V21) == []
    assert found(searcher, "deploy", agent=Agent("codex")) == []
    assert len(searcher.search("deploy", limit=1)) == 1
    assert found(searcher, "depl") == found(searcher, "deploy")  # the last word is a prefix
    assert found(searcher, "deploy script") == [("prompt", S1, "main")]  # every word must match
    engine.stop()


def test_the_same_snippet_of_a_session_is_one_hit_with_a_count(home: Home):
    t = ClaudeTranscript(S1, "/work/repeat", start=1_800_000_000.0)
    u = ClaudeTranscript(S2, "/work/other", start=1_800_100_000.0)
    write_lines(
        home.claude / "projects" / "-work-repeat" / f"{S1}.jsonl",
        [t.prompt("run the flaky zanzibar test"), t.text("ok")] * 3
        + [t.prompt("is zanzibar green now?")],
    )
    write_lines(
        home.claude / "projects" / "-work-other" / f"{S2}.jsonl",
        [u.prompt("run the flaky zanzibar test")],
    )
    engine = home.caught_up()
    searcher = Searcher(home.settings.index_path)
    hits = searcher.search("zanzibar")
    by_text = {(h.key.session_id, "".join(t for t, _ in h.snippet)): h.count for h in hits}
    # Three identical prompts of S1 are one hit counted three times; S2's copy stays its own.
    assert by_text == {
        (S1, "run the flaky zanzibar test"): 3,
        (S1, "is zanzibar green now?"): 1,
        (S2, "run the flaky zanzibar test"): 1,
    }
    assert hits[0].to_json()["count"] in (1, 3)
    assert len(searcher.search("zanzibar", limit=2)) == 2  # the limit counts distinct hits
    # Lines written since a moment: S2's only (written a day later).
    assert found(searcher, "zanzibar", since=1_800_050_000.0) == [("prompt", S2, "main")]
    # A set of sessions (the route's project filter): S1's only; an empty set finds nothing.
    s1 = frozenset(h.key for h in hits if h.key.session_id == S1)
    assert {sid for _, sid, _ in found(searcher, "zanzibar", sessions=s1)} == {S1}
    assert searcher.search("zanzibar", sessions=frozenset()) == []
    searcher.close()
    engine.stop()


@pytest.mark.parametrize(
    "query",
    ['"', '""', "*", "NEAR(a b)", "a OR b", "-x", "col:val", "(", "^start", "a AND", "\x02", "'"],
)
def test_query_syntax_is_just_text(home: Home, query: str):
    engine = home.caught_up()
    searcher = Searcher(home.settings.index_path)
    searcher.search(query)  # never raises
    searcher.search(query + " build")
    engine.stop()


def test_fts_queries_quote_every_word():
    assert fts_query("  ") is None
    assert fts_query("*** ---") is None
    assert fts_query('say "hi" OR NEAR(x)') == '"say" """hi""" "OR" "NEAR(x)"*'
    assert snippet_segments("a \x02b\x03  c\n\nd") == (("a ", False), ("b", True), (" c d", False))


def test_rows_follow_rebuilds_and_deletions(home: Home):
    t = ClaudeTranscript(S2, "/work/gone")
    path = home.claude / "projects" / "-work-gone" / f"{S2}.jsonl"
    write_lines(path, [t.prompt("zebra crossing"), t.text("the zebra answer")])
    engine = home.caught_up()
    searcher = Searcher(home.settings.index_path)
    assert len(searcher.search("zebra")) == 2
    # Live lines are searchable at once.
    write_lines(path, [t.prompt("giraffe question")])
    engine.post(PathTouched(path))
    engine.drain()
    assert found(searcher, "giraffe") == [("prompt", S2, "main")]
    # Rewritten (truncated and written anew): the old rows go, the new ones come.
    t2 = ClaudeTranscript(S2, "/work/gone")
    write_lines(path, [t2.prompt("okapi only")], mode="wb")
    engine.post(PathTouched(path))
    engine.drain()
    assert found(searcher, "zebra") == [] and found(searcher, "giraffe") == []
    assert found(searcher, "okapi") == [("prompt", S2, "main")]
    # Deleted: its rows go with it.
    os.unlink(path)
    engine.post(PathTouched(path))
    engine.drain()
    assert found(searcher, "okapi") == []
    assert all(key.session_id != S2 for key in searcher.counts())
    engine.stop()


def test_a_cold_start_indexes_in_slices_after_the_catch_up(home: Home, monkeypatch):
    import agentbar.core.engine as engine_module
    import agentbar.core.search as search_module

    monkeypatch.setattr(search_module, "STAGING_ROWS", 2)
    monkeypatch.setattr(engine_module, "SEARCH_SLICE_ROWS", 2)
    from agentbar.core.index import Index
    from agentbar.core.procs import FakeProcessTable

    engine = Engine(
        home.settings.sources(),
        Index.open(home.settings.index_path),
        processes=FakeProcessTable(),
        traits=home.settings.traits(),
    )
    engine.catch_up()
    searcher = Searcher(home.settings.index_path)
    assert engine.index.search_backlog()
    assert searcher.search("esbuild") == []  # staged, not yet in the full-text index
    steps = 0
    while engine.step():
        steps += 1
    assert steps > 3 and not engine.index.search_backlog()
    assert found(searcher, "esbuild") == [("answer", V21, "main")]
    engine.stop()
    # A warm start re-indexes nothing and finds the same.
    again = home.caught_up()
    assert found(Searcher(home.settings.index_path), "esbuild") == [("answer", V21, "main")]
    again.stop()


def test_search_without_an_index_file_finds_nothing(tmp_path: Path):
    searcher = Searcher(tmp_path / "missing.sqlite3")
    assert searcher.search("anything") == []
    assert searcher.counts() == {}


def _doc_count(home: Home) -> int:
    import sqlite3

    conn = sqlite3.connect(home.settings.index_path)
    try:
        return conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
    finally:
        conn.close()


def test_a_cold_catch_up_stages_rows_as_it_goes_and_a_crash_loses_none(home: Home, monkeypatch):
    import agentbar.core.engine as engine_module
    from agentbar.core.index import Index
    from agentbar.core.procs import FakeProcessTable

    whole = home.caught_up()
    expected = _doc_count(home)
    assert expected > 10
    whole.stop()
    whole.index.close()
    home.settings.index_path.unlink()
    monkeypatch.setattr(engine_module, "SEARCH_FLUSH_CHARS", 10)  # stage after every file
    # A catch-up that dies after reading (and staging) but before saving its offsets...
    crashed = Engine(
        home.settings.sources(),
        Index.open(home.settings.index_path),
        processes=FakeProcessTable(),
        traits=home.settings.traits(),
    )
    crashed._load_index()
    crashed._rescan()
    staged = _staged_count(home)
    assert staged > 0
    crashed.index.close()
    # ...leaves nothing behind: the next start reads those lines again, rows once each.
    again = home.caught_up()
    assert _doc_count(home) == expected
    assert found(Searcher(home.settings.index_path), "esbuild") == [("answer", V21, "main")]
    again.stop()


def _staged_count(home: Home) -> int:
    import sqlite3

    conn = sqlite3.connect(home.settings.index_path)
    try:
        return conn.execute("SELECT count(*) FROM search_staging WHERE provisional = 1").fetchone()[
            0
        ]
    finally:
        conn.close()
