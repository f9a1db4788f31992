"""Resolves requirements to wheels for another platform through pip, level by level (test
helper; runs pip in a subprocess on the calling thread).

``pip install --platform`` picks wheels for the target but evaluates environment markers
(``sys_platform == "win32"``) against the machine it runs on, so a plain ``pip download`` on
Linux never sees a Windows-only dependency. This walks the graph itself: each level is one
``pip install --dry-run --no-deps --only-binary :all: --platform …`` whose JSON report gives
the chosen wheel and its ``Requires-Dist``; those are evaluated with the target's markers and
become the next level. Nothing is downloaded but metadata (PyPI serves it beside the wheel).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

PYTHONS = ("3.11", "3.12", "3.13")
NO_WHEEL = re.compile(r"No matching distribution found for ([A-Za-z0-9._-]+)")


@dataclass(frozen=True, slots=True)
class Platform:
    """An operating system and CPU as pip's ``--platform`` and the markers see them."""

    name: str
    pip_platforms: tuple[str, ...]
    sys_platform: str
    platform_system: str
    os_name: str
    machine: str


def manylinux(machine: str, glibc_minor: int, oldest: int) -> tuple[str, ...]:
    """Every manylinux tag a glibc 2.``glibc_minor`` machine takes, newest first: pip expands
    the legacy ``manylinux2014`` names but not ``manylinux_2_28`` down to older glibcs."""
    tags = tuple(f"manylinux_2_{minor}_{machine}" for minor in range(glibc_minor, oldest - 1, -1))
    return (*tags, f"manylinux2014_{machine}")


PLATFORMS = (
    Platform("win_amd64", ("win_amd64",), "win32", "Windows", "nt", "AMD64"),
    # macOS 12 and up, each architecture: pip also accepts older and universal2 wheels.
    Platform("macos_arm64", ("macosx_12_0_arm64",), "darwin", "Darwin", "posix", "arm64"),
    Platform("macos_x86_64", ("macosx_12_0_x86_64",), "darwin", "Darwin", "posix", "x86_64"),
    # glibc 2.28 and up: Debian 10+, Ubuntu 20.04+, RHEL 8+.
    Platform("linux_x86_64", manylinux("x86_64", 28, 5), "linux", "Linux", "posix", "x86_64"),
    Platform("linux_aarch64", manylinux("aarch64", 28, 17), "linux", "Linux", "posix", "aarch64"),
)


@dataclass(frozen=True, slots=True)
class Target:
    platform: Platform
    python: str  # "3.12"

    @property
    def name(self) -> str:
        return f"{self.platform.name}-cp{self.python.replace('.', '')}"

    def markers(self, extra: str = "") -> dict[str, str]:
        p = self.platform
        return {
            "implementation_name": "cpython",
            "implementation_version": f"{self.python}.0",
            "os_name": p.os_name,
            "platform_machine": p.machine,
            "platform_python_implementation": "CPython",
            "platform_release": "",
            "platform_system": p.platform_system,
            "platform_version": "",
            "python_full_version": f"{self.python}.0",
            "python_version": self.python,
            "sys_platform": p.sys_platform,
            "extra": extra,
        }

    def applies(self, requirement: Requirement, extras: Iterable[str] = ()) -> bool:
        """Whether ``requirement`` is wanted on this target, given the extras asked for."""
        marker: Marker | None = requirement.marker
        if marker is None:
            return True
        return any(marker.evaluate(self.markers(extra)) for extra in ("", *extras))

    def pip_options(self) -> list[str]:
        abi = f"cp{self.python.replace('.', '')}"
        options = ["--python-version", self.python, "--implementation", "cp", "--abi", abi]
        for platform in self.platform.pip_platforms:
            options += ["--platform", platform]
        return options


TARGETS = tuple(Target(p, v) for p in PLATFORMS for v in PYTHONS)


@dataclass(slots=True)
class Resolution:
    """What one target got: a wheel per distribution, and the distributions without one."""

    target: Target
    wheels: dict[str, str] = field(default_factory=dict)  # name -> wheel file name
    no_wheel: dict[str, str] = field(default_factory=dict)  # name -> the requirement asked


@dataclass(slots=True)
class _Wanted:
    specifier: SpecifierSet
    extras: set[str]


def resolve(
    target: Target, requirements: Iterable[str], *, pip: tuple[str, ...] | None = None
) -> Resolution:
    """Every distribution ``requirements`` need on ``target``, each as the wheel pip picks."""
    pip = pip or (sys.executable, "-m", "pip")
    result = Resolution(target)
    wanted: dict[str, _Wanted] = {}
    resolved: dict[str, Version] = {}
    extras_done: dict[str, set[str]] = {}
    pending = [r for r in map(Requirement, requirements) if target.applies(r)]
    with tempfile.TemporaryDirectory(prefix="agentbar-wheels-") as scratch:
        while pending:
            level: set[str] = set()
            for req in pending:
                name = canonicalize_name(req.name)
                if name in result.no_wheel:
                    continue
                entry = wanted.setdefault(name, _Wanted(SpecifierSet(), set()))
                entry.specifier &= req.specifier
                entry.extras |= set(req.extras)
                got = resolved.get(name)
                if got is None or not entry.specifier.contains(got, prereleases=True):
                    level.add(name)
                elif not entry.extras <= extras_done[name]:
                    level.add(name)  # the same wheel, but new extras bring more requirements
            pending = []
            if not level:
                break
            asked = {name: f"{name}{wanted[name].specifier}" for name in sorted(level)}
            for meta, wheel in _dry_run(target, asked, result, pip, Path(scratch)):
                name = canonicalize_name(meta["name"])
                deps = [Requirement(d) for d in meta.get("requires_dist") or []]
                resolved[name] = Version(str(meta["version"]))
                extras_done[name] = set(wanted[name].extras)
                result.wheels[name] = wheel
                pending += [d for d in deps if target.applies(d, wanted[name].extras)]
    return result


def _dry_run(
    target: Target,
    asked: Mapping[str, str],
    result: Resolution,
    pip: tuple[str, ...],
    scratch: Path,
) -> list[tuple[dict[str, object], str]]:
    """One pip call for a level; a distribution with no wheel is noted and the rest retried."""
    todo = dict(asked)
    report = scratch / "report.json"
    while todo:
        command = [
            *pip,
            "install",
            "--quiet",
            "--dry-run",
            "--ignore-installed",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--target",
            str(scratch / "target"),
            "--report",
            str(report),
            *target.pip_options(),
            *todo.values(),
        ]
        run = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        if run.returncode == 0:
            document = json.loads(report.read_text())
            return [
                (item["metadata"], unquote(item["download_info"]["url"].rsplit("/", 1)[-1]))
                for item in document["install"]
            ]
        missing = NO_WHEEL.search(run.stderr)
        name = canonicalize_name(missing.group(1)) if missing else None
        if name not in todo:
            raise RuntimeError(f"pip failed for {target.name}: {run.stderr[-2000:]}")
        result.no_wheel[name] = todo.pop(name)
    return []


def project_requirements(pyproject: Path, extras: Iterable[str] = ()) -> list[str]:
    """The ``[project]`` dependencies of ``pyproject``, plus those of the named extras."""
    import tomllib

    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    return requirements
