"""Each agent's dialogs read off its launched task's screen by its own launch profile: approval
prompts and questions (rows copied from the real CLIs' screens: Claude Code 2.0.77 and
2.1.332, Codex 0.99.0 and 0.171.0, Gemini CLI 0.38.2 and 0.61.0, opencode 1.18.33), what an
approval is about (tool, summary), and the keys that answer a question (pure)."""

from __future__ import annotations

import pytest

from agentbar.core.agents.claude.launch import LAUNCH as CLAUDE
from agentbar.core.agents.codex.launch import LAUNCH as CODEX
from agentbar.core.agents.gemini.launch import LAUNCH as GEMINI
from agentbar.core.agents.opencode.launch import LAUNCH as OPENCODE
from agentbar.core.launch.prompts import Prompt, PromptKind, choose, describe, read_dialog
from agentbar.core.launch.terminal_route import same_choices, same_dialog

UP, DOWN = b"\x1b[A", b"\x1b[B"

CLAUDE_QUESTION = [
    "❯ pick a color",
    "",
    "─" * 80,
    " ☐ Color",
    "",
    "Which color should the file be?",
    "",
    "❯ 1. Red",
    "     warm",
    "  2. Blue",
    "     cool",
    "  3. Type something.",
    "─" * 80,
    "  4. Chat about this",
    "",
    "Enter to select · ↑/↓ to navigate · Esc to cancel",
]
CLAUDE_2_0_QUESTION = [
    *CLAUDE_QUESTION[:12],
    "",
    "Enter to select · Tab/Arrow keys to navigate · Esc to cancel",
]
CODEX_QUESTION = [
    "› ask me which style",
    "",
    "  Question 1/1 (1 unanswered)",
    "  Which indentation style do you want?",
    "",
    "  › 1. Tabs (Recommended)  Use tabs.",
    "    2. Spaces              Use spaces.",
    "    3. None of the above   Optionally, add details in notes (tab)",
    "",
    "  tab to add notes | enter to submit answer | esc to interrupt",
]
GEMINI_QUESTION = [
    " > ask me which style",
    "╭" + "─" * 70 + "╮",
    "│ Answer Questions" + " " * 52 + "│",
    "│" + " " * 70 + "│",
    "│ Which indentation style do you want?" + " " * 33 + "│",
    "│" + " " * 70 + "│",
    "│ ● 1.  Tabs" + " " * 59 + "│",
    "│       Use tabs." + " " * 54 + "│",
    "│   2.  Spaces" + " " * 57 + "│",
    "│       Use spaces." + " " * 52 + "│",
    "│   3.  Enter a custom value" + " " * 43 + "│",
    "│" + " " * 70 + "│",
    "│ Enter to select · ↑/↓ to navigate · Esc to cancel" + " " * 20 + "│",
    "╰" + "─" * 70 + "╯",
]
OPENCODE_QUESTION = [
    "  ┃  format the file" + " " * 60 + "Context",
    "  ┃",
    "  ┃  Tabs or spaces?",
    "  ┃",
    "  ┃  1. Tabs",
    "  ┃     Indent with tabs",
    "  ┃  2. Spaces",
    "  ┃     Indent with spaces" + " " * 60 + "/tmp/agentbar-conformance-",
    "  ┃  3. Type your own answer" + " " * 60 + "test_question[1.18.33]/",
    "  ┃" + " " * 80 + "project",
    "  ┃  ↑↓ select  enter submit  esc dismiss",
]
GEMINI_APPROVAL = [
    "╭" + "─" * 60 + "╮",
    "│ ? Shell  touch booked.txt" + " " * 35 + "│",
    "│ ╭" + "─" * 56 + "╮ │",
    "│ │ touch booked.txt" + " " * 40 + "│ │",
    "│ ╰" + "─" * 56 + "╯ │",
    "│ Allow execution of [Shell]?" + " " * 33 + "│",
    "│" + " " * 60 + "│",
    "│ ● 1. Allow once" + " " * 45 + "│",
    "│   2. Allow for this session" + " " * 33 + "│",
    "│   3. No, suggest changes (esc)" + " " * 30 + "│",
    "╰" + "─" * 60 + "╯",
]
CLAUDE_APPROVAL = [
    "─" * 80,
    " Bash command",
    "",
    "   touch x",
    "   Create the file",
    "",
    " Do you want to proceed?",
    " ❯ 1. Yes",
    "   2. Yes, and don't ask again for touch commands in /work",
    "   3. No, and tell Claude what to do differently (esc)",
]
CLAUDE_2_1_APPROVAL = [  # 2.1.332: the command between dashed rules
    "● Making it",
    "  ⎿  $ touch made-0.txt",
    "─" * 80,
    " Bash command",
    " make it",
    "╌" * 80,
    " touch made-0.txt",
    "╌" * 80,
    " Do you want to proceed?",
    " ❯ 1. Yes",
    "   2. Yes, and always allow access to /tmp/project from this project",
    "   3. No",
    " Esc to cancel · Tab to amend",
]
CODEX_APPROVAL = [
    "• Working (3s • esc to interrupt)",  # the conversation above: not the dialog's
    "› make it",
    "",
    "  Would you like to run the following command?",
    "",
    "  $ touch x",
    "",
    "› 1. Yes, proceed (y)",
    "  2. No, and tell Codex what to do differently (esc)",
]
OPENCODE_APPROVAL = [
    "     $ touch made.txt",
    "  ┃  △ Permission required",
    "  ┃    # Shell command",
    "  ┃",
    "  ┃  $ touch made.txt",
    "  ┃",
    "  ┃   Allow once   Allow always   Reject           ctrl+f fullscreen  ⇆ select",
]


@pytest.mark.parametrize(
    ("profile", "lines", "question", "options", "other"),
    [
        (CLAUDE, CLAUDE_QUESTION, "Which color should the file be?", ("Red", "Blue"), 3),
        (CLAUDE, CLAUDE_2_0_QUESTION, "Which color should the file be?", ("Red", "Blue"), 3),
        (CODEX, CODEX_QUESTION, "Which indentation style do you want?",
         ("Tabs (Recommended)", "Spaces"), 3),
        (GEMINI, GEMINI_QUESTION, "Which indentation style do you want?", ("Tabs", "Spaces"), 3),
        (OPENCODE, OPENCODE_QUESTION, "Tabs or spaces?", ("Tabs", "Spaces"), 3),
    ],
)  # fmt: skip
def test_each_agent_reads_its_own_question_dialog(profile, lines, question, options, other):
    found = profile.find_question(["older output", *lines, ""])
    assert found is not None and found.kind is PromptKind.QUESTION
    assert (found.question, found.options, found.other) == (question, options, other)
    assert profile.find_prompt(lines) is None  # not an approval
    assert read_dialog(profile, lines) == found
    footless = [row for row in lines if "select" not in row and "submit" not in row]
    assert profile.find_question(footless) is None  # answered: the dialog is gone


@pytest.mark.parametrize(
    ("profile", "lines", "tool", "summary"),
    [
        (CLAUDE, CLAUDE_APPROVAL, "Bash", "touch x · Create the file"),
        (CLAUDE, CLAUDE_2_1_APPROVAL, "Bash", "make it · touch made-0.txt"),
        (CODEX, CODEX_APPROVAL, "shell", "touch x"),
        (GEMINI, GEMINI_APPROVAL, "Shell", "touch booked.txt"),
        (OPENCODE, OPENCODE_APPROVAL, "Shell", "touch made.txt"),
    ],
)
def test_what_an_approval_is_about_is_read_off_its_dialog(profile, lines, tool, summary):
    found = profile.find_prompt(["", *lines, ""])
    assert found is not None and found.kind is PromptKind.APPROVAL
    assert describe(found) == (tool, summary)
    assert read_dialog(profile, lines) == found


def test_a_reply_picks_an_option_by_number_or_label_else_types_it_where_offered():
    found = CLAUDE.find_question(CLAUDE_QUESTION)
    assert found is not None
    assert choose(found, "2") == (2, None)
    assert choose(found, " blue ") == (2, None)
    assert choose(found, "green, please") == (3, "green, please")
    with pytest.raises(ValueError, match="no option 7"):
        choose(found, "7")
    with pytest.raises(ValueError, match="one line"):
        choose(found, "two\nlines")
    closed = Prompt("Pick", (), PromptKind.QUESTION, ("A", "B"), other=None)
    with pytest.raises(ValueError, match=r"1\. A, 2\. B"):
        choose(closed, "C")


def test_the_keys_move_the_highlight_from_where_it_is_then_enter():
    found = CLAUDE.find_question(CLAUDE_QUESTION)
    assert found is not None
    assert CLAUDE.reply_keys(found, 1, None) == [b"\r"]
    assert CLAUDE.reply_keys(found, 2, None) == [DOWN, b"\r"]
    assert CLAUDE.reply_keys(found, 3, "teal") == [DOWN, DOWN, b"teal", b"\r"]
    moved = CLAUDE.find_question(
        [r.replace("❯ 1.", "  1.").replace("  2. Blue", "❯ 2. Blue") for r in CLAUDE_QUESTION]
    )
    assert moved is not None and CLAUDE.reply_keys(moved, 1, None) == [UP, b"\r"]
    codex = CODEX.find_question(CODEX_QUESTION)
    assert codex is not None
    assert CODEX.reply_keys(codex, 3, "mixed") == [DOWN, DOWN, b"\t", b"mixed", b"\r"]
    gemini = GEMINI.find_question(GEMINI_QUESTION)
    assert gemini is not None and GEMINI.reply_keys(gemini, 2, None) == [DOWN, b"\r"]
    opencode = OPENCODE.find_question(OPENCODE_QUESTION)
    assert opencode is not None
    assert OPENCODE.reply_keys(opencode, 3, "two") == [DOWN, DOWN, b"\r", b"two", b"\r"]


def test_a_dialog_redrawn_or_with_its_highlight_moved_is_the_same_dialog():
    first = CLAUDE.find_prompt(CLAUDE_APPROVAL)
    moved = CLAUDE.find_prompt(
        [r.replace("❯ 1.", "  1.").replace("   2.", " ❯ 2.", 1) for r in CLAUDE_APPROVAL]
    )
    other = CLAUDE.find_prompt([r.replace("touch x", "rm y") for r in CLAUDE_APPROVAL])
    assert first is not None and moved is not None and other is not None
    assert same_dialog(first, moved) and not same_dialog(first, other)
    # Another command, the same question and choices: only a resize's redraw may take it.
    assert same_choices(first, other) and same_choices(first, moved)
    question = CLAUDE.find_question(CLAUDE_QUESTION)
    assert question is not None and not same_dialog(first, question)
