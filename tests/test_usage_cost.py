"""Cost and exact counts through ``agentbar usage``, over fixture homes of Claude transcripts and
Codex rollouts shaped like real ones, and equal to ccusage 20's offline report on the same
files (real subprocesses both)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from ccusage_rig import ccusage, report
from claude_lines import ClaudeTranscript, write_lines
from cli_runner import agentbar
from codex_lines import CodexRollout

from agentbar.core.usage.cli import tokens_short

DAY = 86_400.0
T = 1_764_460_800.0  # 2025-11-30 00:00 UTC: each fixture session runs on a day of its own


def day(n: int) -> str:
    return f"2025-{11 + (30 + n - 1) // 30:02d}-{(30 + n - 1) % 30 + 1:02d}"


def claude_usage(
    inputs: int, output: int, read: int = 0, write: int = 0, hour: int = 0
) -> dict[str, Any]:
    """A Claude response's usage; ``hour`` of the ``write`` cache tokens for one hour."""
    return {
        "input_tokens": inputs,
        "output_tokens": output,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": {
            "ephemeral_5m_input_tokens": write - hour,
            "ephemeral_1h_input_tokens": hour,
        },
    }


def write_claude_sessions(home: Path) -> None:
    root = home / ".claude" / "projects"
    # Sonnet 4.5, one request past 200,000 input tokens (its higher rate), a response split
    # over two lines that repeat the usage (counted once).
    t = ClaudeTranscript("c0000000-0000-4000-8000-000000000001", "/w/alpha", start=T + 3600)
    big = t.assistant(
        [{"type": "text", "text": "long"}], usage=claude_usage(250_000, 1_200, 300_000, 4_000)
    )
    first = t.assistant(
        [{"type": "thinking", "thinking": "hm"}],
        message_id="msg_split",
        usage=claude_usage(12, 340, 20_000, 1_500),
    )
    second = t.assistant(
        [{"type": "text", "text": "done"}],
        message_id="msg_split",
        usage=claude_usage(12, 340, 20_000, 1_500),
        stop_reason="end_turn",
    )
    write_lines(root / "-w-alpha" / f"{t.session_id}.jsonl", [t.prompt("go"), big, first, second])
    # Opus 4.5 then Haiku 4.5 in one session, on the next day.
    t = ClaudeTranscript("c0000000-0000-4000-8000-000000000002", "/w/beta", start=T + DAY + 60)
    lines = [
        t.prompt("two models"),
        t.assistant([{"type": "text", "text": "a"}], model="claude-opus-4-5-20251101",
                    usage=claude_usage(3_000, 900, 40_000, 2_000, hour=1_500)),
        t.assistant([{"type": "text", "text": "b"}], model="claude-haiku-4-5-20251001",
                    usage=claude_usage(800, 150, 9_000, 0), stop_reason="end_turn"),
    ]  # fmt: skip
    write_lines(root / "-w-beta" / f"{t.session_id}.jsonl", lines)


def token_count(rollout: CodexRollout, total: list[int] | None, last: list[int] | None) -> Any:
    def counts(c: list[int] | None) -> dict[str, int] | None:
        if c is None:
            return None
        return {
            "input_tokens": c[0],
            "cached_input_tokens": c[1],
            "output_tokens": c[2],
            "reasoning_output_tokens": 0,
            "total_tokens": c[0] + c[2],
        }

    info = {"total_token_usage": counts(total), "model_context_window": 272_000}
    if last is not None:
        info["last_token_usage"] = counts(last)
    return rollout.event("token_count", info=info, rate_limits=None)


# Each Codex session: its token_count lines as (running total, the response's own counts).
CODEX_SESSIONS: dict[str, list[tuple[list[int] | None, list[int] | None]]] = {
    # Growing totals; the count each request starts with repeats the previous one.
    "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01": [
        ([1_000, 200, 50], [1_000, 200, 50]),
        ([1_000, 200, 50], [1_000, 200, 50]),
        ([2_500, 1_200, 80], [1_500, 1_000, 30]),
    ],
    # A resumed session starts a new count: the total goes back, the per-turn numbers go on.
    "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c02": [
        ([12_757, 0, 300], [12_757, 0, 300]),
        ([1_200, 0, 30], [1_200, 0, 30]),
        ([2_000, 300, 60], [800, 300, 30]),
    ],
    # An older build: totals only.
    "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c03": [
        ([3_000, 1_000, 100], None),
        ([4_000, 1_500, 150], None),
    ],
}


def write_codex_sessions(home: Path) -> None:
    for n, (session_id, counts) in enumerate(CODEX_SESSIONS.items(), start=2):
        start = T + n * DAY + 120
        rollout = CodexRollout(session_id, f"/w/codex{n}", start=start)
        lines = [rollout.meta(), rollout.context(), rollout.started(), rollout.prompt("go")]
        for total, last in counts:
            lines.append(rollout.answer("working"))
            lines.append(token_count(rollout, total, last))
        lines.append(rollout.complete("done"))
        folder = home / ".codex" / "sessions" / "2025" / "12" / f"{n - 1:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"rollout-{day(n)}T00-02-00-{session_id}.jsonl"
        (folder / name).write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write_claude_sessions(home)
    write_codex_sessions(home)
    return home


def usage_json(home: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "XDG_"))}
    env.update(HOME=str(home), AGENTBAR_DATA_DIR=str(home.parent / "data"), TZ="UTC")
    done = agentbar(env, "usage", "--json", *args)
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = orjson.loads(done.stdout)
    return doc


def test_a_codex_total_that_goes_back_keeps_the_per_turn_counts(home: Path) -> None:
    doc = usage_json(home, "--agent", "codex")
    by_id = {s["session_id"]: s for s in doc["sessions"]}
    resumed = by_id["019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c02"]
    assert resumed["input_tokens"] == 12_757 + 1_200 + 500  # cached input is counted apart
    assert resumed["cache_read_tokens"] == 300
    assert resumed["output_tokens"] == 360
    growing = by_id["019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01"]
    assert (growing["input_tokens"], growing["cache_read_tokens"]) == (1_300, 1_200)
    assert growing["cost_usd"] == pytest.approx(1_300 * 1.25e-6 + 1_200 * 1.25e-7 + 80 * 1e-5)


def test_cost_per_session_and_day_from_the_price_table(home: Path) -> None:
    doc = usage_json(home, "--agent", "claude")
    by_id = {s["session_id"]: s for s in doc["sessions"]}
    two = by_id["c0000000-0000-4000-8000-000000000002"]
    # a one-hour cache write costs twice the input rate, a five-minute one 1.25 times
    opus = 3_000 * 5e-6 + 900 * 25e-6 + 40_000 * 5e-7 + 500 * 6.25e-6 + 1_500 * 10e-6
    haiku = 800 * 1e-6 + 150 * 5e-6 + 9_000 * 1e-7
    assert two["cost_usd"] == pytest.approx(opus + haiku)
    assert two["models"] == ["claude-haiku-4-5-20251001", "claude-opus-4-5-20251101"]
    one = by_id["c0000000-0000-4000-8000-000000000001"]
    assert one["output_tokens"] == 1_200 + 340  # the split response once
    assert [d["day"] for d in doc["days"]] == [day(0), day(1)]
    assert doc["totals"]["cost_usd"] == pytest.approx(sum(d["cost_usd"] for d in doc["days"]))


def test_filters_by_day_and_project(home: Path) -> None:
    doc = usage_json(home, "--since", day(1).replace("-", ""))
    assert [d["day"] for d in doc["days"]] == [day(n) for n in range(1, 5)]
    doc = usage_json(home, "--project", "/w/beta")
    assert [p["project"] for p in doc["projects"]] == ["/w/beta"]


def test_an_unpriced_model_is_unknown_never_zero(home: Path) -> None:
    t = ClaudeTranscript("c0000000-0000-4000-8000-000000000009", "/w/odd", start=T + 3600)
    line = t.assistant([{"type": "text", "text": "x"}], model="claude-nobody-9",
                       usage=claude_usage(10, 10))  # fmt: skip
    write_lines(home / ".claude" / "projects" / "-w-odd" / f"{t.session_id}.jsonl", [line])
    doc = usage_json(home, "--project", "/w/odd")
    assert doc["sessions"][0]["cost_usd"] is None
    assert doc["days"][0]["cost_usd"] is None  # the day holds an unknown cost: unknown too
    assert doc["totals"]["cost_usd"] is None


def test_usage_equals_ccusage_20_offline(home: Path) -> None:
    binary = ccusage()
    if isinstance(binary, str):
        pytest.skip(binary)
    mine = usage_json(home)
    days = {d["day"]: d for d in mine["days"]}
    theirs = {d["date"]: d for d in report(binary, home, "claude", "daily")["daily"]} | {
        d["date"]: d for d in report(binary, home, "codex", "daily")["daily"]
    }
    assert sorted(theirs) == sorted(days)
    for when, row in theirs.items():
        ours = days[when]
        assert ours["input_tokens"] == row["inputTokens"], when
        assert ours["output_tokens"] == row["outputTokens"], when
        assert ours["cache_read_tokens"] == row["cacheReadTokens"], when
        assert ours["cache_creation_tokens"] == row.get("cacheCreationTokens", 0), when
        cost = row.get("totalCost", row.get("costUSD"))
        assert ours["cost_usd"] == pytest.approx(cost, abs=5e-7), when


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "XDG_"))}
    env.update(HOME=str(home), AGENTBAR_DATA_DIR=str(home.parent / "data"), TZ="UTC", **extra)
    return env


@pytest.mark.parametrize("columns", [72, 100])
def test_the_tables_fit_the_terminal_width(home: Path, columns: int) -> None:
    done = agentbar(clean_env(home, COLUMNS=str(columns)), "usage")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert lines[0].split()[::2][:2] == ["AGENT", "TITLE"]  # PROJECT may be cut to fit
    assert any(line.startswith("DAY") for line in lines)
    assert [line.split()[:2] for line in lines if line.startswith("total")] == [["total", "5"]]
    assert "$" in done.stdout and "prices: ccusage 20" in done.stdout


def test_a_closed_pipe_ends_it_quietly(home: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "agentbar.tray", "usage"],
        env=clean_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader goes away before a line is written (``| head -0``)
    err = child.stderr.read()
    assert child.wait(timeout=60) == 0
    assert err == b""


def test_a_bad_date_is_a_clear_error(home: Path) -> None:
    done = agentbar(clean_env(home), "usage", "--since", "yesterday")
    assert done.returncode == 2
    assert "not a date (YYYY-MM-DD or YYYYMMDD): 'yesterday'" in done.stderr


RECORDED = Path(__file__).parent / "data" / "recorded"
# Claude 2.0.77's resume: the resumed process's warm-up calls land in agent files that agentbar
# files under the resume's own transcript, which holds no conversation and is not listed;
# ccusage counts them (3 calls, 360 input tokens). Left out of the comparison, said here.
NOT_COMPARED = {("claude-2.0.77", "resume")}


def recorded_claude_home(home: Path) -> None:
    """The recorded Claude sessions (every version and scenario), one project folder each."""
    for version in sorted(RECORDED.glob("claude-*")):
        for scenario in sorted(p for p in version.iterdir() if p.is_dir()):
            if (version.name, scenario.name) in NOT_COMPARED:
                continue
            for folder in (scenario / "projects").glob("*"):
                target = home / ".claude" / "projects" / f"{scenario.name}-{version.name}"
                target.mkdir(parents=True, exist_ok=True)
                for transcript in folder.glob("*.jsonl"):
                    (target / transcript.name).write_bytes(transcript.read_bytes())


def test_recorded_claude_sessions_equal_ccusage_20(tmp_path: Path) -> None:
    binary = ccusage()
    if isinstance(binary, str):
        pytest.skip(binary)
    home = tmp_path / "home"
    recorded_claude_home(home)
    mine = {d["day"]: d for d in usage_json(home)["days"]}
    theirs = {d["date"]: d for d in report(binary, home, "claude", "daily")["daily"]}
    assert sorted(mine) == sorted(theirs)
    for when, row in theirs.items():
        ours = mine[when]
        counts = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
        their = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens")
        assert [ours[k] for k in counts] == [row[k] for k in their], when
        if any(b.get("missingPricing") for b in row.get("modelBreakdowns", [])):
            assert ours["cost_usd"] is None  # ccusage says 0 and flags it; agentbar: unknown
        else:
            assert ours["cost_usd"] == pytest.approx(row["totalCost"], abs=5e-7)


def gemini_home(home: Path) -> None:
    """A recorded Gemini CLI chat whose response now names a priced model and spends, past
    200,000 prompt tokens, cached, thought and tool-use tokens (Gemini's higher tier)."""
    recorded = RECORDED / "gemini-0.61.0" / "answer"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "projects.json").write_bytes((recorded / "projects.json").read_bytes())
    for chat in (recorded / "tmp").rglob("*.jsonl"):
        target = home / ".gemini" / chat.relative_to(recorded)
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for raw in chat.read_bytes().splitlines():
            line = orjson.loads(raw)
            if isinstance(line, dict) and isinstance(line.get("tokens"), dict):
                line["model"] = "gemini-2.5-pro"
                line["tokens"] = {"input": 250_000, "output": 1_000, "cached": 20_000,
                                  "thoughts": 500, "tool": 7, "total": 251_507}  # fmt: skip
            lines.append(orjson.dumps(line))
        target.write_bytes(b"\n".join(lines) + b"\n")
    for marker in (recorded / "tmp").rglob(".project_root"):
        target = home / ".gemini" / marker.relative_to(recorded)
        target.write_bytes(marker.read_bytes())


def test_gemini_usage_equals_ccusage_20(tmp_path: Path) -> None:
    binary = ccusage()
    if isinstance(binary, str):
        pytest.skip(binary)
    home = tmp_path / "home"
    gemini_home(home)
    [ours] = usage_json(home)["days"]
    [theirs] = report(binary, home, "gemini", "daily")["daily"]
    assert ours["input_tokens"] == theirs["inputTokens"] == 230_007  # the tool-use prompt too
    assert ours["cache_read_tokens"] == theirs["cacheReadTokens"]
    # ccusage shows thoughts apart from output (in the total); agentbar counts them as output
    assert ours["total_tokens"] == theirs["totalTokens"]
    assert ours["output_tokens"] == 1_500
    assert ours["cost_usd"] == pytest.approx(theirs["totalCost"], abs=5e-7)


def test_counts_are_shortened_only_when_they_would_not_fit() -> None:
    assert [tokens_short(n) for n in (999, 1_234, 302_065_699, 3_383_397_957)] == [
        "999", "1.2k", "302.1M", "3.4B",
    ]  # fmt: skip
