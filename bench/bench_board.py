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
   - the list complete: the board ready with a card (every session in and counted: this
     board draws its first page before the rest of the sessions is in), painted likewise;
   - the longest main-thread task during the load (``longtask`` entries).
3. Scrolling: the page scrolled from top to bottom in 60 steps, one per animation frame, then
   "Show more" pressed in every section and scrolled again (every fifth load); the time between
   animation frames is the frame time (16.7 ms at 60 Hz; a long one is a visible stutter).

Nothing passes or fails; the goal is first paint under 300 ms at 5,000 sessions.

Each case's server runs in a process of its own (the corpus written and read there), as the real
server does; ``--before REV`` serves REV's whole tree (server and page, ``git archive``) over
the same corpora, the same run, for the ratios of a change against the board before it.

    python bench/bench_board.py [--runs 20] [--sessions 5000,10000] [--baseline 500]
        [--before REV] [--main main | --main '']
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_web import CHROMIUM, CHROMIUM_ARGS, WATCH_LONG_TASKS
from benchlib import OUT_DIR, distribution, machine, table, write_json

# Set before the page's scripts run: when the first card enters the DOM (the same measure for
# this board and main's, which marks nothing) and when it is painted, two animation frames later;
# and when the board is complete (ready, with a card: every session in and counted).
WATCH_FIRST_CARD = """
const afterTwoFrames = (then) =>
  requestAnimationFrame(() => requestAnimationFrame(() => then(performance.now())));
new MutationObserver((records, observer) => {
  if (window.__firstCard === undefined && document.querySelector('.card')) {
    window.__firstCard = performance.now();
    afterTwoFrames((t) => { window.__firstCardPainted = t; });
  }
  if (window.__complete === undefined && document.querySelector("#app[data-ready='true'] .card")) {
    window.__complete = performance.now();
    afterTwoFrames((t) => { window.__completePainted = t; });
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true, attributes: true });
"""

READ_TIMINGS = """async () => {
  while (window.__completePainted === undefined || window.__firstCardPainted === undefined) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const paint = (name) => performance.getEntriesByType('paint')
    .find((e) => e.name === name)?.startTime ?? null;
  return {
    fcp: paint('first-contentful-paint'),
    drawn: window.__firstCard,
    received: performance.getEntriesByName('agentbar:sessions-received')[0]?.startTime ?? null,
    drawn_painted: window.__firstCardPainted,
    complete_painted: window.__completePainted,
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


# The server of one case, in a process of its own: argv = bench dir, case dir, sessions, seed,
# static dir ('' for the tree's own). Prints where it serves, then serves until stdin closes.
SERVE_CHILD = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import corpus
from bench_web import start_server
root, count, seed = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t0 = time.perf_counter()
corpus.generate(root / 'home', count, count * 3 * corpus.KB, seed=seed)
t1 = time.perf_counter()
static = Path(sys.argv[5]) if sys.argv[5] else None
service, server = start_server(root / 'home', root / 'data', static)
t2 = time.perf_counter()
where = {'origin': server.origin, 'open': server.open_url(), 'made': t1 - t0, 'read': t2 - t1}
print(json.dumps(where), flush=True)
sys.stdin.read()
server.stop()
service.close()
"""


def serve(
    tree: Path, root: Path, sessions: int, seed: int, static: Path | None
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """``tree``'s server (its ``.layout`` first on the path) over a corpus of ``sessions``."""
    env = {**os.environ, "PYTHONPATH": str(tree / ".layout")}
    child = subprocess.Popen(
        [sys.executable, "-c", SERVE_CHILD, str(tree / "bench"), str(root), str(sessions),
         str(seed), "" if static is None else str(static)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert child.stdout is not None
    return child, json.loads(child.stdout.readline())


def tree_of(rev: str, into: Path) -> Path:
    """REV's files (``git archive``): its web UI, or its whole tree with its ``.layout``."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", rev], check=True, capture_output=True
    ).stdout
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


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
        "complete_painted_ms": distribution(pick("complete_painted")),
        "longest_task_ms": distribution(pick("longest_task")),
        "cards_in_dom": got["loads"][0]["cards"] if got["loads"] else 0,
        "frame_ms": distribution(got["frames"]),
        "show_more_ms": distribution([m["ms"] for m in got["more"]]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--sessions", default="5000,10000", help="sizes, comma-separated")
    parser.add_argument("--baseline", type=int, default=500)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--before", default="", help="a git rev: its board (server and page) too")
    parser.add_argument("--main", default="main", help="main's board ('' to leave it out)")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "board.json")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.sessions.split(",") if n.strip()]

    from playwright.sync_api import sync_playwright

    result: dict[str, Any] = {"machine": machine(), "runs": args.runs, "cases": []}
    here = Path(__file__).resolve().parent.parent
    scratch = Path(tempfile.mkdtemp(prefix="agentbar-bench-board-trees-"))
    before = tree_of(args.before, scratch / "before") if args.before else None
    old = tree_of(args.main, scratch / "main") if args.main else None
    # (label, tree whose server runs, its static files or None, sessions, path)
    cases: list[tuple[str, Path, Path | None, int, str]] = [
        ("this board (baseline)", here, None, args.baseline, "/")
    ]
    for count in sizes:
        if before is not None:
            cases.append((f"before ({args.before})", before, None, count, "/"))
        cases.append(("this board", here, None, count, "/"))
    if old is not None:
        static = old / "assets" / "web"
        cases.append((f"{args.main}'s board", here, static, sizes[0], "/"))
        cases.append((f"{args.main}'s board, ?all=1", here, static, sizes[0], "/?all=1"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for label, tree, static, count, path in cases:
            root = Path(tempfile.mkdtemp(prefix=f"agentbar-bench-board-{count}-"))
            print(f"{label}, {count} sessions: writing and reading {root} ...", file=sys.stderr)
            child, where = serve(tree, root, count, args.seed, static)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(WATCH_LONG_TASKS)
                context.add_init_script(WATCH_FIRST_CARD)
                page = context.new_page()
                page.goto(where["open"])  # the one-time code becomes a cookie
                page.wait_for_selector("#app[data-ready='true']", timeout=120_000)
                got = measure(page, where["origin"] + path, args.runs, args.warmup, args.steps)
                context.close()
            finally:
                assert child.stdin is not None
                child.stdin.close()
                child.wait(timeout=60)
                shutil.rmtree(root, ignore_errors=True)
            case = summary(label, count, got)
            case["path"], case["corpus_s"], case["engine_read_s"] = (
                path,
                where["made"],
                where["read"],
            )
            result["cases"].append(case)
    shutil.rmtree(scratch, ignore_errors=True)

    def spread(case: dict[str, Any], key: str, digits: int = 0) -> str:
        return f"{case[key]['p50_ms']:.{digits}f} / {case[key]['p99_ms']:.{digits}f}"

    base = result["cases"][0]["drawn_painted_ms"]["p50_ms"]
    rows = [
        [
            f"{case['label']} ({case['sessions']:,})",
            spread(case, "fcp_ms"),
            spread(case, "received_ms"),
            spread(case, "client_ms"),
            spread(case, "drawn_painted_ms"),
            f"{case['drawn_painted_ms']['p50_ms'] / base:.2f}",
            spread(case, "complete_painted_ms"),
            spread(case, "longest_task_ms"),
            spread(case, "frame_ms", 1),
            f"{case['show_more_ms']['p50_ms']:.0f}",
            case["cards_in_dom"],
        ]
        for case in result["cases"]
    ]
    print(
        table(
            rows,
            [
                "case",
                "first paint ms (median / p99)",
                "list received ms",
                "received to drawn ms",
                "list drawn+painted ms",
                "drawn+painted median / baseline",
                "all counted + painted ms",
                "longest task ms",
                "scroll frame ms (median / p99)",
                "show more ms",
                "cards in DOM",
            ],
        )
    )
    for i, case in enumerate(result["cases"]):
        if case["label"].startswith("before"):  # the next case is this board over the same
            now = result["cases"][i + 1]
            ratio = now["drawn_painted_ms"]["p50_ms"] / case["drawn_painted_ms"]["p50_ms"]
            result[f"ratio_vs_before_{case['sessions']}"] = ratio
            print(f"list drawn + painted, {case['sessions']:,}: this board / before = {ratio:.2f}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
