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

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from agent_terminal import PASTE_PAUSE
from model_server import Reply
from rig_base import RECORDING, AgentRun, PinnedVersion, RunRecorder


@dataclass(frozen=True)
class CodexVersion(PinnedVersion):
    AGENT = "codex"
    PACKAGE = "@openai/codex"

    version: str
    ready: str  # on screen once the TUI takes input
    shell_tool: str  # "exec_command" (unified exec) or "shell" (argv list)
    question_tool: bool  # offers request_user_input (in Plan mode)
    daemon: bool  # starts the managed app-server daemon, which outlives the TUI
    rollout_at_start: bool = False  # writes its rollout when the TUI starts, not at the prompt
    # Gaps: what this version never writes, so agentbar cannot know it (see README.md).
    gaps: frozenset[str] = field(default_factory=frozenset)

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
PROCESS_NAMES = r"^(codex|node)"  # the TUI, its node wrapper, the daemon

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


class CodexRun(AgentRun):
    """One scenario: the rig, the watch, Codex TUIs in the project folder, and the recorder."""

    version: CodexVersion

    def __init__(self, rig: Any, version: CodexVersion, scenario: str) -> None:
        super().__init__(rig, version, scenario)
        rig.env["MOCK_API_KEY"] = "conformance"
        write_config(self.codex_home, rig.server.url, rig.project)
        self.watch = rig.start_watch()
        self.recorder = Recorder(self)

    @property
    def codex_home(self) -> Path:
        return Path(self.rig.home) / ".codex"

    # -- the TUI ---------------------------------------------------------------------------

    def start(self, *args: str, timeout: float = 90.0) -> float:
        """Start ``codex <args>`` and wait until it takes input; returns that moment."""
        return self.open_terminal(args, self.version.ready, timeout)

    def submit(self, text: str) -> int:
        """Type a prompt like a person and send it; returns the watch position before it."""
        assert self.term is not None
        mark = self.watching.count()
        self.term.submit(text)
        return mark

    def submit_in_plan_mode(self, text: str) -> int:
        """Send ``text`` in Plan mode (the only mode where Codex asks with its question tool);
        returns the watch position before it. The mode is checked again just before Enter:
        0.171 can take the first Shift+Tab, show "Plan mode", and put Default mode back 0.1 s
        later as its start-up finishes (seen in 2 of 3 starts, with no other key pressed)."""
        assert self.term is not None
        mark = self.watching.count()
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
        return self.exit_with("/quit")

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


class Recorder(RunRecorder):
    """With ``AGENTBAR_RECORD=1``: at each ``mark`` note how many lines every rollout had and
    which agent processes ran; at ``save`` copy the rollouts, sanitised, and write
    ``scenario.json`` (the marks with the state agentbar reported there)."""

    run: CodexRun

    def on_disk(self) -> dict[str, Any]:
        lines = {self._relative(path): path.read_bytes().count(b"\n") for path in self._rollouts()}
        return {"lines": lines, "processes": self.processes(PROCESS_NAMES, in_cmdline=True)}

    def save(self) -> None:
        if not RECORDING:
            return
        target = self.fresh_target()
        for path in self._rollouts():
            self.copy_lines(path, target / self._relative(path))
        self.write_scenario(target, [list(s) for s in self.run.states()])

    def _rollouts(self) -> list[Path]:
        home = self.run.codex_home
        found: list[Path] = []
        for folder in ("sessions", "archived_sessions"):
            found.extend(sorted((home / folder).glob("**/rollout-*.jsonl*")))
        return found

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.run.codex_home).as_posix()
