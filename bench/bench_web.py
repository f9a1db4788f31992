"""Measure the web UI in Chromium: how soon a replay paints, and how soon its first page of items
is on screen, for a ~1 MB and a ~50 MB transcript; and what one "scroll up" page costs.

1. A temporary HOME with two Claude sessions written by ``corpus.py`` (the realistic 2.1.x
   shape: long tool outputs, thinking, sub-agents), one near ``--small`` and one near
   ``--large`` bytes. The real engine indexes them (``FakeProcessTable``: both ended), and the
   real loopback server serves them, in this process.
2. Debian's Chromium (Playwright, headless, the flags the tests use) opens the server's address
   with its token once (the cookie), then loads ``/session/claude/<id>`` ``--runs`` times per
   transcript in one tab (a fresh document each time; files in the page cache: warm figures).
   From the Performance API, relative to the navigation start:
   - ``first-contentful-paint``: the page's first paint (header and "loading");
   - ``agentbar:first-page``: the replay's first page of items is in the DOM and positioned
     (``replay.js`` marks it), and ``agentbar:first-page-painted`` two animation frames later
     (it was painted): "first page of items visible";
   - the longest main-thread task during the load (``longtask`` entries): a freeze would show
     here.
3. Scrolling to the top of the loaded page: time until the previous page's items are in the
   DOM (``--scrolls`` times per transcript, the older page each time).

Nothing passes or fails.

    python bench/bench_web.py [--runs 40] [--scrolls 10] [--small 1M] [--large 50M] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import corpus
from benchlib import MB, OUT_DIR, distribution, machine, table, write_json

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--mute-audio",
]

# Collected once the replay says it is ready (its first page drawn and positioned).
READ_TIMINGS = """async () => {
  const painted = () => performance.getEntriesByName('agentbar:first-page-painted').length > 0;
  while (!painted()) await new Promise((resolve) => setTimeout(resolve, 5));
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const paint = (name) => performance.getEntriesByType('paint')
    .find((e) => e.name === name)?.startTime ?? null;
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    fcp: paint('first-contentful-paint'),
    first_paint: paint('first-paint'),
    first_page: mark('agentbar:first-page'),
    first_page_painted: mark('agentbar:first-page-painted'),
    dom_content_loaded: nav ? nav.domContentLoadedEventEnd : null,
    longest_task: Math.max(0, ...(window.__longTasks || [])),
    items: document.querySelectorAll('.thread.main .items .item').length,
  };
}"""

WATCH_LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
}).observe({ type: 'longtask', buffered: true });
"""

SCROLL_UP = """async () => {
  const count = () => document.querySelectorAll('.thread.main .items > .item').length;
  const before = count();
  if (!document.querySelector('.page-status.top.more')) return null;
  const t0 = performance.now();
  document.scrollingElement.scrollTop = 0;
  while (count() === before) await new Promise((resolve) => setTimeout(resolve, 2));
  const t1 = performance.now();
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return { loaded: t1 - t0, painted: performance.now() - t0, added: count() - before };
}"""


def parse_size(text: str) -> int:
    return corpus.parse_size(text)


def write_sessions(home: Path, sizes: dict[str, int], seed: int) -> dict[str, tuple[str, Path]]:
    """One Claude session per wanted size, written by the corpus generator."""
    rng = random.Random(seed)
    pools = corpus.Pools(random.Random(seed + 1))
    now = time.time()
    written: dict[str, tuple[str, Path]] = {}
    for label, size in sizes.items():
        session_rng = random.Random(rng.getrandbits(64))
        session_id = corpus.new_uuid(session_rng)
        start = now - size / 60.0 - 3600.0
        info = corpus.write_claude(
            session_rng, pools, home, session_id, f"/home/dev/src/{label}", start, size, now - 1.0
        )
        written[label] = (session_id, Path(info.path))
    return written


def start_server(home: Path, data: Path, static: Path | None = None) -> tuple[Any, Any]:
    """The engine caught up with ``home`` and the loopback server, started; ``static``: another
    copy of the web UI's files to serve (bench_board.py serves main's)."""
    from agentbar.core.config import Settings
    from agentbar.core.engine import Engine
    from agentbar.core.index import Index
    from agentbar.core.lock import InstanceLock
    from agentbar.core.procs import FakeProcessTable
    from agentbar.core.replay.files import AgentRoots
    from agentbar.core.search import Searcher
    from agentbar.core.server.runner import LoopbackServer
    from agentbar.core.service import Service

    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data)})
    lock = InstanceLock(settings.lock_path)
    lock.acquire()
    index = Index.open(settings.index_path)
    engine = Engine(
        settings.sources(), index, processes=FakeProcessTable(), traits=settings.traits()
    )
    engine.catch_up()
    service = Service(engine=engine, lock=lock, owner=True)
    server = LoopbackServer(
        engine,
        AgentRoots(settings.agent_roots),
        kits=settings.kits,
        searcher=Searcher(settings.index_path),
        static=static,
    )
    server.start()
    return service, server


def measure(page: Any, url: str, runs: int, warmup: int) -> list[dict[str, Any]]:
    samples = []
    for i in range(warmup + runs):
        page.goto(url)
        page.wait_for_selector("#app[data-ready='true']", timeout=120_000)
        timings = page.evaluate(READ_TIMINGS)
        if i >= warmup:
            samples.append(timings)
    return samples


def scrolls(page: Any, url: str, count: int) -> list[dict[str, Any]]:
    page.goto(url)
    page.wait_for_selector("#app[data-ready='true']", timeout=120_000)
    out = []
    for _ in range(count):
        result = page.evaluate(SCROLL_UP)
        if result is None:
            break
        out.append(result)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--scrolls", type=int, default=10)
    parser.add_argument("--small", default="1M")
    parser.add_argument("--large", default="50M")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the temporary HOME")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "web.json")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    root = Path(tempfile.mkdtemp(prefix="agentbar-bench-web-"))
    home, data = root / "home", root / "data"
    sizes = {"1MB": parse_size(args.small), "50MB": parse_size(args.large)}
    print(f"writing transcripts into {home} ...", file=sys.stderr)
    sessions = write_sessions(home, sizes, args.seed)
    print("indexing ...", file=sys.stderr)
    t0 = time.perf_counter()
    service, server = start_server(home, data)
    index_s = time.perf_counter() - t0
    result: dict[str, Any] = {"machine": machine(), "runs": args.runs, "index_s": index_s}
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1200, "height": 900})
            context.add_init_script(WATCH_LONG_TASKS)
            page = context.new_page()
            page.goto(server.open_url())  # the one-time code becomes a cookie
            page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
            result["chromium"] = browser.version
            for label, (session_id, path) in sessions.items():
                size = path.stat().st_size
                url = f"{server.origin}/session/claude/{session_id}"
                samples = measure(page, url, args.runs, args.warmup)
                ups = scrolls(page, url, args.scrolls)
                entry = {
                    "bytes": size,
                    "items_first_page": samples[-1]["items"],
                    "fcp": distribution([s["fcp"] for s in samples if s["fcp"] is not None]),
                    "first_page": distribution([s["first_page"] for s in samples]),
                    "first_page_painted": distribution([s["first_page_painted"] for s in samples]),
                    "longest_task": distribution([s["longest_task"] for s in samples]),
                    "scroll_up_loaded": distribution([u["loaded"] for u in ups]),
                    "scroll_up_painted": distribution([u["painted"] for u in ups]),
                    "scroll_up_items": [u["added"] for u in ups],
                }
                result[label] = entry
                for name in (
                    "fcp",
                    "first_page",
                    "first_page_painted",
                    "longest_task",
                    "scroll_up_loaded",
                    "scroll_up_painted",
                ):
                    d = entry[name]
                    rows.append(
                        (
                            f"{label} ({size / MB:.1f} MB)",
                            name,
                            f"{d['p50_ms']:.0f}",
                            f"{d['p99_ms']:.0f}",
                            f"{d['max_ms']:.0f}",
                            d["count"],
                        )
                    )
            browser.close()
    finally:
        server.stop()
        if server.searcher is not None:
            server.searcher.close()
        service.close()
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"\nChromium {result.get('chromium')}, {args.runs} loads per transcript "
        f"(after {args.warmup} warm-up), index built in {index_s:.1f} s\n"
    )
    print(
        table(rows, ["transcript", "figure (ms from navigation start)", "p50", "p99", "max", "n"])
    )
    for label in sessions:
        print(
            f"{label}: {result[label]['items_first_page']} items on the first page; "
            f"scroll-up pages added {result[label]['scroll_up_items']} items"
        )
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
