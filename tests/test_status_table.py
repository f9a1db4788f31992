"""``agentbar status``'s table and the text helpers under it: widths, paths cut in the middle,
wide characters, tokens, titles (pure logic: snapshots made here)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tray_values import snap as tray_snap

from agentbar.core.model import SessionKey, SessionSnapshot, State, WaitingFor
from agentbar.core.records import Usage
from agentbar.core.status_table import render_table
from agentbar.core.text import count_compact, cut, cut_path, short_path, tokens_text, width_of

NOW = 1_800_000_000.0
HOME = "/home/alice"


def snap(
    sid: str,
    project: str | None,
    title: str | None,
    *,
    host: str = "local",
    detail: str = "",
    usage: Usage | None = None,
    state: State = State.RUNNING,
    waiting: WaitingFor | None = None,
) -> SessionSnapshot:
    made = tray_snap(
        sid, state, project=project, title=title, detail=detail, waiting_for=waiting, since=NOW - 90
    )
    return replace(made, key=SessionKey(made.key.agent, sid, host), usage=usage or Usage())


WORKTREES = [
    snap(
        f"{i:08d}-0000-4000-8000-000000000000",
        f"{HOME}/projects/something-with-a-long-name/worktrees/agentbar-wt{i}",
        f"fix the thing number {i} " + "with many more words " * 5,
        detail="Bash: pytest -q tests/test_status_table.py --maxfail 1",
        usage=Usage(input_tokens=30_000, output_tokens=8_000, cache_read_tokens=17_000_000),
    )
    for i in range(1, 6)
]


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_every_line_fits_and_worktrees_stay_apart(width: int) -> None:
    text = render_table(WORKTREES, now=NOW, width=width, home=HOME)
    lines = text.splitlines()
    assert len(lines) == 6
    assert max(width_of(line) for line in lines) <= width, text
    for i in range(1, 6):  # each worktree's own name, whole, on its own row
        assert f"agentbar-wt{i}" in lines[i], text
    assert "/home/alice" not in text


def test_a_wide_terminal_shows_everything() -> None:
    text = render_table(WORKTREES, now=NOW, width=400, home=HOME)
    assert "~/projects/something-with-a-long-name/worktrees/agentbar-wt1" in text
    assert "Bash: pytest -q tests/test_status_table.py --maxfail 1" in text
    assert "38k (+17M cache)" in text
    assert "…" not in text and "~/projects" in text


def test_narrow_terminals_leave_out_tokens_then_detail() -> None:
    assert "TOKENS" in render_table(WORKTREES, now=NOW, width=200, home=HOME)
    narrow = render_table(WORKTREES, now=NOW, width=60, home=HOME)
    assert "TOKENS" not in narrow and "DETAIL" not in narrow
    assert narrow.splitlines()[0].split() == ["STATE", "AGENT", "PROJECT", "TITLE", "ACTIVE"]
    assert "ID" in render_table(WORKTREES, now=NOW, width=80, home=HOME).split()


@pytest.mark.parametrize("width", [60, 80, 120])
def test_wide_characters_count_twice(width: int) -> None:
    rows = [
        snap("a1", "/w/日本語のプロジェクト", "データベースの移行スクリプトを書き直す" * 3),
        snap("b2", "/w/plain", "e\u0301clair (a combining accent)"),
        snap("c3", "/w/emoji", "🚀 ship it 🚀" * 6),
    ]
    text = render_table(rows, now=NOW, width=width, home=HOME)
    lines = text.splitlines()
    assert max(width_of(line) for line in lines) <= width, text
    # The columns line up on the terminal: ACTIVE starts in the same column on every row.
    starts = {width_of(line[: line.rindex("1m ago")]) for line in lines[1:]}
    assert len(starts) == 1, text


def test_controls_in_titles_cannot_reach_the_terminal() -> None:
    text = render_table([snap("a1", "/w/x", "evil\x1b[2J\ttitle\nnext")], now=NOW, width=120)
    assert "\x1b" not in text and "\t" not in text and text.count("\n") == 2


def test_titles_are_never_blank() -> None:
    rows = [snap("a1", "/w/named-folder", None), snap("b2", None, "  "), snap("c3", "/w/t", "Mine")]
    text = render_table(rows, now=NOW, width=120, home=HOME)
    assert "(named-folder)" in text and "(untitled)" in text and "Mine" in text


def test_host_column_only_for_other_machines() -> None:
    here = [snap("a1", "/w/a", "here")]
    assert "HOST" not in render_table(here, now=NOW, width=120)
    both = render_table([*here, snap("b2", "/w/b", "there", host="devbox")], now=NOW, width=120)
    assert both.splitlines()[0].split()[:3] == ["STATE", "ID", "HOST"]
    assert "devbox" in both and "local" in both


def test_waiting_sessions_say_for_what() -> None:
    row = snap("a1", "/w/a", "t", state=State.INPUT_REQUIRED, waiting=WaitingFor.APPROVAL)
    assert "input_required (approval)" in render_table([row], now=NOW, width=200)


def test_cut_path_keeps_the_folders_own_name() -> None:
    path = "~/projects/something-long/agentbar-wt3"
    assert cut_path(path, 100) == path
    assert cut_path(path, 25) == "~/projects/…/agentbar-wt3"
    assert cut_path(path, 20) == "~/…/agentbar-wt3"
    assert cut_path(path, 14) == "…/agentbar-wt3"
    assert cut_path(path, 8) == "…-wt3"[:0] + "…bar-wt3"
    assert cut_path("/very/long/" + "x" * 300, 40) == "…" + "x" * 39
    assert cut_path("/a/b/", 3) == "/a/b/"[:0] + "…/b"
    for width in range(0, 45):
        assert width_of(cut_path("/home/alice/プロジェクト/深い/フォルダ/名前", width)) <= width


def test_cut_by_columns() -> None:
    assert cut("日本語のタイトル", 7) == "日本語…"
    assert width_of(cut("日本語のタイトル", 6)) <= 6
    assert cut("short", 10) == "short" and cut("abc", 0) == ""


def test_home_is_only_this_users() -> None:
    assert short_path("/home/alice/src/x", HOME) == "~/src/x"
    assert short_path("/home/alice", HOME) == "~"
    assert short_path("/home/alicex/src", HOME) == "/home/alicex/src"
    assert short_path("/home/bob/src/x", HOME) == "/home/bob/src/x"
    assert short_path("/root/src", "/root") == "~/src"
    assert short_path("/root/src", "/root/") == "~/src"
    assert short_path("/home/alice/src", "/") == "/home/alice/src"
    assert short_path(None, HOME) == ""


def test_home_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/root")
    assert short_path("/root/work") == "~/work"
    assert short_path("/home/alice/work") == "/home/alice/work"


def test_tokens_keep_cache_apart() -> None:
    usage = Usage(
        input_tokens=30_000,
        output_tokens=8_412,
        cache_read_tokens=16_500_000,
        cache_creation_tokens=500_000,
    )
    assert tokens_text(usage) == "38k tokens (+17M cache)"
    assert tokens_text(Usage(input_tokens=900, output_tokens=99)) == "999 tokens"
    assert tokens_text(Usage()) == ""
    counts = (0, 999, 3_849, 9_960, 38_412, 999_999, 1_700_000, 2_100_000_000, 5 * 10**12)
    assert [count_compact(n) for n in counts] == [
        "0", "999", "3.8k", "10k", "38k", "1.0M", "1.7M", "2.1B", "5000B"
    ]  # fmt: skip


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_very_long_paths_titles_and_details_fit(width: int) -> None:
    deep = "/".join(f"level-{i}-with-a-long-folder-name" for i in range(15))
    rows = [
        snap("a1", f"{HOME}/{deep}/the-folder", "t" * 2000, detail="Bash: " + "x" * 3000),
        snap("b2", "/" + "n" * 500, "short", detail="d"),  # one name longer than any column
    ]
    text = render_table(rows, now=NOW, width=width, home=HOME)
    lines = text.splitlines()
    assert max(width_of(line) for line in lines) <= width, text
    assert "/the-folder" in lines[1] and "…" in lines[1]
    assert "nnnn" in lines[2] and lines[2].count("…") >= 1
