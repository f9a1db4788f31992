"""The web UI in Debian's Chromium (Playwright) against a real server over fixture sessions:
board, replay, paging, search, export, live updates and untrusted text rendered inert."""

from __future__ import annotations

import json
from typing import Any

import orjson
from web_harness import (
    APPROVE,
    APPROVE_COMMAND,
    DONE,
    FAILED,
    HIT_WORD,
    LIVE_BOARD,
    LIVE_REPLAY,
    LONG,
    LONG_HIT_TURN,
    LONG_TURNS,
    QUESTION,
    QUESTION_TEXT,
    RICH,
    RUNNING,
    SUBAGENT_ID,
    XSS,
    World,
    open_replay,
)


def card(session_id: str, agent: str = "claude") -> str:
    return f'.card[data-key="{agent}:{session_id}"]'


def in_viewport(page: Any, selector: str) -> bool:
    return bool(
        page.locator(selector).last.evaluate(
            """el => { const r = el.getBoundingClientRect();
                   return r.bottom > 0 && r.top < window.innerHeight; }""",
        )
    )


# -- board ------------------------------------------------------------------------------------


def test_board_lists_sessions_that_need_you_first_grouped_by_project(page: Any, world: World):
    page.goto(world.url("/"))
    page.wait_for_selector(card(APPROVE))
    groups = page.eval_on_selector_all("section.group", "els => els.map(e => e.dataset.group)")
    assert groups[0] == "needs"
    order = ("needs", "running", "today", "week", "older")
    assert groups == [g for g in order if g in groups]
    assert {"needs", "running", "older"} <= set(groups)
    # Named for what they are: finished and failed ones by how recent, not "Ended recently".
    titles = dict(zip(order, ("Needs you", "Running", "Today", "This week", "Older"), strict=True))
    names = page.eval_on_selector_all(
        "section.group .group-name", "els => els.map(e => e.textContent)"
    )
    assert names == [titles[g] for g in groups]

    needs = page.locator('section[data-group="needs"]')
    assert needs.locator(card(APPROVE)).count() == 1
    assert needs.locator(card(QUESTION)).count() == 1
    projects = needs.locator(".project").evaluate_all("els => els.map(e => e.dataset.project)")
    assert sorted(projects) == ["/work/alpha", "/work/beta"]
    approve = needs.locator(f'.project[data-project="/work/alpha"] {card(APPROVE)}')
    assert APPROVE_COMMAND in approve.locator("code").inner_text()
    question = needs.locator(f'.project[data-project="/work/beta"] {card(QUESTION)}')
    assert QUESTION_TEXT in question.inner_text()

    assert page.locator(f'section[data-group="running"] {card(RUNNING)}').count() == 1
    # Finished five minutes ago: today (or this week, just after midnight).
    recent = 'section[data-group="today"], section[data-group="week"]'
    assert page.locator(recent).locator(card(FAILED)).count() == 1
    assert page.locator(recent).locator(card(DONE)).count() == 1
    assert page.locator(card(FAILED)).get_attribute("data-state") == "failed"
    # Fixture sessions of both agents are there too (dated 2026-11-29 or earlier: older).
    assert page.locator('section[data-group="older"] .card[data-key^="codex:"]').count() > 0

    # Each card with tokens says what they cost (the fixtures' model is priced).
    assert "$" in page.locator(card(DONE)).locator(".card-cost").inner_text()

    # The counts are in the window title.
    page.wait_for_function("() => document.title.startsWith('(2) ')")
    assert "2 need you" in page.title()


def test_a_state_change_moves_its_card_without_a_reload(page: Any, world: World):
    page.goto(world.url("/"))
    page.wait_for_selector(f'section[data-group="running"] {card(LIVE_BOARD)}')
    page.evaluate("window.__sameDocument = true")
    t = world.writers[LIVE_BOARD]
    world.append(
        LIVE_BOARD,
        t.tool_result("toolu_live", "built"),
        t.text("All finished.", stop_reason="end_turn"),
        t.turn_duration(),
    )
    page.wait_for_selector(f'{card(LIVE_BOARD)}[data-state="done"]', timeout=30_000)
    assert page.locator(f'section[data-group="running"] {card(LIVE_BOARD)}').count() == 0
    assert page.evaluate("window.__sameDocument") is True  # no reload happened


def test_clicking_a_card_opens_its_replay(page: Any, world: World):
    page.goto(world.url("/"))
    page.click(card(DONE))
    page.wait_for_url(f"**/session/claude/{DONE}")
    page.wait_for_selector("#app[data-ready='true']")
    assert page.locator(".item.kind-assistant").last.inner_text().find("Hello!") >= 0


# -- replay -----------------------------------------------------------------------------------


def test_replay_shows_messages_thinking_tools_subagent_and_the_rest(page: Any, world: World):
    open_replay(page, world, RICH)
    items = page.locator(".thread.main .items")
    # Markdown rendered: bold, a table and a code block.
    assert items.locator(".item.kind-user strong").first.inner_text() == "build"
    assert items.locator(".item.kind-assistant table").count() == 1
    assert items.locator(".item.kind-assistant pre code").count() >= 1

    # Thinking is collapsed until opened.
    thinking = items.locator(".item.kind-thinking details").first
    assert thinking.get_attribute("open") is None
    thinking.locator("summary").click()
    thinking.locator(".thinking-body", has_text="webpack config").wait_for()

    # Tool calls carry their input and their result (paired by call id).
    call = items.locator(
        '.item.kind-tool_call:has(.tool-summary:text("npm run build -- --profile"))'
    )
    call.locator(".tool-input summary").click()
    assert json.loads(call.locator("pre.input").inner_text())["command"] == (
        "npm run build -- --profile"
    )
    result = call.locator(".item.kind-tool_result")
    assert "line 0:" in result.inner_text()
    # A long output is folded, and unfolds.
    assert result.locator("pre.output.folded").count() == 1
    assert "line 150:" not in result.inner_text()
    result.locator("button.fold-toggle").click()
    assert result.locator("pre.output.folded").count() == 0
    assert "line 150:" in result.locator("pre.output").inner_text()

    # An output cut by the API: "show all" fetches the whole item.
    cut = items.locator(
        '.item.kind-tool_call:has(.tool-summary:text("cat build.log")) .kind-tool_result'
    )
    assert "chunk 00399" not in cut.inner_text()
    cut.locator("button.show-all").click()
    cut.locator("pre.output", has_text="chunk 00399").wait_for()

    denied = items.locator(
        '.item.kind-tool_call:has(.tool-summary:text("rm -rf /")) .kind-tool_result'
    )
    assert denied.locator(".result-label").inner_text() == "Denied"

    # The sub-agent is nested where it was spawned and loads its thread when expanded.
    spawn = items.locator('.item.kind-tool_call:has(.tool-name:text("Agent"))')
    sub = spawn.locator(".item.kind-subagent")
    assert "Dig into minify" in sub.inner_text()
    sub.locator("button.subagent-toggle").click()
    nested = sub.locator(f'.thread.nested[data-thread="{SUBAGENT_ID}"]')
    nested.locator(".item.kind-tool_call .tool-summary", has_text="node --cpu-prof").wait_for()
    assert "terser: 41 s" in nested.inner_text()

    # Compaction, the retried API error and an unknown line, shown plainly.
    assert "Context compacted (auto)" in items.locator(".item.kind-compaction").inner_text()
    assert "Overloaded" in items.locator(".item.kind-error").first.inner_text()
    unknown = items.locator(".item.kind-unknown", has_text="frobnicate")
    # Folded to one line (a record no one knows is machine activity), opened on demand.
    assert unknown.locator("details.folded-record").get_attribute("open") is None
    unknown.locator("summary").click()
    assert '"mystery": "<b>raw</b>"' in unknown.locator("pre.raw").inner_text()
    assert unknown.locator("b").count() == 0

    # Token usage per turn and per session.
    assert page.locator(".turn-usage").count() >= 2
    assert "Session tokens: in" in page.locator(".session-usage").inner_text()
    assert "cost " in page.locator(".session-cost").inner_text()  # a priced model: dollars
    assert "$" in page.locator(".session-cost").inner_text()


def test_replay_opens_at_the_end(page: Any, world: World):
    open_replay(page, world, RICH)
    page.wait_for_function(
        "() => document.scrollingElement.scrollTop + innerHeight"
        " >= document.scrollingElement.scrollHeight - 5"
    )
    assert in_viewport(page, ".thread.main .items > .item.kind-assistant")


def test_replay_of_a_waiting_session_opens_at_what_needs_you(page: Any, world: World):
    open_replay(page, world, APPROVE)
    focus = page.locator(".item.focus")
    assert focus.count() == 1
    assert focus.get_attribute("data-kind") == "tool_call"
    assert APPROVE_COMMAND in focus.locator(".tool-summary").inner_text()
    assert in_viewport(page, ".item.focus")
    banner = page.locator(".focus-banner")
    assert banner.is_visible()
    assert "Waiting for your approval" in banner.inner_text()

    open_replay(page, world, QUESTION)
    page.wait_for_selector(".item.focus")
    assert "Waiting for your answer" in page.locator(".focus-banner").inner_text()


def test_scrolling_up_pages_through_a_long_transcript(page: Any, world: World):
    open_replay(page, world, LONG)
    items = page.locator(".thread.main .items > .item")
    first_page = items.count()
    assert 0 < first_page < LONG_TURNS  # never everything at once
    assert f"Answer number {LONG_TURNS - 1}." in items.last.inner_text()
    assert page.locator(".page-status.top.more").count() == 1

    pages = 0
    while page.locator(".page-status.top.more").count():
        before = items.count()
        page.evaluate("document.scrollingElement.scrollTop = 0")
        page.wait_for_function(
            f"() => document.querySelectorAll('.thread.main .items > .item').length > {before}"
            " || !document.querySelector('.page-status.top.more')"
        )
        pages += 1
        assert pages < 100
    assert pages >= 3
    assert items.count() == 2 * LONG_TURNS
    first = items.first
    assert first.inner_text().find("Question number 0?") >= 0
    # The reader's place is kept when a page goes in above it (no jump to the top).
    offsets = items.evaluate_all("els => els.map(e => Number(e.dataset.offset))")
    assert offsets == sorted(offsets)


def test_a_search_hit_opens_the_replay_at_the_hit(page: Any, world: World):
    page.goto(world.url(f"/search?q={HIT_WORD}"))
    result = page.locator(".results .result-link").first
    result.wait_for()
    assert "/work/long" in result.inner_text()
    assert result.locator("mark").first.inner_text().lower() == HIT_WORD
    result.click()
    page.wait_for_url(f"**/session/claude/{LONG}?at=*")
    page.wait_for_selector("#app[data-ready='true']")
    hit = page.locator(".item.hit").first
    assert HIT_WORD in hit.inner_text()
    assert in_viewport(page, ".item.hit")
    # Far from the end: the last answers are not loaded, older ones load above.
    assert page.locator(f'.item:has-text("Answer number {LONG_TURNS - 1}.")').count() == 0
    page.wait_for_selector(f'.item:has-text("Answer number {LONG_HIT_TURN - 1}.")')
    assert in_viewport(page, ".item.hit")


def test_search_results_are_ranked_and_safe(page: Any, world: World):
    page.goto(world.url("/search"))
    box = page.locator("#search-input")
    box.fill("alert")
    page.wait_for_selector(".results .result-link")
    assert page.locator(".results mark").count() >= 1
    assert page.locator(".results script, .results img, .results [onerror]").count() == 0
    assert "q=alert" in page.url


def test_each_export_downloads(page: Any, world: World):
    open_replay(page, world, RICH)
    for fmt, check in (
        ("md", lambda text: "Profile the **build**" in text or "Profile the" in text),
        ("json", lambda text: orjson.loads(text)["format"] == "agentbar-replay"),
        ("html", lambda text: text.lstrip().lower().startswith("<!doctype html")),
    ):
        with page.expect_download() as info:
            page.click(f'a.export[data-format="{fmt}"]')
        download = info.value
        assert download.suggested_filename.endswith(f".{fmt}")
        path = download.path()
        assert path is not None
        assert check(path.read_text(encoding="utf-8")), fmt


def test_new_items_appear_when_the_session_changes(page: Any, world: World):
    open_replay(page, world, LIVE_REPLAY)
    assert page.locator(".item", has_text="Fresh answer").count() == 0
    t = world.writers[LIVE_REPLAY]
    world.append(
        LIVE_REPLAY,
        t.tool_result("toolu_live", "built"),
        t.text("Fresh answer from the agent.", stop_reason="end_turn"),
        t.turn_duration(),
    )
    page.locator(".item.kind-assistant", has_text="Fresh answer from the agent.").wait_for(
        timeout=30_000
    )
    page.wait_for_selector(".replay-header .state-badge.state-done")


# -- untrusted text ---------------------------------------------------------------------------

INERT_CHECK = """() => {
  const root = document.getElementById('app');
  const bad = [];
  for (const el of root.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      if (attr.name.startsWith('on')) bad.push(`${el.tagName} ${attr.name}`);
      if (attr.name === 'style') bad.push(`${el.tagName} style`);
      if (/^\\s*javascript:/i.test(attr.value)) bad.push(`${el.tagName} ${attr.name}`);
    }
  }
  for (const sel of ['script', 'img', 'iframe', 'svg', 'object', 'embed']) {
    if (root.querySelector(sel)) bad.push(sel);
  }
  return bad;
}"""


def test_a_hostile_transcript_renders_inert(page: Any, world: World):
    open_replay(page, world, XSS)
    for details in page.locator("#app details").all():
        details.evaluate("d => d.open = true")
    page.wait_for_selector(".thinking-body p")
    assert page.evaluate(INERT_CHECK) == []
    text = page.locator("#app").inner_text()
    assert "<script>alert(1)</script>" in text  # shown as text
    assert "<img src=x onerror=alert(10)>" in text
    link = page.locator(".item.kind-assistant a", has_text="click me")
    assert link.count() == 0 or link.first.get_attribute("href") is None
    for anchor in page.locator("#app .markdown a[href]").all():
        assert anchor.get_attribute("rel") == "noopener noreferrer"
    # The board shows its title and project as text too.
    page.goto(world.url("/?all=1"))
    page.wait_for_selector(card(XSS))
    assert page.evaluate(INERT_CHECK) == []
    # page fixture: no dialog opened and no error was thrown anywhere.


def test_markdown_links_are_safe(page: Any, world: World):
    open_replay(page, world, RICH)
    fragment = page.evaluate(
        """async () => {
          const { renderMarkdown } = await import('/static/js/markdown.js');
          const div = document.createElement('div');
          div.append(renderMarkdown('[ok](https://example.com) [bad](javascript:alert(1)) '
            + '<a href="data:text/html,x">d</a> ![i](https://example.com/x.png)'));
          return [...div.querySelectorAll('a')].map(a => [a.textContent, a.getAttribute('href'),
                                                          a.getAttribute('rel')])
            .concat([[div.querySelectorAll('img').length]]);
        }"""
    )
    assert fragment[0] == ["ok", "https://example.com", "noopener noreferrer"]
    assert ["bad", None, None] in fragment
    assert fragment[-1] == [0]


def test_keyboard_moves_between_messages_and_to_search(page: Any, world: World):
    open_replay(page, world, RICH)
    page.keyboard.press("k")
    focused = page.evaluate("document.activeElement.dataset.kind")
    assert focused in ("user", "assistant")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "Search every session"
    )
    page.keyboard.type(HIT_WORD)
    page.keyboard.press("Enter")
    page.wait_for_url("**/search?q=*")
    page.locator(".results .result-link").first.wait_for()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.classList.contains('result-link')")
