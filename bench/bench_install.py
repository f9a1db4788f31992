"""Measure installing agentbar from nothing: the time and the size on disk, with wheels only.

Each run is what the README's run command does on a machine that never installed anything:
``python3 -m venv`` into a new folder, then ``pip install <a copy of this checkout>`` with
``PIP_ONLY_BINARY=:all:`` (so nothing is compiled) and ``PIP_NO_CACHE_DIR=1`` (a cold cache:
every wheel is downloaded). By default pip sees PyPI alone, as a user's does: this machine's pip
configuration (a local mirror, find-links) is switched off with ``PIP_CONFIG_FILE=/dev/null``;
``--machine-pip`` keeps it. Two variants: plain ``agentbar``, and ``agentbar[window]``
(pywebview), where ``proxy_tools``, which PyPI has only as source, is allowed as source
(``PIP_NO_BINARY=proxy-tools``: pure Python, no compiler).

Figures per variant: the venv's creation and pip's install (wall seconds, median of ``--runs``),
the venv's size on disk (``du``: allocated blocks), the share that is agentbar's own files
(``agentbar/`` and its ``.dist-info``), a bare venv's size as the baseline, and the largest
packages. Network time is part of the install: the figure says how long a person waits.

    python bench/bench_install.py [--runs 5] [--python python3] [--machine-pip] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import REPO, machine, table, write_json

VARIANTS = {"agentbar": "", "agentbar[window]": "[window]"}
NOT_SHIPPED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "out", "corpus"
)
MIB = 1024 * 1024


def disk_usage(path: Path) -> int:
    """Bytes allocated to the files under ``path`` (what ``du`` counts; links once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            st = os.lstat(os.path.join(folder, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


def site_packages(venv: Path) -> Path:
    found = list(venv.glob("lib/python3.*/site-packages")) or list(venv.glob("Lib/site-packages"))
    return found[0]


def pip_env(*, machine_pip: bool, extra: str) -> dict[str, str]:
    env = dict(os.environ, PIP_NO_CACHE_DIR="1", PIP_ONLY_BINARY=":all:")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if not machine_pip:
        env["PIP_CONFIG_FILE"] = os.devnull
        for key in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT"):
            env.pop(key, None)
    if extra == "[window]":
        env["PIP_NO_BINARY"] = "proxy-tools"
    return env


def one_run(python: str, source: Path, extra: str, *, machine_pip: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentbar-install-") as scratch:
        venv = Path(scratch) / "venv"
        env = pip_env(machine_pip=machine_pip, extra=extra)
        started = time.perf_counter()
        subprocess.run([python, "-m", "venv", str(venv)], check=True, env=env)
        made = time.perf_counter()
        bare = disk_usage(venv)
        pip = venv / ("Scripts" if os.name == "nt" else "bin") / "pip"
        subprocess.run([str(pip), "install", "--quiet", f"{source}{extra}"], check=True, env=env)
        done = time.perf_counter()
        packages = site_packages(venv)
        own = disk_usage(packages / "agentbar") + sum(
            disk_usage(p) for p in packages.glob("agentbar-*.dist-info")
        )
        by_package = sorted(
            ((disk_usage(p), p.name) for p in packages.iterdir() if p.is_dir()), reverse=True
        )
        return {
            "venv_s": made - started,
            "install_s": done - made,
            "total_s": done - started,
            "venv_bytes": disk_usage(venv),
            "bare_venv_bytes": bare,
            "agentbar_bytes": own,
            "largest": [(name, size) for size, name in by_package[:6]],
            "packages": len(list(packages.glob("*.dist-info"))),
        }


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def median(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    return {
        "runs": runs,
        "venv_s": median("venv_s"),
        "install_s": median("install_s"),
        "total_s": median("total_s"),
        "venv_bytes": median("venv_bytes"),
        "bare_venv_bytes": median("bare_venv_bytes"),
        "agentbar_bytes": median("agentbar_bytes"),
        "largest": runs[-1]["largest"],
        "packages": runs[-1]["packages"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", default="python3", help="the interpreter that makes venvs")
    parser.add_argument("--machine-pip", action="store_true", help="keep this machine's pip config")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="agentbar-source-") as scratch:
        source = Path(scratch) / "agentbar"
        shutil.copytree(REPO, source, ignore=NOT_SHIPPED, symlinks=True)
        results: dict[str, Any] = {}
        # Interleaved, so both variants see the same network and load.
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
        for n in range(args.runs):
            for name, extra in VARIANTS.items():
                run = one_run(args.python, source, extra, machine_pip=args.machine_pip)
                runs[name].append(run)
                print(
                    f"run {n + 1}/{args.runs} {name}: venv {run['venv_s']:.1f} s, "
                    f"install {run['install_s']:.1f} s, {run['venv_bytes'] / MIB:.1f} MiB",
                    flush=True,
                )
        for name in VARIANTS:
            results[name] = summarise(runs[name])

    python_version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    rows = [
        (
            name,
            f"{r['venv_s']:.1f}",
            f"{r['install_s']:.1f}",
            f"{r['total_s']:.1f}",
            f"{r['venv_bytes'] / MIB:.1f}",
            f"{(r['venv_bytes'] - r['bare_venv_bytes']) / MIB:.1f}",
            f"{r['agentbar_bytes'] / MIB:.2f}",
            r["packages"],
        )
        for name, r in results.items()
    ]
    header = (
        "variant",
        "venv s",
        "pip install s",
        "total s",
        "venv MiB",
        "added MiB",
        "agentbar MiB",
        "dists",
    )
    print()
    print(f"Python {python_version}, {'this machine' if args.machine_pip else 'PyPI alone'}, "
          f"cold pip cache, wheels only; medians of {args.runs} runs")  # fmt: skip
    print(table(rows, header))
    for name, r in results.items():
        largest = ", ".join(f"{pkg} {size / MIB:.1f}" for pkg, size in r["largest"])
        print(f"largest in {name} (MiB): {largest}")
    write_json(
        args.json,
        {
            "machine": machine(),
            "python": python_version,
            "index": "machine pip config" if args.machine_pip else "PyPI",
            "platform": sysconfig.get_platform(),
            "runner": sys.version.split()[0],
            "variants": results,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
