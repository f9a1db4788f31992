"""Claude Code: its files, transcript parser, replay, launch profile and hook target, as one
``AgentKit`` (values, any thread)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...sources.base import JS_RUNTIMES
from ...state.fusion import AgentTraits
from ..base import AgentKit
from .decide import DECISIONS
from .files import AGENT, ClaudeSource, default_claude_roots
from .hooks import HOOKS
from .launch import LAUNCH
from .replay import REPLAY
from .tools import TOOLS
from .transcript import QUESTION_TOOL

# A transcript may carry no end-of-turn marker (Claude 2.0.x): 15 s of quiet after answer text
# ends the turn.
TRAITS = AgentTraits(quiet_done_after=15.0, question_tools=frozenset({QUESTION_TOOL}))


def homes(env: Mapping[str, str]) -> tuple[Path, ...]:
    return tuple(default_claude_roots(env))


def sources(homes: tuple[Path, ...]) -> list[ClaudeSource]:
    return [ClaudeSource(root) for root in homes]


KIT = AgentKit(
    agent=AGENT,
    display_name="Claude Code",
    homes=homes,
    sources=sources,
    traits=TRAITS,
    replay=REPLAY,
    launch=LAUNCH,
    hooks=HOOKS,
    tools=TOOLS,
    process_names=("claude", *JS_RUNTIMES),
    decisions=DECISIONS,
)
