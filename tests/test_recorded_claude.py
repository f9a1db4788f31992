"""Transcripts and registries the real Claude Code CLIs wrote in the conformance scenarios,
replayed through the real engine (real files, fake process table and clock): at every moment a
scenario checked, agentbar must report what it reported live.

The recordings live in ``tests/data/recorded/claude-<version>/<scenario>/``: the transcripts as
Claude left them under ``projects/`` (paths replaced by placeholders, system prompts and other
long texts cut) and ``scenario.json``, whose marks say how many lines each transcript had at
that moment, what each live registry (``sessions/<pid>.json``, 2.1.x) said, which agent
processes ran, the time, and the state agentbar reported. Re-record with
``AGENTBAR_RECORD=1 python -m pytest tests/conformance -k claude``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_harness import Rig, make_rig

from agentbar.core.model import Agent
from agentbar.core.sources.base import ProcessInfo

RECORDED = Path(__file__).parent / "data" / "recorded"
SCENARIOS = sorted(RECORDED.glob("claude-*/*/scenario.json"))
# Every scenario of the conformance suite, for every pinned version (ask_tool only where the
# version has AskUserQuestion).
EXPECTED = {
    "answer", "approve", "deny", "question", "interrupt", "model_error", "exit", "resume",
}  # fmt: skip


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def test_every_version_has_every_scenario() -> None:
    versions = {p.parent.parent.name for p in SCENARIOS}
    assert len(versions) >= 2, "recorded Claude scenarios of at least two versions"
    for version in versions:
        have = {p.parent.name for p in SCENARIOS if p.parent.parent.name == version}
        assert have >= EXPECTED, f"{version} lacks {sorted(EXPECTED - have)}"


class Replay:
    """Brings a fresh Claude home to each recorded moment: processes, registries, lines."""

    def __init__(self, scenario: Path, rig: Rig) -> None:
        self.folder = scenario.parent
        self.doc: dict[str, Any] = json.loads(scenario.read_text())
        self.rig = rig
        self.lines: dict[str, list[bytes]] = {}
        self.written: dict[str, int] = {}
        self.registries: set[str] = set()
        for mark in self.doc["marks"]:
            for rel in mark["lines"]:
                if rel not in self.lines:
                    self.lines[rel] = (self.folder / rel).read_bytes().splitlines(keepends=True)
                    self.written[rel] = 0
        # The engine starts before the agent, as the live watch did.
        first = self.doc["marks"][0]
        start = min([first["time"], *(p["create_time"] for p in first["processes"])]) - 30.0
        rig.clock.advance(start - rig.clock.time())

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
        rig.clock.advance(max(0.0, mark["time"] - rig.clock.time()))
        for rel in sorted(self.registries - set(mark["registries"])):
            (rig.claude / rel).unlink()
            rig.touch(rig.claude / rel)
        for rel, entry in mark["registries"].items():
            rig.write_json(rig.claude / rel, entry)
        self.registries = set(mark["registries"])
        for rel, count in mark["lines"].items():
            new = self.lines[rel][self.written[rel] : count]
            self.written[rel] = count
            if new:
                rig.write_raw(rig.claude / rel, b"".join(new))
        rig.settle()
        rig.tick(0.0)  # the liveness check the live engine runs every 2 s


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
            expect = mark["expect"]
            # One session, whatever the version does on disk (sub-agent warm-ups, resumes).
            assert list(sessions) == [expect["session"]], (mark["label"], sorted(sessions))
            snap = sessions[expect["session"]]
            got = (str(snap.state.state), rig.state(expect["session"], Agent("claude"))[1])
            assert got == (expect["state"], expect["waiting_for"]), (mark["label"], snap.state)
            if expect["detail"]:
                assert expect["detail"] in snap.state.detail, (mark["label"], snap.state)
            assert snap.project == replay.doc["project"]
    finally:
        rig.close()
