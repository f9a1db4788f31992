"""A cold read's workers (core/cold_pool.py) enter the agents' packages bare: they import the
files modules and parsers they read with, not the agents' kits (replay, launch, hooks, the
seam), and still unpickle their sources and read with them. Real spawned processes."""

from __future__ import annotations

from pathlib import Path

from agentbar.core import cold_pool, cold_read
from agentbar.core.config import Settings

# Evaluated in a worker (``eval`` pickles by reference; a test module's function would not be
# importable there): what the worker imported of the agents' packages.
_SEEN = (
    "(sorted(m for m in __import__('sys').modules if m.startswith('agentbar.core.agents')),"
    " hasattr(__import__('sys').modules['agentbar.core.agents.claude'], 'KIT'))"
)


def _worker_imports(tmp_path: Path, *, bare: bool) -> tuple[list[str], bool]:
    env = {"HOME": str(tmp_path / "home"), "AGENTBAR_DATA_DIR": str(tmp_path / "data")}
    reader = cold_read.ColdReader(Settings.from_env(env).sources(), max_line_bytes=1 << 20)
    packages = {type(s).__module__.rpartition(".")[0] for s in reader.sources}
    assert "agentbar.core.agents.claude" in packages
    tracker_was_running = cold_pool.tracker_running()
    pool = cold_pool.start_pool(
        1,
        cold_read._start_worker,
        (reader.sources, 1 << 20),
        bare=packages if bare else (),
    )
    try:
        assert pool.submit(cold_read._read_files, []).result() == []
        seen: tuple[list[str], bool] = pool.submit(eval, _SEEN).result()
    finally:
        pool.shutdown()
        if not tracker_was_running:  # as the cold read does: no process outlives the pool
            cold_pool.stop_tracker()
    return seen


def test_a_worker_imports_the_files_modules_and_not_the_kits(tmp_path: Path) -> None:
    modules, has_kit = _worker_imports(tmp_path, bare=True)
    assert "agentbar.core.agents.claude.files" in modules
    assert "agentbar.core.agents.codex.files" in modules
    assert not has_kit
    assert "agentbar.core.agents.base" not in modules
    assert "agentbar.core.agents.claude.replay" not in modules


def test_without_bare_packages_a_worker_imports_the_kits(tmp_path: Path) -> None:
    """The check above can fail: the same worker started without them has the kits."""
    modules, has_kit = _worker_imports(tmp_path, bare=False)
    assert has_kit
    assert "agentbar.core.agents.base" in modules
