"""Measure what search's repeats folding costs: ``Searcher.search`` as it is (reads
``OVERFETCH`` x ``limit`` rows with their snippets, folds one session's identical texts into one
hit with a count) against a baseline in the same run, main's query before (``limit`` rows with
their snippets, nothing folded),
over the 1 GB corpus of ``bench_index.py``, and the project and time filters.

1. Index the corpus once into a temporary data dir (cold ``catch_up()``, then the full-text
   slices), as ``bench_replay.py`` does.
2. ``--queries`` seeded queries from the indexed text (single words, pairs, 3-letter prefixes,
   ``bench_replay.queries_from``); each query run as the baseline and as search, interleaved,
   in process (limit 50). Also with ``since`` (the last 30 days of the corpus) and with a project
   filter (the sessions of the corpus's largest project).

Warm page cache. Nothing passes or fails.

    python bench/bench_search.py [--corpus DIR] [--queries 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_replay import engine_over, queries_from
from benchlib import CORPUS_DIR, OUT_DIR, distribution, machine, table, write_json

LIMIT = 50


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR / "index-1G-600-s1")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "bench_search.json")
    args = parser.parse_args()

    from agentbar.core.search import (
        MARK_END,
        MARK_START,
        RANK_WINDOW,
        SNIPPET_TOKENS,
        Searcher,
        fts_query,
    )

    MAIN_SQL = (
        "SELECT f.agent, f.session_id, f.thread, d.offset, d.kind, d.ts,"
        f" snippet(search_text, 0, '{MARK_START}', '{MARK_END}', '…', {SNIPPET_TOKENS}),"
        " rank, f.path"
        " FROM search_text JOIN search_docs d ON d.id = search_text.rowid"
        " JOIN search_files f ON f.id = d.file"
        " WHERE search_text MATCH ? AND search_text.rowid >= ?"
        " ORDER BY rank, search_text.rowid DESC LIMIT ?"
    )

    result: dict[str, Any] = {"machine": machine(), "corpus": str(args.corpus)}
    with engine_over(args.corpus, "agentbar-bench-search-") as (settings, engine):
        engine.catch_up()
        while engine.step():
            pass
        searcher = Searcher(settings.index_path)
        queries = queries_from(settings.index_path, args.queries, args.seed)
        snapshots = engine.sessions()
        newest = max(s.last_activity or 0.0 for s in snapshots)
        since = newest - 30 * 86400
        project, _ = Counter(s.project for s in snapshots if s.project).most_common(1)[0]
        keys = frozenset(s.key for s in snapshots if s.project == project)
        searcher.search(queries[0])  # open the connection

        def baseline(q: str) -> int:
            """main's search before repeats were folded: one query of ``limit`` rows with their
            snippets (the same rank window)."""
            query = fts_query(q)
            if query is None:
                return 0
            conn = searcher._connection()
            bound = conn.execute(
                "SELECT rowid FROM search_text WHERE search_text MATCH ?"
                " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (query, RANK_WINDOW - 1),
            ).fetchone()
            rows = conn.execute(MAIN_SQL, (query, bound[0] if bound else 0, LIMIT)).fetchall()
            return len(rows)

        runs: dict[str, list[float]] = {
            "baseline": [], "search": [], "since": [], "project": []
        }  # fmt: skip
        hits: dict[str, list[int]] = {name: [] for name in runs}
        folded: list[int] = []
        calls = {
            "baseline": baseline,
            "search": lambda q: len(searcher.search(q, limit=LIMIT)),
            "since": lambda q: len(searcher.search(q, limit=LIMIT, since=since)),
            "project": lambda q: len(searcher.search(q, limit=LIMIT, sessions=keys)),
        }
        for query in queries:
            for name, call in calls.items():
                start = time.perf_counter()
                hits[name].append(call(query))
                runs[name].append((time.perf_counter() - start) * 1000)
            folded.append(sum(h.count - 1 for h in searcher.search(query, limit=LIMIT)))
        rows = []
        base = distribution(runs["baseline"])
        for name, samples in runs.items():
            d = distribution(samples)
            result[name] = {**d, "mean_hits": sum(hits[name]) / len(hits[name])}
            rows.append((name, f"{d['p50_ms']:.2f}", f"{d['p99_ms']:.2f}",
                         f"{d['p50_ms'] / base['p50_ms']:.2f}",
                         f"{result[name]['mean_hits']:.1f}"))  # fmt: skip
        result["repeats_folded_mean"] = sum(folded) / len(folded)
        result["project"] = {**result["project"], "name": project, "sessions": len(keys)}
        print(table(rows, ("what", "p50 ms", "p99 ms", "p50 / baseline", "mean hits")))
        print(
            f"\nrepeats folded per query (mean): {result['repeats_folded_mean']:.2f}; "
            f"project filter: {len(keys)} sessions; load {machine()['loadavg_1m']}"
        )
        searcher.close()
    write_json(args.json, result)


if __name__ == "__main__":
    main()
