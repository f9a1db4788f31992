"""The decision book's TERMINAL route and the take-over, with the real CLIs launched by agentbar's
task manager against the scripted model (as ``test_launch_agents.py`` launches them): the
approval prompt on the task's screen is one request in the book, an answer given there is typed
as the agent's keys and the command runs; after ``quit`` (keep) and a new agentbar the prompt that
is already up is seen at once (the saved scrollback fed to the VT screen), is in the new book,
and ``approve`` (what ``agentbar approve`` and the API call) runs the command. Questions:
Claude's AskUserQuestion answered from the book by an option and by typed text."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from claude_rig import VERSIONS as CLAUDE_VERSIONS
from claude_rig import bash, claude_env
from claude_rig import write_config as write_claude_config
from cli_install import ensure_installed
from cli_runner import agentbar
from codex_rig import PLAN_MODE
from codex_rig import VERSIONS as CODEX_VERSIONS
from codex_rig import write_config as write_codex_config
from gemini_rig import VERSIONS as GEMINI_VERSIONS
from gemini_rig import gemini_env
from gemini_rig import settings as gemini_settings
from model_server import Reply, thinking
from opencode_rig import VERSIONS as OPENCODE_VERSIONS
from opencode_rig import opencode_env
from opencode_rig import write_config as write_opencode_config
from polling import wait_for

from agentbar.core.config import Settings
from agentbar.core.decisions import Decision, DecisionBook, PendingRequest, RequestKind, Verdict
from agentbar.core.launch.manager import TaskManager
from agentbar.core.launch.options import LaunchOptions
from agentbar.core.launch.request import LaunchRequest
from agentbar.core.launch.task import TaskInfo
from agentbar.core.model import Agent, State
from agentbar.core.service import Service

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.conformance

CLAUDE = CLAUDE_VERSIONS[0]
CODEX = CODEX_VERSIONS[0]
GEMINI = GEMINI_VERSIONS[0]
OPENCODE = OPENCODE_VERSIONS[0]
LABELS = {"claude": CLAUDE.label, "codex": CODEX.label, "gemini": GEMINI.label,
          "opencode": OPENCODE.label}  # fmt: skip
CODEX_APPROVALS = ("-a", "on-request", "-s", "read-only")


class Booked:
    """A live engine, and task managers over one settings, each with its own book (one per
    agentbar process: the second is the agentbar started after ``quit``)."""

    def __init__(self, rig: Rig, programs: dict[Agent, tuple[str, ...]], **options: Any):
        self.rig = rig
        self.settings = Settings.from_env(rig.env)
        self.service = Service.open(self.settings, tick_seconds=0.5)
        self.service.start()
        self.service.engine.ready.wait(30)
        self.programs, self.options = programs, options
        self.managers: list[tuple[TaskManager, DecisionBook]] = []

    def agentbar(self) -> tuple[TaskManager, DecisionBook]:
        book = DecisionBook()
        manager = TaskManager(
            self.settings,
            engine=self.service.engine,
            options=LaunchOptions(programs=self.programs, **self.options),
            env=self.rig.env,
            decisions=book,
        )
        manager.start()
        self.managers.append((manager, book))
        return manager, book

    def request(self, book: DecisionBook, manager: TaskManager, info: TaskInfo) -> PendingRequest:
        def look() -> PendingRequest | None:
            found = book.for_session(info.task_id)
            return found[0] if found else None

        try:
            return wait_for(look, 90, "the request in the book")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{manager.task(info.task_id).screen_text()}") from None

    def state(self, info: TaskInfo, check: Any, timeout: float = 60.0) -> Any:
        def look() -> Any:
            for snap in self.service.engine.sessions():
                if snap.key.session_id == info.session_id and check(snap):
                    return snap
            return None

        return wait_for(look, timeout, "the session's state")

    def close(self) -> None:
        for manager, _book in self.managers:
            manager.shutdown(keep=False)
        self.service.close()


@pytest.fixture
def claude(rig: Rig) -> Iterator[Booked]:
    binary = ensure_installed(CLAUDE.cli)
    rig.env.update(claude_env(rig.server.url))
    write_claude_config(rig.home, rig.project)
    run = Booked(rig, {Agent("claude"): (str(binary),)})
    yield run
    run.close()


@pytest.fixture
def codex(rig: Rig) -> Iterator[Booked]:
    binary = ensure_installed(CODEX.cli)
    rig.env["MOCK_API_KEY"] = "conformance"
    write_codex_config(rig.home / ".codex", rig.server.url, rig.project)
    run = Booked(rig, {Agent("codex"): (str(binary), *CODEX_APPROVALS)}, bypass_hook_trust=True)
    yield run
    run.close()


@pytest.fixture
def gemini(rig: Rig) -> Iterator[Booked]:
    binary = ensure_installed(GEMINI.cli)
    gemini_env(rig.env, rig.server.url)
    (rig.home / ".gemini").mkdir(exist_ok=True)
    (rig.home / ".gemini" / "settings.json").write_text(json.dumps(gemini_settings()))
    run = Booked(rig, {Agent("gemini"): (str(binary),)})
    yield run
    run.close()


@pytest.fixture
def opencode(rig: Rig) -> Iterator[Booked]:
    binary = ensure_installed(OPENCODE.cli)
    rig.env.update(opencode_env(rig.env))
    write_opencode_config(rig.home, rig.server.url)
    installed = agentbar(rig.env, "hooks", "install", "--agent", "opencode", "--yes")
    assert installed.returncode == 0, installed.stderr
    run = Booked(rig, {Agent("opencode"): (str(binary),)})
    yield run
    run.close()


def bound(manager: TaskManager, info: TaskInfo) -> TaskInfo:
    def check() -> TaskInfo | None:
        now = manager.get(info.task_id)
        return now if now.binding is not None else None

    return wait_for(check, 60, "the binding")


def answer_from_the_book(run: Booked, agent: Agent, made: Path, record_delay: Any) -> None:
    manager, book = run.agentbar()
    info = bound(manager, manager.launch(LaunchRequest(agent, str(run.rig.project), prompt="go")))
    request = run.request(book, manager, info)
    assert request.kind is RequestKind.APPROVAL and request.task_id == info.task_id
    # The session id when the task was bound by the time the dialog came up (the task id names
    # it either way): Claude and Gemini from the launch, Codex and opencode by their hooks.
    assert request.session_id in (info.session_id, "")
    assert made.name in request.summary, manager.task(info.task_id).screen_text()
    time.sleep(1.0)  # a person reads it first
    started = time.monotonic()
    book.decide(Decision(request.request_id, Verdict.ALLOW, origin="test"))
    wait_for(lambda: manager.get(info.task_id).waiting is None, 10, "the prompt to clear")
    record_delay(LABELS[str(agent)], "book", "answer in the book -> prompt gone", 0.0,
                 time.monotonic() - started)  # fmt: skip
    wait_for(made.exists, 30, "the approved command")
    run.state(info, lambda s: s.state.state is State.DONE)
    assert book.pending() == ()


def take_over_and_approve(run: Booked, agent: Agent, made: Path) -> None:
    first, first_book = run.agentbar()
    info = bound(first, first.launch(LaunchRequest(agent, str(run.rig.project), prompt="go")))
    run.request(first_book, first, info)
    first.shutdown(keep=True)  # `agentbar quit` (keep)
    assert first_book.pending() == ()
    second, second_book = run.agentbar()  # the next agentbar takes it back
    back = second.get(info.task_id)
    assert back.adopted and back.waiting is not None, second.task(info.task_id).screen_text()
    assert [t.task_id for t in second.waiting()] == [info.task_id]  # the menu's entries
    request = run.request(second_book, second, back)
    assert request.session_id == info.session_id
    assert second.approve(info.task_id).cleared  # `agentbar approve`, the API, the menu
    wait_for(made.exists, 30, "the approved command")
    run.state(back, lambda s: s.state.state is State.DONE)


def test_claude_answered_from_the_book(claude: Booked, record_delay: Any) -> None:
    claude.rig.server.script.add(bash("touch booked.txt", "make the file"),
                                 thinking(Reply.text("Made it.")))  # fmt: skip
    answer_from_the_book(claude, Agent("claude"), claude.rig.project / "booked.txt", record_delay)


def test_codex_answered_from_the_book(codex: Booked, record_delay: Any) -> None:
    codex.rig.server.script.add(CODEX.command("touch booked.txt", "create it"),
                                Reply.text("Created it."))  # fmt: skip
    answer_from_the_book(codex, Agent("codex"), codex.rig.project / "booked.txt", record_delay)


def test_gemini_answered_from_the_book(gemini: Booked, record_delay: Any) -> None:
    gemini.rig.server.script.add(
        thinking(Reply.tool("run_shell_command", {"command": "touch booked.txt"})),
        thinking(Reply.text("Created it.")),
    )
    answer_from_the_book(gemini, Agent("gemini"), gemini.rig.project / "booked.txt", record_delay)


def test_opencode_answered_from_the_book(opencode: Booked, record_delay: Any) -> None:
    opencode.rig.server.script.add(
        thinking(Reply.tool("bash", {"command": "touch booked.txt", "description": "Make it"})),
        Reply.text("Made it."),
    )
    path = opencode.rig.project / "booked.txt"
    answer_from_the_book(opencode, Agent("opencode"), path, record_delay)


def test_gemini_taken_back_with_its_prompt_up_is_approvable(gemini: Booked) -> None:
    gemini.rig.server.script.add(
        thinking(Reply.tool("run_shell_command", {"command": "touch kept.txt"})),
        thinking(Reply.text("Created it.")),
    )
    take_over_and_approve(gemini, Agent("gemini"), gemini.rig.project / "kept.txt")


def test_opencode_taken_back_with_its_prompt_up_is_approvable(opencode: Booked) -> None:
    opencode.rig.server.script.add(
        thinking(Reply.tool("bash", {"command": "touch kept.txt", "description": "Make it"})),
        Reply.text("Made it."),
    )
    take_over_and_approve(opencode, Agent("opencode"), opencode.rig.project / "kept.txt")


def test_claude_taken_back_with_its_prompt_up_is_approvable(claude: Booked) -> None:
    claude.rig.server.script.add(bash("touch kept.txt", "make the file"),
                                 thinking(Reply.text("Made it.")))  # fmt: skip
    take_over_and_approve(claude, Agent("claude"), claude.rig.project / "kept.txt")


def test_codex_taken_back_with_its_prompt_up_is_approvable(codex: Booked) -> None:
    codex.rig.server.script.add(CODEX.command("touch kept.txt", "create it"),
                                Reply.text("Created it."))  # fmt: skip
    take_over_and_approve(codex, Agent("codex"), codex.rig.project / "kept.txt")


QUESTION = "Which indentation style do you want?"
OPTIONS = [
    {"label": "Tabs", "description": "Use tabs."},
    {"label": "Spaces", "description": "Use spaces."},
]
ASK = {
    "claude": Reply.tool(
        "AskUserQuestion",
        {"questions": [{"question": QUESTION, "header": "Style", "options": OPTIONS,
                        "multiSelect": False}]},
    ),
    "codex": Reply.tool(
        "request_user_input",
        {"questions": [{"id": "style", "header": "Style", "question": QUESTION,
                        "options": OPTIONS}]},
    ),
    "gemini": Reply.tool(
        "ask_user",
        {"questions": [{"question": QUESTION, "header": "Style", "type": "choice",
                        "options": OPTIONS}]},
    ),
    "opencode": Reply.tool(
        "question", {"questions": [{"question": QUESTION, "header": "Style", "options": OPTIONS}]}
    ),
}  # fmt: skip


def ask_in_plan_mode(manager: TaskManager, info: TaskInfo, text: str) -> None:
    """Codex asks with its question tool only in Plan mode: Shift+Tab until its footer says
    so (0.171 may drop the first presses while it starts), then the prompt."""
    task = manager.task(info.task_id)
    wait_for(lambda: CODEX.ready in task.screen_text(), 60, "Codex ready")
    for _ in range(10):
        if PLAN_MODE in task.screen_text():
            break
        manager.send_keys(info.task_id, ["shift-tab"])
        time.sleep(0.5)
    manager.send_text(info.task_id, text)


def ask(run: Booked, agent: str, reply: str, chosen: str, record_delay: Any) -> None:
    server = run.rig.server
    server.script.add(thinking(ASK[agent]), Reply.text("Noted."))
    manager, book = run.agentbar()
    plan = agent == "codex"
    prompt = None if plan else "ask me which style"
    launched = manager.launch(LaunchRequest(Agent(agent), str(run.rig.project), prompt=prompt))
    if plan:
        ask_in_plan_mode(manager, launched, "ask me which style")
    info = bound(manager, launched)
    request = run.request(book, manager, info)
    assert request.kind is RequestKind.QUESTION
    assert request.questions[0].text == QUESTION
    assert request.questions[0].options[:2] in (
        ("Tabs", "Spaces"),
        ("Tabs (Recommended)", "Spaces"),
    )
    asked = len(server.main_requests())
    time.sleep(1.0)  # a person reads it first
    started = time.monotonic()
    book.decide(Decision(request.request_id, Verdict.REPLY, "test", replies=(reply,)))
    wait_for(lambda: manager.get(info.task_id).asking is None, 15, "the question to clear")
    record_delay(LABELS[agent], "book", f"reply {reply!r} -> question gone", 0.0,
                 time.monotonic() - started)  # fmt: skip
    # The tool's result, as the agent sends it to the model, carries the answer.
    answered = server.wait_main_requests(asked + 1, timeout=30)[asked]
    assert chosen in str(answered.body), manager.task(info.task_id).screen_text()
    wait_for(lambda: book.pending() == (), 5, "nothing left in the book")


REPLIES = [("2", "Spaces"), ("Tabs", "Tabs"), ("two spaces, please", "two spaces, please")]


@pytest.mark.parametrize(("reply", "chosen"), REPLIES)
def test_claude_question_answered_from_the_book(
    claude: Booked, reply: str, chosen: str, record_delay: Any
) -> None:
    ask(claude, "claude", reply, chosen, record_delay)


@pytest.mark.parametrize(("reply", "chosen"), REPLIES)
def test_codex_question_answered_from_the_book(
    codex: Booked, reply: str, chosen: str, record_delay: Any
) -> None:
    ask(codex, "codex", reply, chosen, record_delay)


@pytest.mark.parametrize(("reply", "chosen"), REPLIES)
def test_gemini_question_answered_from_the_book(
    gemini: Booked, reply: str, chosen: str, record_delay: Any
) -> None:
    ask(gemini, "gemini", reply, chosen, record_delay)


@pytest.mark.parametrize(("reply", "chosen"), REPLIES)
def test_opencode_question_answered_from_the_book(
    opencode: Booked, reply: str, chosen: str, record_delay: Any
) -> None:
    ask(opencode, "opencode", reply, chosen, record_delay)
