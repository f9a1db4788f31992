"""opencode in a PTY agentbar owns: its command lines and keys (pure).

    opencode [-s <id> [--fork]] [--prompt <text>]

The TUI's only positional argument is the project folder, so the prompt goes with
``--prompt`` (``PromptOption``), never last on its own. ``-s``/``--session`` continues a session
and ``--fork`` makes a copy of it first (both in 1.1.65 and 1.18.33). With ``-s``, 1.18.33
opens the session with its input empty and ignores ``--prompt``, so the prompt of a resume or
fork is typed into the PTY instead (``TypedPrompt``), once the footer's "ctrl+p commands" is
on the screen and the screen has settled. opencode takes no
per-launch plugin layer: its events reach agentbar through the plugin ``agentbar hooks
install`` puts in its plugins folder, which binds the task by the pid on its lines. The
permission dialog offers "Allow once" first (Enter), and Escape rejects.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...hooks.spec import HookCommand
from ...launch import prompts
from ...launch.keys import AgentKeys
from ...launch.prompts import Prompt, find_dialog
from ...launch.request import LaunchRequest, Mode, Program

KEYS = AgentKeys(
    approve=b"\r",
    deny=b"\x1b",
    enter_pause=1.0,
    exit_keys=((b"\x1b", 0.3), (b"/exit", 0.6), (b"\r", 0.0)),
)
# The permission dialog: "△ Permission required" over the request, its first choice "Allow
# once" in a row of buttons ("Allow once   Allow always   Reject").
APPROVAL_QUESTION = re.compile(r"\bPermission required\b")
APPROVAL_FIRST = re.compile(r"^[\s┃│|]*Allow once\b.*\bReject\b")

# The question tool's dialog (1.18.33): the question, "1. Tabs" with a description row under
# each option, "3. Type your own answer", and "↑↓ select  enter submit  esc dismiss". The
# highlight is a colour only: a fresh dialog has it on option 1.
QUESTION_FOOTER = re.compile(r"↑↓ select\s+enter submit")
TYPE_YOUR_OWN = ("type your own answer",)


class OpencodeLaunch:
    program_env = "AGENTBAR_OPENCODE"
    keys = KEYS
    session_vars = ("OPENCODE_PID",)
    status = None  # no screen of opencode's names its session id
    prompt_option = "--prompt"
    ready_text = "ctrl+p commands"  # the TUI's footer, drawn once it takes input

    def types_prompt(self, request: LaunchRequest) -> bool:
        return request.mode is not Mode.NEW

    def preassigned_id(self, request: LaunchRequest, program: Program) -> str | None:
        return None  # opencode picks its own session id

    def args(
        self,
        request: LaunchRequest,
        program: Program,
        *,
        hooks: HookCommand | None,
        session_id: str | None,
        bypass_hook_trust: bool,
    ) -> list[str]:
        if request.mode is Mode.NEW:
            return []
        assert request.source is not None
        args = ["-s", request.source]
        return [*args, "--fork"] if request.mode is Mode.FORK else args

    def hooks_run_unreviewed(self, bypass_hook_trust: bool) -> bool:
        return True  # the installed plugin runs without a review

    def approve_keys(self, prompt_rows: tuple[str, ...]) -> bytes:
        return KEYS.approve

    def find_prompt(self, lines: list[str]) -> Prompt | None:
        # The question is the dialog's top: the rows above it are the conversation.
        return find_dialog(lines, APPROVAL_FIRST, APPROVAL_QUESTION, context_above=False)

    def find_question(self, lines: list[str]) -> Prompt | None:
        return prompts.find_question(lines, QUESTION_FOOTER, TYPE_YOUR_OWN)

    def reply_keys(self, prompt: Prompt, option: int, text: str | None) -> list[bytes]:
        moves = prompts.arrow_keys(1, option)
        if text is not None:
            return [*moves, b"\r", text.encode("utf-8"), b"\r"]
        return [*moves, b"\r"]

    def registry_session(self, homes: tuple[Path, ...], pid: int) -> str | None:
        return None  # no live registry


LAUNCH = OpencodeLaunch()
