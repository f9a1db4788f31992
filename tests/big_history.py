"""A HOME with a history large enough that agentbar's first reading of it takes seconds (so its
progress shows): bench/corpus.py's generator, kept in pytest's cache folder and made again only
when its parameters change (the test's thread; about 10 s and 650 MB the first time).

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
def big_history(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(BENCH))
    try:
        import corpus  # bench/ is not a package: on the path for this import only
    finally:
        sys.path.remove(str(BENCH))
    cache = getattr(pytestconfig, "cache", None)  # None with -p no:cacheprovider: made anew
    home = cache.mkdir("big-history") if cache is not None else tmp_path_factory.mktemp("big")
    corpus.ensure(home, SESSIONS, BYTES, seed=SEED)
    return home
