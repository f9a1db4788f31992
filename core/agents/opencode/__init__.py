"""opencode: its database and older JSON storage, their translation into records, its launch
profile and its plugin, as one ``AgentKit`` (values, any thread)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentbar.core.agents.base import AgentKit
from agentbar.core.agents.opencode.files import (
    AGENT,
    OpencodeSource,
    default_config_dir,
    default_data_dir,
)
from agentbar.core.agents.opencode.launch import LAUNCH
from agentbar.core.agents.opencode.plugin import HOOKS
from agentbar.core.agents.opencode.replay import REPLAY
from agentbar.core.agents.opencode.tools import TOOLS
from agentbar.core.sources.base import JS_RUNTIMES
from agentbar.core.state.fusion import AgentTraits

# Every finished step is marked (``time.completed`` and ``finish``), so no quiet rule. A session
# is created at the first prompt, its row (or file) a moment before the prompt's: a session
# with no turn yet waits a moment for it before "waiting for a prompt" is reported.
TRAITS = AgentTraits(quiet_done_after=None, new_file_settles=True)


def homes(env: Mapping[str, str]) -> tuple[Path, ...]:
    """Its config folder (where the plugin goes), then its data folder (the sessions)."""
    return (default_config_dir(env), default_data_dir(env))


def sources(homes: tuple[Path, ...]) -> list[OpencodeSource]:
    return [OpencodeSource(home) for home in homes[1:]]


KIT = AgentKit(
    agent=AGENT,
    display_name="opencode",
    homes=homes,
    sources=sources,
    traits=TRAITS,
    replay=REPLAY,
    launch=LAUNCH,
    hooks=HOOKS,
    tools=TOOLS,
    process_names=("opencode", *JS_RUNTIMES),  # 1.18: opencode.exe; 1.1: node bin/opencode
)
