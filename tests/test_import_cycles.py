"""No import cycles anywhere in the package: every module can be read (and imported) after the
ones it uses. grimp (import-linter's graph) over the real tree, and over a copy with a planted
cycle, which must be caught."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
from import_cycles import cycles

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).resolve().parent / "import_cycles.py"


def cycles_in(root: Path) -> list[list[str]]:
    env = dict(os.environ, PYTHONPATH=str(root / ".layout"))
    result = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=root, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    found: list[list[str]] = orjson.loads(result.stdout)
    return found


def test_the_package_has_no_import_cycle() -> None:
    assert cycles_in(REPO) == []


def test_a_planted_cycle_is_caught(tmp_path: Path) -> None:
    for folder in ("core", "tray", "assets"):
        shutil.copytree(
            REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    # Deferred, inside a function, as the old circles were: still a cycle.
    (tmp_path / "core" / "planted.py").write_text('"""x"""\n\nfrom agentbar.core import engine\n')
    (tmp_path / "core" / "engine_messages.py").write_text(
        (REPO / "core" / "engine_messages.py").read_text()
        + "\n\ndef _late() -> None:\n    from agentbar.core import planted  # noqa: PLC0415\n"
    )
    layout = tmp_path / ".layout" / "agentbar"
    layout.mkdir(parents=True)
    for folder in ("core", "tray", "assets"):
        (layout / folder).symlink_to(tmp_path / folder)
    found = cycles_in(tmp_path)
    assert len(found) == 1
    assert {
        "agentbar.core.planted",
        "agentbar.core.engine",
        "agentbar.core.engine_messages",
    } <= set(found[0])


def test_cycles_finds_each_strongly_connected_group() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert cycles(graph, lambda m: graph[m]) == [["a", "b", "c"], ["d", "e"]]
