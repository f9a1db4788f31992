"""Measure the board in Chromium at scale: how soon it paints and draws its list, and how smooth
scrolling it is, with 5,000 sessions, against 500 sessions and against main's board over the
same 5,000, in the same run.

1. Generated HOMEs (``corpus.py``: small Claude and Codex sessions, ages spread over a month, a
   project per five sessions, the same seed each time): ``--baseline`` (500) and ``--sessions``
   (5,000). The real engine reads each (``FakeProcessTable``: all ended), the real loopback
   server serves it, in this process, one at a time; main's board is main's ``assets/web``
   (``git archive --main``) served by the same server code, at ``/`` (its default: ended
   sessions of the last 24 hours) and ``/?all=1`` (every session).
2. Debian's Chromium (Playwright, headless, the tests' flags) opens the board ``--runs`` times
   per case in one tab (a fresh document each time). From the Performance API, relative to the
   navigation start:
   - ``first-contentful-paint``: the page's first paint;
   - the list received: ``agentbar:sessions-received`` (this board only), the WebSocket's
     first list of sessions;
   - the list drawn: the first ``.card`` in the DOM (a MutationObserver set before the page's
     scripts run: the same measure for both boards), and painted two animation frames later;
   - the longest main-thread task during the load (``longtask`` entries).
3. Scrolling: the page scrolled from top to bottom in 60 steps, one per animation frame, then
   "Show more" pressed in every section and scrolled again (every fifth load); the time between
   animation frames is the frame time (16.7 ms at 60 Hz; a long one is a visible stutter).

Nothing passes or fails; the goal is first paint under 300 ms at 5,000 sessions.

    python bench/bench_board.py [--runs 20] [--sessions 5000] [--baseline 500] [--main main]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import corpus
from bench_web import CHROMIUM, CHROMIUM_ARGS, WATCH_LONG_TASKS, start_server
from benchlib import OUT_DIR, distribution, machine, table, write_json

# Set before the page's scripts run: when the first card enters the DOM (the same measure for
# this board and main's, which marks nothing).
WATCH_FIRST_CARD = """
new MutationObserver((records, observer) => {
  if (document.querySelector('.card')) {
    window.__firstCard = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""

READ_TIMINGS = """async () => {
  while (window.__firstCard === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const painted = performance.now();
  const paint = (name) => performance.getEntriesByType('paint')
    .find((e) => e.name === name)?.startTime ?? null;
  return {
    fcp: paint('first-contentful-paint'),
    drawn: window.__firstCard,
    received: performance.getEntriesByName('agentbar:sessions-received')[0]?.startTime ?? null,
    drawn_painted: painted,
    longest_task: Math.max(0, ...(window.__longTasks || [])),
    cards: document.querySelectorAll('.card').length,
  };
}"""

# Scroll top to bottom one step per frame; the frames' spacing is what a person sees.
SCROLL = """async (steps) => {
  const el = document.scrollingElement;
  const frames = [];
  el.scrollTop = 0;
  await new Promise((resolve) => requestAnimationFrame(resolve));
  let last = performance.now();
  for (let i = 1; i <= steps; i++) {
    el.scrollTop = (el.scrollHeight - innerHeight) * i / steps;
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const now = performance.now();
    frames.push(now - last);
    last = now;
  }
  return frames;
}"""

SHOW_MORE = """async () => {
  const t0 = performance.now();
  let pressed = 0;
  for (const b of [...document.querySelectorAll('button.show-more')]) { b.click(); pressed++; }
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return { ms: performance.now() - t0, pressed, cards: document.querySelectorAll('.card').length };
}"""


def measure(page: Any, url: str, runs: int, warmup: int, steps: int) -> dict[str, Any]:
    loads, frames, more = [], [], []
    for i in range(warmup + runs):
        page.goto(url)
        page.wait_for_selector("#app[data-ready='true']", timeout=120_000)
        timings = page.evaluate(READ_TIMINGS)
        if i < warmup:
            continue
        loads.append(timings)
        if i % 5 == 0:  # scrolling is slower to measure: every fifth load
            frames += page.evaluate(SCROLL, steps)
            more.append(page.evaluate(SHOW_MORE))
            frames += page.evaluate(SCROLL, steps)
    return {"loads": loads, "frames": frames, "more": more}


def serve(
    root: Path, sessions: int, seed: int, static: Path | None
) -> tuple[Any, Any, float, float]:
    home, data = root / "home", root / "data"
    t0 = time.perf_counter()
    corpus.generate(home, sessions, sessions * 3 * corpus.KB, seed=seed)
    made = time.perf_counter() - t0
    t0 = time.perf_counter()
    service, server = start_server(home, data, static)
    return service, server, made, time.perf_counter() - t0


def main_web(rev: str, into: Path) -> Path:
    """Main's web UI files (``git archive``), to serve the board as it was."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", rev, "assets/web"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "assets" / "web"


def summary(label: str, sessions: int, got: dict[str, Any]) -> dict[str, Any]:
    pick = lambda key: [s[key] for s in got["loads"] if s[key] is not None]  # noqa: E731
    return {
        "label": label,
        "sessions": sessions,
        "fcp_ms": distribution(pick("fcp")),
        "drawn_ms": distribution(pick("drawn")),
        "received_ms": distribution(pick("received")),
        "client_ms": distribution(
            [s["drawn"] - s["received"] for s in got["loads"] if s["received"] is not None]
        ),
        "drawn_painted_ms": distribution(pick("drawn_painted")),
        "longest_task_ms": distribution(pick("longest_task")),
        "cards_in_dom": got["loads"][0]["cards"] if got["loads"] else 0,
        "frame_ms": distribution(got["frames"]),
        "show_more_ms": distribution([m["ms"] for m in got["more"]]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--baseline", type=int, default=500)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--main", default="main", help="the git rev whose board is the baseline")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "board.json")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    result: dict[str, Any] = {"machine": machine(), "runs": args.runs, "cases": []}
    old = Path(tempfile.mkdtemp(prefix="agentbar-bench-board-main-"))
    main_dir = main_web(args.main, old)
    cases = [
        ("this board", args.baseline, None, "/"),
        ("this board", args.sessions, None, "/"),
        (f"{args.main}'s board", args.sessions, main_dir, "/"),
        (f"{args.main}'s board, ?all=1", args.sessions, main_dir, "/?all=1"),
    ]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for label, count, static, path in cases:
            root = Path(tempfile.mkdtemp(prefix=f"agentbar-bench-board-{count}-"))
            print(f"{label}, {count} sessions: writing and reading {root} ...", file=sys.stderr)
            service, server, made, read = serve(root, count, args.seed, static)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(WATCH_LONG_TASKS)
                context.add_init_script(WATCH_FIRST_CARD)
                page = context.new_page()
                page.goto(server.open_url())  # the one-time code becomes a cookie
                page.wait_for_selector("#app[data-ready='true']", timeout=120_000)
                got = measure(page, server.origin + path, args.runs, args.warmup, args.steps)
                context.close()
            finally:
                server.stop()
                service.close()
                shutil.rmtree(root, ignore_errors=True)
            case = summary(label, count, got)
            case["path"], case["corpus_s"], case["engine_read_s"] = path, made, read
            result["cases"].append(case)
    shutil.rmtree(old, ignore_errors=True)

    def spread(case: dict[str, Any], key: str, digits: int = 0) -> str:
        return f"{case[key]['p50_ms']:.{digits}f} / {case[key]['p99_ms']:.{digits}f}"

    rows = [
        [
            f"{case['label']} ({case['sessions']:,})",
            spread(case, "fcp_ms"),
            spread(case, "drawn_painted_ms"),
            spread(case, "received_ms"),
            spread(case, "client_ms"),
            spread(case, "longest_task_ms"),
            spread(case, "frame_ms", 1),
            f"{case['show_more_ms']['p50_ms']:.0f}",
            case["cards_in_dom"],
        ]
        for case in result["cases"]
    ]
    base, board, before = result["cases"][0], result["cases"][1], result["cases"][2]
    result["ratio_drawn_painted_median"] = (
        board["drawn_painted_ms"]["p50_ms"] / base["drawn_painted_ms"]["p50_ms"]
    )
    result["ratio_vs_main_drawn_painted_median"] = (
        board["drawn_painted_ms"]["p50_ms"] / before["drawn_painted_ms"]["p50_ms"]
    )
    print(
        table(
            rows,
            [
                "case",
                "first paint ms (median / p99)",
                "list drawn+painted ms",
                "list received ms",
                "received to drawn ms",
                "longest task ms",
                "scroll frame ms (median / p99)",
                "show more ms",
                "cards in DOM",
            ],
        )
    )
    print(f"ratio list drawn, {board['sessions']:,} vs {base['sessions']:,}: "
          f"{result['ratio_drawn_painted_median']:.2f}; against {args.main}'s board: "
          f"{result['ratio_vs_main_drawn_painted_median']:.2f}")  # fmt: skip
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
