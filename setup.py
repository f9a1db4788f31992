"""The packages the wheel holds, found by walking the tree (build time, setuptools).

The design card keeps ``core/``, ``tray/`` and ``assets/`` at the top level; they install as
``agentbar.core``, ``agentbar.tray`` and ``agentbar.assets`` ("agentbar" is a namespace package).
Every folder with an ``__init__.py`` under them is a package, so a new one (an agent under
``core/agents/``) is packaged without an edit here or in ``pyproject.toml``, which holds the
rest of the configuration.
"""

from __future__ import annotations

from setuptools import find_packages, setup

FOLDERS = {"agentbar.core": "core", "agentbar.tray": "tray", "agentbar.assets": "assets"}

setup(
    package_dir=FOLDERS,
    packages=[
        f"{name}.{sub}" if sub else name
        for name, folder in FOLDERS.items()
        for sub in ("", *find_packages(folder))
    ],
)
