"""A HOME with a history large enough that agentbar's first reading of it takes seconds (so its
progress shows): bench/corpus.py's generator, run once per test session (the test's thread).

Every file is older than an hour (the generator dates each by its last line), so none of it
counts as live: it is all history.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SESSIONS = 80
BYTES = 320 << 20  # a few seconds of reading on a busy 2-core machine


@pytest.fixture(scope="session")
def big_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HOME (read-only for the tests: copy before writing into it)."""
    sys.path.insert(0, str(BENCH))
    try:
        import corpus  # bench/ is not a package: on the path for this import only
    finally:
        sys.path.remove(str(BENCH))
    home = tmp_path_factory.mktemp("big-history")
    corpus.generate(home, SESSIONS, BYTES, seed=14)
    return home
