"""Claude Code in the conformance rig: the pinned versions and what each one does differently,
its configuration against the scripted model, a person-like driver, and the recorder that copies
what a run left on disk into ``tests/data/recorded/claude-<version>/<scenario>/``.

Versions. 2.1.332 is the current release (``npm view @anthropic-ai/claude-code version``; a
native binary in the package). 2.0.77 is the last 2.0.x release and 1.0.128 the last 1.0.x one
(both ``cli.js`` run by Node). All three run offline against the scripted server. What differs,
as seen on the real programs:

=============================  ====================  ===================  ====================
                               1.0.128               2.0.77               2.1.332
=============================  ====================  ===================  ====================
live registry (sessions/*.json) none                 none                 busy/idle/waiting
turn end in the transcript     stop_reason (racy)    stop_reason          turn_duration line
transcript written             as the turn runs      as the turn runs     in batches, a quick
                                                                          turn after the idle
AskUserQuestion                not offered           offered              offered
Escape before any output       "[Request             "[Request            prompt put back in
                               interrupted ...]"     interrupted ...]"    the input, no line
model error                    api_error retry       api_error retry      synthetic "API
                               notices + synthetic   notices + synthetic  Error" line only
``--resume <id>``              new file, lines keep  appends to the old   appends to the old
                               the old id            file (+ a summary-   file
                                                     only new file)
start-up                       one side request      sub-agent "Warmup"   auto-mode opt-in
                                                     requests             dialog (disabled here)
=============================  ====================  ===================  ====================
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_server import Reply, thinking
from rig_base import (
    LONG_TEXT,
    PROJECT_PLACEHOLDER,
    RECORDING,
    SERVER_PLACEHOLDER,
    AgentRun,
    PinnedVersion,
    RunRecorder,
    cut_long_strings,
)
from watch_events import Seen

API_KEY = "sk-ant-conformance-0000000000000000000000"  # fake; the scripted server takes any
SHORT_TEXT = 80  # strings in lines that are not the conversation are cut beyond this
BULKY_LINE = 2000  # such a line longer than this keeps only its scalars

READY = "? for shortcuts"  # the footer, once the TUI takes input (every pinned version)
APPROVAL_PROMPT = "Do you want to proceed?"
READING_SECONDS = 1.0
PASTE_SECONDS = 0.5  # longer than the TUI's paste window: a key after this is a key

# Gaps: what a version never writes, so agentbar cannot know it from files (README.md).
GAP_APPROVAL = "approval"  # no live registry: a pending call is all a permission prompt leaves
PROCESS_NAMES = r"^(claude|node)"  # the agent's processes (not the tools it runs)


@dataclass(frozen=True)
class ClaudeVersion(PinnedVersion):
    AGENT = "claude"
    PACKAGE = "@anthropic-ai/claude-code"

    version: str
    ask_tool: bool  # offers AskUserQuestion
    # What an Escape before the first byte of the answer leaves, as the agent itself shows it:
    # "failed" ("Interrupted", and an interrupt line in the file) or "done" (2.1.3xx puts the
    # prompt back into the input box and writes nothing more).
    interrupted: str
    gaps: frozenset[str] = field(default_factory=frozenset)


VERSIONS = [
    ClaudeVersion("2.1.332", ask_tool=True, interrupted="done"),
    ClaudeVersion("2.0.77", ask_tool=True, interrupted="failed",
                  gaps=frozenset({GAP_APPROVAL})),
    ClaudeVersion("1.0.128", ask_tool=False, interrupted="failed",
                  gaps=frozenset({GAP_APPROVAL})),
]  # fmt: skip


def bash(command: str, why: str) -> Reply:
    return thinking(Reply.tool("Bash", {"command": command, "description": why}))


def write_config(home: Path, project: Path) -> None:
    """No onboarding, the fake key approved, the project trusted; the default permission mode
    (2.1.3xx would otherwise offer auto mode in a dialog at start-up)."""
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                # 1.0.x reads allowedTools from the project entry and fails without it.
                "projects": {str(project): {"hasTrustDialogAccepted": True, "allowedTools": []}},
            }
        )
    )
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "default", "disableAutoMode": "disable"}})
    )


def claude_env(server_url: str) -> dict[str, str]:
    """What Claude needs in its environment to run against the scripted model."""
    env = {
        "ANTHROPIC_BASE_URL": server_url,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        # A model error fails after one retry instead of ten with backoff.
        "CLAUDE_CODE_MAX_RETRIES": "1",
    }
    if os.environ.get("AGENTBAR_CONFORMANCE_PYTHONPATH"):
        # Check another build of agentbar (a snapshot of a commit) than the installed one.
        env["PYTHONPATH"] = os.environ["AGENTBAR_CONFORMANCE_PYTHONPATH"]
    return env


class ClaudeRun(AgentRun):
    """One scenario: the rig, the watch, Claude TUIs in the project folder, and the recorder."""

    version: ClaudeVersion

    def __init__(self, rig: Any, version: ClaudeVersion, scenario: str) -> None:
        super().__init__(rig, version, scenario)
        rig.env.update(claude_env(rig.server.url))
        write_config(rig.home, rig.project)
        self.watch = rig.start_watch()
        self.recorder = Recorder(self)

    @property
    def claude_home(self) -> Path:
        return Path(self.rig.home) / ".claude"

    # -- the TUI ---------------------------------------------------------------------------

    def start(self, *args: str, timeout: float = 90.0) -> float:
        """Start ``claude <args>`` and wait until it takes input; returns that moment."""
        ready = self.open_terminal(args, READY, timeout)
        time.sleep(0.5)  # the input box is drawn with the footer; keys typed at once can be lost
        return ready

    def submit(self, text: str) -> int:
        """Type a prompt like a person and send it: type, see it in the input box, press Enter;
        returns the watch position before it. (Enter sent while the TUI is still busy arrives
        in the same read as the text, which the TUI takes for a paste: Enter then does not
        send. Waiting for the echo puts it in a read of its own.)"""
        assert self.term is not None
        mark = self.watching.count()
        self.term.type(text)
        self.term.wait_for(re.compile(rf"[>❯]\s*{re.escape(text)}"), timeout=30)
        time.sleep(PASTE_SECONDS)
        self.term.press("enter")
        return mark

    def first_turn(self, prompt: str, *replies: Reply) -> tuple[str, int]:
        """Start the TUI, send ``prompt`` (the model answers with ``replies``, one per request),
        wait for ``running``; returns the session and the watch position before the prompt."""
        self.rig.server.script.add(*replies)
        self.start()
        mark = self.submit(prompt)
        sid = self.session_id()
        self.wait("running", after=mark, sid=sid)
        return sid, mark

    def deny(self, sid: str, command: str) -> tuple[float, Seen]:
        """Escape at the permission prompt for ``command``: Claude stops the turn and asks what
        to do instead, and agentbar names the refusal. Returns when the screen said so and the
        event."""
        assert self.term is not None
        mark = self.watching.count()
        self.read_screen()
        self.term.press("escape")
        screen = self.term.wait_for("What should Claude do instead?")
        settled = self.watching.wait_for(
            lambda e: e["session_id"] == sid and e["state"] in ("done", "failed"), after=mark
        )
        assert (settled.event["state"], settled.event["detail"]) == (
            "done",
            f"stopped: you denied Bash: {command}",
        )
        assert self.states(sid)[-1][0] == "done"
        assert not (self.rig.project / command.removeprefix("touch ")).exists()
        return screen, settled

    def read_screen(self) -> None:
        """Take the time a person takes to read a dialog before answering it: Claude's
        permission and question dialogs ignore keys that come right after they appear."""
        time.sleep(READING_SECONDS)

    def exit(self) -> float:
        """``/exit``; returns the moment the process was seen gone."""
        return self.exit_with("/exit")

    # -- what agentbar says ----------------------------------------------------------------

    def session_id(self, timeout: float = 60.0) -> str:
        """The session of this project, from the first thing agentbar says about it."""
        project = str(self.rig.project)
        seen = self.watching.wait_for(
            lambda e: e["agent"] == "claude" and e["project"] == project, timeout
        )
        return str(seen.event["session_id"])

    def states_since(self, mark: int, sid: str) -> list[str]:
        """The states reported for ``sid`` after watch position ``mark``."""
        return [
            s.event["state"] for s in self.watching.events()[mark:] if s.event["session_id"] == sid
        ]

    def wait_quiet(self, sid: str, quiet: float = 1.0, timeout: float = 30.0) -> None:
        """Wait until ``sid`` is reported as something other than running and nothing new has
        been reported for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        count, since = -1, time.monotonic()
        while time.monotonic() < deadline:
            now = self.watching.count()
            if now != count:
                count, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet and self.latest(sid)["state"] != "running":
                return
            time.sleep(0.1)
        raise AssertionError(f"{sid} did not settle: {self.states(sid)[-5:]}")

    def tools_offered(self) -> set[str]:
        """The tool names of the first turn's request."""
        main = self.rig.server.wait_main_requests(1)
        return {t.get("name") for t in (main[0].body or {}).get("tools", [])}

    def wait_screen(self, check: Callable[[str], bool], timeout: float = 30.0) -> float:
        """Until ``check`` holds for the screen (for a thing that goes away); returns the moment."""
        assert self.term is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check(self.term.text()):
                return time.perf_counter()
            time.sleep(0.02)
        raise AssertionError(f"screen never matched; screen:\n{self.term.text()}")

    def pid(self) -> int:
        assert self.term is not None
        return int(self.term.proc.pid)


# ---------------------------------------------------------------------------------------------
# Recording: the files as they were at each moment a scenario checked, for the unit tests
# ---------------------------------------------------------------------------------------------


class Recorder(RunRecorder):
    """With ``AGENTBAR_RECORD=1``: at each ``mark`` note how many lines every transcript had,
    what every live registry said and which agent processes ran; at ``save`` copy the
    transcripts, sanitised, and write ``scenario.json`` (the marks with the state agentbar
    reported there). ``tests/claude_replay.py`` plays them back through the engine."""

    run: ClaudeRun

    def expectation(
        self, state: str, waiting_for: str | None, detail: str | None, sid: str | None
    ) -> dict[str, Any]:
        return {
            "session": sid,
            "state": state,
            "waiting_for": waiting_for,
            "detail": None if detail is None else self.sanitise(detail),
        }

    def on_disk(self) -> dict[str, Any]:
        lines = {
            self._relative(path): path.read_bytes().count(b"\n") for path in self._transcripts()
        }
        registries = {}
        for path in sorted((self.run.claude_home / "sessions").glob("*.json")):
            try:
                registries[self._relative(path)] = json.loads(self.sanitise(path.read_text()))
            except (OSError, ValueError):
                continue  # being rewritten; the next mark has it
        return {
            "time": time.time(),
            "lines": lines,
            "registries": registries,
            "processes": self.processes(PROCESS_NAMES),
        }

    def save(self) -> None:
        if not RECORDING:
            return
        target = self.fresh_target()
        for path in self._transcripts():
            self.copy_lines(path, target / self._relative(path))
        self.write_scenario(
            target,
            [
                [s.event["session_id"], s.event["state"], s.event["waiting_for"], s.event["detail"]]
                for s in self.run.watching.events()
            ],
        )

    def _transcripts(self) -> list[Path]:
        return sorted((self.run.claude_home / "projects").glob("**/*.jsonl"))

    def _relative(self, path: Path) -> str:
        return self.sanitise(path.relative_to(self.run.claude_home).as_posix())

    def replacements(self) -> list[tuple[str, str]]:
        rig = self.run.rig
        project, *rest = super().replacements()
        return [
            project,
            (_project_folder(rig.project), _project_folder(Path(PROJECT_PLACEHOLDER))),
            *rest,
            (rig.server.url.split("//", 1)[1], SERVER_PLACEHOLDER.split("//", 1)[1]),
            (API_KEY, "sk-ant-REDACTED"),
        ]

    def line_json(self, value: Any) -> str:
        return json.dumps(cut_line(value), ensure_ascii=False, separators=(",", ":"))


def _project_folder(project: Path) -> str:
    """Claude's folder name for a project: every character outside [A-Za-z0-9] becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project))


def cut_line(line: Any) -> Any:
    """System prompts, tool lists and skill listings run to tens of kilobytes per line: keep
    their start and say what was cut. Lines that are not the conversation (attachments, the
    2.1.3xx ``api-request*`` snapshots) keep only short strings."""
    if not isinstance(line, dict) or line.get("type") in ("user", "assistant", "system"):
        return cut_long_strings(line, LONG_TEXT)
    if len(json.dumps(line)) <= BULKY_LINE:
        return cut_long_strings(line, SHORT_TEXT)
    # A snapshot of the whole request (2.1.3xx): keep its scalars and the attachment's type.
    kept: dict[str, Any] = {}
    for key, value in line.items():
        if isinstance(value, dict) and key == "attachment":
            kept[key] = {"type": value.get("type"), "cut": "by the recorder"}
        elif isinstance(value, dict | list):
            kept[key] = "[cut by the recorder]"
        else:
            kept[key] = cut_long_strings(value, SHORT_TEXT)
    return kept
