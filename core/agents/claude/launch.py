"""Claude Code in a PTY agentbar owns: its command lines, keys, ``/status`` panel and the
per-launch settings layer with agentbar's hooks (pure).

    claude --settings <json> [--session-id <uuid>] [--resume <id> [--fork-session]] [prompt]

``claude --settings <json>`` adds a settings layer for that run; its hooks merge with every
other source's (agent-formats.md 2.1). It is not restored by ``--resume``: it is passed again on
every launch. A new session (and, from 2.0.73, a fork) gets its id from us (``--session-id``),
the fastest binding there is; every ``claude`` from 1.0.128 (the oldest checked) takes the flag,
and a version we could not read gets none.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from ...hooks.spec import HookCommand
from ...launch import prompts
from ...launch.keys import AgentKeys
from ...launch.prompts import Prompt, find_dialog
from ...launch.request import LaunchRequest, Mode, Program
from ...launch.status_scrape import UUID_PATTERN, SessionLabelScreen, StatusPlan
from .events import CALLER, claude_events
from .files import ClaudeSource

SESSION_ID_SINCE = (1, 0, 128)  # the oldest Claude seen to take --session-id
FORK_SESSION_ID_SINCE = (2, 0, 73)  # --session-id names the fork from here on
CLAUDE_SETTINGS_SINCE = (1, 0, 61)  # --settings

# Claude: Enter on the highlighted choice (the first unless someone moved it: then "1", see
# ``approve_keys``); Esc refuses. Ctrl-C twice leaves (the first clears the input or
# interrupts a turn).
KEYS = AgentKeys(
    approve=b"\r",
    deny=b"\x1b",
    enter_pause=0.5,
    exit_keys=((b"\x1b", 0.3), (b"\x03", 0.4), (b"\x03", 0.4), (b"\x03", 0.0)),
)
PLAN = StatusPlan(first_after=4.0, retry_every=3.0, max_sends=5, quiet_input=2.0)
_SESSION_LABEL = re.compile(rf"Session\s*ID:\s*({UUID_PATTERN})(?![0-9a-fA-F-])")
# The approval dialog: "Do you want to proceed?" ("Do you want to make this edit to x.py?",
# "Do you want to create x?") over a numbered list whose first choice is "Yes".
APPROVAL_QUESTION = re.compile(r"\b(Do you want|Would you like|Allow)\b[^?]{0,200}\?")
APPROVAL_FIRST = re.compile(r"^[\s│|>❯›▶*●]*1[.)]\s+Yes\b")
# AskUserQuestion's dialog (2.0.77, 2.1.332): "☐ Color", the question, "❯ 1. Red" with a
# description row under each option, "3. Type something." (highlighted, it takes typed text),
# then "4. Chat about this" (not an answer), and "Enter to select · ↑/↓ to navigate".
QUESTION_FOOTER = re.compile(r"Enter to select · .*navigate")
TYPE_YOUR_OWN = ("type something", "other")
HIGHLIGHT = ("❯", ">", "›")


def launch_settings(command: HookCommand, *, version: str | None = None) -> dict[str, Any]:
    """The settings layer for ``claude --settings``: agentbar's hooks and nothing else."""
    handler = command.handler(CALLER)
    return {"hooks": {event: [{"hooks": [handler]}] for event in claude_events(version)}}


def launch_args(command: HookCommand, *, version: str | None = None) -> list[str]:
    """``["--settings", "<json>"]`` to put right after ``claude``."""
    layer = launch_settings(command, version=version)
    return ["--settings", json.dumps(layer, separators=(",", ":"), ensure_ascii=False)]


class ClaudeLaunch:
    program_env = "AGENTBAR_CLAUDE"
    keys = KEYS
    # Claude would think it runs nested; the hook program would read the wrong session.
    session_vars = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID")
    # ``Session ID: <uuid>`` in the panel ``/status`` opens; Escape closes it again.
    status = SessionLabelScreen(PLAN, _SESSION_LABEL, close_after=True)

    def preassigned_id(self, request: LaunchRequest, program: Program) -> str | None:
        version = program.parsed_version
        if version is None:
            return None
        if request.mode is Mode.NEW and version >= SESSION_ID_SINCE:
            return str(uuid.uuid4())
        if request.mode is Mode.FORK and version >= FORK_SESSION_ID_SINCE:
            return str(uuid.uuid4())
        return None

    def args(
        self,
        request: LaunchRequest,
        program: Program,
        *,
        hooks: HookCommand | None,
        session_id: str | None,
        bypass_hook_trust: bool,
    ) -> list[str]:
        args: list[str] = []
        version = program.parsed_version
        if hooks is not None and (version is None or version >= CLAUDE_SETTINGS_SINCE):
            args += launch_args(hooks, version=program.version)
        if session_id is not None:
            args += ["--session-id", session_id]
        if request.mode is not Mode.NEW:
            assert request.source is not None
            args += ["--resume", request.source]
            if request.mode is Mode.FORK:
                args.append("--fork-session")
        return args

    def hooks_run_unreviewed(self, bypass_hook_trust: bool) -> bool:
        return True  # Claude runs a --settings layer's hooks as they are

    def approve_keys(self, prompt_rows: tuple[str, ...]) -> bytes:
        """Enter when the highlight is on choice 1, else its number."""
        highlighted = [row for row in prompt_rows if row.lstrip().startswith(("❯", ">", "›"))]
        if highlighted and "1." not in highlighted[0]:
            return b"1"
        return KEYS.approve

    def find_prompt(self, lines: list[str]) -> Prompt | None:
        return find_dialog(lines, APPROVAL_FIRST, APPROVAL_QUESTION)

    def find_question(self, lines: list[str]) -> Prompt | None:
        return prompts.find_question(lines, QUESTION_FOOTER, TYPE_YOUR_OWN)

    def reply_keys(self, prompt: Prompt, option: int, text: str | None) -> list[bytes]:
        """The highlight moved to the option with the arrows, then Enter; on "Type something."
        the text is typed where the option stands, then Enter."""
        moves = prompts.arrow_keys(prompts.highlighted(prompt, HIGHLIGHT), option)
        if text is not None:
            return [*moves, text.encode("utf-8"), b"\r"]
        return [*moves, b"\r"]

    def registry_session(self, homes: tuple[Path, ...], pid: int) -> str | None:
        """``sessions/<pid>.json`` under any of Claude's config folders."""
        for home in homes:
            source = ClaudeSource(home)
            try:
                data = (source.sessions / f"{pid}.json").read_bytes()
            except OSError:
                continue
            entry = source.parse_registry(data)
            if entry is not None and entry.pid == pid and entry.session_id:
                return entry.session_id
        return None


LAUNCH = ClaudeLaunch()
