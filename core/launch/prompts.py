"""What a launched agent asks on its screen, and the shared ways of reading it off the lines:
an approval dialog or a question with numbered options (pure; the task's reader thread calls
it through the agent's ``LaunchProfile``).

Each agent's package says what its own dialogs look like (``find_prompt`` and ``find_question``
on its launch profile, built from ``find_dialog`` and ``numbered_options`` here); this module
knows no agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

LOOK_UP_ROWS = 40  # how far above its choices a dialog's question may be
CONTEXT_ROWS = 3
SUMMARY_CHARS = 300
_RULE = re.compile(r"^\s*[─━═╭╮╰╯┌┐└┘▀▄-]{3,}")  # a solid rule or a box's edge
_LINES_ONLY = re.compile(r"^[\s─━═╌┄┈╍┅┉╭╮╰╯┌┐└┘▀▄-]*$")  # a row of lines, solid or dashed
_TOOL_ROW = re.compile(r"^#?\s*(\w+) (?:command|file)\b")
_BRACKETED_TOOL = re.compile(r"\[(\w+)\]")
# "❯ 1. Red", "│ ● 2. Allow always", "  3) Other": a numbered choice, maybe highlighted.
_GAP = re.compile(r"\s{2,}")
_BORDER = " │┃|"
_NUMBERED = re.compile(r"^[\s│┃|>❯›▶*●○◯☐☑✔]*(\d{1,2})[.)]\s+(\S.*?)\s*(?:[│┃|]\s*)?$")


class PromptKind(StrEnum):
    APPROVAL = "approval"  # allow or deny a tool call
    QUESTION = "question"  # pick an option, or type an answer


@dataclass(frozen=True, slots=True)
class Prompt:
    """A dialog on screen: its question and the rows it spans (to tell two apart). A question
    has its ``options`` (in their order: option n is chosen with the key ``n``) and, when the
    agent offers to type an answer of one's own, ``other``: that option's number."""

    question: str
    rows: tuple[str, ...]
    kind: PromptKind = PromptKind.APPROVAL
    options: tuple[str, ...] = ()
    other: int | None = None
    context: tuple[str, ...] = ()  # the dialog's rows above its question (what it is about)


class DialogReader(Protocol):
    """What reads one agent's dialogs off its screen (its ``LaunchProfile``)."""

    def find_prompt(self, lines: list[str]) -> Prompt | None: ...

    def find_question(self, lines: list[str]) -> Prompt | None: ...


def read_dialog(reader: DialogReader, lines: list[str]) -> Prompt | None:
    """The approval dialog on these lines or, when there is none, the question dialog."""
    return reader.find_prompt(lines) or reader.find_question(lines)


def find_dialog(
    lines: list[str],
    choice: re.Pattern[str],
    question: re.Pattern[str],
    *,
    context_above: bool = True,
) -> Prompt | None:
    """The lowest dialog on these lines: a row matching ``choice`` (its first choice) with a
    ``question`` at most ``LOOK_UP_ROWS`` above it. The lowest wins: a TUI that scrolls keeps
    old dialogs above the live one. ``context_above``: the dialog's rows go on above its
    question (Claude's "Bash command" and the command; Gemini's box); else the question is the
    dialog's top, and what is above it is the conversation (which changes)."""
    for index in range(len(lines) - 1, -1, -1):
        if not choice.match(lines[index]):
            continue
        for above in range(index - 1, max(index - LOOK_UP_ROWS, -1), -1):
            found = question.search(lines[above])
            if found is not None:
                block = tuple(line for line in lines[above : index + 1] if line.strip())
                context = _context(lines, above) if context_above else ()
                return Prompt(question=found.group(0).strip(), rows=block, context=context)
    return None


def _context(lines: list[str], question: int) -> tuple[str, ...]:
    """Up to ``CONTEXT_ROWS`` rows of text right above a dialog's question, up to the rule or
    box edge that opens the dialog (the rows of a box inside it are read through its edges)."""
    found: list[str] = []
    for index in range(question - 1, max(question - 3 * CONTEXT_ROWS, -1), -1):
        if _RULE.match(lines[index]):
            break  # the dialog's own top: a rule, or its box's top edge
        text = lines[index].strip(_BORDER)
        if not _LINES_ONLY.match(text):  # a box or a dashed rule inside it: its text counts
            found.append(text)
        if len(found) == CONTEXT_ROWS:
            break
    return tuple(reversed(found))


def describe(prompt: Prompt) -> tuple[str, str]:
    """The tool and the summary an approval dialog shows, read off its rows (best effort: the
    tool is "" when the dialog does not name it): "Bash command" / "# Shell command" over the
    command, "Allow execution of [Shell]?", "$ touch x" under the question."""
    middle = [row.strip(_BORDER) for row in prompt.rows[1:-1]]
    middle = [row for row in middle if row and not _NUMBERED.match(row)]
    about = [*prompt.context, *middle]
    tool = ""
    for row in about:
        named = _TOOL_ROW.match(row)
        if named is not None:
            tool = named.group(1)
            break
    else:
        bracketed = _BRACKETED_TOOL.search(prompt.question)
        if bracketed is not None:
            tool = bracketed.group(1)
    commands = [row[2:].strip() for row in about if row.startswith("$ ")]
    if commands:
        return tool or "shell", commands[-1][:SUMMARY_CHARS]
    rest = [row for row in about if _TOOL_ROW.match(row) is None]
    # A row that repeats a shorter one in full ("? Shell  touch x" over "touch x") says less.
    rest = [row for row in rest if not any(o != row and o in row for o in rest)]
    summary = " · ".join(rest) or prompt.question
    return tool, summary[:SUMMARY_CHARS]


def find_question(
    lines: list[str], footer: re.Pattern[str], other_words: tuple[str, ...]
) -> Prompt | None:
    """The lowest question dialog on these lines whose ``footer`` row ("Enter to select")
    closes it: its numbered options above the footer, and its question the last text row above
    option 1. ``other_words``: how the "type your own answer" option starts; it and the options
    after it (Claude's "Chat about this") are not among the answers offered."""
    for index in range(len(lines) - 1, -1, -1):
        if not footer.search(lines[index]):
            continue
        top = max(index - 3 * LOOK_UP_ROWS, 0)
        first = first_option_row(lines, top, index)
        if first is None:
            return None
        options, _end = numbered_options(lines[:index], first)
        texts = (_GAP.split(row.strip(_BORDER))[0] for row in reversed(lines[top:first]))
        asked = next((text for text in texts if text), "")
        other = other_option(options, other_words)
        if other is not None:
            del options[other - 1 :]
        block = tuple(line for line in lines[first : index + 1] if line.strip())
        return Prompt(asked, block, PromptKind.QUESTION, tuple(options), other)
    return None


def choose(prompt: Prompt, reply: str) -> tuple[int, str | None]:
    """What a reply to the question ``prompt`` picks: an option by its number or its label,
    else the text typed into its "type your own" option: ``(option, text or None)``. Raises
    ``ValueError`` when the reply fits none of them."""
    answer = reply.strip()
    offered = ", ".join(f"{n}. {label}" for n, label in enumerate(prompt.options, start=1))
    if answer.isdigit():
        if 1 <= int(answer) <= len(prompt.options):
            return int(answer), None
        raise ValueError(f"the question has no option {answer} ({offered})")
    for number, label in enumerate(prompt.options, start=1):
        if answer.casefold() == label.casefold():
            return number, None
    if prompt.other is None:
        raise ValueError(f"the question takes one of its options ({offered}), not {reply!r}")
    if not answer or "\n" in answer or "\r" in answer:
        raise ValueError("an answer of one's own is one line of text")
    return prompt.other, answer


def highlighted(prompt: Prompt, marks: tuple[str, ...]) -> int:
    """The number of the option the dialog's highlight (a row starting with one of ``marks``)
    is on; 1 when none is seen."""
    for row in prompt.rows:
        stripped = row.lstrip(" │┃|")
        if stripped.startswith(marks):
            found = _NUMBERED.match(row)
            if found is not None:
                return int(found.group(1))
    return 1


def arrow_keys(current: int, target: int) -> list[bytes]:
    """The Up or Down presses that move a highlight from option ``current`` to ``target``."""
    step = b"\x1b[B" if target > current else b"\x1b[A"
    return [step] * abs(target - current)


def numbered_options(lines: list[str], start: int) -> tuple[list[str], int]:
    """The numbered choices from ``lines[start]`` down (1, 2, 3... in order; description rows
    between them are skipped), and the index of the row after the last one."""
    options: list[str] = []
    end = start
    for index in range(start, min(len(lines), start + 3 * LOOK_UP_ROWS)):
        found = _NUMBERED.match(lines[index])
        if found is None:
            continue
        if int(found.group(1)) != len(options) + 1:
            break
        # The label alone: a description or a side panel may follow it after a wide gap.
        options.append(_GAP.split(found.group(2).strip())[0])
        end = index + 1
    return options, end


def first_option_row(lines: list[str], top: int, until: int) -> int | None:
    """The row of the last "1." choice from row ``top`` down to above row ``until``."""
    found_at = None
    for index in range(top, min(len(lines), until)):
        found = _NUMBERED.match(lines[index])
        if found is not None and found.group(1) == "1":
            found_at = index
    return found_at


def other_option(options: list[str], words: tuple[str, ...]) -> int | None:
    """The number of the option where an answer of one's own is typed, if one is offered."""
    for number, label in enumerate(options, start=1):
        if label.lower().startswith(words):
            return number
    return None
