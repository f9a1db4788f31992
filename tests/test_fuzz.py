"""The mutation fuzzer's bounded slice, run in every CI run (the 1,000,000-line run is
bench/bench_fuzz.py): real recorded lines, mutated, through both agents' parsers and replay
adapters and through a live engine over real files. 0 crashes, 0 lost good lines.

The seed is fixed so a run reproduces; set ``AGENTBAR_FUZZ_SEED`` to explore others (every
failure message names its seed)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from fuzz_lines import MUTATORS, Corpus, Tally, fuzz_engine, fuzz_lines, load_corpus, mutate

from agentbar.core.model import Agent

SEED = int(os.environ.get("AGENTBAR_FUZZ_SEED", "20261201"))


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


def report(tally: Tally) -> str:
    return "\n".join([str(tally.summary()), *tally.crashes[:3], *tally.lost[:10]])


def test_the_corpus_is_the_real_clis_lines(corpus: Corpus) -> None:
    recorded = [
        u
        for u in corpus.units
        if any("-home-user-" in f.target or "2026/11/30" in f.target for f in u)
    ]
    assert len(recorded) >= 50  # every recorded scenario of every CLI version
    assert len(corpus.lines(Agent("claude"))) > 400 and len(corpus.lines(Agent("codex"))) > 400


def test_mutants_reproduce_from_their_seed_and_differ_from_the_line(corpus: Corpus) -> None:
    lines = corpus.lines(Agent("codex"))[:50] + corpus.lines(Agent("claude"))[:50]
    first = [mutate(random.Random(SEED), line) for line in lines]
    again = [mutate(random.Random(SEED), line) for line in lines]
    assert first == again
    rng = random.Random(SEED)
    for kind, mutator in MUTATORS.items():
        for line in lines:
            out = mutator(rng, line)
            assert b"\n" not in out, kind
    assert all(m.line != line for m, line in zip(first, lines, strict=True))


def test_mutated_lines_never_crash_the_parsers_or_the_replay(corpus: Corpus) -> None:
    tally = fuzz_lines(corpus, SEED, 4000)
    assert not tally.crashes, report(tally)
    kinds = {kind for kind, _ in tally.outcomes}
    assert kinds == set(MUTATORS)
    outcomes = {outcome for _, outcome in tally.outcomes}
    assert {"malformed", "unknown", "odd_time", "clamped", "oversized", "parsed"} <= outcomes


def test_a_live_engine_loses_no_good_line_between_mutated_ones(
    corpus: Corpus, tmp_path: Path
) -> None:
    tally = Tally(SEED)
    for seed in range(SEED, SEED + 3):
        tally.seed = seed
        fuzz_engine(corpus, seed, tmp_path, files=12, per_line=2.0, tally=tally)
    assert tally.lines > 1000 and tally.good_lines > 500
    assert not tally.crashes, report(tally)
    assert not tally.lost, report(tally)
    counts = tally.engine_counts
    assert counts["malformed_lines"] and counts["unknown_records"] and counts["oversized_lines"]
    assert counts["unrepresentable_timestamps"] and counts["unreadable_files"] == 0
