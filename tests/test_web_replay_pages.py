"""The replay, search and terminal-adjacent pages in Debian's Chromium (Playwright) against a
real server over real transcripts (recorded Claude sessions plus ones written here): tool calls
drawn for what they do (diffs, a checklist, questions with their answers), slash commands as
prompts, no escape codes or internal names, search as you type with filters and deduped hits,
the hit marked in the replay; each page at 1280 and 420 px, light and dark, screenshots kept.

Screenshots go to ``$AGENTBAR_TEST_ARTIFACTS/replay-pages`` (or a temporary folder); the path
is printed."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_lines import ClaudeTranscript, write_lines
from launch_rig import launch_rig
from polling import wait_for
from web_harness import DATA, World, serve_world

from agentbar.core.config import Settings
from agentbar.core.model import Agent
from agentbar.core.procs import FakeProcessTable

TOOLS = "c1000000-0000-4000-8000-000000000001"
REPEAT = "c2000000-0000-4000-8000-000000000002"
ASK = "2700ca9d-427c-4874-b527-170e92077c86"  # recorded: claude-2.1.332/ask_tool
EXIT = "80b73429-870c-46e0-a6d2-2a072d519daf"  # recorded: claude-2.0.77/exit (/exit, "Bye!")
CODEX_ASK = "01a22a43-78d9-7632-8895-fd23e459da89"  # recorded: codex-0.171.0/request_user_input
SUB = "d00dfeed"
COMPACT = "acompact-5e1f00"

EDIT_OLD = "def greet(name):\n    print('hi ' + name)\n    return None\n"
EDIT_NEW = "def greet(name: str) -> None:\n    print(f'hello {name}')\n    return None\n"
SLASH_ARGS = "src/app.py --strict"
BIG_OLD = "".join(f"row {i:04d} of a long generated table\n" for i in range(400))  # > 8,000
BIG_NEW = BIG_OLD.replace("row 0200 of", "row 0200 (changed) of")
REPEATED = "deploy the zebra service to staging"
WIDTHS = (1280, 420)
SCHEMES = ("light", "dark")


def tools_lines(t: ClaudeTranscript) -> list[dict[str, Any]]:
    return [
        t.prompt(
            "<command-message>review is running…</command-message>\n"
            "<command-name>/review</command-name>\n"
            f"<command-args>{SLASH_ARGS}</command-args>"
        ),
        t.tool_use(
            "Edit",
            {"file_path": "/work/tools/src/app.py", "old_string": EDIT_OLD, "new_string": EDIT_NEW},
            "toolu_e1",
        ),
        t.tool_result("toolu_e1", "The file /work/tools/src/app.py has been updated."),
        t.tool_use(
            "Edit",
            {"file_path": "/work/tools/big.txt", "old_string": BIG_OLD, "new_string": BIG_NEW},
            "toolu_e3",
        ),
        t.tool_result("toolu_e3", "The file /work/tools/big.txt has been updated."),
        t.tool_use(
            "MultiEdit",
            {
                "file_path": "/work/tools/README.md",
                "edits": [
                    {"old_string": "# Tools", "new_string": "# Tools kit"},
                    {"old_string": "old usage line", "new_string": "new usage line"},
                ],
            },
            "toolu_e2",
        ),
        t.tool_result("toolu_e2", "Applied 2 edits."),
        t.tool_use(
            "Write",
            {"file_path": "/work/tools/NOTES.txt", "content": "first\nsecond\n"},
            "toolu_w1",
        ),
        t.tool_result("toolu_w1", "File created."),
        t.tool_use(
            "TodoWrite",
            {
                "todos": [
                    {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
                    {
                        "content": "Fix the greeting",
                        "status": "in_progress",
                        "activeForm": "Fixing",
                    },
                    {"content": "Run the tests", "status": "pending", "activeForm": "Running"},
                ]
            },
            "toolu_t1",
        ),
        t.tool_result("toolu_t1", "Todos have been modified successfully."),
        t.tool_use(
            "Bash",
            {"command": "pytest -q tests/", "description": "Run the unit tests"},
            "toolu_b1",
        ),
        t.tool_result("toolu_b1", "\x1b[32mPASS\x1b[0m 12 tests\n\x1b[1;31mFAIL\x1b[0m 1 test"),
        t.tool_use("Grep", {"pattern": "def greet", "path": "src/"}, "toolu_g1"),
        t.tool_result("toolu_g1", "src/app.py"),
        t.tool_use("Glob", {"pattern": "**/*.py", "path": "/work/tools"}, "toolu_g2"),
        t.tool_result("toolu_g2", "src/app.py"),
        t.tool_use(
            "Task",
            {
                "description": "Audit the tests",
                "prompt": "Read every test file under tests/ and list the ones that never assert "
                "anything, with the line numbers of each test function, as a table.",
                "subagent_type": "general-purpose",
            },
            "toolu_s1",
        ),
        t.tool_result("toolu_s1", "two tests never assert"),
        t.bookkeeping("guardian_assessment", payload={"risk": "low", "verdict": "allow"}),
        t.text("Done: the greeting is typed and the tests run.", stop_reason="end_turn"),
        {**t.turn_duration(), "durationMs": 1528500},
    ]


def build(root: Path) -> World:
    home = root / "home"
    settings = Settings(
        homes={Agent("claude"): (home / ".claude",), Agent("codex"): (home / ".codex",)},
        data_dir=root / "data",
    )
    for folder in (home / ".claude" / "projects", home / ".codex" / "sessions"):
        folder.mkdir(parents=True, exist_ok=True)
    world = World(root=root, home=home, settings=settings, processes=FakeProcessTable())
    for recorded in ("claude-2.1.332/ask_tool", "claude-2.0.77/exit"):
        shutil.copytree(DATA / "recorded" / recorded / "projects", world.claude / "projects",
                        dirs_exist_ok=True)  # fmt: skip
    shutil.copytree(
        DATA / "recorded" / "codex-0.171.0" / "request_user_input" / "sessions",
        world.codex / "sessions",
        dirs_exist_ok=True,
    )
    folder = world.claude / "projects" / "-work-tools"
    t = ClaudeTranscript(TOOLS, "/work/tools", step=2.0)
    write_lines(folder / f"{TOOLS}.jsonl", tools_lines(t))
    prompt = tools_lines(ClaudeTranscript(TOOLS, "/work/tools"))[-5]  # the Task call's line
    task_prompt = prompt["message"]["content"][0]["input"]["prompt"]
    sub = ClaudeTranscript(TOOLS, "/work/tools", sidechain=True, agent_id=SUB)
    write_lines(
        folder / TOOLS / "subagents" / f"agent-{SUB}.jsonl",
        [sub.prompt(task_prompt), sub.text("two tests never assert", stop_reason="end_turn")],
    )
    helper = ClaudeTranscript(TOOLS, "/work/tools", sidechain=True, agent_id=COMPACT)
    write_lines(
        folder / TOOLS / "subagents" / f"agent-{COMPACT}.jsonl",
        [helper.prompt("Summarise the conversation so far"), helper.text("Summary.")],
    )
    r = ClaudeTranscript(REPEAT, "/work/zoo", step=5.0)
    write_lines(
        world.claude / "projects" / "-work-zoo" / f"{REPEAT}.jsonl",
        [r.prompt(REPEATED), r.text("Deployed.", stop_reason="end_turn")] * 3
        + [r.prompt("is the zebra service healthy?"), r.text("Yes.", stop_reason="end_turn")],
    )
    return world


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    world = build(tmp_path_factory.mktemp("replay-pages"))
    try:
        serve_world(world)
        assert world.service is not None
        world.service.start()

        def ready() -> bool:
            sessions = world.sessions()
            if not {TOOLS, REPEAT, ASK, EXIT, CODEX_ASK} <= sessions.keys():
                return False
            return (sessions[REPEAT].get("counts") or {}).get("prompt", 0) >= 4

        world.wait_for("the engine to read the transcripts", ready, timeout=60)
        yield world
    finally:
        world.close()


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = os.environ.get("AGENTBAR_TEST_ARTIFACTS")
    folder = Path(base) / "replay-pages" if base else tmp_path_factory.mktemp("screens")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the replay, search and terminal pages: {folder}")
    return folder


@pytest.fixture(params=[(w, s) for w in WIDTHS for s in SCHEMES], ids=lambda p: f"{p[0]}-{p[1]}")
def shot_page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A page at a width and colour scheme, failing on any error inside it."""
    width, scheme = request.param
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.label = f"{width}-{scheme}"
    page.width = width
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"errors in the page: {errors}"


def open_replay(page: Any, world: World, session_id: str, query: str = "") -> None:
    page.goto(world.url(f"/session/claude/{session_id}{query}"))
    page.wait_for_selector("#app[data-ready='true']")


def no_overflow(page: Any) -> bool:
    """Nothing wider than the window (a narrow window never scrolls sideways)."""
    return bool(page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth + 1"))


# -- the replay ---------------------------------------------------------------------------------


def test_tool_calls_are_drawn_for_what_they_do(shot_page: Any, site: World, screens: Path):
    page = shot_page
    open_replay(page, site, TOOLS)
    items = page.locator(".thread.main .items")

    # The slash command is the person's prompt: its name and arguments, no tags.
    slash = items.locator(".item.message.user.slash")
    assert slash.locator(".slash-name").inner_text() == "/review"
    assert SLASH_ARGS in slash.locator(".slash-args").inner_text()

    # Edit: a line diff with the removed and added lines, numbered.
    edits = items.locator('.item.kind-tool_call:has(.tool-name:text-is("Edit"))')
    edit = edits.filter(has_text="/work/tools/src/app.py")
    removed = edit.locator(".diff-del .diff-text").all_inner_texts()
    added = edit.locator(".diff-add .diff-text").all_inner_texts()
    assert removed == ["def greet(name):", "    print('hi ' + name)"]
    assert added == ["def greet(name: str) -> None:", "    print(f'hello {name}')"]
    assert edit.locator(".diff-ctx .diff-text").all_inner_texts() == ["    return None"]
    assert edit.locator(".diff-file").inner_text() == "/work/tools/src/app.py"
    assert edit.locator(".diff-stat").inner_text().split() == ["+2", "−2"]
    rows = edit.locator(".diff-row").evaluate_all("els => els.map(e => e.className)")
    assert [r.split("diff-")[-1] for r in rows] == ["del", "del", "add", "add", "ctx"]
    ctx_numbers = edit.locator(".diff-ctx .diff-num").all_inner_texts()
    assert ctx_numbers == ["3", "3"]
    # An edit too long for the page: its diff once the whole call is loaded (at once when the
    # replay model gives the diff itself), never an empty diff of a cut input.
    big = edits.filter(has_text="/work/tools/big.txt")
    if big.locator(".diff").count() == 0:
        big.locator(".tool-view-slot button.show-all").click()
        big.locator(".diff").wait_for()
    assert big.locator(".diff-del .diff-text").all_inner_texts() == [
        "row 0200 of a long generated table"
    ]
    assert big.locator(".diff-add .diff-text").all_inner_texts() == [
        "row 0200 (changed) of a long generated table"
    ]
    assert big.locator(".diff-stat").inner_text().split() == ["+1", "−1"]

    # MultiEdit: one diff per edit; Write: every line added.
    multi = items.locator('.item.kind-tool_call:has(.tool-name:text-is("MultiEdit"))')
    assert multi.locator(".diff").count() in (1, 2)  # one per edit, or hunks of one diff
    assert multi.locator(".diff-add .diff-text").all_inner_texts() == [
        "# Tools kit",
        "new usage line",
    ]
    write = items.locator('.item.kind-tool_call:has(.tool-name:text-is("Write"))')
    assert write.locator(".diff-add .diff-text").all_inner_texts() == ["first", "second"]
    assert write.locator(".diff-del").count() == 0

    # TodoWrite: a checklist with each item's state.
    todos = items.locator('.item.kind-tool_call:has(.tool-name:text-is("TodoWrite")) .todo')
    assert todos.evaluate_all(
        "els => els.map(e => [e.dataset.status, e.querySelector('.todo-text').textContent])"
    ) == [
        ["completed", "Read the code"],
        ["in_progress", "Fix the greeting"],
        ["pending", "Run the tests"],
    ]

    # Bash with its description; Grep and Glob with pattern and path.
    bash = items.locator('.item.kind-tool_call:has(.tool-name:text-is("Bash"))')
    assert bash.locator(".tool-desc").inner_text() == "Run the unit tests"
    assert bash.locator(".tool-summary").inner_text() == "pytest -q tests/"
    grep = items.locator('.item.kind-tool_call:has(.tool-name:text-is("Grep"))')
    assert grep.locator(".tool-pattern").inner_text() == "def greet"
    assert grep.locator(".tool-where").inner_text() == "in src/"
    glob = items.locator('.item.kind-tool_call:has(.tool-name:text-is("Glob"))')
    assert glob.locator(".tool-pattern").inner_text() == "**/*.py"
    assert "/work/tools" in glob.locator(".tool-where").inner_text()

    # ANSI colours are spans (or were stripped by the replay model), never escape characters.
    output = bash.locator(".kind-tool_result pre.output")
    assert output.inner_text() == "PASS 12 tests\nFAIL 1 test"
    if output.locator("span").count():
        assert output.locator("span.ansi-fg-2").inner_text() == "PASS"
        assert output.locator("span.ansi-fg-1.ansi-bold").inner_text() == "FAIL"

    # The sub-agent's inline toggle says the Task's description, not its prompt.
    task = items.locator('.item.kind-tool_call:has(.tool-name:text-is("Task"))')
    assert task.locator(".tool-desc").inner_text() == "Audit the tests"
    assert task.locator(".subagent-toggle .description").inner_text() == "Audit the tests"

    # The header's sub-agents: by description, the compaction helper left out.
    page.locator(".thread-list summary").click()
    listed = page.locator(".thread-items li .link-button").all_inner_texts()
    assert listed == ["Audit the tests"]  # no meta: the spawning call's description
    assert page.locator(".thread-items").evaluate(
        "el => [getComputedStyle(el).textAlign, getComputedStyle(el).listStylePosition]"
    ) == ["left", "outside"]

    # Noisy records fold to one line; the turn's end reads as a person says it.
    folded = items.locator(".item.kind-unknown details.folded-record")
    assert folded.count() >= 1 and folded.first.get_attribute("open") is None
    end = items.locator(".item.turn-end")
    assert "Turn finished in 25 min 28 s" in end.inner_text()

    text = page.locator("#app").inner_text()
    for leaked in ("<command-message>", "<command-name>", "\x1b", "\\u001b", "turn_end", "1528.5"):
        assert leaked not in text, leaked
    assert no_overflow(page)
    page.screenshot(path=str(screens / f"replay-tools-{page.label}.png"), full_page=True)


def test_ask_user_question_shows_its_options_and_the_answer(
    shot_page: Any, site: World, screens: Path
):
    page = shot_page
    open_replay(page, site, ASK)
    call = page.locator('.item.kind-tool_call:has(.tool-name:text-is("AskUserQuestion"))')
    assert call.locator(".q-text").inner_text().endswith("Which color should the file be?")
    assert call.locator(".q-chip").inner_text() == "Color"
    options = call.locator(".q-option")
    assert options.evaluate_all(
        "els => els.map(e => [e.dataset.label, e.classList.contains('chosen')])"
    ) == [
        ["Red", False],
        ["Blue", True],
    ]
    assert "cool" in options.nth(1).inner_text()
    assert call.locator(".q-answer").inner_text() == "Chosen: Blue"
    assert no_overflow(page)
    page.screenshot(path=str(screens / f"replay-ask-{page.label}.png"), full_page=True)


def test_codex_request_user_input_shows_its_options_and_the_answer(page: Any, site: World):
    page.goto(site.url(f"/session/codex/{CODEX_ASK}"))
    page.wait_for_selector("#app[data-ready='true']")
    call = page.locator('.item.kind-tool_call:has(.tool-name:text-is("request_user_input"))')
    assert "Which indentation style do you want?" in call.locator(".q-text").inner_text()
    options = call.locator(".q-option")
    assert options.evaluate_all(
        "els => els.map(e => [e.dataset.label, e.classList.contains('chosen')])"
    ) == [["Tabs (Recommended)", True], ["Spaces", False]]


def test_a_recorded_slash_command_is_the_persons_prompt(page: Any, site: World):
    open_replay(page, site, EXIT)
    slash = page.locator(".item.message.user.slash")
    assert slash.locator(".slash-name").all_inner_texts() == ["/exit"]
    output = page.locator(".item.command-output")
    assert "Bye!" in output.inner_text()
    text = page.locator("#app").inner_text()
    assert "<command-" not in text and "<local-command" not in text
    assert "Caveat" not in text  # the CLI's note to the model is not shown


# -- search -------------------------------------------------------------------------------------


def test_search_as_you_type_dedupes_and_filters(shot_page: Any, site: World, screens: Path):
    page = shot_page
    page.goto(site.url("/search"))
    page.wait_for_selector("#app[data-ready='true']")
    page.locator("#search-input").press_sequentially("zebra serv", delay=30)  # no Enter
    page.wait_for_selector(".results .result-link")
    results = page.locator(".results .result")
    page.wait_for_function(
        "() => document.querySelector('.results').dataset.query === 'zebra serv'"
    )
    snippets = [s.replace("×3", "").strip() for s in results.locator(".snippet").all_inner_texts()]
    assert sorted(snippets) == sorted([REPEATED, "is the zebra service healthy?"])
    assert results.locator(".hit-count").all_inner_texts() == ["×3"]
    assert results.locator("mark").first.inner_text().lower() == "zebra"
    assert "q=zebra+serv" in page.url

    # Filters live in the address, and apply as they change.
    page.locator(".search-filters select[name='agent']").select_option("codex")
    page.wait_for_function("() => location.search.includes('agent=codex')")
    page.wait_for_selector(".search-status:has-text('No results.')")
    page.locator(".search-filters select[name='agent']").select_option("claude")
    page.locator(".search-filters input[name='project']").fill("nowhere")
    page.wait_for_function("() => location.search.includes('project=nowhere')")
    page.wait_for_selector(".search-status:has-text('No results.')")
    page.locator(".search-filters input[name='project']").fill("zoo")
    page.wait_for_selector(".results .result-link")
    page.locator(".search-filters select[name='since']").select_option("1h")
    page.wait_for_function("() => location.search.includes('since=1h')")
    page.wait_for_selector(
        ".search-status:has-text('No results.')"
    )  # the lines are from 2026-11-29
    page.locator(".search-filters select[name='since']").select_option("")
    page.wait_for_selector(".results .result-link")
    # A reload keeps them.
    page.goto(site.url(page.url.split(site.origin, 1)[1]))
    page.wait_for_selector(".results .result-link")
    assert page.locator(".search-filters input[name='project']").input_value() == "zoo"
    assert page.locator(".search-filters select[name='agent']").input_value() == "claude"
    assert no_overflow(page)
    page.screenshot(path=str(screens / f"search-{page.label}.png"), full_page=True)

    # The hit opens the replay with the words marked in it, in view.
    page.locator(".results .result-link", has_text="healthy").click()
    page.wait_for_url("**/session/claude/*")
    page.wait_for_selector("#app[data-ready='true']")
    marks = page.locator(".item.hit mark.search-hit")
    assert marks.first.inner_text().lower() == "zebra"
    assert marks.first.evaluate(
        "el => { const r = el.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= innerHeight; }"
    )
    page.screenshot(path=str(screens / f"replay-hit-{page.label}.png"))


def test_the_header_box_searches_without_enter(page: Any, site: World):
    open_replay(page, site, TOOLS)
    page.locator("#header-search input").press_sequentially("zebra", delay=30)
    page.wait_for_url("**/search?q=zebra")
    page.wait_for_selector(".results .result-link")
    # The search page's box has the words and the caret: typing goes on there.
    assert page.evaluate("document.activeElement.id") == "search-input"
    page.keyboard.type(" healthy")
    page.wait_for_function(
        "() => document.querySelector('.results').dataset.query === 'zebra healthy'"
    )
    assert page.locator(".results .result").count() == 1


# -- the pieces, on their own (in the page, as the replay loads them) ---------------------------

PIECES = """async () => {
  const { lineDiff, diffView } = await import('/static/js/diff.js');
  const { ansiFragment, stripAnsi } = await import('/static/js/ansi.js');
  const { humanDuration, humanDurations, slashCommand, noteLabel } =
    await import('/static/js/transcript_text.js');
  const { parseAnswers, toolView } = await import('/static/js/tools.js');
  // The replay model's own fields, when it gives them, win over reading the input.
  const modelEdit = toolView({ name: 'Edit', input: { file_path: 'x.py' }, diff: [
    { kind: 'file', text: 'src/x.py' }, { kind: 'hunk', text: '@@ -10,2 +10,2 @@' },
    { kind: 'context', text: 'keep' }, { kind: 'del', text: 'old' }, { kind: 'add', text: 'new' },
    { kind: 'hunk', text: '@@ -40 +40 @@' }, { kind: 'del', text: 'gone' },
    { kind: 'cut', text: '9 more lines' }] }).body;
  const ask = toolView({ name: 'AskUserQuestion', input: {}, questions: [
    { question: 'Pick?', header: 'P', multiSelect: true,
      options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }] }] });
  ask.onResult({ text: 'whatever', answers: [{ question: 'Pick?', answer: 'A, C' }] });
  // Codex's apply_patch (its input is the patch text): one diff per file.
  const patch = toolView({ name: 'apply_patch', input: '*** Begin Patch\\n'
    + '*** Update File: tests/test_io.py\\n@@\\n-    time.sleep(0.1)\\n+    wait_for(ready)\\n'
    + '*** Add File: tests/helpers.py\\n+def wait_for(ready):\\n+    ready.wait(5)\\n'
    + '*** End Patch' }).body;
  const big = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\\n');
  const bigger = Array.from({ length: 3000 }, (_, i) => `line ${i * 7}`).join('\\n');
  const t0 = performance.now();
  const rows = lineDiff(big, bigger);
  const view = diffView(rows);
  const div = document.createElement('div');
  div.append(ansiFragment('a\\u001b[38;5;208mX\\u001b[0m\\u001b]0;title\\u0007b\\u001b[2Kc'
    + '\\u001b[1;94mD\\u001b[22;39m\\u0007e'));
  return {
    empty: lineDiff('', '').length,
    same: lineDiff('a\\nb', 'a\\nb').map(r => r.op).join(''),
    drawn: view.querySelectorAll('tr').length,
    more: view.querySelector('.diff-more') ? view.querySelector('.diff-more').textContent : '',
    ms: performance.now() - t0,
    ansiText: div.textContent,
    ansiSpans: [...div.querySelectorAll('span')].map(s => [s.className, s.textContent]),
    stripped: stripAnsi('\\u001b[31mred\\u001b[0m \\u001b[?25lok'),
    durations: [0.4, 12.2, 60, 1528.5, 3600, 7384].map(humanDuration),
    turn: humanDurations('Turn finished in 1528.5 s'),
    slash: [slashCommand({ text: '<command-message>init is analyzing</command-message>' }),
            slashCommand({ command: 'plugin:cmd', args: 'x y' }),
            slashCommand({ text: 'plain words' })],
    labels: ['turn_end', 'system/stop_hook_summary', 'title', ''].map(noteLabel),
    modelTitle: modelEdit.querySelector('.diff-file').textContent,
    modelRows: [...modelEdit.querySelectorAll('tr')].map(tr => [...tr.children]
      .map(td => td.textContent).join('|')),
    patchFiles: [...patch.querySelectorAll('.diff-file')].map(e => e.textContent),
    patchStats: [...patch.querySelectorAll('.diff-stat')].map(e => e.textContent),
    chosen: [...ask.body.querySelectorAll('.q-option.chosen')].map(o => o.dataset.label),
    answers: [...parseAnswers('answered: "Q one"="A", "Q \\\\"two\\\\""="B, C". Go on').entries()],
  };
}"""


def test_diff_ansi_and_words_on_their_own(page: Any, site: World):
    open_replay(page, site, TOOLS)
    got = page.evaluate(PIECES)
    assert got["empty"] == 0 and got["same"] == "  "
    # A huge edit: a bounded amount of rows drawn, the rest counted.
    assert got["drawn"] <= 400 and "more diff rows not shown" in got["more"]
    # Escapes: SGR to classes (256 colours beyond 16 dropped), the rest removed, BEL dropped.
    assert got["ansiText"] == "aXbcDe"
    assert got["ansiSpans"] == [["ansi-fg-12 ansi-bold", "D"]]
    assert got["stripped"] == "red ok"
    assert got["durations"] == ["0.4 s", "12 s", "1 min", "25 min 28 s", "1 h", "2 h 3 min"]
    assert got["turn"] == "Turn finished in 25 min 28 s"
    assert got["slash"] == [
        {"name": "/init", "args": ""},
        {"name": "/plugin:cmd", "args": "x y"},
        None,
    ]
    assert got["labels"] == ["", "Stop hook summary", "Title", ""]
    assert got["modelTitle"] == "src/x.py"
    assert got["modelRows"] == [
        "10|10| |keep",
        "11||-|old",
        "|11|+|new",
        "⋯|",
        "40||-|gone",
        "⋯|9 more lines",
    ]
    assert got["chosen"] == ["A", "C"]
    assert got["patchFiles"] == ["tests/test_io.py", "tests/helpers.py"]
    assert got["patchStats"] == ["+1 −1", "+2 −0"]
    assert got["answers"] == [["Q one", "A"], ['Q \\"two\\"', "B, C"]]


# -- the terminal page ---------------------------------------------------------------------------

TERMINAL_TEXT = """() => { const b = window.agentbarTerminal.term.buffer.active; const out = [];
  for (let i = 0; i < b.length; i++) out.push(b.getLine(i).translateToString(true));
  return out.join('\\n'); }"""
TERMINAL_BG = {"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}


@pytest.mark.slow
def test_the_terminal_page_follows_the_tokens(tmp_path: Path, browser: Any, screens: Path):
    with launch_rig(tmp_path) as rig, rig.serving(rig.manager()) as server:
        manager = server.tasks
        info = rig.launch(manager, Agent("claude"))
        wait_for(lambda: manager.task(info.task_id).first_output_at, 10, "the agent's output")
        for width in WIDTHS:
            for scheme in SCHEMES:
                context = browser.new_context(
                    viewport={"width": width, "height": 700}, color_scheme=scheme
                )
                context.set_default_timeout(20_000)
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
                try:
                    page.goto(server.open_url(f"/terminal/{info.task_id}"))
                    page.wait_for_selector("body[data-ready='true'][data-output='true']")
                    wait_for(
                        lambda page=page: "Fake Claude Code" in page.evaluate(TERMINAL_TEXT),
                        15,
                        "the agent's screen",
                    )
                    # The box and the terminal inside it take the scheme's colours.
                    box = page.evaluate(
                        "getComputedStyle(document.querySelector('.terminal-box')).backgroundColor"
                    )
                    assert box == TERMINAL_BG[scheme]
                    theme = page.evaluate("window.agentbarTerminal.term.options.theme")
                    assert theme["background"] in ("#ffffff", "#0d1117")
                    assert (theme["background"] == "#0d1117") == (scheme == "dark")
                    assert theme["red"]  # the 16 colours come from the same tokens as the replay
                    assert no_overflow(page)
                    page.screenshot(path=str(screens / f"terminal-{width}-{scheme}.png"))
                finally:
                    context.close()
                assert not errors, errors
        manager.stop(info.task_id)


def test_a_bad_filter_in_the_address_says_what_is_wrong(page: Any, site: World):
    page.goto(site.url("/search?q=zebra&since=someday"))
    status = page.locator(".search-status")
    status.filter(has_text="Search failed").wait_for()
    assert "since" in status.inner_text()
    assert page.locator(".results .result").count() == 0
    # The filter is shown as it was given, to be changed; a good one searches again.
    assert page.locator(".search-filters select[name='since']").input_value() == "someday"
    page.locator(".search-filters select[name='since']").select_option("")
    page.wait_for_selector(".results .result-link")
    assert "since=" not in page.url
