"""The shipped price table: lookups by a model's names and what a response costs (pure)."""

from __future__ import annotations

import pytest

from agentbar.core.records import Usage
from agentbar.core.usage.prices import parse, shipped


def test_a_model_is_found_by_its_name_without_provider_or_date() -> None:
    table = shipped()
    sonnet = table.price("claude-sonnet-4-5")
    assert sonnet is not None
    assert table.price("anthropic/claude-sonnet-4-5") == sonnet
    assert table.price("claude-sonnet-4-5-20990101") == sonnet  # a date the table lacks
    assert table.price("gpt-5.2-codex") is not None and table.price("gemini-2.5-pro") is not None
    assert table.price("no-such-model") is None and table.price(None) is None
    assert table.date and "ccusage 20" in table.source


def test_counts_past_200k_take_the_higher_rate_per_count_or_per_request() -> None:
    table = parse(
        {
            "tier_tokens": 200_000,
            "models": {
                "per-count": {"input": 1.0, "output": 10.0, "input_above_200k": 2.0},
                "per-request": {"input": 1.0, "output": 10.0, "input_above_200k": 2.0,
                                "output_above_200k": 20.0, "tier_applies": "request"},
            },
        }
    )  # fmt: skip
    big = Usage(input_tokens=300_000, output_tokens=5)
    assert table.cost("per-count", big) == 200_000 * 1.0 + 100_000 * 2.0 + 5 * 10.0
    assert table.cost("per-request", big) == 300_000 * 2.0 + 5 * 20.0
    small = Usage(input_tokens=1_000, output_tokens=5)
    assert table.cost("per-request", small) == 1_000 * 1.0 + 5 * 10.0


def test_one_hour_cache_writes_are_priced_apart() -> None:
    opus = shipped().price("claude-opus-4-5")
    assert opus is not None
    writes = Usage(cache_creation_tokens=1_000, cache_creation_1h_tokens=400)
    assert opus.cost(writes) == pytest.approx(600 * 6.25e-6 + 400 * 10e-6)


def test_no_tokens_cost_nothing_even_unpriced_and_a_bad_entry_is_named() -> None:
    assert shipped().cost("no-such-model", Usage()) == 0.0
    assert shipped().cost("no-such-model", Usage(output_tokens=1)) is None
    with pytest.raises(ValueError, match="price of 'broken'"):
        parse({"models": {"broken": {"input": "cheap", "output": 1}}})
