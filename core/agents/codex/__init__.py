"""Codex CLI: its files, rollout parser, replay, launch profile and hook target, as one
``AgentKit`` (values, any thread)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...sources.base import JS_RUNTIMES
from ...state.fusion import AgentTraits
from ..base import AgentKit
from .decisions import DECISIONS
from .files import AGENT, CodexSource, default_codex_home
from .hooks import HOOKS
from .launch import LAUNCH
from .replay import REPLAY
from .rollout import QUESTION_TOOL
from .tools import TOOLS

# Every turn ends with a marker. A rollout with no turn yet is usually one being created for
# the turn about to start (0.99+ creates it at the first prompt, line by line).
TRAITS = AgentTraits(
    quiet_done_after=None, new_file_settles=True, question_tools=frozenset({QUESTION_TOOL})
)


def homes(env: Mapping[str, str]) -> tuple[Path, ...]:
    return (default_codex_home(env),)


def sources(homes: tuple[Path, ...]) -> list[CodexSource]:
    return [CodexSource(home) for home in homes]


KIT = AgentKit(
    agent=AGENT,
    display_name="Codex",
    homes=homes,
    sources=sources,
    traits=TRAITS,
    replay=REPLAY,
    launch=LAUNCH,
    hooks=HOOKS,
    tools=TOOLS,
    # The native binary ships as e.g. codex-x86_64-unknown-linux-musl.
    process_names=("codex", *JS_RUNTIMES),
    decisions=DECISIONS,
)
