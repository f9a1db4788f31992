"""Chats the real Gemini CLIs wrote in the conformance scenarios, replayed through the real
engine (real files, fake process table and clock): at every moment a scenario checked, agentbar
must report what it reported live.

The recordings live in ``tests/data/recorded/gemini-<version>/<scenario>/``: the JSONL chats as
the CLI left them (paths replaced by placeholders, long texts cut), the JSON chats of 0.38 as
they were at each moment (``snapshots/<mark>/``: that format is rewritten whole), the project
map, and ``scenario.json``, whose marks say how many lines each JSONL chat had, which Gemini CLI
processes ran and what agentbar reported. Re-record with ``AGENTBAR_RECORD=1 python -m pytest
tests/conformance -k gemini``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from engine_harness import Rig

from agentbar.core.agents.base import display_names
from agentbar.core.agents.gemini import AGENT
from agentbar.core.agents.registry import KITS
from agentbar.core.config import Settings
from agentbar.core.sources.base import ProcessInfo, parse_timestamp
from agentbar.tray.presenter import session_label

RECORDED = Path(__file__).parent / "data" / "recorded"
SCENARIOS = sorted(RECORDED.glob("gemini-*/*/scenario.json"))
EXPECTED = {
    "answer",
    "approve",
    "deny",
    "question",
    "ask_user",
    "interrupt",
    "model_error",
    "exit",
    "resume",
}
PROJECT = "/home/user/project"


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def test_every_version_has_every_scenario() -> None:
    versions = {p.parent.parent.name for p in SCENARIOS}
    assert versions >= {"gemini-0.61.0", "gemini-0.38.2"}, versions
    for version in versions:
        have = {p.parent.name for p in SCENARIOS if p.parent.parent.name == version}
        assert have >= EXPECTED, f"{version} lacks {sorted(EXPECTED - have)}"


def make_rig(tmp_path: Path) -> Rig:
    home = tmp_path / "home"
    settings = Settings(homes={AGENT: (home / ".gemini",)}, data_dir=tmp_path / "data")
    (home / ".gemini" / "tmp").mkdir(parents=True)
    return Rig(home=home, settings=settings)


class Replay:
    """Writes a recorded scenario's chats into a fresh Gemini home, mark by mark."""

    def __init__(self, scenario: Path, rig: Rig) -> None:
        self.folder = scenario.parent
        self.doc: dict[str, Any] = json.loads(scenario.read_text())
        self.rig = rig
        self.gemini = rig.settings.homes_of(AGENT)[0]
        self.lines: dict[str, list[bytes]] = {}
        self.written: dict[str, int] = {}
        stamps: list[float] = []
        for mark in self.doc["marks"]:
            for rel, state in mark["files"].items():
                if "lines" in state and rel not in self.lines:
                    self.lines[rel] = (self.folder / rel).read_bytes().splitlines(keepends=True)
                    self.written[rel] = 0
                    stamps += [t for t in map(self._ts, self.lines[rel]) if t is not None]
                elif "snapshot" in state:
                    stamps += self._document_stamps(self.folder / state["snapshot"])
        # The project map the CLI kept beside the chats, where the CLI keeps it.
        for extra in [self.folder / "projects.json", *self.folder.glob("tmp/*/.project_root")]:
            target = self.gemini / extra.relative_to(self.folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(extra, target)
        # The engine starts before the first line, as the live watch did.
        start = min(stamps) - 30.0
        rig.clock.advance(start - rig.clock.time())

    @staticmethod
    def _ts(line: bytes) -> float | None:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(value, dict):
            return None
        return parse_timestamp(value.get("timestamp") or value.get("startTime"))

    @staticmethod
    def _document_stamps(path: Path) -> list[float]:
        doc = orjson.loads(path.read_bytes())
        found = [parse_timestamp(doc.get("startTime"))]
        found += [parse_timestamp(m.get("timestamp")) for m in doc.get("messages", [])]
        return [t for t in found if t is not None]

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
        for rel, state in mark["files"].items():
            path = self.gemini / rel
            if "lines" in state:
                new = self.lines[rel][self.written[rel] : state["lines"]]
                self.written[rel] = state["lines"]
                if new:
                    rig.write_raw(path, b"".join(new))
                    latest = max([latest, *(t for t in map(self._ts, new) if t is not None)])
            else:
                snapshot = self.folder / state["snapshot"]
                path.parent.mkdir(parents=True, exist_ok=True)
                content = snapshot.read_bytes()
                if not path.exists() or path.read_bytes() != content:
                    # Rewritten whole, as the CLI does (a later mtime, whatever the size).
                    path.write_bytes(content)
                    stamp = os.stat(path).st_mtime_ns + 1_000_000
                    os.utime(path, ns=(stamp, stamp))
                    rig.touch(path)
                    latest = max([latest, *self._document_stamps(snapshot)])
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
            got = (str(snap.state.state), rig.state(sid, AGENT)[1])
            assert got == (expect["state"], expect["waiting_for"]), (mark["label"], snap.state)
            if expect["detail"]:
                assert expect["detail"] in snap.state.detail, (mark["label"], snap.state)
            assert snap.project == PROJECT
            # The tray's menu line for it names the agent as a person knows it.
            label = session_label(snap, display_names(KITS))
            assert label.startswith("Gemini CLI · project — "), label
    finally:
        rig.close()
