"""The conformance rig: a throwaway HOME, a scripted model server, `agentbar watch --json`
running against that HOME, and the real agent CLI in a PTY (see README.md in this folder)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from agent_terminal import AgentTerminal, kill_tree_of_home
from model_server import ModelServer
from watch_events import WatchEvents


@dataclass
class Rig:
    root: Path
    server: ModelServer
    home: Path
    project: Path
    data: Path
    env: dict[str, str]
    watch: WatchEvents | None = None
    terminals: list[AgentTerminal] = field(default_factory=list)

    def start_watch(self) -> WatchEvents:
        self.watch = WatchEvents(self.env, self.root / "watch.log")
        self.watch.wait_caught_up()
        return self.watch

    def terminal(self, argv: list[str], *, name: str = "agent") -> AgentTerminal:
        term = AgentTerminal(
            argv, env=self.env, cwd=self.project, log_path=self.root / f"{name}.pty.log"
        )
        self.terminals.append(term)
        return term

    def keep_evidence(self) -> None:
        """What a failed scenario leaves beside the PTY logs and the watch's stderr: every
        watch event with the moment it arrived, each terminal's last screen, and every request
        the model server took (all times in seconds on the test's ``perf_counter``)."""
        if self.watch is not None:
            with open(self.root / "watch-events.jsonl", "w") as out:
                for seen in self.watch.events():
                    out.write(json.dumps({"at": round(seen.at, 3), **seen.event}) + "\n")
        for number, term in enumerate(self.terminals, start=1):
            (self.root / f"screen-{number}.txt").write_text(term.text() + "\n")
        with open(self.root / "model-requests.txt", "w") as out:
            for entry in self.server.requests():
                kind = "main" if entry.main else "side"
                out.write(f"{entry.at:.3f} {entry.method} {entry.path} {kind}\n")

    def close(self) -> None:
        for term in self.terminals:
            term.close()
        kill_tree_of_home(self.home)
        if self.watch is not None:
            self.watch.close()
        self.server.stop()


@pytest.fixture
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    root = Path(tempfile.mkdtemp(prefix=f"agentbar-conformance-{request.node.name[:40]}-"))
    home, project, data = root / "home", root / "project", root / "data"
    for folder in (home, project, data):
        folder.mkdir()
    server = ModelServer().start()
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "AGENTBAR_DATA_DIR": str(data),
    }
    rig = Rig(root=root, server=server, home=home, project=project, data=data, env=env)
    try:
        yield rig
    finally:
        # Kept on failure for the logs (PTY output, watch stderr, the evidence); removed on
        # success and on an expected failure (a version gap tabled in the README: its evidence
        # is the same every run, and CI runs them every time).
        report = getattr(request.node, "rep_call", None)
        passed = report is not None and (report.passed or hasattr(report, "wasxfail"))
        if not passed:
            rig.keep_evidence()
        rig.close()
        if passed:
            shutil.rmtree(root, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report


# -- delays: from the screen showing something to agentbar reporting it ----------------------

DELAYS: list[tuple[str, str, str, float]] = []  # (cli label, scenario, what, milliseconds)


@pytest.fixture
def record_delay() -> object:
    def record(cli: str, scenario: str, what: str, screen_at: float, event_at: float) -> None:
        DELAYS.append((cli, scenario, what, (event_at - screen_at) * 1000.0))

    return record


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not DELAYS:
        return
    terminalreporter.section("agentbar conformance: screen -> `agentbar watch` delay")
    width = max(len(f"{cli}  {scenario}  {what}") for cli, scenario, what, _ in DELAYS)
    for cli, scenario, what, ms in sorted(DELAYS):
        label = f"{cli}  {scenario}  {what}"
        terminalreporter.write_line(f"{label:<{width}}  {ms:8.1f} ms")
