"""The composition root: the agents this agentbar knows, one line each (values, any thread).

Everything else takes the kits it is given (``Settings.kits``); adding an agent is its package
under ``agentbar.core.agents`` and one line here.
"""

from __future__ import annotations

from . import claude, codex, gemini, opencode
from .base import AgentKit

KITS: tuple[AgentKit, ...] = (
    claude.KIT,
    codex.KIT,
    gemini.KIT,
    opencode.KIT,
)
