"""Gemini CLI in a PTY agentbar owns: its command lines and keys (pure).

    gemini [--session-id <uuid> | --resume <id>] [prompt]

A prompt given on the command line starts the interactive TUI with it (``-p`` would run
headless). ``--session-id`` (seen in 0.61.0; 0.38.2 has none) gives a new session the id
agentbar chose, which binds the task at once. Resuming is ``--resume <id>``. **There is no fork
on the command line**: ``/fork`` exists only inside a running session, so a fork is refused
with that said. Gemini CLI has no per-launch settings layer either (no ``--settings``, and
``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` would replace the machine's own system settings), so a
launched task gets agentbar's hooks only from ``agentbar hooks install``; it is bound by its
``--session-id``, its resume, its SessionStart hook or its process.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from ...hooks.spec import HookCommand
from ...launch import prompts
from ...launch.keys import AgentKeys
from ...launch.prompts import Prompt, find_dialog
from ...launch.request import BadLaunch, LaunchRequest, Mode, Program

SESSION_ID_SINCE = (0, 61, 0)  # the oldest release seen to take --session-id
# The approval dialog: "Allow execution of [Shell]?" over "● 1. Allow once" (older releases:
# "Do you want to proceed?" over "1. Yes, allow once").
APPROVAL_QUESTION = re.compile(r"\b(Do you want|Would you like|Allow)\b[^?]{0,200}\?")
APPROVAL_FIRST = re.compile(r"^[\s│|>❯›▶*●]*1[.)]\s+(?:Yes|Allow once)\b")
# ask_user's dialog (0.38.2, 0.61.0): "Answer Questions", the question, "● 1.  Tabs" with a
# description row under each option, "3.  Enter a custom value", and "Enter to select · ↑/↓ to
# navigate · Esc to cancel", in a box.
QUESTION_FOOTER = re.compile(r"Enter to select · .*navigate")
TYPE_YOUR_OWN = ("enter a custom value",)
HIGHLIGHT = ("●", "❯", ">")
NO_FORK = "Gemini CLI cannot fork from its command line: resume the session and type /fork in it"

# "1. Allow once" is chosen (Enter); "No, suggest changes (esc)". Escape cancels a turn and
# Ctrl-C twice quits.
KEYS = AgentKeys(
    approve=b"\r",
    deny=b"\x1b",
    enter_pause=1.0,
    exit_keys=((b"\x1b", 0.3), (b"\x03", 0.4), (b"\x03", 0.4), (b"\x03", 0.0)),
)


class GeminiLaunch:
    program_env = "AGENTBAR_GEMINI"
    keys = KEYS
    # What Gemini CLI sets for the programs it runs (its hooks and shell commands, and its own
    # relaunched child): a Gemini agentbar starts must not take them for its own.
    session_vars = (
        "GEMINI_SESSION_ID",
        "GEMINI_PROJECT_DIR",
        "GEMINI_CWD",
        "GEMINI_PLANS_DIR",
        "GEMINI_CLI_NO_RELAUNCH",
    )
    status = None  # its /stats screen names no session id

    def preassigned_id(self, request: LaunchRequest, program: Program) -> str | None:
        version = program.parsed_version
        if request.mode is not Mode.NEW or version is None or version < SESSION_ID_SINCE:
            return None
        return str(uuid.uuid4())

    def args(
        self,
        request: LaunchRequest,
        program: Program,
        *,
        hooks: HookCommand | None,
        session_id: str | None,
        bypass_hook_trust: bool,
    ) -> list[str]:
        if request.mode is Mode.FORK:
            raise BadLaunch(NO_FORK)
        if request.mode is Mode.RESUME:
            assert request.source is not None
            return ["--resume", request.source]
        return ["--session-id", session_id] if session_id is not None else []

    def hooks_run_unreviewed(self, bypass_hook_trust: bool) -> bool:
        return False  # no per-launch hooks: only the installed ones, if any

    def approve_keys(self, prompt_rows: tuple[str, ...]) -> bytes:
        return KEYS.approve

    def find_prompt(self, lines: list[str]) -> Prompt | None:
        return find_dialog(lines, APPROVAL_FIRST, APPROVAL_QUESTION)

    def find_question(self, lines: list[str]) -> Prompt | None:
        return prompts.find_question(lines, QUESTION_FOOTER, TYPE_YOUR_OWN)

    def reply_keys(self, prompt: Prompt, option: int, text: str | None) -> list[bytes]:
        """The highlight moved with the arrows, then Enter; on "Enter a custom value" the text
        is typed where the option stands, then Enter."""
        moves = prompts.arrow_keys(prompts.highlighted(prompt, HIGHLIGHT), option)
        if text is not None:
            return [*moves, text.encode("utf-8"), b"\r"]
        return [*moves, b"\r"]

    def registry_session(self, homes: tuple[Path, ...], pid: int) -> str | None:
        return None  # Gemini CLI keeps no live registry


LAUNCH = GeminiLaunch()
