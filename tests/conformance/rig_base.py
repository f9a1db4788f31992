"""What every agent's conformance rig shares (``claude_rig.py``, ``codex_rig.py``,
``gemini_rig.py``, ``opencode_rig.py`` keep only what is their agent's own): a pinned release
installed from npm, one scenario's run (the TUI in a PTY, waits on what ``agentbar watch``
reports, the version's gaps), and the recorder's plumbing (the target folder, placeholders for
the rig's paths, long strings cut, the agent's processes, ``scenario.json``).

Each runs in the test's thread; nothing here knows an agent's files or screens.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from re import Pattern
from typing import Any, ClassVar

import psutil
import pytest
from agent_terminal import AgentTerminal
from cli_install import Cli, cache_dir, ensure_installed
from watch_events import Seen, WatchEvents

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "data" / "recorded"
RECORDING = os.environ.get("AGENTBAR_RECORD") == "1"

PROJECT_PLACEHOLDER = "/home/user/project"
HOME_PLACEHOLDER = "/home/user"
RIG_PLACEHOLDER = "/home/user/rig"
CACHE_PLACEHOLDER = "/opt/agentbar-conformance"
SERVER_PLACEHOLDER = "http://127.0.0.1:9"
LONG_TEXT = 1500  # longer strings (instructions, system prompts, skill lists) are cut
GAP_WAIT = 5.0  # agentbar reports a change within milliseconds; this long means never
EXIT_SECONDS = 30.0


class PinnedVersion:
    """A pinned release of an agent's CLI (mixed into each rig's frozen version dataclass,
    which holds ``version`` and ``gaps``): ``AGENT`` is its binary, ``PACKAGE`` its npm name."""

    AGENT: ClassVar[str]
    PACKAGE: ClassVar[str]
    version: str
    gaps: frozenset[str]  # what this version never writes, so agentbar cannot know it

    @property
    def cli(self) -> Cli:
        return Cli(self.AGENT, self.PACKAGE, self.version)

    @property
    def label(self) -> str:
        return self.cli.label


class AgentRun:
    """One scenario of one agent: the rig, the installed CLI, its TUIs in the project folder,
    the watch (started by the agent's run once its configuration is written) and the gaps of
    this version the scenario ran into. Subclasses add the agent's own driving."""

    recorder: RunRecorder

    def __init__(self, rig: Any, version: PinnedVersion, scenario: str) -> None:
        self.rig = rig
        self.version = version
        self.scenario = scenario
        self.binary = ensure_installed(version.cli)
        self.watch: WatchEvents | None = None
        self.term: AgentTerminal | None = None
        self.gaps_seen: list[str] = []
        self._terminals = 0

    @property
    def agent(self) -> str:
        return self.version.AGENT

    @property
    def watching(self) -> WatchEvents:
        assert self.watch is not None, "the scenario has not started the watch"
        return self.watch

    # -- the TUI ---------------------------------------------------------------------------

    def open_terminal(
        self, args: tuple[str, ...], ready: str | Pattern[str], timeout: float
    ) -> float:
        """Start ``<agent> <args>`` in a PTY of its own and wait until ``ready`` shows;
        returns that moment."""
        self._terminals += 1
        self.term = self.rig.terminal(
            [str(self.binary), *args], name=f"{self.agent}-{self._terminals}"
        )
        return self.term.wait_for(ready, timeout=timeout)

    def exit_with(self, command: str) -> float:
        """Send ``command`` (``/quit``, ``/exit``); returns the moment the process was seen gone."""
        assert self.term is not None
        self.term.submit(command)
        return self.gone()

    def gone(self) -> float:
        """Wait for the TUI's process to end; returns the moment it was seen gone."""
        assert self.term is not None
        status = self.term.wait_exit(timeout=EXIT_SECONDS)
        assert status is not None, f"{self.agent} did not exit; screen:\n{self.term.text()}"
        return time.perf_counter()

    # -- what agentbar says ----------------------------------------------------------------

    def session_id(self, timeout: float = 30.0) -> str:
        """The session agentbar reports first for this agent."""
        seen = self.watching.wait_for(lambda e: e["agent"] == self.agent, timeout)
        return str(seen.event["session_id"])

    def wait(
        self,
        state: str,
        *,
        after: int,
        waiting_for: str | None = None,
        timeout: float = 30.0,
        sid: str | None = None,
    ) -> Seen:
        """The first report after watch position ``after`` of ``state`` (and ``waiting_for``)
        for this agent (and session ``sid``)."""

        def match(event: dict[str, Any]) -> bool:
            return (
                event["agent"] == self.agent
                and (sid is None or event["session_id"] == sid)
                and event["state"] == state
                and (waiting_for is None or event["waiting_for"] == waiting_for)
            )

        return self.watching.wait_for(match, timeout, after=after)

    def after(self, seen: Seen) -> int:
        """The watch position just after ``seen``: to wait for what comes next."""
        return self.watching.events().index(seen) + 1

    def latest(self, sid: str) -> dict[str, Any]:
        events = self.watching.events(sid)
        assert events, "agentbar reported nothing for the session"
        return events[-1].event

    def states(self, sid: str | None = None, after: int = 0) -> list[tuple[str, str | None, str]]:
        """(state, waiting_for, detail) of each report for this agent (and ``sid``)."""
        return [
            (s.event["state"], s.event["waiting_for"], s.event["detail"])
            for s in self.watching.events(sid)[after:]
            if s.event["agent"] == self.agent
        ]

    def delay(self, record_delay: Any, what: str, screen_at: float, seen: Seen) -> None:
        record_delay(self.version.label, self.scenario, what, screen_at, seen.at)


# -- the scenario's fixture and its gaps ------------------------------------------------------


def scenario_of(request: pytest.FixtureRequest) -> str:
    return str(request.node.originalname).removeprefix("test_")


def recorded(run: AgentRun, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Yield ``run`` to the test; afterwards keep its recording, but only of a run whose
    checks all held (or that ended on a known gap)."""
    yield run
    report = getattr(request.node, "rep_call", None)
    if report is not None and (report.passed or hasattr(report, "wasxfail")):
        run.recorder.save()


def expect_gap(run: AgentRun, gap: str, state: str, *, after: int, sid: str) -> None:
    """This version gives agentbar nothing to see ``state`` by: check it does not claim it."""
    with pytest.raises(AssertionError, match="no matching watch event"):
        run.wait(state, after=after, sid=sid, timeout=GAP_WAIT)
    run.gaps_seen.append(gap)


def end_of_gaps(run: AgentRun, note: str = "") -> None:
    """End the test as an expected failure naming the gaps it ran into, if any."""
    if run.gaps_seen:
        pytest.xfail(
            f"{run.agent} {run.version.version} writes nothing agentbar could see this by: "
            + ", ".join(run.gaps_seen)
            + note
        )


# -- recording --------------------------------------------------------------------------------


class RunRecorder:
    """With ``AGENTBAR_RECORD=1`` the agent's recorder copies what a run left on disk into
    ``tests/data/recorded/<agent>-<version>/<scenario>/``; this is what every agent's does."""

    def __init__(self, run: AgentRun) -> None:
        self.run = run
        self.marks: list[dict[str, Any]] = []

    def target(self) -> Path:
        return RECORDED / f"{self.run.agent}-{self.run.version.version}" / self.run.scenario

    def fresh_target(self) -> Path:
        """The scenario's folder, emptied of an earlier recording."""
        target = self.target()
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        return target

    def mark(
        self,
        label: str,
        state: str,
        *,
        waiting_for: str | None = None,
        detail: str | None = None,
        sid: str | None = None,
        gap: str | None = None,
    ) -> None:
        """What agentbar must report (for ``sid``) with the files as they are now (``detail``:
        a part of the detail). ``gap``: this version writes nothing that would tell it better."""
        if not RECORDING:
            return
        expect = self.expectation(state, waiting_for, detail, sid)
        self.add_mark(label, expect, gap, **self.on_disk())

    def expectation(
        self, state: str, waiting_for: str | None, detail: str | None, sid: str | None
    ) -> dict[str, Any]:
        return {"state": state, "waiting_for": waiting_for, "detail": detail}

    def on_disk(self) -> dict[str, Any]:
        """What the agent left on disk now, as a mark keeps it (the agent's recorder says)."""
        raise NotImplementedError

    def add_mark(self, label: str, expect: dict[str, Any], gap: str | None, **facts: Any) -> None:
        """One moment a scenario checked: what was on disk (``facts``) and what agentbar must
        report then (``gap``: this version writes nothing that would tell it better)."""
        self.marks.append(
            {"label": label, **facts, "expect": expect, **({"gap": gap} if gap else {})}
        )

    def write_scenario(self, target: Path, live_events: list[list[Any]]) -> None:
        document = {
            "agent": self.run.agent,
            "version": self.run.version.version,
            "scenario": self.run.scenario,
            "project": PROJECT_PLACEHOLDER,
            "marks": self.marks,
            "live_events": live_events,
        }
        (target / "scenario.json").write_text(
            self.sanitise(json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
        )

    def copy_lines(self, path: Path, out: Path) -> None:
        """A JSONL file, each line cut and sanitised."""
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            "".join(self.sanitise_line(line) for line in path.read_text().splitlines(True))
        )

    def replacements(self) -> list[tuple[str, str]]:
        """The rig's own paths and addresses, and what a recording says instead."""
        rig = self.run.rig
        return [
            (str(rig.project), PROJECT_PLACEHOLDER),
            (str(rig.home), HOME_PLACEHOLDER),
            (str(rig.root), RIG_PLACEHOLDER),
            (str(cache_dir()), CACHE_PLACEHOLDER),
            (rig.server.url, SERVER_PLACEHOLDER),
        ]

    def sanitise(self, text: str) -> str:
        for real, placeholder in self.replacements():
            text = text.replace(real, placeholder)
        return text

    def sanitise_line(self, line: str) -> str:
        end = "\n" if line.endswith("\n") else ""
        try:
            value = json.loads(line)
        except ValueError:
            return self.sanitise(line)
        return self.sanitise(self.line_json(value)) + end

    def line_json(self, value: Any) -> str:
        return json.dumps(cut_long_strings(value), ensure_ascii=False)

    def processes(self, names: str, *, in_cmdline: bool = False) -> list[dict[str, Any]]:
        """The agent's processes as the engine would see them: those named like ``names`` (a
        regular expression for the start of the name) with the rig's HOME (``in_cmdline``: or
        naming it on their command line), not this test's nor the watch's."""
        marker = str(self.run.rig.home)
        ours = {os.getpid(), *(() if self.run.watch is None else (self.run.watch.proc.pid,))}
        found = []
        for proc in psutil.process_iter(["pid", "ppid", "name", "cmdline", "create_time"]):
            info = proc.info
            cmdline = info["cmdline"] or []
            if proc.pid in ours or not re.match(names, info["name"] or ""):
                continue
            try:
                environ = proc.environ()
                cwd = proc.cwd()
            except psutil.Error:
                continue
            if environ.get("HOME") != marker and not (
                in_cmdline and any(marker in a for a in cmdline)
            ):
                continue
            found.append(
                {
                    "pid": proc.pid,
                    "ppid": info["ppid"],
                    "create_time": info["create_time"],
                    "name": info["name"],
                    "cmdline": [self.sanitise(a) for a in cmdline],
                    "cwd": self.sanitise(cwd),
                }
            )
        return found


def cut_long_strings(value: Any, limit: int = LONG_TEXT) -> Any:
    """Instructions, skills lists and the like run to tens of kilobytes per line: keep their
    start (what a reader may test, e.g. ``# AGENTS.md instructions``) and say what was cut."""
    if isinstance(value, str) and len(value) > limit:
        keep = min(300, limit)
        return f"{value[:keep]}[... {len(value) - keep} characters cut by the recorder]"
    if isinstance(value, dict):
        return {k: cut_long_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [cut_long_strings(v, limit) for v in value]
    return value
