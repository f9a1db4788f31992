"""Codex in a PTY agentbar owns: its command lines, keys, ``/status`` box and the per-launch
``-c`` config layer with agentbar's hooks (pure).

    codex [--dangerously-bypass-hook-trust] -c hooks.<Event>=... [resume|fork <id>] [prompt]

``-c key=value`` overrides form a session-flags config layer; hooks from all layers run
(agent-formats.md 4.3). A Codex without hooks ignores them (checked with 0.99.0; 0.58.0 gets
``notify`` instead). Codex runs a non-managed hook only once it is trusted: either the person
trusts agentbar's session-flag hooks once in ``/hooks`` (the trust is recorded by position and
hash, so the same command stays trusted from launch to launch), or the launcher passes
``--dangerously-bypass-hook-trust`` (``bypass_trust=True``). That flag exists from Codex 0.130
(an older Codex refuses to start with it, so the version must be given), must come before any
subcommand, ``--`` or prompt, and lifts the review for every hook of the run, the user's
unreviewed ones too: use it only where the hook set is known (a test rig, a throwaway HOME).
Codex reads a ``-c`` value as TOML.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...hooks.layers import toml_value
from ...hooks.spec import HookCommand, parse_version
from ...launch import prompts
from ...launch.keys import AgentKeys
from ...launch.prompts import Prompt, find_dialog
from ...launch.request import LaunchRequest, Mode, Program
from ...launch.status_scrape import UUID_PATTERN, SessionLabelScreen, StatusPlan
from .events import CALLER, CODEX_EVENTS, CODEX_HOOKS_DEFAULT_ON

BYPASS_TRUST = "--dangerously-bypass-hook-trust"
BYPASS_TRUST_SINCE = (0, 130, 0)  # openai/codex#21768, May 2026

# "Yes, proceed (y)", "No, and tell Codex what to do differently (esc)"; Ctrl-C twice quits.
KEYS = AgentKeys(
    approve=b"y",
    deny=b"\x1b",
    enter_pause=1.0,
    exit_keys=((b"\x1b", 0.3), (b"\x03", 0.4), (b"\x03", 0.4), (b"\x03", 0.0)),
)
PLAN = StatusPlan(first_after=4.0, retry_every=3.0, max_sends=5, quiet_input=2.0)
_SESSION_LABEL = re.compile(rf"Session(?:\s*ID)?:\s*({UUID_PATTERN})(?![0-9a-fA-F-])")
# The approval dialog: "Would you like to run the following command?" ("...make the following
# edits?") over a numbered list whose first choice is "Yes, proceed (y)".
APPROVAL_QUESTION = re.compile(r"\b(Do you want|Would you like|Allow)\b[^?]{0,200}\?")
APPROVAL_FIRST = re.compile(r"^[\s│|>❯›▶*●]*1[.)]\s+Yes\b")
# request_user_input's dialog (0.99.0, in Plan mode): "Question 1/1", the question, "› 1. Tabs
# (Recommended)  Use tabs." (label, then its description), "3. None of the above  Optionally,
# add details in notes (tab)", and "tab to add notes | enter to submit answer".
QUESTION_FOOTER = re.compile(r"enter to submit answer")
TYPE_YOUR_OWN = ("none of the above",)
HIGHLIGHT = ("›", ">", "❯")


def launch_overrides(
    command: HookCommand, *, notify: bool = False, enable_hooks: bool = False
) -> list[str]:
    """``-c`` overrides, flattened: ``["-c", "hooks.SessionStart=[...]", "-c", ...]``.

    ``notify`` also sets Codex's ``notify`` program for this run (it replaces the user's own for
    the run: only for a Codex without hooks). ``enable_hooks`` sets ``features.hooks`` for a
    Codex that has hooks off."""
    group = {"hooks": [command.handler(CALLER)]}
    args: list[str] = []
    for event in CODEX_EVENTS:
        args += ["-c", f"hooks.{event}={toml_value([group])}"]
    if enable_hooks:
        args += ["-c", "features.hooks=true"]
    if notify:
        args += ["-c", f"notify={toml_value(command.argv(CALLER, notify=True))}"]
    return args


def launch_args(
    command: HookCommand,
    *,
    bypass_trust: bool = False,
    version: str | None = None,
    notify: bool = False,
    enable_hooks: bool = False,
) -> list[str]:
    """Everything to put right after ``codex`` (before any subcommand or prompt).
    ``bypass_trust`` needs ``version`` (``codex --version``): below 0.130 the flag is left out,
    since that Codex would refuse to start."""
    args = launch_overrides(command, notify=notify, enable_hooks=enable_hooks)
    if not bypass_trust:
        return args
    parsed = parse_version(version)
    if parsed is None:
        raise ValueError("bypass_trust needs the Codex version: older builds refuse the flag")
    return [BYPASS_TRUST, *args] if parsed >= BYPASS_TRUST_SINCE else args


class CodexLaunch:
    program_env = "AGENTBAR_CODEX"
    keys = KEYS
    session_vars = ("CODEX_THREAD_ID", "CODEX_SESSION_ID")
    # ``│  Session:   <uuid>   │`` inside the box ``/status`` prints.
    status = SessionLabelScreen(PLAN, _SESSION_LABEL, close_after=False)

    def preassigned_id(self, request: LaunchRequest, program: Program) -> str | None:
        return None  # Codex picks its own thread id

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
        if hooks is not None:
            args += launch_args(
                hooks,
                bypass_trust=bypass_hook_trust and version is not None,
                version=program.version,
                enable_hooks=version is not None and version < CODEX_HOOKS_DEFAULT_ON,
            )
        if request.mode is not Mode.NEW:
            assert request.source is not None
            args += [str(request.mode), request.source]  # "resume <id>" / "fork <id>"
        return args

    def hooks_run_unreviewed(self, bypass_hook_trust: bool) -> bool:
        return bypass_hook_trust

    def approve_keys(self, prompt_rows: tuple[str, ...]) -> bytes:
        return KEYS.approve

    def find_prompt(self, lines: list[str]) -> Prompt | None:
        # The question is the dialog's top: the rows above it are the conversation.
        return find_dialog(lines, APPROVAL_FIRST, APPROVAL_QUESTION, context_above=False)

    def find_question(self, lines: list[str]) -> Prompt | None:
        return prompts.find_question(lines, QUESTION_FOOTER, TYPE_YOUR_OWN)

    def reply_keys(self, prompt: Prompt, option: int, text: str | None) -> list[bytes]:
        """The highlight moved with the arrows, then Enter; an answer of one's own goes in the
        notes of "None of the above" (Tab opens them), then Enter."""
        moves = prompts.arrow_keys(prompts.highlighted(prompt, HIGHLIGHT), option)
        if text is not None:
            return [*moves, b"\t", text.encode("utf-8"), b"\r"]
        return [*moves, b"\r"]

    def registry_session(self, homes: tuple[Path, ...], pid: int) -> str | None:
        return None  # Codex keeps no live registry


LAUNCH = CodexLaunch()
