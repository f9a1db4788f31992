"""opencode's stores as the real opencode 1.18.33 and 1.1.65 left them in the conformance
scenarios, replayed through the real engine (real SQLite files and JSON folders, fake process
table and clock): at every moment a scenario checked, agentbar must report what it reported
live.

The recordings live in ``tests/data/recorded/opencode-<version>/<scenario>/<NN>/``: the database
(or the ``storage/`` folder) at that moment, and the plugin's event lines; ``scenario.json``
names the marks and the state expected at each. Re-record with
``AGENTBAR_RECORD=1 python -m pytest tests/conformance -k opencode``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from engine_harness import Rig

from agentbar.core.agents.opencode.files import AGENT
from agentbar.core.config import Settings
from agentbar.core.engine import PathTouched
from agentbar.core.replay.files import AgentRoots
from agentbar.core.search import Searcher
from agentbar.core.sources.base import ProcessInfo

RECORDED = Path(__file__).parent / "data" / "recorded"
SCENARIOS = sorted(RECORDED.glob("opencode-*/*/scenario.json"))
EXPECTED = {
    "answer",
    "approve-plugin",
    "approve-no-plugin",
    "deny",
    "question",
    "interrupt",
    "exit_and_resume",
}
PID = 4242


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def test_every_version_has_every_scenario() -> None:
    versions = {p.parent.parent.name for p in SCENARIOS}
    assert versions == {"opencode-1.18.33", "opencode-1.1.65"}
    for version in versions:
        have = {p.parent.name for p in SCENARIOS if p.parent.parent.name == version}
        assert have >= EXPECTED, f"{version} lacks {sorted(EXPECTED - have)}"


def newest_ms(folder: Path) -> float:
    """The newest moment opencode wrote in a recorded mark, in epoch seconds."""
    if (folder / "opencode.db").exists():
        conn = sqlite3.connect(f"file:{folder / 'opencode.db'}?mode=ro&immutable=1", uri=True)
        try:
            found = [
                conn.execute(f"SELECT max(time_updated) FROM {t}").fetchone()[0]
                for t in ("session", "message", "part")
            ]
        finally:
            conn.close()
        return max(v for v in found if v is not None) / 1000.0
    times = []
    for path in (folder / "storage").glob("*/*/*.json"):
        body = json.loads(path.read_text())
        stamp = body.get("time") or {}
        times += [v for v in stamp.values() if isinstance(v, int | float)]
        state = body.get("state") or {}
        times += [v for v in (state.get("time") or {}).values() if isinstance(v, int | float)]
    return max(times) / 1000.0


def copy_mark(folder: Path, data_dir: Path, events_dir: Path) -> list[Path]:
    touched = []
    if (folder / "opencode.db").exists():
        target = data_dir / "opencode.db"
        shutil.copy(folder / "opencode.db", target)
        touched.append(target)
    else:
        for path in sorted((folder / "storage").glob("*/*/*.json")):
            target = data_dir / "storage" / path.relative_to(folder / "storage")
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists() or target.read_bytes() != path.read_bytes():
                shutil.copy(path, target)
                touched.append(target)
    for path in sorted((folder / "events").glob("*.jsonl")):
        events_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, events_dir / path.name)
        touched.append(events_dir / path.name)
    return touched


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_recorded_scenario(scenario: Path, tmp_path: Path) -> None:
    play(scenario, tmp_path, restart=False)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_recorded_scenario_across_restarts(scenario: Path, tmp_path: Path) -> None:
    """agentbar stopped before each mark and started after it: the database's cursor, kept
    in the index, makes the start read only what changed meanwhile (the session whole), and
    the states are the same as when it watched."""
    play(scenario, tmp_path, restart=True)


def play(scenario: Path, tmp_path: Path, *, restart: bool) -> None:
    doc: dict[str, Any] = json.loads(scenario.read_text())
    home = tmp_path / "home"
    config_dir, data_dir = home / ".config" / "opencode", home / ".local" / "share" / "opencode"
    data_dir.mkdir(parents=True)
    settings = Settings(homes={AGENT: (config_dir, data_dir)}, data_dir=tmp_path / "data")
    rig = Rig(home=home, settings=settings)
    first = newest_ms(scenario.parent / doc["marks"][0]["folder"])
    rig.clock.advance(first - 30.0 - rig.clock.time())
    rig.open()
    try:
        for mark in doc["marks"]:
            folder = scenario.parent / mark["folder"]
            expect = mark["expect"]
            # opencode runs while it writes; an "ended" mark is its process seen gone after.
            opencode = ProcessInfo(
                pid=PID,
                ppid=1,
                create_time=first - 20.0,
                name="opencode",
                cmdline=("opencode",),
                cwd=doc["project"],
            )
            if rig.processes.lookup(PID) is None:
                rig.processes.add(opencode)
            rig.clock.advance(max(0.0, newest_ms(folder) + 0.5 - rig.clock.time()))
            if restart:
                rig.close()
            for path in copy_mark(folder, data_dir, settings.events_dir(AGENT)):
                if not restart:
                    rig.engine.post(PathTouched(path))  # type: ignore[union-attr]
            if restart:
                rig.open()
            rig.tick(0.5)
            if expect["state"] == "ended":
                rig.processes.remove(PID)
                rig.tick(0.5)
            sessions = rig.sessions()
            assert len(sessions) == 1, (mark["label"], sorted(sessions))
            (snap,) = sessions.values()
            got = (
                str(snap.state.state),
                None if snap.state.waiting_for is None else str(snap.state.waiting_for),
            )
            assert got == (expect["state"], expect["waiting_for"]), (mark["label"], snap.state)
            if expect["detail"]:
                assert expect["detail"] in snap.state.detail, (mark["label"], snap.state)
            assert snap.project == doc["project"]
    finally:
        rig.close()


ANSWERS = sorted(RECORDED.glob("opencode-*/answer/scenario.json"))


@pytest.mark.parametrize("scenario", ANSWERS, ids=_id)
def test_search_finds_a_recorded_session_after_a_restart(scenario: Path, tmp_path: Path) -> None:
    """The prompt and the answer of a recorded session are found by search (as the CLI
    searches, and under the server's folder rule), and still, once each, after agentbar
    restarts."""
    doc: dict[str, Any] = json.loads(scenario.read_text())
    home = tmp_path / "home"
    config_dir, data_dir = home / ".config" / "opencode", home / ".local" / "share" / "opencode"
    data_dir.mkdir(parents=True)
    settings = Settings(homes={AGENT: (config_dir, data_dir)}, data_dir=tmp_path / "data")
    folder = scenario.parent / doc["marks"][-1]["folder"]
    copy_mark(folder, data_dir, settings.events_dir(AGENT))
    rig = Rig(home=home, settings=settings)
    rig.clock.advance(newest_ms(folder) + 5.0 - rig.clock.time())
    roots = AgentRoots(settings.agent_roots)

    def hits(word: str) -> list[tuple[str, str, str]]:
        found = []
        for searcher in (Searcher(settings.index_path), Searcher(settings.index_path, roots=roots)):
            try:
                found.append([(h.key.session_id, h.kind, h.thread) for h in searcher.search(word)])
            finally:
                searcher.close()
        assert found[0] == found[1], found  # the server's folder rule keeps them
        return found[0]

    try:
        for _ in range(2):  # a first start, then a restart over the same index
            rig.open()
            rig.tick(0.5)
            (snap,) = rig.sessions().values()
            session_id = snap.key.session_id
            assert hits("2+2") == [(session_id, "prompt", "main")]
            assert hits("answer is") == [(session_id, "answer", "main")]
            assert hits("nothing-said-here") == []
    finally:
        rig.close()


def copy_session_later(database: Path, new_id: str, later_ms: int) -> None:
    """Another session in ``database``: a copy of its one session's rows, ``later_ms`` on."""
    conn = sqlite3.connect(database)
    try:
        for table, key in (("session", "id"), ("message", "session_id"), ("part", "session_id")):
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            for row in conn.execute(f"SELECT * FROM {table}").fetchall():
                values = dict(zip(columns, row, strict=True))
                values[key] = new_id
                if table != "session":
                    values["id"] = f"{values['id']}_{new_id}"
                if "message_id" in values:
                    values["message_id"] = f"{values['message_id']}_{new_id}"
                values["time_updated"] += later_ms
                marks = ",".join("?" * len(values))
                conn.execute(f"INSERT INTO {table} VALUES ({marks})", list(values.values()))
        conn.commit()
    finally:
        conn.close()


def test_a_start_reads_only_the_sessions_that_changed(tmp_path: Path) -> None:
    """The database's cursor is kept in the index: a start reads the sessions changed since
    the last run (each one whole), not the others, whose states the index kept."""
    scenario = RECORDED / "opencode-1.18.33" / "answer" / "scenario.json"
    home = tmp_path / "home"
    config_dir, data_dir = home / ".config" / "opencode", home / ".local" / "share" / "opencode"
    data_dir.mkdir(parents=True)
    settings = Settings(homes={AGENT: (config_dir, data_dir)}, data_dir=tmp_path / "data")
    folder = scenario.parent / "01"
    copy_mark(folder, data_dir, settings.events_dir(AGENT))
    database = data_dir / "opencode.db"
    copy_session_later(database, "ses_later", 60_000)
    rig = Rig(home=home, settings=settings)
    rig.clock.advance(newest_ms(folder) + 120.0 - rig.clock.time())

    def start() -> set[str]:
        """The sessions read at this start; every session is as recorded (its one turn's
        usage counted once: neither lost nor folded twice)."""
        engine = rig.open()
        rig.tick(0.5)
        sessions = rig.sessions()
        assert len(sessions) == 2, sorted(sessions)
        for snap in sessions.values():
            assert str(snap.state.state) == "ended"  # no opencode process
            assert (snap.usage.input_tokens, snap.usage.output_tokens) == (120, 30)
            assert snap.project == "/home/user/project"
        return {s.spec.session_hint or "" for s in engine.snapshots.streams()}

    try:
        (answered,) = start() - {"ses_later"}
        rig.close()
        # Only the newest session is within the cursor's overlap (a row committed late).
        assert start() == {"ses_later"}
        rig.close()
        conn = sqlite3.connect(database)  # the first session moves while agentbar is off
        with conn:
            conn.execute("UPDATE session SET time_updated = time_updated + 120000 WHERE id = ?",
                         (answered,))  # fmt: skip
        conn.close()
        assert answered in start()  # read whole, folded from nothing
    finally:
        rig.close()
