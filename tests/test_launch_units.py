"""The pure parts of launching: reading a session id off ``/status`` output, when to type it,
spotting an approval prompt on a screen, the command lines, the keys, the hand-off text, and
how the engine's fusion takes our own PTY's screen as a signal."""

from __future__ import annotations

import json

import pytest
from tray_values import snap

from agentbar.core.agents.claude import TRAITS as CLAUDE_TRAITS
from agentbar.core.agents.claude.launch import LAUNCH as CLAUDE
from agentbar.core.agents.claude.tools import TOOLS as CLAUDE_TOOLS
from agentbar.core.agents.codex import TRAITS as CODEX_TRAITS
from agentbar.core.agents.codex.launch import LAUNCH as CODEX
from agentbar.core.agents.codex.tools import TOOLS as CODEX_TOOLS
from agentbar.core.agents.registry import KITS
from agentbar.core.hooks.spec import HookCommand
from agentbar.core.launch import keys, status_scrape
from agentbar.core.launch.commands import TASK_ENV, child_env, command_line, session_vars
from agentbar.core.launch.handoff import NothingToHandOff, answer_in, brief
from agentbar.core.launch.request import BadLaunch, LaunchRequest, Mode, Program
from agentbar.core.launch.screen import Screen
from agentbar.core.model import Agent, SessionSnapshot, Source, State, WaitingFor
from agentbar.core.records import Asks
from agentbar.core.replay.model import ItemKind, ReplayItem
from agentbar.core.state import fusion
from agentbar.core.state.turns import PendingCall, Phase, TurnState

SID = "0b6e1c4a-93d2-4f7e-a1c5-2d8e9f0a1b2c"
CODEX_SID = "019d247a-2a83-76f3-b5c6-e4a59955af3f"


# -- /status -------------------------------------------------------------------------------


def test_claude_status_with_cursor_moves_and_colours():
    out = (
        "\x1b[2J\x1b[H\x1b[1mStatus\x1b[0m\x1b[4;1H\x1b[38;5;246mSession ID:\x1b[0m"
        f"\x1b[4;14H{SID.upper()}\x1b[5;1Hcwd\x1b[5;14H/work"
    )
    assert CLAUDE.status.session_id_in(status_scrape.plain_text(out)) == SID


def test_codex_status_box_with_ansi_and_an_osc_link():
    out = (
        "╭────────────╮\r\n│  \x1b[1mSession:\x1b[22m   "
        f"{CODEX_SID}   │\r\n\x1b]8;;https://x.invalid\x07link\x1b]8;;\x07╰───╯"
    )
    assert CODEX.status.session_id_in(status_scrape.plain_text(out)) == CODEX_SID


@pytest.mark.parametrize(
    "out",
    [
        "Session ID: not-a-uuid",
        f"Session ID: {SID}abc",  # part of a longer hex run: not an id
        f"Model: {SID}",  # no label
        "",
    ],
)
def test_no_session_id_without_a_labelled_uuid(out: str):
    assert CLAUDE.status.session_id_in(status_scrape.plain_text(out)) is None


def test_strip_ansi_removes_csi_osc_dcs_and_two_character_escapes():
    text = "a\x1b[31mb\x1b]0;title\x1b\\c\x1bPq#0;2;0;0;0\x1b\\d\x1b7e\x1b[?2004hf"
    assert status_scrape.strip_ansi(text) == "abcdef"


def test_status_is_typed_late_rarely_and_never_while_someone_types():
    plan = status_scrape.StatusPlan(first_after=4, retry_every=3, max_sends=2, quiet_input=2)

    def send(now, **kw):
        args = {"first_output_at": 0.0, "sends": 0, "last_send_at": None, "last_input_at": None}
        args.update(kw)
        return status_scrape.should_send(plan, now=now, **args)

    assert not send(3.9)
    assert send(4.0)
    assert not send(10, first_output_at=None)  # no output yet: nothing drawn, nothing to read
    assert not send(10, last_input_at=9.0)  # the person is typing
    assert send(10, last_input_at=7.5)
    assert not send(6, sends=1, last_send_at=4.0)
    assert send(7, sends=1, last_send_at=4.0)
    assert not send(99, sends=2, last_send_at=7.0)


# -- the screen ----------------------------------------------------------------------------

CLAUDE_DIALOG = [
    " Bash command",
    "   touch x",
    " Do you want to proceed?",
    " ❯ 1. Yes",
    "   2. Yes, and don't ask again for touch commands in /work",
    "   3. No, and tell Claude what to do differently (esc)",
]
CODEX_DIALOG = [
    "Would you like to run the following command?",
    "",
    "  $ touch x",
    "",
    "› 1. Yes, proceed (y)",
    "  2. No, and tell Codex what to do differently (esc)",
]


@pytest.mark.parametrize(("profile", "lines"), [(CLAUDE, CLAUDE_DIALOG), (CODEX, CODEX_DIALOG)])
def test_an_approval_dialog_is_found_on_screen(profile, lines: list[str]):
    prompt = profile.find_prompt(["", "older output", *lines, ""])
    assert prompt is not None
    assert prompt.question.endswith("?")
    assert any("1. Yes" in row for row in prompt.rows)


@pytest.mark.parametrize("kit", [kit for kit in KITS if kit.launch is not None])
def test_a_question_without_a_yes_choice_is_not_an_approval(kit):
    assert kit.launch.find_prompt(["Which one do you want?", "❯ 1. Red", "  2. Blue"]) is None
    assert kit.launch.find_prompt(["1. Yes this is a list", "2. Not a dialog"]) is None


def test_the_screen_emulates_what_was_drawn_and_answers_the_cursor_query():
    answered: list[bytes] = []
    screen = Screen(10, 60, answer=answered.append)
    screen.feed(b"\x1b[?2004h\x1b[2J\x1b[3;1HDo you want to proceed?\x1b[4;1H\xe2\x9d\xaf 1. Yes")
    screen.feed(b"\x1b[6n")
    assert CLAUDE.find_prompt(screen.lines()) is not None and screen.bracketed_paste
    assert answered == [b"\x1b[4;9R"]
    screen.feed(b"\x1b[2J")  # the dialog is gone
    assert CLAUDE.find_prompt(screen.lines()) is None


# -- command lines -------------------------------------------------------------------------

HOOKS = HookCommand(python="/py", script="/s/agentbar_hook.py", data_dir="/data")


def test_new_claude_gets_its_id_and_the_hook_layer():
    request = LaunchRequest(Agent("claude"), "/work", prompt="fix it")
    program = Program(("claude",), "2.1.332 (Claude Code)")
    sid = CLAUDE.preassigned_id(request, program)
    assert sid is not None
    line = command_line(CLAUDE, request, program, hooks=HOOKS, session_id=sid)
    argv = list(line.argv)
    assert argv[0] == "claude" and argv[-1] == "fix it"
    assert argv[argv.index("--session-id") + 1] == sid
    settings = json.loads(argv[argv.index("--settings") + 1])
    assert "SessionStart" in settings["hooks"]


def test_claude_resume_and_fork():
    program = Program(("claude",), "2.1.332 (Claude Code)")
    resume = LaunchRequest(Agent("claude"), "/work", mode=Mode.RESUME, source=SID)
    assert CLAUDE.preassigned_id(resume, program) is None  # it keeps its id
    argv = command_line(CLAUDE, resume, program, hooks=None).argv
    assert argv == ("claude", "--resume", SID)
    fork = LaunchRequest(Agent("claude"), "/work", mode=Mode.FORK, source=SID)
    new = CLAUDE.preassigned_id(fork, program)
    argv = command_line(CLAUDE, fork, program, hooks=None, session_id=new).argv
    assert argv == ("claude", "--session-id", new, "--resume", SID, "--fork-session")
    old = Program(("claude",), "2.0.50 (Claude Code)")
    assert CLAUDE.preassigned_id(fork, old) is None  # a fork's id is ours only from 2.0.73
    assert (
        CLAUDE.preassigned_id(LaunchRequest(Agent("claude"), "/w"), Program(("claude",), None))
        is None
    )


def test_codex_new_resume_fork_and_a_prompt_that_looks_like_an_option():
    program = Program(("codex",), "codex-cli 0.171.0")
    new = command_line(
        CODEX, LaunchRequest(Agent("codex"), "/w", prompt="-v please"), program, hooks=HOOKS
    )
    assert new.argv[-2:] == ("--", "-v please") and new.session_id is None
    assert any(a.startswith("hooks.SessionStart=") for a in new.argv)
    assert "--dangerously-bypass-hook-trust" not in new.argv
    bypass = command_line(
        CODEX, LaunchRequest(Agent("codex"), "/w"), program, hooks=HOOKS, bypass_hook_trust=True
    )
    assert bypass.argv[1] == "--dangerously-bypass-hook-trust"
    resume = LaunchRequest(Agent("codex"), "/w", mode=Mode.RESUME, source=CODEX_SID)
    assert command_line(CODEX, resume, program, hooks=None).argv == ("codex", "resume", CODEX_SID)
    fork = LaunchRequest(Agent("codex"), "/w", mode=Mode.FORK, source=CODEX_SID, prompt="go")
    assert command_line(CODEX, fork, program, hooks=None).argv == ("codex", "fork", CODEX_SID, "go")


def test_bad_requests_are_refused():
    with pytest.raises(BadLaunch):
        LaunchRequest(Agent("claude"), "/w", mode=Mode.RESUME)
    with pytest.raises(BadLaunch):
        LaunchRequest(Agent("claude"), "/w", source=SID)
    with pytest.raises(BadLaunch):
        LaunchRequest(Agent("claude"), "/w", prompt="a\x00b")


def test_the_child_does_not_inherit_agentbars_own_session():
    inherited = session_vars(kit.launch for kit in KITS if kit.launch is not None)
    assert {"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID"} <= inherited
    base = {name: "x" for name in inherited} | {"PATH": "/bin", "TERM": "dumb"}
    env = child_env(base, "abcd1234", inherited=inherited)
    assert not inherited & set(env)
    assert env["TERM"] == "xterm-256color" and env[TASK_ENV] == "abcd1234"
    assert env["PATH"] == "/bin"


# -- keys ----------------------------------------------------------------------------------


def test_typed_text_is_a_paste_that_cannot_end_itself():
    assert keys.typed("a\nb", bracketed=False) == b"a\rb"
    assert keys.typed("x\x1b[201~y", bracketed=True) == b"\x1b[200~xy\x1b[201~"
    assert keys.named("ctrl-c") == b"\x03" and keys.named("y") == b"y"
    with pytest.raises(KeyError):
        keys.named("hyper-meta-x")


def test_claude_approval_picks_the_first_choice_wherever_the_highlight_is():
    assert CLAUDE.approve_keys(tuple(CLAUDE_DIALOG)) == b"\r"
    moved = tuple(r.replace("❯ 1.", "  1.").replace("  2.", "❯ 2.", 1) for r in CLAUDE_DIALOG)
    assert CLAUDE.approve_keys(moved) == b"1"
    assert CODEX.approve_keys(tuple(CODEX_DIALOG)) == b"y"


# -- hand-off ------------------------------------------------------------------------------


def item(kind: ItemKind, text: str = "", **kw) -> ReplayItem:
    return ReplayItem(kind=kind, offset=kw.pop("offset", 0), text=text, **kw)


def snapshot() -> SessionSnapshot:
    return snap(SID, State.DONE)


SESSION = [
    item(ItemKind.USER, "Fix the flaky test in api/"),
    item(ItemKind.ASSISTANT, "Looking."),
    item(
        ItemKind.TOOL_CALL,
        name="Edit",
        call_id="c1",
        summary="api/t.py",
        input={"file_path": "api/t.py", "old_string": "a", "new_string": "b"},
    ),
    item(ItemKind.TOOL_RESULT, "ok", call_id="c1"),
    item(
        ItemKind.TOOL_CALL,
        name="Bash",
        call_id="c2",
        summary="rm -rf build",
        input={"command": "rm -rf build"},
    ),
    item(ItemKind.TOOL_RESULT, "no", call_id="c2", denied=True, is_error=True),
    item(ItemKind.USER, "Keep the build folder, use pytest -k"),
    item(
        ItemKind.TOOL_CALL,
        name="TodoWrite",
        call_id="c3",
        input={
            "todos": [
                {"content": "Fix t.py", "status": "completed"},
                {"content": "Run the suite", "status": "in_progress"},
                {"content": "Update CHANGELOG", "status": "pending"},
            ]
        },
    ),
    item(
        ItemKind.TOOL_CALL,
        name="apply_patch",
        call_id="c4",
        input="*** Begin Patch\n*** Update File: api/conf.py\n*** End Patch",
    ),
    item(ItemKind.THINKING, "hmm"),
    item(ItemKind.ASSISTANT, "The test is fixed."),
    item(ItemKind.ASSISTANT, "Run `pytest -k flaky` to check.", agent_id=None),
    item(ItemKind.ASSISTANT, "a sub-agent's words", agent_id="sub1"),
]


def test_the_last_answer_is_the_text_after_the_last_call_joined():
    assert answer_in(SESSION) == "The test is fixed.\n\nRun `pytest -k flaky` to check."
    assert answer_in([item(ItemKind.ASSISTANT, "old"), item(ItemKind.USER, "new?")]) is None


class EitherAgentsTools:
    """The session above calls both agents' tools: each call is read by whichever knows it."""

    def changed_files(self, name, tool_input):
        return CLAUDE_TOOLS.changed_files(name, tool_input) + CODEX_TOOLS.changed_files(
            name, tool_input
        )

    def todos(self, name, tool_input):
        found = CLAUDE_TOOLS.todos(name, tool_input)
        return found if found is not None else CODEX_TOOLS.todos(name, tool_input)


def test_the_brief_has_goal_decisions_files_todos_and_the_last_answer():
    text = brief(snapshot(), SESSION, EitherAgentsTools())
    assert text.startswith("# Hand-off: Fix the flaky test")
    goal = text.split("## Goal", 1)[1].split("##", 1)[0]
    assert "Fix the flaky test in api/" in goal
    assert "- Asked: Keep the build folder, use pytest -k" in text
    assert "- Refused: Bash: rm -rf build" in text
    assert "- `api/t.py` (Edit ×1)" in text and "- `api/conf.py` (apply_patch ×1)" in text
    assert "- [ ] Run the suite (in progress)" in text and "- [ ] Update CHANGELOG" in text
    assert "Fix t.py" not in text  # done
    assert text.rstrip().endswith("Run `pytest -k flaky` to check.")
    assert "sub-agent" not in text
    with pytest.raises(NothingToHandOff):
        brief(snapshot(), [])


def test_each_agents_tools_say_which_calls_change_files_or_set_todos():
    claude_only = brief(snapshot(), SESSION, CLAUDE_TOOLS)
    assert "- `api/t.py` (Edit ×1)" in claude_only and "api/conf.py" not in claude_only
    assert "## Changed files\n\n- (none recorded)" in brief(snapshot(), SESSION)  # no vocabulary
    plan = {"plan": [{"step": "Write the test", "status": "completed"}, {"step": "Ship"}]}
    assert CODEX_TOOLS.todos("update_plan", plan) == [
        ("completed", "Write the test"),
        ("pending", "Ship"),
    ]
    assert (
        CODEX_TOOLS.todos("TodoWrite", plan) is None
        and CLAUDE_TOOLS.todos("update_plan", plan) is None
    )
    patch = {"input": "*** Add File: a.py\n*** Delete File: b.py\n"}
    assert CODEX_TOOLS.changed_files("apply_patch", patch) == ["a.py", "b.py"]
    assert CLAUDE_TOOLS.changed_files("Write", {"file_path": ""}) == []


# -- the PTY as a signal -------------------------------------------------------------------


def running_turn(moved_at: float = 100.0) -> TurnState:
    call = PendingCall(
        call_id="call_1", name="exec_command", summary="touch x", asks=Asks.NOTHING, since=99.0
    )
    return TurnState(phase=Phase.RUNNING, pending=(call,), moved_at=moved_at)


def test_an_approval_prompt_on_our_screen_is_an_approval_wait():
    pty = fusion.PtyView(waiting=True, changed_at=101.0, question="Would you like to run...?")
    state = fusion.decide(
        fusion.Signals(turn=running_turn(), alive=True, pty=pty), 102.0, CODEX_TRAITS
    )
    assert (state.state, state.waiting_for, state.source) == (
        State.INPUT_REQUIRED, WaitingFor.APPROVAL, Source.PTY,
    )  # fmt: skip
    assert "touch x" in state.detail


def test_once_the_prompt_went_the_call_runs_until_the_transcript_moves_on():
    gone = fusion.PtyView(waiting=False, changed_at=105.0)
    signals = fusion.Signals(turn=running_turn(100.0), alive=True, pty=gone)
    state = fusion.decide(signals, 106.0, CODEX_TRAITS)
    assert (state.state, state.source) == (State.RUNNING, Source.PTY)
    moved = fusion.Signals(turn=running_turn(110.0), alive=True, pty=gone)
    assert fusion.decide(moved, 111.0, CODEX_TRAITS).source is Source.TRANSCRIPT


def test_a_hook_wait_is_superseded_when_our_screen_shows_the_prompt_gone():
    hook = fusion.HookView(
        state=State.INPUT_REQUIRED, waiting_for=WaitingFor.APPROVAL, detail="", at=101.0,
        event="PermissionRequest",
    )  # fmt: skip
    gone = fusion.PtyView(waiting=False, changed_at=103.0)
    signals = fusion.Signals(turn=running_turn(100.0), hook=hook, alive=True, pty=gone)
    assert fusion.decide(signals, 104.0, CLAUDE_TRAITS).state is State.RUNNING
    no_pty = fusion.Signals(turn=running_turn(100.0), hook=hook, alive=True)
    assert fusion.decide(no_pty, 104.0, CLAUDE_TRAITS).state is State.INPUT_REQUIRED


def test_a_task_that_exited_is_ended_by_the_pty():
    exited = fusion.PtyView(exited=True, detail="exit status 0")
    state = fusion.decide(
        fusion.Signals(turn=TurnState(), alive=False, pty=exited), 1.0, CLAUDE_TRAITS
    )
    assert (state.state, state.source, state.detail) == (
        State.ENDED, Source.PTY, "agent exited (exit status 0)",
    )  # fmt: skip


# -- projects ------------------------------------------------------------------------------


def test_recent_projects_newest_first_existing_only_and_pinned_first(tmp_path):
    from dataclasses import replace

    from agentbar.core.launch.projects import menu_projects, recent_projects

    a, b, c = (tmp_path / name for name in "abc")
    a.mkdir()
    b.mkdir()
    snaps = [
        replace(snapshot(), project=str(a), last_activity=10.0),
        replace(snapshot(), project=str(b), last_activity=30.0),
        replace(snapshot(), project=str(a), last_activity=20.0),
        replace(snapshot(), project=str(c), last_activity=40.0),  # gone
        replace(snapshot(), project=None, last_activity=50.0),
    ]
    assert recent_projects(snaps) == [str(b), str(a)]
    assert recent_projects(snaps, limit=1) == [str(b)]
    assert menu_projects([str(a)], [str(b), str(a)]) == [(str(a), True), (str(b), False)]
