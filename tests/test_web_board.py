"""The board in Debian's Chromium (Playwright) against the real server over the fixture world:
screenshots at 1280 and 420 px in light and dark (kept as artefacts: ``$AGENTBAR_ARTEFACTS``,
else ``$AGENTBAR_TEST_ARTIFACTS``, else the test's tmp folder; the folder is printed), "Needs
you" first with buttons that answer the real decision book, sections named by recency, filters
kept in the address (reload, back and forward), projects that collapse and stay so, no
horizontal scroll at 420 px, tokens without the cache; and a board over a generated HOME of
5,000 sessions that draws a page of each section, not all of them."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_harness import (
    APPROVE,
    APPROVE_COMMAND,
    HIT_WORD,
    QUESTION,
    QUESTION_TEXT,
    RICH,
    RUNNING,
    World,
    answered,
)

from agentbar.core.decisions import (
    BookChange,
    Decision,
    PendingRequest,
    Question,
    RequestKind,
    Route,
    Verdict,
)
from agentbar.core.server.context import BOARD_FIELDS

SIZES = {"wide": 1280, "narrow": 420}
SCHEMES = ("light", "dark")
NO_SIDEWAYS_SCROLL = "() => document.scrollingElement.scrollWidth <= window.innerWidth"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = os.environ.get("AGENTBAR_ARTEFACTS") or os.environ.get("AGENTBAR_TEST_ARTIFACTS")
    folder = Path(base) / "board" if base else tmp_path_factory.mktemp("board-shots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nboard screenshots in {folder}")
    return folder


def new_page(browser: Any, width: int, scheme: str = "light") -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return page


@pytest.fixture
def open_pages(browser: Any) -> Iterator[list[Any]]:
    """Pages a test opens (new_page), closed after it; none may have had an error."""
    pages: list[Any] = []
    yield pages
    for page in pages:
        errors = page.errors
        page.context.close()
        assert not errors, f"errors in the page: {errors}"


def approval(request_id: str, opened_at: float) -> PendingRequest:
    return PendingRequest(
        request_id=request_id, agent="claude", session_id=APPROVE, kind=RequestKind.APPROVAL,
        route=Route.HOOK, tool="Bash", summary=APPROVE_COMMAND, opened_at=opened_at,
    )  # fmt: skip


def board(page: Any, world: World, query: str = "") -> None:
    page.goto(world.url(f"/{query}"))
    page.wait_for_selector("#app[data-ready='true'] section.group .card")


def board_page(
    browser: Any, world: World, pages: list[Any], width: int = 1280, query: str = ""
) -> Any:
    """A new page (closed and checked after the test) showing the board."""
    page = new_page(browser, width)
    pages.append(page)
    board(page, world, query)
    return page


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_board_screenshots_fit_the_width_in_light_and_dark(
    browser: Any, world: World, shots: Path, open_pages: list[Any], size: str, scheme: str
) -> None:
    page = new_page(browser, SIZES[size], scheme)
    open_pages.append(page)
    board(page, world)
    # The page really is in that scheme (the tokens follow prefers-color-scheme).
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    rgb = [int(x) for x in background[background.index("(") + 1 : -1].split(",")[:3]]
    assert (sum(rgb) / 3 > 128) == (scheme == "light"), background
    assert page.evaluate(NO_SIDEWAYS_SCROLL), "the board scrolls sideways"
    for selector in (".site-header", ".filter-bar", "section.group", ".card"):
        right = page.locator(selector).first.evaluate("el => el.getBoundingClientRect().right")
        assert right <= SIZES[size] + 0.5, selector
    page.screenshot(path=str(shots / f"board-{SIZES[size]}-{scheme}.png"), full_page=False)
    page.screenshot(path=str(shots / f"board-{SIZES[size]}-{scheme}-full.png"), full_page=True)


def test_needs_you_comes_first_and_its_buttons_answer_the_book(
    browser: Any, world: World, book: list[BookChange], open_pages: list[Any], shots: Path
) -> None:
    page = board_page(browser, world, open_pages, 1280)
    stamp = time.time()
    world.decisions.open(approval("b18allow", stamp))
    first = page.locator("section.group").first
    assert first.get_attribute("data-group") == "needs"
    box = first.locator(f'.card-decisions[data-key="claude:{APPROVE}"] .decision')
    box.wait_for()
    # "Needs you" is above everything else on the board, the launch control included.
    order = page.evaluate(
        """() => [...document.querySelectorAll('.board-needs, .tasks-panel, .board-sections')]
                 .map((e) => e.className)"""
    )
    assert order[0] == "board-needs"
    page.screenshot(path=str(shots / "board-needs-you.png"))
    source = world.sessions()[APPROVE]["source"]  # the fixture's registry file says waiting
    signal = first.locator(f'.card[data-key="claude:{APPROVE}"] .card-signal').inner_text()
    assert signal == f"via {'session registry' if source == 'registry' else source}"
    box.locator("button", has_text="Approve").click()
    assert answered(book, "b18allow", world) == Decision("b18allow", Verdict.ALLOW, "window")
    box.wait_for(state="detached")

    world.decisions.open(approval("b18deny", stamp + 1))
    box.wait_for()
    box.locator("button", has_text="Deny").click()
    assert answered(book, "b18deny", world) == Decision("b18deny", Verdict.DENY, "window")

    world.decisions.open(
        PendingRequest(
            request_id="b18ask", agent="claude", session_id=QUESTION,
            kind=RequestKind.QUESTION, route=Route.HOOK, tool="AskUserQuestion",
            summary=QUESTION_TEXT, opened_at=stamp + 2,
            questions=(Question(QUESTION_TEXT, "Framework", ("pytest", "unittest")),),
        )
    )  # fmt: skip
    reply = first.locator(f'.card-decisions[data-key="claude:{QUESTION}"] .decision')
    reply.locator("input.reply-field").fill("pytest, please")
    reply.locator("button.send").click()
    assert answered(book, "b18ask", world) == Decision(
        "b18ask", Verdict.REPLY, "window", replies=("pytest, please",)
    )


def test_the_board_socket_carries_board_sessions_and_every_one_is_counted(
    browser: Any, world: World, open_pages: list[Any]
) -> None:
    """The board asks the events socket for BOARD_SESSIONs (docs/api.md): only the fields its
    cards and filters read, every session there, each counted in a section."""
    page = new_page(browser, 1280)
    open_pages.append(page)
    urls: list[str] = []
    frames: list[str] = []

    def on_frame(payload: str) -> None:
        frames.append(payload)

    def on_socket(socket: Any) -> None:
        if "/api/events" in socket.url:
            urls.append(socket.url)
            socket.on("framereceived", on_frame)

    page.on("websocket", on_socket)
    board(page, world)
    assert urls and all(url.endswith("/api/events?view=board") for url in urls)
    hello = next(m for m in map(json.loads, frames) if m["type"] == "sessions")
    rows = hello["sessions"]
    assert rows and all(set(row) == set(BOARD_FIELDS) for row in rows)
    listed = world.api("/api/sessions?all=1")["sessions"]
    assert {(r["agent"], r["session_id"]) for r in rows} == {
        (s["agent"], s["session_id"]) for s in listed
    }
    counted = page.eval_on_selector_all(
        "section.group .group-title .count", "els => els.map((e) => e.textContent)"
    )
    assert sum(int(n.replace(",", "")) for n in counted) == len(rows)
    assert page.locator(".filter-count").inner_text() == f"{len(rows)} sessions"


def test_sections_are_named_by_recency(browser: Any, world: World, open_pages: list[Any]):
    page = board_page(browser, world, open_pages, 1280)
    names = page.eval_on_selector_all(
        "section.group .group-name", "els => els.map((e) => e.textContent)"
    )
    assert names[:2] == ["Needs you", "Running"]
    assert set(names[2:]) <= {"Today", "This week", "Older"} and "Older" in names
    assert not any("Ended recently" in n for n in names)
    # A section's count is what it holds; its cards are its sessions, newest first.
    older = page.locator('section[data-group="older"]')
    times = older.locator(".card time").evaluate_all(
        "els => els.map((e) => Date.parse(e.getAttribute('datetime')) || 0)"
    )
    assert times == sorted(times, reverse=True)


def test_filters_live_in_the_address_through_reload_back_and_forward(
    browser: Any, world: World, open_pages: list[Any]
) -> None:
    page = board_page(browser, world, open_pages, 1280)
    page.locator(".chip[data-state='running']").click()
    page.wait_for_url("**/?state=running")
    states = page.locator(".card").evaluate_all("els => els.map((e) => e.dataset.state)")
    assert states and set(states) == {"running"}
    page.locator("select[name='project']").select_option("/work/alpha")
    page.wait_for_url("**/?project=%2Fwork%2Falpha&state=running")
    keys = page.locator(".card").evaluate_all("els => els.map((e) => e.dataset.key)")
    assert keys == [f"claude:{RUNNING}"]
    assert "1 of" in page.locator(".filter-count").inner_text()

    page.reload()
    page.wait_for_selector(f'.card[data-key="claude:{RUNNING}"]')
    assert page.locator(".chip[data-state='running']").get_attribute("aria-pressed") == "true"
    assert page.locator("select[name='project']").input_value() == "/work/alpha"
    assert page.locator(".card").count() == 1

    page.go_back()
    page.wait_for_url("**/?state=running")
    page.wait_for_function("() => document.querySelector('select[name=project]')?.value === ''")
    running = [s for s in world.sessions().values() if s["state"] == "running"]
    page.wait_for_function(f"() => document.querySelectorAll('.card').length === {len(running)}")
    page.go_back()
    page.wait_for_function("() => !location.search")
    page.wait_for_selector("section[data-group='needs']")
    page.go_forward()
    page.wait_for_url("**/?state=running")
    assert page.locator("section[data-group='needs']").count() == 0
    # Clear: every filter off, the address plain.
    page.locator(".clear-filters").click()
    page.wait_for_function("() => !location.search")


def test_odd_addresses_and_storage_give_a_working_board(
    browser: Any, world: World, open_pages: list[Any]
) -> None:
    """What the address or the browser's storage says that makes no sense is ignored, not
    obeyed or crashed on: unknown states and spans, a collapsed list that is not a list."""
    page = new_page(browser, 1280)
    open_pages.append(page)
    page.goto(world.url("/"))
    page.wait_for_selector("#app[data-ready='true'] .card")
    page.evaluate("localStorage.setItem('agentbar.board.collapsed', '{not json')")
    page.evaluate("localStorage.setItem('agentbar.launch.pinned', '42')")
    page.goto(world.origin + "/?state=bogus,running,%3Cb%3E&since=forever&project=")
    page.wait_for_selector("#app[data-ready='true'] .card")
    pressed = page.locator(".chip[aria-pressed='true']").evaluate_all(
        "els => els.map((e) => e.dataset.state)"
    )
    assert pressed == ["running"]
    assert page.locator("select[name='since']").input_value() == ""
    states = page.locator(".card").evaluate_all("els => els.map((e) => e.dataset.state)")
    assert set(states) == {"running"}
    # A filter nothing matches: said so, with a way out.
    page.goto(world.origin + "/?agent=nobody")
    page.wait_for_selector(".empty-state:not([hidden])")
    assert "No session matches these filters." in page.locator(".empty-state").inner_text()
    page.locator(".empty-state button", has_text="Clear filters").click()
    page.wait_for_function("() => !location.search")
    page.wait_for_selector("#app[data-ready='true'] .card")
    # Only the last week: nothing older than seven days, and the span in the address.
    page.locator("select[name='since']").select_option("7d")
    page.wait_for_function("() => location.search === '?since=7d'")
    assert page.locator("section[data-group='older']").count() == 0
    assert page.locator("section[data-group='running']").count() == 1


def test_a_collapsed_project_stays_collapsed(
    browser: Any, world: World, open_pages: list[Any]
) -> None:
    page = board_page(browser, world, open_pages, 1280)
    project = page.locator("section[data-group='older'] .project").first
    name = project.get_attribute("data-project")
    assert project.locator(".card").count() > 0
    project.locator(".project-toggle").click()
    collapsed = page.locator(f"section[data-group='older'] .project[data-project='{name}']")
    assert collapsed.locator(".project-toggle").get_attribute("aria-expanded") == "false"
    assert collapsed.locator(".card").count() == 0
    assert int(collapsed.locator(".project-count").inner_text()) > 0  # still says how many
    page.reload()
    page.wait_for_selector("#app[data-ready='true'] section[data-group='older']")
    assert collapsed.locator(".card").count() == 0
    collapsed.locator(".project-toggle").click()
    assert collapsed.locator(".card").count() > 0
    assert page.evaluate("localStorage.getItem('agentbar.board.collapsed')") == "[]"


def test_cards_count_tokens_without_the_cache(
    browser: Any, world: World, open_pages: list[Any]
) -> None:
    cached = [
        s
        for s in world.sessions().values()
        if (s.get("usage") or {}).get("cache_read_tokens", 0) > 1000 and s["project"]
    ]
    assert cached, "the fixtures have sessions with cache reads"
    s = max(cached, key=lambda s: s["usage"]["cache_read_tokens"])
    page = board_page(
        browser, world, open_pages, 1280, f"?agent={s['agent']}&project={s['project']}"
    )
    card = page.locator(f'.card[data-key="{s["agent"]}:{s["session_id"]}"]')
    usage = s["usage"]
    spent = usage["input_tokens"] + usage["output_tokens"]
    with_cache = spent + usage["cache_read_tokens"] + usage["cache_creation_tokens"]
    words = page.evaluate(
        "async ([a, b]) => { const f = await import('/static/js/format.js');"
        " return [f.number(a), f.number(b)]; }",
        [spent, with_cache],
    )
    assert card.locator(".card-tokens").inner_text() == f"{words[0]} tokens"
    assert words[1] not in card.locator(".card-tokens").inner_text()
    assert card.locator(".card-cache").inner_text().endswith("cached")
    # Never the raw id as the title; the state says what told agentbar so.
    assert card.locator(".state-badge").get_attribute("data-source") == s["source"]
    assert s["session_id"] not in card.locator(".card-title").inner_text()


def test_narrow_board_with_filters_and_launch_open_does_not_scroll_sideways(
    browser: Any, world: World, open_pages: list[Any], shots: Path
) -> None:
    page = board_page(browser, world, open_pages, 420, "?state=running,done,failed&since=30d")
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    page.screenshot(path=str(shots / "board-420-filtered.png"), full_page=True)


def test_a_session_from_another_host_groups_the_board_by_host(
    browser: Any, world: World, open_pages: list[Any]
) -> None:
    """Remote sessions come over the same events stream as local ones (issue 13): one arriving
    makes every section group its projects by host. The change message is made here, as the
    server would send it for a remote's session; the page's own code takes it in."""
    page = board_page(browser, world, open_pages, 1280)
    assert page.locator(".host-badge").count() == 0
    running = world.sessions()[RUNNING]
    remote = {**running, "host": "build-box", "session_id": "c1000000-0000-4000-8000-000000000001"}
    page.evaluate(
        "(s) => window.agentbarApp.events.receive(JSON.stringify({type: 'change', session: s}))",
        remote,
    )
    group = page.locator("section[data-group='running']")
    group.locator(".project[data-host='build-box'] .host-badge").wait_for()
    assert group.locator(".project[data-host='build-box'] .host-badge").inner_text() == "build-box"
    assert group.locator(".project[data-host='local'] .host-badge").first.inner_text() == (
        "this computer"
    )
    # The host menu shows up, and filters by host through the address.
    page.locator("select[name='host']").select_option("build-box")
    page.wait_for_function("() => location.search === '?host=build-box'")
    keys = page.locator(".card").evaluate_all("els => els.map((e) => e.dataset.key)")
    assert keys == [f"build-box/claude:{remote['session_id']}"]  # ids are per host


def test_the_filters_ask_the_server_and_match_what_it_keeps(
    browser: Any, world: World, open_pages: list[Any]
) -> None:
    """querySessions: the server's filters when it has them (its reply says ``total``), the
    same filters applied in the page when it does not; either way the sessions the filter
    keeps, counted."""
    page = board_page(browser, world, open_pages, 1280)
    got = page.evaluate(
        """async () => {
          const { BoardFilter, querySessions } = await import('/static/js/filters.js');
          const filter = new BoardFilter(
            { states: ['running', 'input_required'], project: 'alpha' });
          const all = await querySessions(filter);
          const page = await querySessions(filter, { limit: 1, offset: 1 });
          return { all: all.sessions.map((s) => s.session_id).sort(), total: all.total,
                   page: page.sessions.length, pageTotal: page.total };
        }"""
    )
    wanted = sorted(
        s["session_id"]
        for s in world.sessions().values()
        if s["state"] in ("running", "input_required") and "alpha" in (s["project"] or "")
    )
    assert got["all"] == wanted and got["total"] == len(wanted) >= 2
    assert got["page"] == 1 and got["pageTotal"] == len(wanted)


OTHER_PAGES = {
    "replay": f"/session/claude/{RICH}",
    "search": f"/search?q={HIT_WORD}",
}


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", OTHER_PAGES)
def test_every_page_has_screenshots_in_light_and_dark(
    browser: Any,
    world: World,
    shots: Path,
    open_pages: list[Any],
    name: str,
    size: str,
    scheme: str,
) -> None:
    """The other pages on the same tokens, kept as artefacts beside the board's."""
    page = new_page(browser, SIZES[size], scheme)
    open_pages.append(page)
    page.goto(world.url(OTHER_PAGES[name]))
    page.wait_for_selector("#app[data-ready='true']")
    if name == "search":
        page.wait_for_selector(".result-link")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    rgb = [int(x) for x in background[background.index("(") + 1 : -1].split(",")[:3]]
    assert (sum(rgb) / 3 > 128) == (scheme == "light"), background
    header = page.locator(".site-header").evaluate("el => el.getBoundingClientRect().right")
    assert header <= SIZES[size] + 0.5
    page.screenshot(path=str(shots / f"{name}-{SIZES[size]}-{scheme}.png"))


# -- 5,000 sessions ---------------------------------------------------------------------------

BENCH = Path(__file__).resolve().parent.parent / "bench"
MANY = 5000


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real server and engine over a generated HOME of 5,000 small sessions (bench/corpus.py's
    generator: Claude and Codex, ages spread over a month, a project per five sessions)."""
    sys.path.insert(0, str(BENCH))
    try:
        import corpus  # bench/ is not a package: on the path for this import only
        from bench_web import start_server
    finally:
        sys.path.remove(str(BENCH))
    root = tmp_path_factory.mktemp("many")
    corpus.generate(root / "home", MANY, MANY * 3 * corpus.KB, seed=18)
    service, server = start_server(root / "home", root / "data")
    try:
        yield server
    finally:
        server.stop()
        service.close()


def test_a_board_of_5000_sessions_draws_a_page_per_section(
    browser: Any, many: Any, open_pages: list[Any], shots: Path
) -> None:
    page = new_page(browser, 1280)
    open_pages.append(page)
    page.goto(many.open_url("/"))
    page.wait_for_selector("#app[data-ready='true'] section.group .card", timeout=60_000)
    assert page.locator(".filter-count").inner_text() == f"{MANY:,} sessions"
    counts = page.eval_on_selector_all(
        "section.group", "els => els.map((e) => [e.dataset.group, e.querySelector('.count')"
        ".textContent, e.querySelectorAll('.card').length])",
    )  # fmt: skip
    assert sum(int(n.replace(",", "")) for _, n, _ in counts) == MANY
    page_size = page.evaluate("async () => (await import('/static/js/board.js')).PAGE")
    for group, _, drawn in counts:
        assert 0 < drawn <= page_size, group  # a page of each section, not all of it
    assert page.locator(".card").count() <= len(counts) * page_size
    page.screenshot(path=str(shots / "board-5000.png"))
    # Show more adds the next page of that section.
    older = page.locator("section[data-group='older']")
    before = older.locator(".card").count()
    older.locator("button.show-more").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('section[data-group=older] .card').length > {before}"
    )
    assert older.locator(".card").count() <= before + page_size
    # Scrolled to the bottom, nothing runs off the side and the page still answers.
    page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    # A filter over 5,000: the agent's sessions only, counted.
    page.locator("select[name='agent']").select_option("codex")
    page.wait_for_function("() => location.search === '?agent=codex'")
    agents = page.locator(".card .agent").evaluate_all(
        "els => [...new Set(els.map(e => e.textContent))]"
    )
    assert agents == ["codex"]


def _hold_the_rest(page: Any) -> list[tuple[Any, str]]:
    """Route the board's socket through the test: every message passes but the rest of the
    sessions (``sessions_rest``), kept with its socket in the list returned for the test to
    send when it chooses."""
    held: list[tuple[Any, str]] = []

    def route(socket: Any) -> None:
        server = socket.connect_to_server()

        def from_server(message: str) -> None:
            if '"type":"sessions_rest"' in message[:40]:
                held.append((socket, message))
            else:
                socket.send(message)

        server.on_message(from_server)

    page.route_web_socket("**/api/events?view=board", route)
    return held


def _first_page_with_the_rest_held(
    browser: Any, many: Any, open_pages: list[Any]
) -> tuple[Any, list[tuple[Any, str]]]:
    """The board over the 5,000 sessions with the rest held back, once its first page is drawn
    and its count shows it is waiting for the rest."""
    page = new_page(browser, 1280)
    open_pages.append(page)
    held = _hold_the_rest(page)
    page.goto(many.open_url("/"))
    page.wait_for_selector("section.group .card", timeout=60_000)
    page.wait_for_function("() => document.querySelector('.filter-count').textContent === '…'")
    return page, held


def test_the_first_page_of_5000_is_drawn_before_the_rest_and_counted_after(
    browser: Any, many: Any, open_pages: list[Any]
) -> None:
    """The socket's first message holds the newest sessions only: the board draws them at once
    without counting (no number it would have to take back), not ready yet; the rest (held
    back here until the test lets it through) completes the counts and the "Show more"s."""
    page, held = _first_page_with_the_rest_held(browser, many, open_pages)
    assert held, "the rest is held back"
    assert page.locator("#app[data-ready='true']").count() == 0
    counts = page.eval_on_selector_all(".group-title .count", "els => els.map(e => e.textContent)")
    assert counts and set(counts) == {"…"}
    assert page.locator("button.show-more").count() == 0
    assert page.locator(".card").count() <= 5 * 30
    socket, message = held[0]
    socket.send(message)
    page.wait_for_selector("#app[data-ready='true'] section.group .card", timeout=60_000)
    assert page.locator(".filter-count").inner_text() == f"{MANY:,} sessions"
    counts = page.eval_on_selector_all(".group-title .count", "els => els.map(e => e.textContent)")
    assert sum(int(n.replace(",", "")) for n in counts) == MANY
    assert page.locator("button.show-more").count() > 0


def test_a_change_right_behind_the_rest_of_5000_is_not_undone_by_it(
    browser: Any, many: Any, open_pages: list[Any]
) -> None:
    """The rest of the sessions is taken in after the first page is painted: a change that
    arrives right behind it (one of those sessions now needs you) is applied after it, not
    overwritten by the older row it carries."""
    page, held = _first_page_with_the_rest_held(browser, many, open_pages)
    socket, message = held[0]
    row = json.loads(message)["sessions"][-1]  # the oldest: never on the first page
    asks = {**row, "state": "input_required", "waiting_for": "approval", "detail": "make check"}
    change = {"type": "change", "change": {}, "session": asks}
    socket.send(message)
    socket.send(json.dumps(change))
    key = f"{row['agent']}:{row['session_id']}"
    page.wait_for_selector(
        f'#app[data-ready="true"] section[data-group="needs"] .card[data-key="{key}"]'
    )
    counts = page.eval_on_selector_all(".group-title .count", "els => els.map(e => e.textContent)")
    assert sum(int(n.replace(",", "")) for n in counts) == MANY
