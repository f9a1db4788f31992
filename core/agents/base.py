"""The seam every agent fills: ``AgentKit`` and the protocols of its parts (values; any thread).

An agent is one package under ``agentbar.core.agents`` that builds one ``AgentKit``:

- ``agent``: its identity on the wire (``Agent("claude")``): JSON, the API, the index, the
  hook events folder; ``display_name`` what a person reads ("Claude Code");
- ``homes`` / ``sources``: where its files are (from the environment, as the agent itself
  decides) and the ``AgentSource`` objects that classify, parse and match processes there;
- ``traits``: how far its transcript can be trusted on its own (``state/fusion.py``);
- ``replay``: its ``ReplayAdapter`` (pages of a transcript for the window);
- ``launch``: its ``LaunchProfile`` (argv for new/resume/fork, the program variable, keys, the
  ``/status`` screen, the per-launch hook layer);
- ``hooks``: its ``HookTarget`` (the user's settings file agentbar's hooks go into);
- ``tools``: its ``ToolVocabulary`` (which of its tool calls change files or set a todo list,
  for a hand-off's brief);
- ``process_names``: how its client processes may be named (the process table inspects only
  those);
- ``decisions``: its ``HookDecisions``, when its hooks can hold a request (an approval, a
  question) and take agentbar's answer (the hook route of ``core/decisions.py``).

Only the first five are required; an agent that cannot be replayed, launched or hooked leaves
the rest None and every consumer skips it there. The engine, replay, launch, hooks, server and
tray take the kits they are given (``Settings.kits``); only the composition root,
``agentbar.core.agents.registry``, names the list.

Agents whose sessions are not line-tailed files (one JSON document per chat, a database holding
many sessions) add optional fields here, defaulting to None, so that no other kit changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..decisions import Decision, Question, RequestKind
from ..hooks.files import Record
from ..hooks.spec import HookCommand
from ..hooks.target import AgentStatus, Target
from ..launch.keys import AgentKeys
from ..launch.prompts import Prompt
from ..launch.request import LaunchRequest, Program
from ..launch.status_scrape import StatusPlan
from ..model import Agent
from ..replay.model import ReplayAdapter
from ..sources.base import AgentSource
from ..state.fusion import AgentTraits

__all__ = [
    "AgentKit",
    "HeldRequest",
    "Homes",
    "HookDecisions",
    "HookEdit",
    "HookRemoval",
    "HookTarget",
    "LaunchProfile",
    "PromptOption",
    "StatusScreen",
    "ToolVocabulary",
    "by_agent",
    "display_names",
    "is_session_id",
    "replay_adapters",
    "todo_list",
    "tool_vocabularies",
]

# An agent's folders from the environment (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...),
# most important first: the first is where its settings file is.
Homes = Callable[[Mapping[str, str]], tuple[Path, ...]]


class StatusScreen(Protocol):
    """The last way to bind a launched task: ``/status`` typed into our own PTY, its answer
    read off the screen (``launch/status_scrape.py`` strips the escapes first)."""

    @property
    def plan(self) -> StatusPlan: ...

    @property
    def close_after(self) -> bool:
        """True when the status panel stays open until Escape closes it (Claude's)."""
        ...

    def session_id_in(self, plain: str) -> str | None:
        """The session id the stripped screen text names (the last one), lower-cased."""
        ...


class LaunchProfile(Protocol):
    """How agentbar starts this agent in a PTY it owns, and answers it there."""

    @property
    def program_env(self) -> str:
        """The variable naming the program to run (``AGENTBAR_CLAUDE``); by default the
        agent's wire name on ``PATH``."""
        ...

    @property
    def keys(self) -> AgentKeys: ...

    @property
    def session_vars(self) -> tuple[str, ...]:
        """Variables that describe a session of this agent agentbar itself may run in: a child
        must not inherit them."""
        ...

    @property
    def status(self) -> StatusScreen | None:
        """The ``/status`` screen, or None when the agent shows no session id there."""
        ...

    def preassigned_id(self, request: LaunchRequest, program: Program) -> str | None:
        """A fresh session id to hand the agent for this launch (None: it picks one)."""
        ...

    def args(
        self,
        request: LaunchRequest,
        program: Program,
        *,
        hooks: HookCommand | None,
        session_id: str | None,
        bypass_hook_trust: bool,
    ) -> list[str]:
        """The arguments after the program for ``request`` (the prompt is added by the
        caller): agentbar's per-launch hook layer (``hooks``; None: none), the preassigned
        ``session_id``, the resume or fork flags."""
        ...

    def hooks_run_unreviewed(self, bypass_hook_trust: bool) -> bool:
        """Whether the per-launch hooks run without the person reviewing them first."""
        ...

    def approve_keys(self, prompt_rows: tuple[str, ...]) -> bytes:
        """What accepts the approval prompt whose screen rows are these."""
        ...

    def find_prompt(self, lines: list[str]) -> Prompt | None:
        """The approval dialog these screen lines (the task's VT screen, top to bottom) show
        now, if any (``launch/prompts.py`` has the shared ways to read one)."""
        ...

    def find_question(self, lines: list[str]) -> Prompt | None:
        """The question dialog (the agent's question tool) these screen lines show, with its
        options, if any; None for an agent whose questions are not read off its screen."""
        ...

    def reply_keys(self, prompt: Prompt, option: int, text: str | None) -> list[bytes]:
        """The keys, sent one item at a time with a short pause between, that choose option
        ``option`` (1-based) of the question ``prompt`` and, for its "type your own" option,
        type ``text`` and send it."""
        ...

    def registry_session(self, homes: tuple[Path, ...], pid: int) -> str | None:
        """The session id the agent's own live registry gives process ``pid`` (None: no
        registry, or no entry yet)."""
        ...


@runtime_checkable
class PromptOption(Protocol):
    """A launch profile whose agent takes the first prompt after an option (opencode's
    ``--prompt``: its positional argument is the project folder), not as the last argument:
    ``--prompt=<text>``."""

    @property
    def prompt_option(self) -> str: ...


@runtime_checkable
class TypedPrompt(Protocol):
    """A launch profile whose agent leaves some launches' prompt unsent (opencode's TUI opens
    a resumed or forked session with its input empty, ``--prompt`` or not): for those
    (``types_prompt``), agentbar types the prompt into the PTY it owns once ``ready_text`` is
    on the screen and the screen has settled, then Enter."""

    @property
    def ready_text(self) -> str: ...

    def types_prompt(self, request: LaunchRequest) -> bool: ...


@dataclass(frozen=True, slots=True)
class HookEdit:
    """What adding agentbar's hooks to one settings file comes to (nothing written yet)."""

    after: str | None  # the new text; None: agentbar's hooks are already there as they should be
    created_keys: list[str]  # keys agentbar would create (taken out again on uninstall)
    events: int  # how many events are hooked
    notes: list[str] = field(default_factory=list)
    feature_added: bool = False  # a switch agentbar turned on (turned off again on uninstall)


@dataclass(frozen=True, slots=True)
class HookRemoval:
    """What taking agentbar's hooks out of one settings file comes to."""

    after: str | None  # the new text; None: nothing is left, delete a file agentbar created
    removed: int  # how many entries went


class HookTarget(Protocol):
    """The user's own settings file for this agent and how agentbar's entries go in and out.
    The agent-neutral ``hooks/installer.py`` does the rest: the diff, the backup, the atomic
    write, the record that makes uninstall an exact undo."""

    def config_file(self, homes: tuple[Path, ...]) -> Path:
        """The settings file the agent reads hooks from."""
        ...

    def add(
        self, text: str | None, where: str, command: HookCommand, *, version: str | None,
        notify: bool,
    ) -> HookEdit:  # fmt: skip
        """Agentbar's hooks added to ``text`` (None: no file yet); ``where`` names the file in
        errors. Raises ``HooksFileError`` for a file it cannot parse."""
        ...

    def remove(self, text: str, where: str, record: Record | None) -> HookRemoval:
        """Agentbar's entries taken out of ``text``; ``record``: what an earlier install did."""
        ...

    def status(
        self, target: Target, text: str, command: HookCommand, version: str | None
    ) -> AgentStatus:
        """Whether and how agentbar's hooks are installed in ``text``."""
        ...

    @property
    def wants_version(self) -> bool:
        """True when the events to hook depend on the agent's version (``--version`` is run)."""
        ...


class ToolVocabulary(Protocol):
    """What the agent's own tool calls mean to a hand-off (``launch/handoff.py``): the files a
    call changes, the todo list it sets. Calls are read as replay items give them: the tool's
    name and its input (a JSON value)."""

    def changed_files(self, name: str, tool_input: object) -> list[str]:
        """The files this call writes, edits or deletes (none for any other call)."""
        ...

    def todos(self, name: str, tool_input: object) -> list[tuple[str, str]] | None:
        """The todo list this call sets, as (status, text); None when it sets none."""
        ...


@dataclass(frozen=True, slots=True)
class HeldRequest:
    """A request a hook holds, as the agent's kit reads it from the hook's payload: which
    session, what kind, the tool and what it would do, the exact rule "Always allow" would add
    (None: not offered), a question's questions."""

    session_id: str
    kind: RequestKind
    tool: str
    summary: str
    always_rule: str | None = None
    questions: tuple[Question, ...] = ()


class HookDecisions(Protocol):
    """How an agent's hook hands a request to agentbar and gives the agent the person's answer.

    The hook program stays agent-neutral: it relays the event's payload to the running
    agentbar, waits (bounded), and prints what agentbar answers verbatim. The kit says which
    events hold a request and what to print for an answer, in the agent's own format."""

    def held_request(self, event: str, payload: Mapping[str, object]) -> HeldRequest | None:
        """The request this hook event holds; None when it holds none agentbar may answer
        (hostile or odd payloads included: never raise)."""
        ...

    def reply(self, payload: Mapping[str, object], decision: Decision) -> str:
        """What the hook prints so the agent takes ``decision`` (empty: no decision)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentKit:
    """Everything agentbar knows of one agent, as the parts the rest of the program uses."""

    agent: Agent
    display_name: str
    homes: Homes
    sources: Callable[[tuple[Path, ...]], Sequence[AgentSource]]
    traits: AgentTraits
    replay: ReplayAdapter | None = None
    launch: LaunchProfile | None = None
    hooks: HookTarget | None = None
    tools: ToolVocabulary | None = None
    # How its client processes are named, as the start of the name (any case): its native
    # binary, a JavaScript runtime for an npm wrapper. Only such processes are inspected.
    process_names: tuple[str, ...] = ()
    decisions: HookDecisions | None = None


def display_names(kits: Iterable[AgentKit]) -> dict[Agent, str]:
    """What a person calls each agent ("Claude Code")."""
    return {kit.agent: kit.display_name for kit in kits}


def replay_adapters(kits: Iterable[AgentKit]) -> dict[Agent, ReplayAdapter]:
    """Each agent's replay adapter, for ``Replay``: agents without one are left out."""
    return {kit.agent: kit.replay for kit in kits if kit.replay is not None}


def todo_list(entries: object, text_key: str) -> list[tuple[str, str]]:
    """A todo list as (status, text) from a call's list of entries, each an object with a
    ``status`` and its text under ``text_key``; entries of another shape are skipped."""
    todos = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        text = entry.get(text_key)
        if isinstance(text, str) and text.strip():
            todos.append((str(entry.get("status") or "pending"), text.strip()))
    return todos


# What a session id sent by an agent's hook may look like (it names files and API paths).
SESSION_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def is_session_id(value: object) -> bool:
    """A session id a hook payload may name: 1-128 safe characters, not starting with a dot
    or a dash."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= 128
        and value[0] not in ".-"
        and all(c in SESSION_ID_CHARS for c in value)
    )


def tool_vocabularies(kits: Iterable[AgentKit]) -> dict[Agent, ToolVocabulary]:
    """Each agent's tool vocabulary, for hand-offs: agents without one are left out."""
    return {kit.agent: kit.tools for kit in kits if kit.tools is not None}


def by_agent(kits: Iterable[AgentKit]) -> dict[Agent, AgentKit]:
    """The kits by their agent; raises ``ValueError`` when two claim the same one."""
    found: dict[Agent, AgentKit] = {}
    for kit in kits:
        if kit.agent in found:
            raise ValueError(f"two agent kits for {kit.agent!r}")
        found[kit.agent] = kit
    return found
