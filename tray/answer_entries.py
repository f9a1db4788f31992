"""What a request waiting on the person offers in the tray: its menu entries (Approve, Deny,
Always allow with the rule it adds; a question's options) and its notification's buttons, all as
``Action`` values that name the request's own id (pure; built on the tray's worker thread).

An answer's action is ``Action(ANSWER, "<request id>:<verdict>")`` on a notification and
``Action(ANSWER_MENU, ...)`` in the menu (the book logs where an answer came from); a question's
option is
``"<request id>:reply:<index>"`` (the option's text is looked up when it is chosen, so the label
can be shortened), and an inline reply from a notification carries its words in
``Action.text``. Naming the request, not the session, means a click can never answer a later
request of the same session: the book refuses it as stale.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.decisions import PendingRequest, RequestKind, Verdict
from .actions import Action
from .text import shorten
from .view import Entry

ANSWER = "answer"  # from a notification
ANSWER_MENU = "answer-menu"  # from the menu
RULE_CHARS = 48  # the rule as a button or entry shows it (the body shows it whole)
MAX_OPTIONS = 6  # a question's options in the menu; more: answered in the window


@dataclass(frozen=True, slots=True)
class Answer:
    """What an ``ANSWER`` action asks for, parsed back from its argument."""

    request_id: str
    verdict: Verdict
    option: int | None = None  # a question's option, by its index


def answer_action(request: PendingRequest, verdict: Verdict, kind: str = ANSWER) -> Action:
    return Action(kind, f"{request.request_id}:{verdict}")


def option_action(request: PendingRequest, index: int, kind: str = ANSWER) -> Action:
    return Action(kind, f"{request.request_id}:{Verdict.REPLY}:{index}")


def parse_answer(arg: str) -> Answer:
    """The answer an action's argument names; ``ValueError`` for anything else."""
    parts = arg.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise ValueError(f"not an answer: {arg!r}")
    verdict = Verdict(parts[1])
    if len(parts) == 2:
        return Answer(parts[0], verdict)
    if verdict is not Verdict.REPLY or not parts[2].isdigit():
        raise ValueError(f"not an answer: {arg!r}")
    return Answer(parts[0], verdict, int(parts[2]))


def always_label(rule: str) -> str:
    """ "Always allow" with the exact rule it adds (cut when long: the body has it whole)."""
    return f"Always allow {shorten(rule, RULE_CHARS)}"


def single_options(request: PendingRequest) -> tuple[str, ...]:
    """The options a one-question request offers as buttons (none for several questions or a
    question that takes several choices: those are answered in the window)."""
    if request.kind is not RequestKind.QUESTION or len(request.questions) != 1:
        return ()
    question = request.questions[0]
    return () if question.multiple else question.options


def takes_text(request: PendingRequest) -> bool:
    """A question one line of text answers (a notification's inline reply)."""
    return request.kind is RequestKind.QUESTION and len(request.questions) <= 1


def request_entries(request: PendingRequest) -> tuple[Entry, ...]:
    """The menu entries that answer ``request``."""
    if request.kind is RequestKind.QUESTION:
        options = single_options(request)
        entries = [
            Entry(shorten(f"Reply: {o}"), option_action(request, i, ANSWER_MENU))
            for i, o in enumerate(options[:MAX_OPTIONS])
        ]
        return (*entries, Entry("Deny", answer_action(request, Verdict.DENY, ANSWER_MENU)))
    entries = [
        Entry("Approve", answer_action(request, Verdict.ALLOW, ANSWER_MENU)),
        Entry("Deny", answer_action(request, Verdict.DENY, ANSWER_MENU)),
    ]
    if request.always_rule is not None:
        always = answer_action(request, Verdict.ALLOW_ALWAYS, ANSWER_MENU)
        entries.append(Entry(always_label(request.always_rule), always))
    return tuple(entries)


def request_heading(request: PendingRequest) -> str:
    """What the request is about, as a heading over its entries."""
    if request.kind is RequestKind.QUESTION and request.questions:
        return shorten(f"asks: {request.questions[0].text}")
    return shorten(f"{request.tool}: {request.summary}" if request.summary else request.tool)
