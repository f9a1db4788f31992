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
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from agent_terminal import AgentTerminal
from cli_install import Cli, cache_dir, ensure_installed
from model_server import Reply, thinking
from watch_events import Seen, WatchEvents

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "data" / "recorded"
RECORDING = os.environ.get("AGENTBAR_RECORD") == "1"

PROJECT_PLACEHOLDER = "/home/user/project"
HOME_PLACEHOLDER = "/home/user"
RIG_PLACEHOLDER = "/home/user/rig"
CACHE_PLACEHOLDER = "/opt/agentbar-conformance"
SERVER_PLACEHOLDER = "http://127.0.0.1:9"
API_KEY = "sk-ant-conformance-0000000000000000000000"  # fake; the scripted server takes any
LONG_TEXT = 1500  # longer strings (system prompts, skill lists) are cut when recording
SHORT_TEXT = 80  # ... and in lines that are not the conversation, longer than this
BULKY_LINE = 2000  # such a line longer than this keeps only its scalars

READY = "? for shortcuts"  # the footer, once the TUI takes input (every pinned version)
APPROVAL_PROMPT = "Do you want to proceed?"
READING_SECONDS = 1.0
PASTE_SECONDS = 0.5  # longer than the TUI's paste window: a key after this is a key

# Gaps: what a version never writes, so agentbar cannot know it from files (README.md).
GAP_APPROVAL = "approval"  # no live registry: a pending call is all a permission prompt leaves


@dataclass(frozen=True)
class ClaudeVersion:
    version: str
    ask_tool: bool  # offers AskUserQuestion
    # What an Escape before the first byte of the answer leaves, as the agent itself shows it:
    # "failed" ("Interrupted", and an interrupt line in the file) or "done" (2.1.3xx puts the
    # prompt back into the input box and writes nothing more).
    interrupted: str
    gaps: frozenset[str] = field(default_factory=frozenset)

    @property
    def cli(self) -> Cli:
        return Cli("claude", "@anthropic-ai/claude-code", self.version)

    @property
    def label(self) -> str:
        return self.cli.label


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


class ClaudeRun:
    """One scenario: the rig, the watch, Claude TUIs in the project folder, and the recorder."""

    def __init__(self, rig: Any, version: ClaudeVersion, scenario: str) -> None:
        self.rig = rig
        self.version = version
        self.scenario = scenario
        self.binary = ensure_installed(version.cli)
        rig.env.update(claude_env(rig.server.url))
        write_config(rig.home, rig.project)
        self.watch: WatchEvents = rig.start_watch()
        self.term: AgentTerminal | None = None
        self.recorder = Recorder(self)
        self._terminals = 0

    @property
    def claude_home(self) -> Path:
        return self.rig.home / ".claude"

    # -- the TUI ---------------------------------------------------------------------------

    def start(self, *args: str, timeout: float = 90.0) -> float:
        """Start ``claude <args>`` and wait until it takes input; returns that moment."""
        self._terminals += 1
        self.term = self.rig.terminal([str(self.binary), *args], name=f"claude-{self._terminals}")
        ready = self.term.wait_for(READY, timeout=timeout)
        time.sleep(0.5)  # the input box is drawn with the footer; keys typed at once can be lost
        return ready

    def submit(self, text: str) -> int:
        """Type a prompt like a person and send it: type, see it in the input box, press Enter;
        returns the watch position before it. (Enter sent while the TUI is still busy arrives
        in the same read as the text, which the TUI takes for a paste: Enter then does not
        send. Waiting for the echo puts it in a read of its own.)"""
        assert self.term is not None
        mark = self.watch.count()
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
        mark = self.watch.count()
        self.read_screen()
        self.term.press("escape")
        screen = self.term.wait_for("What should Claude do instead?")
        settled = self.watch.wait_for(
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
        assert self.term is not None
        self.term.submit("/exit")
        status = self.term.wait_exit(timeout=30)
        assert status is not None, f"claude did not exit; screen:\n{self.term.text()}"
        return time.perf_counter()

    # -- what agentbar says ----------------------------------------------------------------

    def session_id(self, timeout: float = 60.0) -> str:
        """The session of this project, from the first thing agentbar says about it."""
        project = str(self.rig.project)
        seen = self.watch.wait_for(
            lambda e: e["agent"] == "claude" and e["project"] == project, timeout
        )
        return str(seen.event["session_id"])

    def wait(
        self,
        state: str,
        *,
        after: int,
        waiting_for: str | None = None,
        sid: str | None = None,
        timeout: float = 30.0,
    ) -> Seen:
        def match(event: dict[str, Any]) -> bool:
            return (
                event["agent"] == "claude"
                and (sid is None or event["session_id"] == sid)
                and event["state"] == state
                and (waiting_for is None or event["waiting_for"] == waiting_for)
            )

        return self.watch.wait_for(match, timeout, after=after)

    def states(self, sid: str | None = None, after: int = 0) -> list[tuple[str, str | None, str]]:
        return [
            (s.event["state"], s.event["waiting_for"], s.event["detail"])
            for s in self.watch.events(sid)[after:]
            if s.event["agent"] == "claude"
        ]

    def after(self, seen: Seen) -> int:
        """The watch position just after ``seen``."""
        return self.watch.events().index(seen) + 1

    def states_since(self, mark: int, sid: str) -> list[str]:
        """The states reported for ``sid`` after watch position ``mark``."""
        return [
            s.event["state"] for s in self.watch.events()[mark:] if s.event["session_id"] == sid
        ]

    def delay(self, record_delay: Any, what: str, screen_at: float, seen: Seen) -> None:
        record_delay(self.version.label, self.scenario, what, screen_at, seen.at)

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


class Recorder:
    """With ``AGENTBAR_RECORD=1``: at each ``mark`` note how many lines every transcript had,
    what every live registry said and which agent processes ran; at ``save`` copy the
    transcripts, sanitised, and write ``scenario.json`` (the marks with the state agentbar
    reported there). ``tests/claude_replay.py`` plays them back through the engine."""

    def __init__(self, run: ClaudeRun) -> None:
        self.run = run
        self.marks: list[dict[str, Any]] = []

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
        """What agentbar must report for ``sid`` with the files as they are now (``detail``: a
        part of the detail). ``gap``: this version writes nothing that would tell it better."""
        if not RECORDING:
            return
        lines = {
            self._relative(path): path.read_bytes().count(b"\n") for path in self._transcripts()
        }
        registries = {}
        for path in sorted((self.run.claude_home / "sessions").glob("*.json")):
            try:
                registries[self._relative(path)] = json.loads(self._sanitise(path.read_text()))
            except (OSError, ValueError):
                continue  # being rewritten; the next mark has it
        self.marks.append(
            {
                "label": label,
                "time": time.time(),
                "lines": lines,
                "registries": registries,
                "processes": self._processes(),
                "expect": {
                    "session": sid,
                    "state": state,
                    "waiting_for": waiting_for,
                    "detail": None if detail is None else self._sanitise(detail),
                },
                **({"gap": gap} if gap else {}),
            }
        )

    def save(self) -> None:
        if not RECORDING:
            return
        run = self.run
        target = RECORDED / f"claude-{run.version.version}" / run.scenario
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for path in self._transcripts():
            out = target / self._relative(path)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(
                "".join(self._sanitise_line(line) for line in path.read_text().splitlines(True))
            )
        document = {
            "agent": "claude",
            "version": run.version.version,
            "scenario": run.scenario,
            "project": PROJECT_PLACEHOLDER,
            "marks": self.marks,
            "live_events": [
                [s.event["session_id"], s.event["state"], s.event["waiting_for"], s.event["detail"]]
                for s in run.watch.events()
            ],
        }
        (target / "scenario.json").write_text(
            self._sanitise(json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
        )

    # -- helpers ---------------------------------------------------------------------------

    def _transcripts(self) -> list[Path]:
        return sorted((self.run.claude_home / "projects").glob("**/*.jsonl"))

    def _relative(self, path: Path) -> str:
        return self._sanitise(path.relative_to(self.run.claude_home).as_posix())

    def _processes(self) -> list[dict[str, Any]]:
        """The agent's processes as the engine would see them (not the tools it runs)."""
        marker = str(self.run.rig.home)
        found = []
        for proc in psutil.process_iter(["pid", "ppid", "name", "cmdline", "create_time"]):
            info = proc.info
            cmdline = info["cmdline"] or []
            if proc.pid == os.getpid() or not re.match(r"^(claude|node)", info["name"] or ""):
                continue
            try:
                environ = proc.environ()
                cwd = proc.cwd()
            except psutil.Error:
                continue
            if environ.get("HOME") != marker:
                continue
            found.append(
                {
                    "pid": proc.pid,
                    "ppid": info["ppid"],
                    "create_time": info["create_time"],
                    "name": info["name"],
                    "cmdline": [self._sanitise(a) for a in cmdline],
                    "cwd": self._sanitise(cwd),
                }
            )
        return found

    def _sanitise(self, text: str) -> str:
        rig = self.run.rig
        for real, placeholder in (
            (str(rig.project), PROJECT_PLACEHOLDER),
            (_project_folder(rig.project), _project_folder(Path(PROJECT_PLACEHOLDER))),
            (str(rig.home), HOME_PLACEHOLDER),
            (str(rig.root), RIG_PLACEHOLDER),
            (str(cache_dir()), CACHE_PLACEHOLDER),
            (rig.server.url, SERVER_PLACEHOLDER),
            (rig.server.url.split("//", 1)[1], SERVER_PLACEHOLDER.split("//", 1)[1]),
            (API_KEY, "sk-ant-REDACTED"),
        ):
            text = text.replace(real, placeholder)
        return text

    def _sanitise_line(self, line: str) -> str:
        end = "\n" if line.endswith("\n") else ""
        try:
            value = json.loads(line)
        except ValueError:
            return self._sanitise(line)
        compact = json.dumps(cut_line(value), ensure_ascii=False, separators=(",", ":"))
        return self._sanitise(compact) + end


def _project_folder(project: Path) -> str:
    """Claude's folder name for a project: every character outside [A-Za-z0-9] becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project))


def cut_line(line: Any) -> Any:
    """System prompts, tool lists and skill listings run to tens of kilobytes per line: keep
    their start and say what was cut. Lines that are not the conversation (attachments, the
    2.1.3xx ``api-request*`` snapshots) keep only short strings."""
    if not isinstance(line, dict) or line.get("type") in ("user", "assistant", "system"):
        return _cut_long_strings(line, LONG_TEXT)
    if len(json.dumps(line)) <= BULKY_LINE:
        return _cut_long_strings(line, SHORT_TEXT)
    # A snapshot of the whole request (2.1.3xx): keep its scalars and the attachment's type.
    kept: dict[str, Any] = {}
    for key, value in line.items():
        if isinstance(value, dict) and key == "attachment":
            kept[key] = {"type": value.get("type"), "cut": "by the recorder"}
        elif isinstance(value, dict | list):
            kept[key] = "[cut by the recorder]"
        else:
            kept[key] = _cut_long_strings(value, SHORT_TEXT)
    return kept


def _cut_long_strings(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        keep = min(300, limit)
        return f"{value[:keep]}[... {len(value) - keep} characters cut by the recorder]"
    if isinstance(value, dict):
        return {k: _cut_long_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_long_strings(v, limit) for v in value]
    return value
