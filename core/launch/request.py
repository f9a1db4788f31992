"""What a launch asks for and which program runs it: the values every agent's launch profile
reads (values, any thread)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..errors import LaunchError
from ..hooks.spec import parse_version
from ..model import Agent

MAX_PROMPT_CHARS = 100_000  # one argv element may not exceed 128 KiB on Linux


class Mode(StrEnum):
    NEW = "new"
    RESUME = "resume"
    FORK = "fork"


class BadLaunch(LaunchError, ValueError):
    """A launch that cannot be made (the message says why, for the person who asked)."""

    title = "Cannot launch the agent"


@dataclass(frozen=True, slots=True)
class LaunchRequest:
    agent: Agent
    project: str  # an absolute folder
    prompt: str | None = None
    mode: Mode = Mode.NEW
    source: str | None = None  # the session resumed or forked

    def __post_init__(self) -> None:
        if (self.mode is Mode.NEW) != (self.source is None):
            raise BadLaunch("resume and fork need a session; a new launch takes none")
        if self.prompt is not None and len(self.prompt) > MAX_PROMPT_CHARS:
            raise BadLaunch(f"the prompt is longer than {MAX_PROMPT_CHARS} characters")
        if self.prompt is not None and "\x00" in self.prompt:
            raise BadLaunch("the prompt contains a NUL character")


@dataclass(frozen=True, slots=True)
class Program:
    """How to run one agent here: its argv prefix (``("claude",)``, or a test's fake agent) and
    the version ``--version`` printed (None: unknown)."""

    argv: tuple[str, ...]
    version: str | None = None

    @property
    def parsed_version(self) -> tuple[int, ...] | None:
        return parse_version(self.version)
