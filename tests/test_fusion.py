"""The pure pieces of fusion: reading a question off an answer, and signal priority."""

from __future__ import annotations

import pytest

from agentbar.core.agents.claude import TRAITS as CLAUDE_TRAITS
from agentbar.core.model import Source, State, WaitingFor
from agentbar.core.state import fusion
from agentbar.core.state.fusion import last_line, question_in
from agentbar.core.state.turns import Phase, TurnState


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        ("Should I commit?", "Should I commit?"),
        ("Done. Want me to also update the docs?", "Want me to also update the docs?"),
        ("All set.\n\nShall I deploy?  \n", "Shall I deploy?"),
        ("**Proceed with the migration?**", "Proceed with the migration?"),
        ("要继续吗？", "要继续吗？"),
        ("- A\n- B\n\nWhich one do you prefer?", "Which one do you prefer?"),
        ("Why did it fail? The cache was stale.\n\nFixed.", None),
        ("Run:\n```\nls -la?\n```", None),
        ("Let me know if you need anything else!", None),
        ("", None),
    ],
)
def test_question_in(answer: str, question: str | None) -> None:
    assert question_in(answer) == question


def test_last_line_skips_code_and_blank_lines() -> None:
    assert last_line("Done.\n\n```\ncode\n```\n\n") == "Done."
    assert last_line("one\ntwo\n") == "two"


def test_liveness_outranks_everything() -> None:
    signals = fusion.Signals(
        turn=TurnState(phase=Phase.RUNNING),
        registry=fusion.RegistryView("waiting", "permission prompt", None),
        hook=fusion.HookView(State.RUNNING, None, "", 0.0),
        alive=False,
    )
    got = fusion.decide(signals, 0.0, CLAUDE_TRAITS)
    assert (got.state, got.source) == (State.ENDED, Source.PROCESS)


def test_a_hook_outranks_the_registry_and_borrows_the_transcripts_detail() -> None:
    from agentbar.core.records import Asks
    from agentbar.core.state.turns import PendingCall

    turn = TurnState(
        phase=Phase.RUNNING, pending=(PendingCall("c", "Bash", "make", Asks.NOTHING, None),)
    )
    signals = fusion.Signals(
        turn=turn,
        registry=fusion.RegistryView("busy", None, None),
        hook=fusion.HookView(State.INPUT_REQUIRED, WaitingFor.APPROVAL, "", 0.0),
        alive=True,
    )
    got = fusion.decide(signals, 0.0, CLAUDE_TRAITS)
    assert (got.state, got.waiting_for, got.source, got.detail) == (
        State.INPUT_REQUIRED,
        WaitingFor.APPROVAL,
        Source.HOOK,
        "Bash: make",
    )


def test_an_unknown_registry_status_falls_back_to_the_transcript() -> None:
    signals = fusion.Signals(
        turn=TurnState(phase=Phase.DONE, answer="ok", answer_final=True),
        registry=fusion.RegistryView("compacting", None, None),
        alive=True,
    )
    got = fusion.decide(signals, 0.0, CLAUDE_TRAITS)
    assert (got.state, got.source) == (State.DONE, Source.TRANSCRIPT)


def test_registry_idle_before_the_answer_lands_is_provisional() -> None:
    running = TurnState(phase=Phase.RUNNING)
    answered = TurnState(phase=Phase.ANSWERED, answer="All done.")
    idle = fusion.RegistryView("idle", None, None)
    early = fusion.decide(
        fusion.Signals(turn=running, registry=idle, alive=True), 0.0, CLAUDE_TRAITS
    )
    late = fusion.decide(
        fusion.Signals(turn=answered, registry=idle, alive=True), 0.0, CLAUDE_TRAITS
    )
    assert (early.state, early.provisional) == (State.DONE, True)
    assert (late.state, late.provisional, late.detail) == (State.DONE, False, "All done.")
