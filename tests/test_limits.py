"""The usage windows: Codex's ``rate_limits`` read from rollouts (recorded, synthetic, hostile),
the store that keeps the newest, how they read, ``GET /api/limits`` and the line under
``agentbar status`` (real files, a real engine and server, the real CLI in a subprocess)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from claude_lines import write_lines
from cli_runner import agentbar
from codex_lines import CodexRollout
from replay_rig import make_home
from server_rig import serving
from test_cli import env  # noqa: F401 - the fixture

from agentbar.core import facts, limits_text
from agentbar.core.agents.codex.rollout import rate_limits
from agentbar.core.limits import (
    FIVE_HOURS,
    WEEKLY,
    LimitsSeen,
    LimitStore,
    LimitWindow,
    claude_windows,
    codex_windows,
)
from agentbar.core.limits_claude import NOT_KNOWN, NOT_SENT, ClaudeStatusLineRecord, record_path

DATA = Path(__file__).parent / "data"
NOW = 1_796_000_000.0  # 2026-11-30
X = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


def codex_limits(primary: Any, secondary: Any = None, plan: Any = "plus") -> dict[str, Any]:
    return {"primary": primary, "secondary": secondary, "credits": None, "plan_type": plan}


def window(used: Any, minutes: Any = 300, resets_at: Any = NOW + 3600) -> dict[str, Any]:
    return {"used_percent": used, "window_minutes": minutes, "resets_at": resets_at}


# -- parsing ---------------------------------------------------------------------------------


def test_codex_windows_read_both_slots_with_names_and_plan() -> None:
    got = codex_windows(codex_limits(window(38.0), window(12.5, 10080, NOW + 86400), "pro"), NOW)
    assert got == (
        LimitWindow("codex", FIVE_HOURS, 38.0, NOW + 3600, "pro", NOW, "codex-rollout"),
        LimitWindow("codex", WEEKLY, 12.5, NOW + 86400, "pro", NOW, "codex-rollout"),
    )
    assert got[0].left_percent == 62.0


def test_codex_windows_older_resets_in_seconds_and_odd_lengths() -> None:
    older = {"used_percent": 5, "window_minutes": 90, "resets_in_seconds": 600}
    (got,) = codex_windows({"primary": older}, NOW)
    assert (got.window, got.resets_at, got.plan) == ("90m", NOW + 600, None)
    (nameless,) = codex_windows({"secondary": {"used_percent": 5}}, NOW)
    assert nameless.window == "secondary" and nameless.resets_at is None


@pytest.mark.parametrize(
    ("used", "shown"),
    [
        (140.0, 100.0),  # overdrawn: all of it used, no more
        (1e300, 100.0),
        (10**400, None),  # JSON allows it; no float holds it
        (-3, None),
        (math.nan, None),
        (math.inf, None),
        ("50", None),
        (True, None),
        (None, None),
        (0, 0.0),
        (100, 100.0),
    ],
)
def test_codex_hostile_percents(used: Any, shown: float | None) -> None:
    got = codex_windows(codex_limits(window(used)), NOW)
    assert [w.used_percent for w in got] == ([] if shown is None else [shown])


@pytest.mark.parametrize(
    "raw",
    [{"resets_at": -1}, {"resets_at": 1e18}, {"resets_at": "soon"}, {"resets_in_seconds": -5},
     {"resets_in_seconds": 1e30}, {"window_minutes": 0}, {"window_minutes": 1e12},
     {"window_minutes": -300}, {"resets_at": 10**400}, {"resets_in_seconds": 10**400},
     {"window_minutes": 10**400}],
)  # fmt: skip
def test_codex_hostile_times_and_lengths_are_unknown_not_errors(raw: dict[str, Any]) -> None:
    (got,) = codex_windows({"primary": {"used_percent": 10, **raw}}, NOW)
    assert got.used_percent == 10
    if "resets_at" in raw or "resets_in_seconds" in raw:
        assert got.resets_at is None
    else:
        assert got.window == "primary"


@pytest.mark.parametrize("value", [None, [], "x", 5, {"primary": [1]}, {"plan_type": "plus"}])
def test_codex_not_an_object(value: Any) -> None:
    assert codex_windows(value, NOW) == ()


def test_a_long_plan_name_is_cut() -> None:
    (got,) = codex_windows(codex_limits(window(1), plan="p" * 500), NOW)
    assert got.plan == "p" * 40


def test_the_rollout_makes_a_record_only_when_a_window_is_there() -> None:
    assert rate_limits({"type": "token_count", "rate_limits": codex_limits(None)}) == []
    assert rate_limits({"type": "token_count"}) == []
    (record,) = rate_limits({"rate_limits": codex_limits(window(20))})
    assert isinstance(record, LimitsSeen)


def test_facts_keep_the_session_s_last_windows() -> None:
    first = LimitsSeen(rate_limits=codex_limits(window(10)), ts=NOW)
    later = LimitsSeen(rate_limits=codex_limits(window(30)), ts=NOW + 60)
    empty = LimitsSeen(rate_limits=codex_limits({"used_percent": "x"}), ts=NOW + 120)
    folded = facts.fold_all(facts.SessionFacts(), [first, later, empty])
    (got,) = folded.limits
    assert (got.used_percent, got.observed_at) == (30.0, NOW + 60)


def test_recorded_rollouts_name_no_windows() -> None:
    """The real Codex CLIs (0.58, 0.99, 0.171) against the scripted model server: it sends no
    rate-limit headers, and Codex writes every window null; agentbar makes nothing of them."""
    seen = 0
    for path in sorted((DATA / "recorded").glob("codex-*/*/sessions/**/*.jsonl")):
        for line in path.read_text().splitlines():
            obj = json.loads(line)
            payload = obj.get("payload") or {}
            if obj.get("type") == "event_msg" and payload.get("type") == "token_count":
                assert "rate_limits" in payload
                assert rate_limits(payload) == []
                seen += 1
    assert seen >= 20


# -- Claude's status-line payload --------------------------------------------------------------

CLAUDE_PAYLOAD = {
    "session_id": "aaaaaaaa-0000-4000-8000-000000000001",
    "model": {"id": "claude-opus-4-1", "display_name": "Opus"},
    "cost": {"total_cost_usd": 0.42, "total_duration_ms": 45000},
    "rate_limits": {
        "five_hour": {"used_percentage": 23.5, "resets_at": NOW + 7200},
        "seven_day": {"used_percentage": 41.2, "resets_at": NOW + 86400 * 3},
    },
}  # shaped as Claude Code's status-line documentation gives it (see tests/data/statusline)


def test_claude_windows_from_the_documented_payload() -> None:
    five, week = claude_windows(CLAUDE_PAYLOAD, NOW)
    assert (five.agent, five.window, five.used_percent, five.resets_at) == (
        "claude", FIVE_HOURS, 23.5, NOW + 7200,
    )  # fmt: skip
    assert (week.window, week.used_percent) == (WEEKLY, 41.2)


@pytest.mark.parametrize(
    "payload",
    [{}, {"rate_limits": None}, {"rate_limits": []}, {"rate_limits": {"five_hour": 3}},
     {"rate_limits": {"five_hour": {"used_percentage": -1}}}, [], "x"],
)  # fmt: skip
def test_claude_payloads_without_usable_windows(payload: Any) -> None:
    assert claude_windows(payload, NOW) == ()


def test_the_link_record_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    path = record_path(tmp_path)
    reader = ClaudeStatusLineRecord(path)
    assert reader.read_if_changed() == ()  # none yet
    path.parent.mkdir()
    path.write_text(json.dumps(CLAUDE_PAYLOAD))
    os.utime(path, (NOW, NOW))
    five, _ = reader.read_if_changed()
    assert five.observed_at == NOW  # the file's time: when the link saw it
    assert reader.read_if_changed() == ()
    path.write_text("{not json")
    assert reader.read_if_changed() == ()
    path.write_text("[1, 2]")
    assert reader.read_if_changed() == ()
    path.write_text(json.dumps(CLAUDE_PAYLOAD) + " " * (70 * 1024))
    assert reader.read_if_changed() == ()  # larger than the link ever writes


# -- the store and the words ---------------------------------------------------------------------


def test_the_store_keeps_the_newest_and_shows_a_passed_reset_as_reset() -> None:
    store = LimitStore()
    old = LimitWindow("codex", FIVE_HOURS, 90.0, NOW + 60, None, NOW, "codex-rollout")
    new = LimitWindow("codex", FIVE_HOURS, 20.0, NOW + 3600, None, NOW + 10, "codex-rollout")
    week = LimitWindow("codex", WEEKLY, 50.0, None, None, NOW, "codex-rollout")
    assert store.note([new, week])
    assert not store.note([old])  # older: ignored, whatever order files are read in
    assert [w.used_percent for w in store.windows(NOW)] == [20.0, 50.0]
    (five, _) = store.windows(NOW + 3600)
    assert five.reset and five.used_percent == 0.0
    assert limits_text.line(five, NOW + 3600).startswith("Codex: 5 h window reset")


def test_the_line_reads_as_a_person_says_it() -> None:
    at = time.mktime((2026, 11, 30, 14, 20, 0, 0, 0, -1))
    window = LimitWindow("codex", FIVE_HOURS, 38.0, at, "plus", at - 3600, "codex-rollout")
    assert limits_text.line(window, at - 3600) == "Codex: 62 % of 5 h left, resets 14:20"
    assert limits_text.lines([window], at) == [
        "Codex: 62 % of 5 h left, resets 14:20",
        NOT_KNOWN,
    ]
    claude = LimitWindow("claude", WEEKLY, 41.2, None, None, at, "claude-status-line")
    assert limits_text.lines([claude], at) == ["Claude: 59 % of the week left"]
    document = limits_text.to_json([window, claude], at - 3600)
    assert document["notes"] == []
    assert document["limits"][0]["left_percent"] == 62.0


# -- the engine, the API, the CLI ----------------------------------------------------------------


def write_rollout(home: Path, used: float, resets_at: float, start: float) -> Path:
    r = CodexRollout(X, "/w/limits", start=start)
    token_count = r.tokens(100, 0, 10)
    token_count["payload"]["rate_limits"] = codex_limits(
        window(used, 300, resets_at), window(7.0, 10080, resets_at + 86400)
    )
    path = home / "sessions" / "2026" / "11" / "29" / f"rollout-2026-11-29T10-00-00-{X}.jsonl"
    write_lines(path, [r.meta(), r.started(), r.prompt("hi"), token_count])
    return path


def test_api_limits_over_a_real_engine(tmp_path: Path) -> None:
    home = make_home(tmp_path, claude=())
    now = time.time()
    write_rollout(home.codex, 38.0, now + 3600, now - 60)
    home.codex_rollout("paginated.jsonl", "019a0000-0000-7000-8000-0000000000aa")  # older reset
    with serving(home) as running:

        async def main() -> dict[str, Any]:
            async with (
                aiohttp.ClientSession(headers=running.auth()) as client,
                client.get(f"{running.origin}/api/limits") as response,
            ):
                assert response.status == 200
                return dict(await response.json())

        got = asyncio.run(main())
    five, week = got["limits"]
    assert (five["agent"], five["window"], five["used_percent"], five["plan"]) == (
        "codex", "5h", 38.0, "plus",
    )  # fmt: skip
    assert five["text"].startswith("Codex: 62 % of 5 h left, resets ")
    assert (week["window"], week["left_percent"]) == ("weekly", 93.0)
    assert got["notes"] == [NOT_KNOWN]


def test_status_line_and_json(env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    home = Path(env["HOME"])
    now = time.time()
    write_rollout(home / ".codex", 38.0, now + 3600, now - 60)
    done = agentbar(env, "status")
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("Limits: Codex: 62 % of 5 h left, resets ")
    assert "Codex: 93 % of the week left" in last and last.endswith(NOT_KNOWN)
    record = record_path(Path(env["AGENTBAR_DATA_DIR"]))
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(CLAUDE_PAYLOAD))
    document = json.loads(agentbar(env, "status", "--json").stdout)
    agents = [(w["agent"], w["window"]) for w in document["limits"]["limits"]]
    assert agents == [("claude", "5h"), ("claude", "weekly"), ("codex", "5h"), ("codex", "weekly")]
    assert document["limits"]["notes"] == []


# -- what the real CLIs wrote (tests/conformance/test_limits_cli.py) -----------------------------


def test_the_real_codex_rollout_s_rate_limits() -> None:
    """Codex 0.171.0 against the scripted server sending the x-codex-* headers."""
    path = DATA / "recorded" / "limits" / "codex-0.171.0-token_count.jsonl"
    payloads = [json.loads(line)["payload"] for line in path.read_text().splitlines()]
    records = [r for p in payloads for r in rate_limits(p)]
    assert records and all(isinstance(r, LimitsSeen) for r in records)
    five, week = codex_windows(records[-1].rate_limits, NOW)
    assert (five.window, five.used_percent, five.resets_at, five.plan) == (
        FIVE_HOURS, 38.5, 1_900_000_000, None,
    )  # fmt: skip
    assert (week.window, week.used_percent, week.resets_at) == (WEEKLY, 12.0, 1_900_400_000)


def test_the_real_claude_status_line_payload(tmp_path: Path) -> None:
    """Claude Code 2.1.332 hands its status line no ``rate_limits`` under an API key (the rig's
    login), even with the unified rate-limit headers sent: its windows are for subscription
    accounts. The same payload with them added, as Claude's documentation shapes them, reads."""
    real = DATA / "recorded" / "limits" / "claude-2.1.332-status-line.json"
    payload = json.loads(real.read_text())
    assert payload["version"] == "2.1.332" and payload["cost"]["total_cost_usd"] > 0
    assert "rate_limits" not in payload and claude_windows(payload, NOW) == ()
    record = record_path(tmp_path)
    record.parent.mkdir()
    record.write_text(json.dumps({**payload, "rate_limits": CLAUDE_PAYLOAD["rate_limits"]}))
    five, week = ClaudeStatusLineRecord(record).read_if_changed()
    assert (five.used_percent, week.used_percent) == (23.5, 41.2)


def test_a_link_that_records_no_windows_says_why(env: dict[str, str]) -> None:  # noqa: F811
    """The link installed under an API-key login (the real 2.1.332 payload): not "install the
    link", but that Claude sends none."""
    home = Path(env["HOME"])
    now = time.time()
    write_rollout(home / ".codex", 38.0, now + 3600, now - 60)
    record = record_path(Path(env["AGENTBAR_DATA_DIR"]))
    record.parent.mkdir(parents=True)
    shutil.copyfile(DATA / "recorded" / "limits" / "claude-2.1.332-status-line.json", record)
    done = agentbar(env, "status")
    assert done.stdout.splitlines()[-1].endswith(NOT_SENT), done.stdout
    assert limits_text.notes([], frozenset({"claude"})) == [NOT_SENT]
    assert limits_text.notes([]) == [NOT_KNOWN]
