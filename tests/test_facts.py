"""Session facts: project, title priority and usage de-duplication (pure)."""

from __future__ import annotations

import pytest

from agentbar.core.facts import SessionFacts, fold
from agentbar.core.records import (
    TITLE_RANK_AGENT,
    TITLE_RANK_SUMMARY,
    TITLE_RANK_USER,
    ModelSeen,
    Prompt,
    Record,
    SessionMeta,
    TitleSet,
    Usage,
    UsageReport,
)


def folded(records: list[Record]) -> SessionFacts:
    facts = SessionFacts()
    for record in records:
        facts = fold(facts, record)
    return facts


def test_project_is_the_first_main_thread_cwd() -> None:
    facts = folded(
        [
            SessionMeta(session_id="s", cwd="/a", ts=1.0),
            SessionMeta(session_id="s", cwd="/b", ts=2.0),
            SessionMeta(session_id="sub", cwd="/c", ts=3.0, agent_id="x"),
        ]
    )
    assert facts.project == "/a"
    assert (facts.started_at, facts.last_activity) == (1.0, 3.0)


@pytest.mark.parametrize(
    ("records", "title"),
    [
        ([Prompt(text="first\nsecond line"), Prompt(text="later")], "first"),
        ([Prompt(text="p"), TitleSet(title="summary", rank=TITLE_RANK_SUMMARY)], "summary"),
        ([TitleSet(title="ai", rank=TITLE_RANK_AGENT), Prompt(text="p")], "ai"),
        (
            [
                TitleSet(title="mine", rank=TITLE_RANK_USER),
                TitleSet(title="ai", rank=TITLE_RANK_AGENT),
            ],
            "mine",
        ),
        (
            [
                TitleSet(title="ai 1", rank=TITLE_RANK_AGENT),
                TitleSet(title="ai 2", rank=TITLE_RANK_AGENT),
            ],
            "ai 2",
        ),
        ([Prompt(text="sub prompt", agent_id="a"), Prompt(text="main")], "main"),
    ],
)
def test_title_priority(records: list[Record], title: str) -> None:
    assert folded(records).title == title


def test_long_titles_are_cut_to_one_line() -> None:
    facts = folded([Prompt(text="x" * 500)])
    assert facts.title is not None and len(facts.title) == 120 and facts.title.endswith("…")


def u(i: int = 0, o: int = 0, r: int = 0, c: int = 0) -> Usage:
    return Usage(input_tokens=i, output_tokens=o, cache_read_tokens=r, cache_creation_tokens=c)


def test_split_copies_of_one_response_count_once() -> None:
    facts = folded(
        [
            UsageReport(usage=u(10, 5, 100), key="m1:r1"),
            UsageReport(usage=u(10, 5, 100), key="m1:r1"),
            UsageReport(usage=u(10, 5, 100), key="m1:r1"),
            UsageReport(usage=u(3, 4), key="m2:r2"),
        ]
    )
    assert facts.usage == u(13, 9, 100)


def test_a_later_copy_with_more_output_adds_only_the_growth() -> None:
    facts = folded(
        [UsageReport(usage=u(10, 1), key="m1:r1"), UsageReport(usage=u(10, 40), key="m1:r1")]
    )
    assert facts.usage == u(10, 40)


def test_usage_is_priced_under_the_model_its_thread_last_named() -> None:
    day = 1_780_000_000.0  # one moment; the ledger's day is its local date
    facts = folded(
        [
            ModelSeen(model="claude-opus-4-5"),
            ModelSeen(model="claude-haiku-4-5", agent_id="sub"),
            UsageReport(ts=day, usage=u(1_000_000, 0), key="a"),
            UsageReport(ts=day, usage=u(1_000_000, 0), key="b", agent_id="sub"),
            UsageReport(ts=day, usage=u(0, 1_000_000), key="c", agent_id="other"),
        ]
    )
    by_model = {line.model: line.cost for line in facts.ledger}
    # $5 and $1 per million input tokens; a thread that named no model costs as the main one
    assert by_model == pytest.approx({"claude-opus-4-5": 5.0 + 25.0, "claude-haiku-4-5": 1.0})
    assert facts.cost == pytest.approx(31.0)
    assert facts.usage == u(2_000_000, 1_000_000)


def test_an_unpriced_model_makes_the_cost_unknown_not_zero() -> None:
    facts = folded([ModelSeen(model="no-such-model"), UsageReport(usage=u(10, 1), key="a")])
    assert facts.cost is None
    assert [line.model for line in facts.ledger] == ["no-such-model"]
    assert folded([ModelSeen(model="no-such-model")]).cost == 0.0  # no tokens spent: nothing


def test_model_follows_the_main_thread() -> None:
    facts = folded([ModelSeen(model="a"), ModelSeen(model="b"), ModelSeen(model="c", agent_id="x")])
    assert facts.model == "b"
