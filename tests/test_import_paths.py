"""Imports inside agentbar's package folders are relative, and each names a file or folder that
exists beside the importing module, so a tool that reads the tree (not the installed package)
draws every arrow: the ``agentbar.core = core`` mapping of setup.py hides absolute names from it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("core", "tray", "assets")
OURS = ("agentbar", *PACKAGE_FOLDERS)


def modules(root: Path) -> list[Path]:
    return sorted(p for folder in PACKAGE_FOLDERS for p in (root / folder).rglob("*.py"))


def imports(path: Path) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def absolute_own_imports(root: Path, path: Path) -> list[str]:
    found = []
    for node in imports(path):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        where = path.relative_to(root)
        found += [f"{where}:{node.lineno}: {n}" for n in names if n.split(".")[0] in OURS]
    return found


def _exists(folder: Path, dotted: str) -> bool:
    target = folder.joinpath(*dotted.split(".")) if dotted else folder
    return target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()


def unresolved_relative_imports(root: Path, path: Path) -> list[str]:
    missing = []
    for node in imports(path):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        folder = path.parent
        for _ in range(node.level - 1):
            folder = folder.parent
        module = node.module or ""
        if module and _exists(folder, module):
            continue  # ``from .x import name``: the module x is there
        # ``from . import x`` and ``from .. import assets``: each name is a module or a folder.
        if not module and all(_exists(folder, alias.name) for alias in node.names):
            continue
        where = path.relative_to(root)
        missing.append(f"{where}:{node.lineno}: {'.' * node.level}{module}")
    return missing


def test_the_package_folders_are_all_read() -> None:
    assert len(modules(REPO)) > 100


def test_imports_inside_the_package_are_relative() -> None:
    found = [line for path in modules(REPO) for line in absolute_own_imports(REPO, path)]
    assert found == [], "use a relative import:\n" + "\n".join(found)


def test_every_relative_import_names_a_file_or_folder_beside_it() -> None:
    found = [line for path in modules(REPO) for line in unresolved_relative_imports(REPO, path)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("source", "absolute"),
    [
        ("from agentbar.core.engine import Engine\n", True),
        ("import agentbar.core.engine\n", True),
        ("from core.engine import Engine\n", True),
        ("import tray.app as app\n", True),
        ("from .engine import Engine\n", False),
        ("import os\nfrom pathlib import Path\n", False),
    ],
)
def test_the_check_catches_an_absolute_import(tmp_path: Path, source: str, absolute: bool) -> None:
    path = tmp_path / "core" / "x.py"
    path.parent.mkdir()
    path.write_text(source)
    assert bool(absolute_own_imports(tmp_path, path)) is absolute


def test_the_check_catches_a_relative_import_of_nothing(tmp_path: Path) -> None:
    (tmp_path / "core" / "sub").mkdir(parents=True)
    (tmp_path / "assets").mkdir()
    for name in ("core/__init__.py", "core/real.py", "core/sub/__init__.py", "assets/__init__.py"):
        (tmp_path / name).write_text("")
    path = tmp_path / "core" / "sub" / "x.py"
    path.write_text(
        "from ..real import a\nfrom .gone import b\nfrom .. import real, gone2\n"
        "from ... import assets\nfrom ...core.real import c\nfrom ...nowhere import d\n"
    )
    assert unresolved_relative_imports(tmp_path, path) == [
        "core/sub/x.py:2: .gone",
        "core/sub/x.py:3: ..",
        "core/sub/x.py:6: ...nowhere",
    ]
