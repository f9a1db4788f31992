"""Claude Code: its files, transcript parser, replay, launch profile and hook target, as one
``AgentKit`` (values, any thread)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentbar.core.agents.base import AgentKit
from agentbar.core.agents.claude.files import AGENT, ClaudeSource, default_claude_roots
from agentbar.core.agents.claude.hooks import HOOKS
from agentbar.core.agents.claude.launch import LAUNCH
from agentbar.core.agents.claude.replay import REPLAY
from agentbar.core.agents.claude.tools import TOOLS
from agentbar.core.sources.base import JS_RUNTIMES
from agentbar.core.state.fusion import AgentTraits

# A transcript may carry no end-of-turn marker (Claude 2.0.x): 15 s of quiet after answer text
# ends the turn.
TRAITS = AgentTraits(quiet_done_after=15.0)


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
)
