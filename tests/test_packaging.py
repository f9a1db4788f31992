"""The guardrails of the core/tray/assets layout: one copy of every module, a wheel that only
holds agentbar/, a headless core, and clean lint and types."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(
    *cmd: str, cwd: Path = REPO, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_tests_folder_is_not_a_package() -> None:
    assert not (REPO / "tests" / "__init__.py").exists()


def test_wheel_holds_only_agentbar(tmp_path: Path) -> None:
    result = run(sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(REPO))
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = tmp_path.glob("agentbar-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    stray = [n for n in names if not n.startswith(("agentbar/", "agentbar-"))]
    assert stray == []
    assert "agentbar/core/engine.py" in names
    assert "agentbar/tray/__main__.py" in names
    assert not any(n.startswith("agentbar/__init__") for n in names)  # a namespace package


def test_ruff_is_clean() -> None:
    result = run(str(BIN / "ruff"), "check", "core", "tray", "assets", "tests", "bench")
    assert result.returncode == 0, result.stdout[-5000:]


def test_mypy_is_clean() -> None:
    result = run(str(BIN / "mypy"))
    assert result.returncode == 0, result.stdout[-5000:]


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(root / ".layout"))
    return run(str(BIN / "lint-imports"), cwd=root, env=env)


def test_core_stays_headless() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "4 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("forbidden", ["agentbar.tray", "PIL", "webview", "dbus_fast"])
def test_the_headless_contract_catches_a_gui_import(tmp_path: Path, forbidden: str) -> None:
    # The same contract over a copy of core/ with one forbidden import added must fail.
    contract_breaks(tmp_path, 0, "core/bad.py", forbidden)


@pytest.mark.parametrize("forbidden", ["gi", "pystray"])
def test_the_linux_icon_contract_catches_a_gtk_import(tmp_path: Path, forbidden: str) -> None:
    contract_breaks(tmp_path, 1, "tray/sni/bad.py", forbidden)


def contract_breaks(tmp_path: Path, index: int, bad_module: str, forbidden: str) -> None:
    for folder in ("core", "tray", "assets"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    (tmp_path / bad_module).write_text(f'"""x"""\n\nimport {forbidden}\n')
    layout = tmp_path / ".layout" / "agentbar"
    layout.mkdir(parents=True)
    for folder in ("core", "tray", "assets"):
        (layout / folder).symlink_to(tmp_path / folder)
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = config["contracts"][index]
    lines = [
        "[importlinter]",
        "root_packages =\n    agentbar",
        "include_external_packages = True",
        "",
        "[importlinter:contract:headless]",
        f"name = {contract['name']}",
        "type = forbidden",
        "source_modules =\n    " + "\n    ".join(contract["source_modules"]),
        "forbidden_modules =\n    " + "\n    ".join(contract["forbidden_modules"]),
    ]
    (tmp_path / ".importlinter").write_text("\n".join(lines) + "\n")
    if not forbidden.startswith("agentbar."):
        # External packages must be importable for grimp to see them; a stub is enough.
        stub = tmp_path / ".layout" / forbidden
        stub.mkdir()
        (stub / "__init__.py").write_text("")
    result = lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout


@pytest.mark.parametrize(
    ("bad_module", "line", "contract"),
    [
        ("core/agents/claude/bad.py", "from agentbar.core.agents.codex import config", 2),
        ("core/agents/codex/bad.py", "from agentbar.core.agents import claude", 2),
        ("core/engine.py", "from agentbar.core.agents import claude", 3),
        ("core/replay/bad.py", "from agentbar.core.agents.registry import KITS", 3),
        ("tray/bad.py", "from agentbar.core.agents.codex import files", 3),
    ],
)
def test_the_agent_contracts_catch_an_import_that_names_an_agent(
    tmp_path: Path, bad_module: str, line: str, contract: int
) -> None:
    # The real contracts over a copy of the tree with one import added: an agent importing
    # another, or an agent-neutral package naming an agent (or the composition root).
    for folder in ("core", "tray", "assets"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    bad = tmp_path / bad_module
    bad.write_text((bad.read_text() if bad.exists() else '"""x"""\n') + f"\n{line}\n")
    layout = tmp_path / ".layout" / "agentbar"
    layout.mkdir(parents=True)
    for folder in ("core", "tray", "assets"):
        (layout / folder).symlink_to(tmp_path / folder)
    result = lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    name = config["contracts"][contract]["name"]
    broken = " ".join(result.stdout.split()).split(" BROKEN")[0]
    assert broken.endswith(" ".join(name.split())), result.stdout


def test_bare_core_imports_are_banned(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""x"""\n\nimport core.engine\n')
    result = run(str(BIN / "ruff"), "check", "--config", str(REPO / "pyproject.toml"), str(bad))
    assert result.returncode != 0
    assert "TID251" in result.stdout
