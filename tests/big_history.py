"""A HOME with a history large enough that agentbar's first reading of it takes seconds (so its
progress shows): bench/corpus.py's generator, kept in pytest's cache folder and made again only
when its parameters change (the test's thread).

Every file is older than an hour (the generator dates each by its last line), so none of it
counts as live: it is all history. Tests read it and never write into it (copy, or hard-link
into a HOME of their own).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SESSIONS = 120
BYTES = 640 << 20  # seconds of reading on a 2-core machine, even once the reading is fast
SEED = 14


@pytest.fixture(scope="session")
def big_history(pytestconfig: pytest.Config) -> Path:
    sys.path.insert(0, str(BENCH))
    try:
        import corpus  # bench/ is not a package: on the path for this import only
    finally:
        sys.path.remove(str(BENCH))
    home = pytestconfig.cache.mkdir("big-history") if pytestconfig.cache else None
    assert home is not None, "big_history needs pytest's cache (not -p no:cacheprovider)"
    corpus.ensure(home, SESSIONS, BYTES, seed=SEED)
    return home
