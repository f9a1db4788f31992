"""Codex CLI in the conformance rig: the pinned versions and what each one does differently, its
configuration against the scripted model, a person-like driver, and the recorder that copies
what a run left on disk into ``tests/data/recorded/codex-<version>/<scenario>/``.

Versions. 0.171.0 is the current release (``npm view @openai/codex version``). 0.99.0 is the last
release of the 0.9x line and 0.58.0 one of the 0.5x line; both run offline against the mock
provider (they need the terminal to answer the cursor-position query, which ``AgentTerminal``
does). What differs, as seen on the real programs:

==========================  ==================  ===================  ======================
                            0.58.0              0.99.0               0.171.0
==========================  ==================  ===================  ======================
shell tool                  ``shell``           ``exec_command``     ``exec_command``
turn markers in the file    none                none                 task_started/complete
prompt written as           user_message        user_message         item_completed
call written while asking   no (after it ran)   yes                  yes
model error written         no                  no                   task_complete.error
request_user_input          not offered         Plan mode            Plan mode
rollout created             at start-up         at the first prompt  at the first prompt
app-server daemon           no                  no                   yes, outlives the TUI
==========================  ==================  ===================  ======================
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from agent_terminal import PASTE_PAUSE, AgentTerminal
from cli_install import Cli, cache_dir, ensure_installed
from model_server import Reply
from watch_events import Seen, WatchEvents

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "data" / "recorded"
RECORDING = os.environ.get("AGENTBAR_RECORD") == "1"

PROJECT_PLACEHOLDER = "/home/user/project"
HOME_PLACEHOLDER = "/home/user"
RIG_PLACEHOLDER = "/home/user/rig"
CACHE_PLACEHOLDER = "/opt/agentbar-conformance"
LONG_TEXT = 1500  # longer strings (instructions, skills lists) are cut when recording


@dataclass(frozen=True)
class CodexVersion:
    version: str
    ready: str  # on screen once the TUI takes input
    shell_tool: str  # "exec_command" (unified exec) or "shell" (argv list)
    question_tool: bool  # offers request_user_input (in Plan mode)
    daemon: bool  # starts the managed app-server daemon, which outlives the TUI
    rollout_at_start: bool = False  # writes its rollout when the TUI starts, not at the prompt
    # Gaps: what this version never writes, so agentbar cannot know it (see README.md).
    gaps: frozenset[str] = field(default_factory=frozenset)

    @property
    def cli(self) -> Cli:
        return Cli("codex", "@openai/codex", self.version)

    @property
    def label(self) -> str:
        return self.cli.label

    def command(self, cmd: str, why: str) -> Reply:
        """The model asks to run ``cmd`` outside the sandbox (needs approval under on-request)."""
        if self.shell_tool == "shell":
            args: dict[str, Any] = {
                "command": ["bash", "-lc", cmd],
                "with_escalated_permissions": True,
                "justification": why,
            }
        else:
            args = {"cmd": cmd, "sandbox_permissions": "require_escalated", "justification": why}
        return Reply.tool(self.shell_tool, args)


PLAN_MODE = "Plan mode (shift+tab to cycle)"  # 0.99/0.171's footer in Plan mode
GAP_APPROVAL = "approval"  # the pending call is written only after the person answered
GAP_ERROR = "error"  # a failed turn leaves no line

VERSIONS = [
    CodexVersion("0.171.0", ready="for agents", shell_tool="exec_command", question_tool=True,
                 daemon=True),
    CodexVersion("0.99.0", ready="? for shortcuts", shell_tool="exec_command", question_tool=True,
                 daemon=False, gaps=frozenset({GAP_ERROR})),
    CodexVersion("0.58.0", ready="? for shortcuts", shell_tool="shell", question_tool=False,
                 daemon=False, rollout_at_start=True, gaps=frozenset({GAP_ERROR, GAP_APPROVAL})),
]  # fmt: skip


def write_config(codex_home: Path, server_url: str, project: Path) -> None:
    """The mock provider, no retries (a model error fails at once), the project trusted."""
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f"""model = "mock-model"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{server_url}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects."{project}"]
trust_level = "trusted"
"""
    )


class CodexRun:
    """One scenario: the rig, the watch, Codex TUIs in the project folder, and the recorder."""

    def __init__(self, rig: Any, version: CodexVersion, scenario: str) -> None:
        self.rig = rig
        self.version = version
        self.scenario = scenario
        self.binary = ensure_installed(version.cli)
        rig.env["MOCK_API_KEY"] = "conformance"
        write_config(self.codex_home, rig.server.url, rig.project)
        self.watch: WatchEvents = rig.start_watch()
        self.term: AgentTerminal | None = None
        self.recorder = Recorder(self)
        self.gaps_seen: list[str] = []  # gaps of this version the scenario ran into
        self._terminals = 0

    @property
    def codex_home(self) -> Path:
        return self.rig.home / ".codex"

    # -- the TUI ---------------------------------------------------------------------------

    def start(self, *args: str, timeout: float = 90.0) -> float:
        """Start ``codex <args>`` and wait until it takes input; returns that moment."""
        self._terminals += 1
        self.term = self.rig.terminal([str(self.binary), *args], name=f"codex-{self._terminals}")
        return self.term.wait_for(self.version.ready, timeout=timeout)

    def submit(self, text: str) -> int:
        """Type a prompt like a person and send it; returns the watch position before it."""
        assert self.term is not None
        mark = self.watch.count()
        self.term.submit(text)
        return mark

    def submit_in_plan_mode(self, text: str) -> int:
        """Send ``text`` in Plan mode (the only mode where Codex asks with its question tool);
        returns the watch position before it. The mode is checked again just before Enter:
        0.171 can take the first Shift+Tab, show "Plan mode", and put Default mode back 0.1 s
        later as its start-up finishes (seen in 2 of 3 starts, with no other key pressed)."""
        assert self.term is not None
        mark = self.watch.count()
        self.plan_mode()
        self.term.type(text)
        time.sleep(PASTE_PAUSE)
        self.plan_mode()
        self.term.press("enter")
        return mark

    def plan_mode(self) -> None:
        """Shift+Tab until the footer says Plan mode. Right after start-up 0.171 may not have
        its modes yet and drops the key ("Unhandled key event in TextArea" in its log): like a
        person, press again when nothing happened."""
        assert self.term is not None
        for _ in range(5):
            if PLAN_MODE in self.term.text():
                return
            self.term.press("shift-tab")
            try:
                self.term.wait_for(PLAN_MODE, timeout=3.0)
                return
            except AssertionError:
                continue
        raise AssertionError(f"Shift+Tab never reached Plan mode; screen:\n{self.term.text()}")

    def quit(self) -> float:
        """``/quit``; returns the moment the TUI process was seen gone."""
        assert self.term is not None
        self.term.submit("/quit")
        status = self.term.wait_exit(timeout=30)
        assert status is not None, f"codex did not exit; screen:\n{self.term.text()}"
        return time.perf_counter()

    # -- what agentbar says ----------------------------------------------------------------

    def session_id(self, timeout: float = 30.0) -> str:
        seen = self.watch.wait_for(lambda e: e["agent"] == "codex", timeout)
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
        def match(event: dict[str, Any]) -> bool:
            return (
                event["agent"] == "codex"
                and (sid is None or event["session_id"] == sid)
                and event["state"] == state
                and (waiting_for is None or event["waiting_for"] == waiting_for)
            )

        return self.watch.wait_for(match, timeout, after=after)

    def after(self, seen: Seen) -> int:
        """The watch position just after ``seen``: to wait for what comes next."""
        return self.watch.events().index(seen) + 1

    def latest(self, sid: str) -> dict[str, Any]:
        events = self.watch.events(sid)
        assert events, "agentbar reported nothing for the session"
        return events[-1].event

    def states(self) -> list[tuple[str, str | None, str]]:
        return [
            (s.event["state"], s.event["waiting_for"], s.event["detail"])
            for s in self.watch.events()
        ]

    def delay(self, record_delay: Any, what: str, screen_at: float, seen: Seen) -> None:
        record_delay(self.version.label, self.scenario, what, screen_at, seen.at)

    # -- processes -------------------------------------------------------------------------

    def daemons(self) -> list[psutil.Process]:
        """Codex's app-server daemons serving this HOME."""
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = proc.info["cmdline"] or []
            if "app-server" in cmdline and any(str(self.rig.home) in a for a in cmdline):
                found.append(proc)
        return found


# ---------------------------------------------------------------------------------------------
# Recording: the rollouts as they were at each moment a scenario checked, for the unit tests
# ---------------------------------------------------------------------------------------------


class Recorder:
    """With ``AGENTBAR_RECORD=1``: at each ``mark`` note how many lines every rollout had and
    which agent processes ran; at ``save`` copy the rollouts, sanitised, and write
    ``scenario.json`` (the marks with the state agentbar reported there)."""

    def __init__(self, run: CodexRun) -> None:
        self.run = run
        self.marks: list[dict[str, Any]] = []

    def mark(
        self,
        label: str,
        state: str,
        *,
        waiting_for: str | None = None,
        detail: str | None = None,
        gap: str | None = None,
    ) -> None:
        """What agentbar must report with the files as they are now (``detail``: a part of the
        detail). ``gap``: this version writes nothing that would tell agentbar better."""
        if not RECORDING:
            return
        lines = {}
        for path in self._rollouts():
            lines[self._relative(path)] = path.read_bytes().count(b"\n")
        self.marks.append(
            {
                "label": label,
                "lines": lines,
                "processes": self._processes(),
                "expect": {"state": state, "waiting_for": waiting_for, "detail": detail},
                **({"gap": gap} if gap else {}),
            }
        )

    def save(self) -> None:
        if not RECORDING:
            return
        run = self.run
        target = RECORDED / f"codex-{run.version.version}" / run.scenario
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for path in self._rollouts():
            out = target / self._relative(path)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(
                "".join(self._sanitise_line(line) for line in path.read_text().splitlines(True))
            )
        document = {
            "agent": "codex",
            "version": run.version.version,
            "scenario": run.scenario,
            "project": PROJECT_PLACEHOLDER,
            "marks": self.marks,
            "live_events": [list(s) for s in run.states()],
        }
        (target / "scenario.json").write_text(
            self._sanitise(json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
        )

    # -- helpers ---------------------------------------------------------------------------

    def _rollouts(self) -> list[Path]:
        home = self.run.codex_home
        found: list[Path] = []
        for folder in ("sessions", "archived_sessions"):
            found.extend(sorted((home / folder).glob("**/rollout-*.jsonl*")))
        return found

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.run.codex_home).as_posix()

    def _processes(self) -> list[dict[str, Any]]:
        """Agent processes (the TUI, its node wrapper, the daemon) as the engine would see them."""
        marker = str(self.run.rig.home)
        watch_pid = self.run.watch.proc.pid
        found = []
        for proc in psutil.process_iter(["pid", "ppid", "name", "cmdline", "create_time"]):
            info = proc.info
            cmdline = info["cmdline"] or []
            if proc.pid in (os.getpid(), watch_pid) or not re.match(
                r"^(codex|node)", info["name"] or ""
            ):
                continue
            try:
                environ = proc.environ()
                cwd = proc.cwd()
            except psutil.Error:
                continue
            if environ.get("HOME") != marker and not any(marker in a for a in cmdline):
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
            (str(rig.home), HOME_PLACEHOLDER),
            (str(rig.root), RIG_PLACEHOLDER),
            (str(cache_dir()), CACHE_PLACEHOLDER),
            (rig.server.url, "http://127.0.0.1:9"),
        ):
            text = text.replace(real, placeholder)
        return text

    def _sanitise_line(self, line: str) -> str:
        end = "\n" if line.endswith("\n") else ""
        try:
            value = json.loads(line)
        except ValueError:
            return self._sanitise(line)
        return self._sanitise(json.dumps(_cut_long_strings(value), ensure_ascii=False)) + end


def _cut_long_strings(value: Any) -> Any:
    """Instructions, skills lists and the like run to tens of kilobytes per line: keep their
    start (what a reader may test, e.g. ``# AGENTS.md instructions``) and say what was cut."""
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return f"{value[:300]}[... {len(value) - 300} characters cut by the recorder]"
    if isinstance(value, dict):
        return {k: _cut_long_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_long_strings(v) for v in value]
    return value
