"""The shipped price table and what a response's tokens cost under it (pure; any thread).

``prices.json`` is dated and per model (USD per token): input, output, cache read and cache
write priced apart, with the higher rates some models charge for the tokens of a request past
200,000 (``*_above_200k``), each count priced apart as ccusage does, so that a session's cost
equals ``ccusage --offline``'s on the same files. A model the table does not hold has no cost
(``None``): unknown, never zero.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..records import Usage

_DATED = re.compile(r"-\d{8}$")  # claude-sonnet-4-5-20250929 is priced as claude-sonnet-4-5


@dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """One model's rates in USD per token; ``*_above`` apply to a count's tokens past ``tier``."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    cache_write_1h: float  # a one-hour cache write (Anthropic: twice the input rate)
    input_above: float | None = None
    output_above: float | None = None
    cache_read_above: float | None = None
    cache_write_above: float | None = None
    tier: int = 200_000
    # True: once a request's prompt (input, cache reads and writes) passes ``tier``, all its
    # tokens take the ``*_above`` rates (models.dev's context tiers: Gemini). False: each count
    # takes them for its own tokens past ``tier`` (LiteLLM's: Claude).
    whole_request: bool = False

    def cost(self, usage: Usage) -> float:
        """What one response's ``usage`` costs."""
        if self.whole_request:
            prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens
            return self._flat(usage, above=prompt > self.tier)
        five_minutes = usage.cache_creation_tokens - usage.cache_creation_1h_tokens
        return (
            _tiered(usage.input_tokens, self.input, self.input_above, self.tier)
            + _tiered(usage.output_tokens, self.output, self.output_above, self.tier)
            + _tiered(usage.cache_read_tokens, self.cache_read, self.cache_read_above, self.tier)
            + _tiered(five_minutes, self.cache_write, self.cache_write_above, self.tier)
            + _tiered(usage.cache_creation_1h_tokens, self.cache_write_1h, None, self.tier)
        )

    def _flat(self, usage: Usage, *, above: bool) -> float:
        def rate(base: float, high: float | None) -> float:
            return high if above and high is not None else base

        five_minutes = usage.cache_creation_tokens - usage.cache_creation_1h_tokens
        return (
            usage.input_tokens * rate(self.input, self.input_above)
            + usage.output_tokens * rate(self.output, self.output_above)
            + usage.cache_read_tokens * rate(self.cache_read, self.cache_read_above)
            + five_minutes * rate(self.cache_write, self.cache_write_above)
            + usage.cache_creation_1h_tokens * self.cache_write_1h
        )


def _tiered(tokens: int, rate: float, above: float | None, tier: int) -> float:
    if above is None or tokens <= tier:
        return tokens * rate
    return tier * rate + (tokens - tier) * above


@dataclass(frozen=True, slots=True)
class PriceTable:
    source: str
    date: str
    models: dict[str, Price]

    def price(self, model: str | None) -> Price | None:
        """``model``'s price: by its exact name, then without a provider prefix
        (``anthropic/``) and a date suffix; None when the table does not know it."""
        if not model:
            return None
        found = self.models.get(model)
        if found is not None:
            return found  # (the usual case: no prefix to cut, no date to drop)
        name = model.rsplit("/", 1)[-1]
        return self.models.get(name) or self.models.get(_DATED.sub("", name))

    def cost(self, model: str | None, usage: Usage) -> float | None:
        """What ``usage`` costs on ``model``: 0 for no tokens, None when the model is unpriced."""
        if usage == _NOTHING:
            return 0.0
        price = self.price(model)
        return None if price is None else price.cost(usage)


_NOTHING = Usage()


def parse(doc: dict[str, Any]) -> PriceTable:
    """A table from ``prices.json``'s content; raises ``ValueError`` on a malformed entry."""
    tier = int(doc.get("tier_tokens", 200_000))
    models: dict[str, Price] = {}
    for name, entry in doc["models"].items():
        try:
            models[name] = Price(
                input=float(entry["input"]),
                output=float(entry["output"]),
                cache_read=float(entry.get("cache_read", 0.0)),
                cache_write=float(entry.get("cache_write", 0.0)),
                cache_write_1h=float(entry.get("cache_write_1h", entry.get("cache_write", 0.0))),
                input_above=_rate(entry.get("input_above_200k")),
                output_above=_rate(entry.get("output_above_200k")),
                cache_read_above=_rate(entry.get("cache_read_above_200k")),
                cache_write_above=_rate(entry.get("cache_write_above_200k")),
                tier=tier,
                whole_request=entry.get("tier_applies") == "request",
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"price of {name!r}: {exc}") from None
    return PriceTable(
        source=str(doc.get("source", "")), date=str(doc.get("date", "")), models=models
    )


def _rate(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


@cache
def shipped() -> PriceTable:
    """The table shipped with the package (read once)."""
    text = resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8")
    return parse(json.loads(text))
