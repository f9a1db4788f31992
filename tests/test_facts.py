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


def test_cumulative_totals_count_the_last_per_thread() -> None:
    facts = folded(
        [
            UsageReport(usage=u(100, 10, 50), cumulative=True),
            UsageReport(usage=u(200, 20, 80), cumulative=True),
            UsageReport(usage=u(7, 1), cumulative=True, agent_id="sub"),
            UsageReport(usage=u(1, 1), key="k"),
        ]
    )
    assert facts.usage == u(208, 22, 80)


def test_model_follows_the_main_thread() -> None:
    facts = folded([ModelSeen(model="a"), ModelSeen(model="b"), ModelSeen(model="c", agent_id="x")])
    assert facts.model == "b"
