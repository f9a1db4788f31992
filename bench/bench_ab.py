"""Run one benchmark on two trees in turns (a baseline and this one) and give each figure's
ratio: on a shared machine only a baseline taken in the same run, interleaved, is fair.

Each tree is a checkout with its own venv (``--base DIR``: e.g. a worktree of ``main``; its
``.venv/bin/python`` runs its own ``bench/<script>``). Each run writes its JSON; the figures
named by ``--figure`` (dotted paths into it) are reported as medians per tree, with the ratio
this tree / baseline, and the 1-minute load average before and after each run.

    python bench/bench_ab.py --base /work/main --runs 3 \\
        --figure engine.pct_core --figure engine.cpu_s --figure tick_cost.warm_ms \\
        -- bench_idle.py --seconds 45 --no-baseline
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def dig(data: Any, path: str) -> float:
    for part in path.split("."):
        data = data[part]
    return float(data)


def run_once(tree: Path, script: list[str], out: Path) -> dict[str, Any]:
    python = tree / ".venv" / "bin" / "python"
    cmd = [str(python), str(tree / "bench" / script[0]), *script[1:], "--json", str(out)]
    load0 = os.getloadavg()[0]
    subprocess.run(cmd, check=True, cwd=tree, stdout=subprocess.DEVNULL)
    data: dict[str, Any] = json.loads(out.read_text())
    data["_load"] = (round(load0, 2), round(os.getloadavg()[0], 2))
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the baseline checkout")
    parser.add_argument("--head", type=Path, default=HERE, help="this checkout (default)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--figure", action="append", required=True)
    parser.add_argument("script", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    script = [a for a in args.script if a != "--"]
    trees = {"base": args.base.resolve(), "head": args.head.resolve()}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "head": []}
    with tempfile.TemporaryDirectory(prefix="agentbar-ab-") as tmp:
        for n in range(args.runs):
            for name in ("base", "head") if n % 2 == 0 else ("head", "base"):
                data = run_once(trees[name], script, Path(tmp) / f"{name}-{n}.json")
                runs[name].append(data)
                shown = ", ".join(f"{f}={dig(data, f):.4g}" for f in args.figure)
                print(f"run {n + 1} {name}: {shown} (load {data['_load']})", flush=True)
    print(f"\nbase {trees['base']}, head {trees['head']}; medians of {args.runs}")
    for figure in args.figure:
        base = statistics.median(dig(d, figure) for d in runs["base"])
        head = statistics.median(dig(d, figure) for d in runs["head"])
        ratio = head / base if base else float("nan")
        print(f"  {figure:32s} base {base:10.4g}  head {head:10.4g}  head/base {ratio:.3f}")
    loads = [x for name in runs for d in runs[name] for x in d["_load"]]
    print(f"1-minute load average over the runs: {min(loads):.2f}-{max(loads):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
