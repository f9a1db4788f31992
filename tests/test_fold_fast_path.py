"""The folds' fast paths give what their class patterns give, record for record.

``facts.fold_all`` and ``turns.reduce_all`` look a record's exact type up in a set before the
``match`` (which tries each case's class in turn), and the facts read a batch's ``LimitsSeen``
into windows once, the newest first, instead of once per record. The reference here takes
neither shortcut: every record is re-made as an instance of a subclass of its type (so no set
holds its type, and only the class patterns decide), and folded one record per call (so each
``LimitsSeen`` is read into windows on its own, as the fold did per record). Both must give the
same facts and turn for every stream of every fixture, the line writers' sessions, generated
corpora and mutated ones; and a fast path made wrong on purpose must be caught.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentbar.core import facts
from agentbar.core.facts import SessionFacts
from agentbar.core.records import (
    TOKEN_LIMIT,
    ModelSeen,
    Prompt,
    Record,
    ToolResult,
    Usage,
    UsageReport,
)
from agentbar.core.state import turns
from agentbar.core.state.turns import TurnState

from .fuzz_lines import load_corpus, mutate
from .test_fast_decode import (
    CLAUDE_DIR,
    CLAUDE_ID,
    CODEX_DIR,
    CODEX_ID,
    _claude_session,
    _codex_session,
    _corpus_module,
    dumps,
    read_home,
    write,
)


@cache
def _twin(cls: type[Record]) -> type[Record]:
    """A subclass of ``cls`` that adds nothing: no fast path knows it."""
    return type(f"Twin{cls.__name__}", (cls,), {})


def as_twin(record: Record) -> Record:
    twin = _twin(type(record))(**msgspec.structs.asdict(record))
    assert type(twin) is not type(record) and msgspec.structs.asdict(twin) == (
        msgspec.structs.asdict(record)
    )
    return twin


def reference(records: Iterable[Record]) -> tuple[SessionFacts, TurnState]:
    """The facts and the turn by the class patterns alone, one record per fold."""
    folded, turn = SessionFacts(), TurnState()
    for record in records:
        twin = as_twin(record)
        folded = facts.fold_all(folded, (twin,))
        turn = turns.reduce_all(turn, (twin,))
    return folded, turn


def fast(records: list[Record], rng: random.Random) -> tuple[SessionFacts, TurnState]:
    """The facts and the turn as the engine folds them: whole batches, of random sizes."""
    folded, turn = SessionFacts(), TurnState()
    at = 0
    while at < len(records):
        size = rng.choice((1, 7, 64, len(records)))
        batch = records[at : at + size]
        folded, turn = facts.fold_all(folded, batch), turns.reduce_all(turn, batch)
        at += size
    return folded, turn


def differences(home: Path, data_dir: Path, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    found = []
    for path, seen in read_home(home, data_dir).items():
        records = seen["records"]
        if fast(records, rng) != reference(records):
            found.append(path)
    return found


def records_of(home: Path, data_dir: Path) -> list[Record]:
    return [r for seen in read_home(home, data_dir).values() for r in seen["records"]]


def test_fixtures_and_line_writers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for f in load_corpus().files:
        write(home, f.target, list(f.lines))
    write(home, f"{CLAUDE_DIR}/{CLAUDE_ID}.jsonl", [dumps(line) for line in _claude_session()])
    name = f"rollout-2026-11-29T10-00-00-{CODEX_ID}.jsonl"
    write(home, f"{CODEX_DIR}/{name}", [dumps(line) for line in _codex_session()])
    assert differences(home, tmp_path / "data") == []
    kinds = {type(r).__name__ for r in records_of(home, tmp_path / "data")}
    # Not vacuous: the fixtures hold the kinds both fast paths skip and those they keep.
    assert {"Activity", "Bookkeeping", "ToolResult", "UsageReport", "LimitsSeen"} <= kinds
    assert {"Prompt", "TitleSet", "SessionMeta", "ModelSeen", "TurnEnded"} <= kinds


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_corpora(tmp_path: Path, seed: int) -> None:
    corpus = _corpus_module()
    home = tmp_path / "home"
    corpus.generate(home, 10, 2 * 1024 * 1024, seed=seed, now=1_796_178_343.0)
    assert differences(home, tmp_path / "data", seed) == []


@pytest.mark.parametrize("seed", range(3))
def test_mutated_fixtures(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    home = tmp_path / "home"
    for f in load_corpus().files:
        lines: list[bytes] = []
        for line in f.lines:
            lines.append(line)
            if rng.random() < 0.2:
                lines.append(mutate(rng, line).line.replace(b"\n", b" "))
        write(home, f.target, lines)
    assert differences(home, tmp_path / "data", seed) == []


@pytest.mark.parametrize(
    ("module", "name", "wrong"),
    [
        (facts, "_TIME_ONLY", lambda s: s | {Prompt}),  # a prompt's title lost
        (turns, "_NO_TURN", lambda s: s | {ToolResult}),  # a call's result not seen
        (turns, "_MOVING", lambda s: s - {Prompt}),  # (falls back: still right)
    ],
)
def test_a_wrong_fast_path_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: Any, name: str, wrong: Any
) -> None:
    home = tmp_path / "home"
    for f in load_corpus().files:
        write(home, f.target, list(f.lines))
    monkeypatch.setattr(module, name, wrong(getattr(module, name)))
    found = differences(home, tmp_path / "data")
    if name == "_MOVING":
        assert found == []  # a type missing from the set only takes the slow way
    else:
        assert found


def test_only_the_newest_limits_with_windows_count(tmp_path: Path) -> None:
    """A batch's later ``LimitsSeen`` without windows keeps the one before (as per record)."""
    home = tmp_path / "home"
    for f in load_corpus().files:
        write(home, f.target, list(f.lines))
    records = records_of(home, tmp_path / "data")
    seen = [r for r in records if type(r).__name__ == "LimitsSeen"]
    assert seen
    empty = type(seen[0])(rate_limits={"primary": {"used_percent": None}}, ts=seen[0].ts)
    batch = [seen[0], empty]
    assert facts.fold_all(SessionFacts(), batch) == reference(batch)[0]
    assert facts.fold_all(SessionFacts(), batch).limits == seen[0].windows()


def test_usage_sums_at_the_cap_and_below_zero() -> None:
    """The sums capped once equal the sums capped each step: at the token cap, and with a
    negative count (no adapter makes one; added step by step all the same)."""
    big = Usage(input_tokens=TOKEN_LIMIT - 5, output_tokens=3, cache_read_tokens=TOKEN_LIMIT)
    odd = Usage(input_tokens=-7, output_tokens=2, cache_creation_tokens=-1)
    records: list[Record] = [ModelSeen(model="claude-opus-4-5-20251101", ts=1_796_000_000.0)]
    for n, usage in enumerate((big, big, odd, big, Usage(output_tokens=1), odd)):
        records.append(UsageReport(usage=usage, key=None, ts=1_796_000_000.0 + n * 40_000))
    for at in range(len(records) + 1):
        for batch in (records[:at], records[at:]):
            assert fast(batch, random.Random(at)) == reference(batch)
    folded = facts.fold_all(SessionFacts(), records)
    assert folded == reference(records)[0]
    assert folded.summed_usage.cache_read_tokens == TOKEN_LIMIT
    assert len(folded.ledger) > 1  # several days
    # Facts whose sum is past the cap (an index written elsewhere) keep it when no usage comes.
    past = SessionFacts(summed_usage=Usage(input_tokens=TOKEN_LIMIT + 9))
    assert facts.fold_all(past, [Prompt(text="hi")]).summed_usage is past.summed_usage
