"""Measure the replay and search back end: time to the first page of a replay for a ~1 MB and a
~50 MB transcript, and search latency over the 1 GB corpus (server side; the browser's first
paint is measured on top by the web UI's own bench).

1. Index the corpus once (cold ``catch_up()`` then the background full-text slices, timed) into
   a temporary data dir, with a ``FakeProcessTable``.
2. First page: the session whose transcript is nearest 1 MB and the one nearest 50 MB.
   ``Replay.page(snapshot)`` (the default page: the last one) with a fresh ``Replay`` each run
   (no cached thread info), ``--runs`` times; then the same through the real loopback server
   (``GET /api/sessions/<id>/items`` with an aiohttp client, keep-alive), so the figure covers
   routing, the guard, the worker-thread hop and JSON. Also the first page from the top
   (``after=0``) and one page back from the end (``before=``).
3. Search: ``--queries`` queries made of words drawn (seeded) from the indexed text itself:
   single words, two words, and 3-letter prefixes; ``Searcher.search(q, limit=50)`` in process,
   and ``GET /api/search`` through the server.

Files are in the page cache (just indexed): warm-cache figures. Nothing passes or fails.

    python bench/bench_replay.py [--corpus DIR] [--runs 50] [--queries 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
from benchlib import CORPUS_DIR, MB, OUT_DIR, Stopwatch, distribution, machine, table, write_json


@contextlib.contextmanager
def engine_over(home: Path, prefix: str) -> Iterator[tuple[Any, Any]]:
    """Settings and an engine over the agents' files under ``home``, indexing into a fresh
    data dir named by ``prefix``; stopped, closed and the data dir removed after."""
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        settings, engine = open_engine(home, data_dir)
        try:
            yield settings, engine
        finally:
            engine.stop()
            engine.index.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def open_engine(home: Path, data_dir: Path) -> Any:
    from agentbar.core.config import Settings
    from agentbar.core.engine import Engine
    from agentbar.core.index import Index
    from agentbar.core.procs import FakeProcessTable

    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data_dir)})
    return settings, Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=FakeProcessTable(),
        traits=settings.traits(),
    )


def search_cost(home: Path, pairs: int) -> dict[str, Any]:
    """CPU seconds of a cold catch-up with and without search rows, ``pairs`` interleaved runs
    each in this process (search off: the stream table keeps no searchable record). CPU time
    is steadier than wall time on a shared machine; the median ratio is the cost."""
    import statistics

    import agentbar.core.streams as streams

    searchable = streams.SEARCHABLE
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    try:
        for n in range(pairs):
            for mode in ("off", "on") if n % 2 == 0 else ("on", "off"):
                streams.SEARCHABLE = searchable if mode == "on" else frozenset()
                with engine_over(home, "agentbar-bench-cost-") as (_, engine):
                    watch = Stopwatch()
                    engine.catch_up()
                    cpu[mode].append(watch.stop().cpu)
    finally:
        streams.SEARCHABLE = searchable
    ratios = [on / off for on, off in zip(cpu["on"], cpu["off"], strict=True)]
    return {
        "pairs": pairs,
        "cpu_off_median_s": statistics.median(cpu["off"]),
        "cpu_on_median_s": statistics.median(cpu["on"]),
        "median_ratio": statistics.median(ratios),
        "min_ratio": min(cpu["on"]) / min(cpu["off"]),
    }


def pick(snapshots: list[Any], target: int) -> Any:
    sized = [(os.path.getsize(s.transcript), s) for s in snapshots if s.transcript]
    return min(sized, key=lambda pair: abs(pair[0] - target))[1]


def timed_ms(func: Any, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def http_ms(session: aiohttp.ClientSession, urls: list[str]) -> list[float]:
    samples = []
    for url in urls:
        start = time.perf_counter()
        async with session.get(url) as response:
            assert response.status == 200, (url, response.status, await response.text())
            await response.read()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def queries_from(index_path: Path, count: int, seed: int) -> list[str]:
    conn = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    texts = [
        row[0] for row in conn.execute("SELECT text FROM search_docs ORDER BY random() LIMIT 2000")
    ]
    conn.close()
    words = sorted({w.lower() for t in texts for w in re.findall(r"[A-Za-z]{4,}", t)})
    rng = random.Random(seed)
    queries = []
    for n in range(count):
        kind = n % 3
        if kind == 0:
            queries.append(rng.choice(words))
        elif kind == 1:
            queries.append(f"{rng.choice(words)} {rng.choice(words)}")
        else:
            queries.append(rng.choice(words)[:3])
    return queries


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR / "index-1G-600-s1")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "bench_replay.json")
    parser.add_argument(
        "--search-cost",
        type=int,
        default=0,
        metavar="PAIRS",
        help="only measure what search rows cost a cold catch-up (interleaved CPU runs)",
    )
    args = parser.parse_args()
    if args.search_cost:
        cost = search_cost(args.corpus, args.search_cost)
        print(
            f"cold catch-up CPU, median of {cost['pairs']}: without search rows "
            f"{cost['cpu_off_median_s']:.2f} s, with {cost['cpu_on_median_s']:.2f} s; "
            f"ratio median {cost['median_ratio']:.3f}, of the minima {cost['min_ratio']:.3f}"
        )
        write_json(args.json, {"machine": machine(), "corpus": str(args.corpus), "cost": cost})
        return
    if not (args.corpus / "corpus-manifest.json").exists():
        sys.exit(f"no corpus at {args.corpus}: run bench/bench_index.py (or corpus.py) first")

    from agentbar.core.replay.files import AgentRoots
    from agentbar.core.replay.pages import Replay
    from agentbar.core.search import Searcher
    from agentbar.core.server.runner import LoopbackServer

    result: dict[str, Any] = {"machine": machine(), "corpus": str(args.corpus)}
    with engine_over(args.corpus, "agentbar-bench-replay-") as (settings, engine):
        watch = Stopwatch()
        engine.catch_up()
        watch.stop()
        fts = Stopwatch()
        slices = 0
        while engine.step():
            slices += 1
        fts.stop()
        result["index"] = {
            "catch_up_wall_s": watch.wall,
            "catch_up_cpu_s": watch.cpu,
            "fts_slices": slices,
            "fts_wall_s": fts.wall,
            "fts_cpu_s": fts.cpu,
            "index_mb": os.path.getsize(settings.index_path) / MB,
        }
        print(
            f"indexed in {watch.wall:.1f} s (cpu {watch.cpu:.1f} s); full-text slices after it: "
            f"{slices} in {fts.wall:.2f} s; index file {result['index']['index_mb']:.0f} MB"
        )
        roots = AgentRoots(settings.agent_roots)
        adapters = settings.replay_adapters()
        snapshots = engine.sessions()
        chosen = {"1 MB": pick(snapshots, 1 * MB), "50 MB": pick(snapshots, 50 * MB)}
        rows = []
        pages: dict[str, Any] = {}
        for label, snap in chosen.items():
            size = os.path.getsize(snap.transcript)
            last = timed_ms(lambda snap=snap: Replay(roots, adapters).page(snap), args.runs)
            page = Replay(roots, adapters).page(snap)
            top = timed_ms(lambda snap=snap: Replay(roots, adapters).page(snap, after=0), args.runs)
            back = timed_ms(
                lambda snap=snap, page=page: Replay(roots, adapters).page(snap, before=page.start),
                args.runs,
            )
            pages[label] = {
                "session": f"{snap.key.agent}:{snap.key.session_id}",
                "bytes": size,
                "items_on_last_page": len(page.items),
                "last_page": distribution(last),
                "first_page_from_top": distribution(top),
                "page_before_last": distribution(back),
            }
            for name, samples in (("last page (default)", last), ("from the top", top),
                                  ("one page back", back)):  # fmt: skip
                d = distribution(samples)
                rows.append((f"{label} ({size / MB:.1f} MB, {snap.key.agent}) {name}",
                             f"{d['p50_ms']:.2f}", f"{d['p99_ms']:.2f}", d["count"]))  # fmt: skip
        searcher = Searcher(settings.index_path)
        queries = queries_from(settings.index_path, args.queries, args.seed)
        searcher.search(queries[0])  # open the connection
        hits: list[int] = []

        def one(query: str) -> None:
            hits.append(len(searcher.search(query, limit=50)))

        search_ms = []
        for query in queries:
            start = time.perf_counter()
            one(query)
            search_ms.append((time.perf_counter() - start) * 1000)
        d = distribution(search_ms)
        rows.append((f"search in process ({len(queries)} queries, limit 50)",
                     f"{d['p50_ms']:.2f}", f"{d['p99_ms']:.2f}", d["count"]))  # fmt: skip
        result["search"] = {
            "in_process": d,
            "mean_hits": sum(hits) / len(hits),
            "queries_sample": queries[:9],
        }

        server = LoopbackServer(engine, roots, kits=settings.kits, searcher=searcher)
        server.start()
        try:

            async def over_http() -> dict[str, list[float]]:
                headers = {"Authorization": f"Bearer {server.token}"}
                out: dict[str, list[float]] = {}
                async with aiohttp.ClientSession(headers=headers) as client:
                    for label, snap in chosen.items():
                        url = f"{server.origin}/api/sessions/{snap.key.session_id}/items"
                        out[label] = await http_ms(client, [url] * args.runs)
                    from urllib.parse import quote

                    urls = [f"{server.origin}/api/search?q={quote(q)}" for q in queries]
                    out["search"] = await http_ms(client, urls)
                return out

            http = asyncio.run(over_http())
        finally:
            server.stop()
        for label, samples in http.items():
            d = distribution(samples)
            name = (
                f"search over HTTP ({len(samples)} queries)"
                if label == "search"
                else f"{label} last page over HTTP"
            )
            rows.append((name, f"{d['p50_ms']:.2f}", f"{d['p99_ms']:.2f}", d["count"]))
            if label == "search":
                result["search"]["http"] = d
            else:
                pages[label]["http_last_page"] = d
        result["pages"] = pages
        print()
        print(table(rows, ("what", "p50 ms", "p99 ms", "n")))
        mean_hits = result["search"]["mean_hits"]
        print(f"\nmean hits per query {mean_hits:.1f}; load {machine()['loadavg_1m']}")
        searcher.close()
    write_json(args.json, result)


if __name__ == "__main__":
    main()
