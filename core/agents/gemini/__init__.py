"""Gemini CLI: its files, chat parser, replay, launch profile and hook target, as one
``AgentKit`` (values, any thread)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...sources.base import JS_RUNTIMES
from ...state.fusion import AgentTraits
from ..base import AgentKit
from .chat import QUESTION_TOOLS
from .files import AGENT, GeminiSource, default_gemini_home
from .hooks import HOOKS
from .launch import LAUNCH
from .replay import REPLAY
from .tools import TOOLS

# A turn has no end marker in the chat: an answer with no tool calls is taken as the turn's
# last word at once (``chat.py``), so there is nothing to wait quietly for.
TRAITS = AgentTraits(quiet_done_after=None, question_tools=QUESTION_TOOLS)


def homes(env: Mapping[str, str]) -> tuple[Path, ...]:
    return (default_gemini_home(env),)


def sources(homes: tuple[Path, ...]) -> list[GeminiSource]:
    return [GeminiSource(home) for home in homes]


KIT = AgentKit(
    agent=AGENT,
    display_name="Gemini CLI",
    homes=homes,
    sources=sources,
    traits=TRAITS,
    replay=REPLAY,
    launch=LAUNCH,
    hooks=HOOKS,
    tools=TOOLS,
    # The npm package is a Node script (bin/gemini): node, or a wrapper named gemini.
    process_names=("gemini", *JS_RUNTIMES),
)
