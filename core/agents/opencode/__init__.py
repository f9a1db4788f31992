"""opencode: its database and older JSON storage, their translation into records, its launch
profile and its plugin, as one ``AgentKit`` (values, any thread)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...sources.base import JS_RUNTIMES
from ...state.fusion import AgentTraits
from ..base import AgentKit
from .files import (
    AGENT,
    OpencodeSource,
    default_config_dir,
    default_data_dir,
)
from .launch import LAUNCH
from .plugin import HOOKS
from .replay import REPLAY
from .tools import TOOLS

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
