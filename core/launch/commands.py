"""The command line and environment a task starts its agent with (pure).

New, resume and fork, with agentbar's hooks as a per-launch layer (the user's settings files stay
untouched): the agent's launch profile (``AgentKit.launch``) gives the arguments after the
program; the prompt goes last, never taken for an option. No shell is involved: every value is
one argv element.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..agents.base import LaunchProfile, PromptOption, TypedPrompt
from ..hooks.spec import HookCommand
from .request import LaunchRequest, Program

TASK_ENV = "AGENTBAR_TASK_ID"


@dataclass(frozen=True, slots=True)
class CommandLine:
    argv: tuple[str, ...]
    session_id: str | None  # the id we gave the session (None: the agent picks one)


def command_line(
    profile: LaunchProfile,
    request: LaunchRequest,
    program: Program,
    *,
    hooks: HookCommand | None,
    session_id: str | None = None,
    bypass_hook_trust: bool = False,
) -> CommandLine:
    """The argv for ``request``. ``hooks``: agentbar's hook layer (None: none); ``session_id``:
    an id from ``profile.preassigned_id``; ``bypass_hook_trust``: run the per-launch hooks
    without the agent's review (only where the hook set is known)."""
    argv = [*program.argv]
    argv += profile.args(
        request, program, hooks=hooks, session_id=session_id, bypass_hook_trust=bypass_hook_trust
    )
    if request.prompt and isinstance(profile, TypedPrompt) and profile.types_prompt(request):
        pass  # typed into the PTY once the agent is ready (``TaskManager``)
    elif request.prompt and isinstance(profile, PromptOption):
        argv.append(f"{profile.prompt_option}={request.prompt}")  # never taken for an option
    elif request.prompt:
        if request.prompt.startswith("-"):
            argv.append("--")  # a prompt is never an option
        argv.append(request.prompt)
    return CommandLine(argv=tuple(argv), session_id=session_id)


def session_vars(profiles: Iterable[LaunchProfile]) -> frozenset[str]:
    """Variables that describe a session agentbar itself may run in, for every agent."""
    return frozenset(name for profile in profiles for name in profile.session_vars)


def child_env(
    base: Mapping[str, str],
    task_id: str,
    extra: Mapping[str, str] | None = None,
    *,
    inherited: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """The agent's environment: ours, as a terminal would pass it, without the variables of a
    session agentbar itself might run in (``inherited``, from ``session_vars``), plus the
    task's id (for the person's own scripts)."""
    env = {k: v for k, v in base.items() if k not in inherited}
    env.setdefault("TERM", "xterm-256color")
    if env["TERM"] in ("", "dumb"):
        env["TERM"] = "xterm-256color"
    env.setdefault("COLORTERM", "truecolor")
    env[TASK_ENV] = task_id
    env.update(extra or {})
    return env
