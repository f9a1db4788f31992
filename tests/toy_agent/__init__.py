"""A toy agent that exists only in the tests: its own file format, its own kit (values).

It proves that an agent is one package plus one line in the composition list: nothing in
agentbar knows it, yet plugged into ``registry.KITS`` it joins the engine, ``status``, replay,
the window's agent list and ``agentbar hooks`` (its hooks run agentbar's hook program, which
has never heard of it: ``hooks.py``). Its sessions are ``<home>/chats/<session id>.jsonl``, one JSON
object a line (``files.py``); its process is any process whose command line carries
``--toy-agent`` (and ``--session <id>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentbar.core.agents.base import AgentKit
from agentbar.core.state.fusion import AgentTraits
from toy_agent.files import AGENT, ToySource
from toy_agent.hooks import HOOKS, POLL
from toy_agent.replay import REPLAY

HOME_ENV = "TOY_AGENT_HOME"


def homes(env: Mapping[str, str]) -> tuple[Path, ...]:
    configured = env.get(HOME_ENV)
    if configured:
        return (Path(configured),)
    return (Path(env.get("HOME") or Path.home()) / ".toy",)


def sources(homes: tuple[Path, ...]) -> list[ToySource]:
    return [ToySource(home) for home in homes]


KIT = AgentKit(
    agent=AGENT,
    display_name="Toy Agent",
    homes=homes,
    sources=sources,
    # Every turn ends with a "done" line; an ``ask`` for its poll tool is a question.
    traits=AgentTraits(quiet_done_after=None, question_tools=frozenset({POLL})),
    replay=REPLAY,
    hooks=HOOKS,
    process_names=("python",),  # the tests' Python, started with --toy-agent
)
