"""The one error the installer raises for a file it must not touch (pure)."""

from __future__ import annotations

from ..errors import AgentbarError


class HooksFileError(AgentbarError):
    """A settings file agentbar cannot edit safely (unreadable, invalid, an odd shape). The
    message says what is wrong and that the file was left as it is."""

    title = "Cannot change the agent's settings file"
