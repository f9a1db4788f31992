"""Rollouts the real Codex CLIs wrote in the conformance scenarios, replayed through the real
engine (real files, fake process table and clock): at every moment a scenario checked, agentbar
must report what it reported live.

The recordings live in ``tests/data/recorded/codex-<version>/<scenario>/``: the rollouts as
Codex left them (paths replaced by placeholders, long instruction texts cut) and
``scenario.json``, whose marks say how many lines each rollout had at that moment, which agent
processes ran (the TUI, its node wrapper, Codex 0.171's app-server daemon) and the state agentbar
reported. Re-record with ``AGENTBAR_RECORD=1 python -m pytest tests/conformance -k codex``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from engine_harness import Rig, make_rig

from agentbar.core.model import Agent
from agentbar.core.sources.base import ProcessInfo, parse_timestamp

RECORDED = Path(__file__).parent / "data" / "recorded"
SCENARIOS = sorted(RECORDED.glob("codex-*/*/scenario.json"))
# Every scenario of the conformance suite, for every pinned version (request_user_input only
# where the version has it).
EXPECTED = {
    "answer", "approve", "deny", "question", "interrupt", "model_error", "exit", "resume",
}  # fmt: skip


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def test_every_version_has_every_scenario() -> None:
    versions = {p.parent.parent.name for p in SCENARIOS}
    assert versions, "no recorded Codex scenarios"
    for version in versions:
        have = {p.parent.name for p in SCENARIOS if p.parent.parent.name == version}
        assert have >= EXPECTED, f"{version} lacks {sorted(EXPECTED - have)}"


class Replay:
    """Writes a recorded scenario's lines into a fresh Codex home, mark by mark."""

    def __init__(self, scenario: Path, rig: Rig) -> None:
        self.folder = scenario.parent
        self.doc: dict[str, Any] = json.loads(scenario.read_text())
        self.rig = rig
        self.lines: dict[str, list[bytes]] = {}
        self.written: dict[str, int] = {}
        for mark in self.doc["marks"]:
            for rel in mark["lines"]:
                if rel not in self.lines:
                    self.lines[rel] = (self.folder / rel).read_bytes().splitlines(keepends=True)
                    self.written[rel] = 0
        stamps = [self._ts(line) for lines in self.lines.values() for line in lines]
        # The engine starts before the first line, as the live watch did.
        start = min(s for s in stamps if s is not None) - 30.0
        rig.clock.advance(start - rig.clock.time())

    @staticmethod
    def _ts(line: bytes) -> float | None:
        try:
            return parse_timestamp(orjson.loads(line).get("timestamp"))
        except (orjson.JSONDecodeError, AttributeError, ValueError):
            return None

    def apply(self, mark: dict[str, Any]) -> None:
        rig = self.rig
        for proc in list(rig.processes.candidates()):
            rig.processes.remove(proc.pid)
        for proc in mark["processes"]:
            rig.processes.add(
                ProcessInfo(
                    pid=proc["pid"],
                    ppid=proc["ppid"],
                    create_time=proc["create_time"],
                    name=proc["name"],
                    cmdline=tuple(proc["cmdline"]),
                    cwd=proc["cwd"],
                )
            )
        latest = rig.clock.time()
        for rel, count in mark["lines"].items():
            new = self.lines[rel][self.written[rel] : count]
            self.written[rel] = count
            if new:
                rig.write_raw(rig.codex / rel, b"".join(new))
                latest = max([latest, *(t for t in map(self._ts, new) if t is not None)])
        for proc in mark["processes"]:
            latest = max(latest, proc["create_time"])
        # A moment after the newest line: what the live watch saw once it had read them.
        rig.clock.advance(max(0.0, latest + 0.5 - rig.clock.time()))
        rig.tick(0.5)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_recorded_scenario(scenario: Path, tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    replay = Replay(scenario, rig)
    rig.open()
    try:
        assert replay.doc["marks"], "a recorded scenario without a single check"
        for mark in replay.doc["marks"]:
            replay.apply(mark)
            sessions = rig.sessions()
            assert len(sessions) == 1, (mark["label"], sorted(sessions))
            (sid,) = sessions
            snap = sessions[sid]
            expect = mark["expect"]
            got = (str(snap.state.state), rig.state(sid, Agent("codex"))[1])
            assert got == (expect["state"], expect["waiting_for"]), (mark["label"], snap.state)
            if expect["detail"]:
                assert expect["detail"] in snap.state.detail, (mark["label"], snap.state)
            assert snap.project == replay.doc["project"]
    finally:
        rig.close()
