"""Usage limits from the real CLIs: Codex 0.171.0 writes the rate-limit headers its server sends
into its rollout's ``token_count`` events, and agentbar reads them; Claude Code 2.1.332 runs
agentbar's status-line link (installed with ``agentbar hooks install --status-line``), which
records what Claude hands it and runs the person's own status-line command after it. The scripted
model server sends the headers the real services send (Codex: ``x-codex-*``; Anthropic:
``anthropic-ratelimit-unified-*``). What each run recorded is kept under
``tests/data/recorded/`` with ``AGENTBAR_RECORD=1``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from claude_rig import VERSIONS as CLAUDE_VERSIONS
from claude_rig import ClaudeRun
from cli_runner import agentbar
from codex_rig import VERSIONS as CODEX_VERSIONS
from codex_rig import CodexRun
from model_server import Reply, thinking
from rig_base import RECORDING, RIG_PLACEHOLDER, SERVER_PLACEHOLDER

from agentbar.core.limits import claude_windows, codex_windows
from agentbar.core.limits_claude import record_path

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

DATA = Path(__file__).parent.parent / "data" / "recorded"
RESET_5H = 1_900_000_000  # epoch seconds, far ahead: the window stays open while the test runs
RESET_7D = 1_900_400_000


@pytest.fixture
def codex(rig: Rig) -> Iterator[CodexRun]:
    (version,) = [v for v in CODEX_VERSIONS if v.version == "0.171.0"]
    yield CodexRun(rig, version, "limits")


@pytest.fixture
def claude(rig: Rig) -> Iterator[ClaudeRun]:
    (version,) = [v for v in CLAUDE_VERSIONS if v.version == "2.1.332"]
    yield ClaudeRun(rig, version, "limits")


def test_codex_rollout_carries_the_server_s_rate_limits(codex: CodexRun) -> None:
    codex.rig.server.extra_headers = {
        "x-codex-primary-used-percent": "38.5",
        "x-codex-primary-window-minutes": "300",
        "x-codex-primary-reset-at": str(RESET_5H),
        "x-codex-secondary-used-percent": "12",
        "x-codex-secondary-window-minutes": "10080",
        "x-codex-secondary-reset-at": str(RESET_7D),
    }
    codex.rig.server.script.add(thinking(Reply.text("The answer is 4.")))
    codex.start()
    mark = codex.submit("what is 2+2")
    done = codex.wait("done", after=mark, timeout=60)
    sid = done.event["session_id"]
    (rollout,) = (codex.codex_home / "sessions").rglob(f"rollout-*{sid}.jsonl")
    counts = [
        line["payload"]
        for line in map(json.loads, rollout.read_text().splitlines())
        if line.get("type") == "event_msg" and line["payload"].get("type") == "token_count"
    ]
    named = [c["rate_limits"] for c in counts if (c.get("rate_limits") or {}).get("primary")]
    assert named, counts
    five, week = codex_windows(named[-1], time.time())
    assert (five.window, five.used_percent, five.resets_at) == ("5h", 38.5, RESET_5H)
    assert (week.window, week.used_percent, week.resets_at) == ("weekly", 12.0, RESET_7D)
    status = json.loads(agentbar(codex.rig.env, "status", "--json").stdout)
    shown = [(w["agent"], w["window"], w["used_percent"]) for w in status["limits"]["limits"]]
    assert shown == [("codex", "5h", 38.5), ("codex", "weekly", 12.0)]
    if RECORDING:
        target = DATA / "limits" / "codex-0.171.0-token_count.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(json.dumps({"payload": c}) + "\n" for c in counts))


def test_claude_runs_the_status_line_link(claude: ClaudeRun) -> None:
    rig = claude.rig
    settings = claude.claude_home / "settings.json"
    data = json.loads(settings.read_text())
    data["statusLine"] = {"type": "command", "command": "echo MINE-STATUS-LINE", "padding": 0}
    settings.write_text(json.dumps(data, indent=2))
    done = agentbar(rig.env, "hooks", "install", "--status-line", "--agent", "claude", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    now = int(time.time())
    rig.server.extra_headers = {
        "anthropic-ratelimit-unified-status": "allowed",
        "anthropic-ratelimit-unified-5h-status": "allowed",
        "anthropic-ratelimit-unified-5h-utilization": "0.385",
        "anthropic-ratelimit-unified-5h-reset": str(now + 3600),
        "anthropic-ratelimit-unified-7d-status": "allowed",
        "anthropic-ratelimit-unified-7d-utilization": "0.12",
        "anthropic-ratelimit-unified-7d-reset": str(now + 86400),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-reset": str(now + 3600),
    }
    rig.server.script.add(thinking(Reply.text("The answer is 4.")))
    # Their own line, through the link, where the footer's "? for shortcuts" would be.
    claude.open_terminal((), "MINE-STATUS-LINE", 90.0)
    time.sleep(0.5)  # as ClaudeRun.start: keys typed at once can be lost
    mark = claude.submit("what is 2+2")
    claude.wait("done", after=mark, timeout=60)
    record = record_path(Path(rig.env["AGENTBAR_DATA_DIR"]))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not _api_ms(_payload(record)):
        time.sleep(0.2)  # the refresh after the turn: its cost counts the model's time
    payload = _payload(record)
    assert payload.get("session_id") and _api_ms(payload), payload
    if RECORDING:
        target = DATA / "limits" / "claude-2.1.332-status-line.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        text = record.read_text().replace(str(rig.root), RIG_PLACEHOLDER)
        target.write_text(text.replace(rig.server.url, SERVER_PLACEHOLDER))
    # What 2.1.332 does with the rate-limit headers under an API key (the rig's login): see
    # tests/conformance/README.md; the windows are parsed when it sends them.
    windows = claude_windows(payload, time.time())
    if "rate_limits" in payload:
        assert [w.window for w in windows] == ["5h", "weekly"]
    done = agentbar(rig.env, "hooks", "uninstall", "--status-line", "--agent", "claude", "--yes")
    assert done.returncode == 0
    assert json.loads(settings.read_text())["statusLine"]["command"] == "echo MINE-STATUS-LINE"


def _api_ms(payload: dict[str, object]) -> object:
    cost = payload.get("cost")
    return cost.get("total_api_duration_ms") if isinstance(cost, dict) else None


def _payload(path: Path) -> dict[str, object]:
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
