"""Export: Markdown, JSON and a self-contained HTML page of a session, sub-agents nested; the
HTML carries no script and escapes every transcript string."""

from __future__ import annotations

import html.parser
from pathlib import Path

import orjson
import pytest
from claude_lines import ClaudeTranscript, write_lines
from export_check import check_exports
from replay_rig import SYNTHETIC, V10, V21, Home, make_home, snapshot

from agentbar.core.replay.export import Format, Options, export, filename

XSS = "91000000-0000-4000-8000-000000000009"
PAYLOADS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "</pre></details><script>alert(3)</script>",
    '"><svg onload=alert(4)>',
]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = make_home(tmp_path)
    t = ClaudeTranscript(XSS, "/work/<script>alert(0)</script>")
    write_lines(
        home.claude / "projects" / "-work-xss" / f"{XSS}.jsonl",
        [
            t.bookkeeping("custom-title", customTitle="<script>alert('title')</script>"),
            t.prompt(PAYLOADS[0]),
            t.thinking(PAYLOADS[1]),
            t.tool_use("Bash", {"command": PAYLOADS[2]}, "toolu_x"),
            t.tool_result("toolu_x", PAYLOADS[3] + " ```` fence breaker"),
            t.text("Done: " + PAYLOADS[1]),
            {"type": "mystery", "payload": PAYLOADS[0], "uuid": "u-1", "sessionId": XSS},
        ],
    )
    return home


def render(home: Home, session_id: str, fmt: Format, **options: bool) -> str:
    engine = home.caught_up()
    try:
        snap = snapshot(engine, session_id)
        return "".join(export(home.replay(), snap, fmt, Options(**options)))
    finally:
        engine.stop()


def test_markdown_has_prompts_answers_tools_and_nested_subagents(home: Home):
    text = render(home, V21, Format.MARKDOWN)
    assert text.startswith("# Slow build investigation\n")
    assert "- **Agent**: `claude`" in text and "- **Project**: `/work/new`" in text
    assert "### User · 2026-11-29 10:00:03.000 UTC\n\nWhy is the build slow?" in text
    assert "**Tool call** `Agent`: `Profile the build`" in text
    # The sub-agent's thread sits right after its call's result, collapsed.
    call = text.index("**Tool call** `Agent`")
    result = text.index("<details><summary>Result</summary>", call)
    nested = text.index("<details><summary>Sub-agent: Profile the build</summary>", result)
    assert text.index("npm run build -- --profile", nested) < text.index("Minification dominates")
    assert text.rstrip().endswith("Should I switch to esbuild?")


def test_markdown_options_and_inline_subagents(home: Home):
    with_thinking = render(home, XSS, Format.MARKDOWN)
    assert "<details><summary>Thinking</summary>" in with_thinking
    without = render(home, XSS, Format.MARKDOWN, thinking=False)
    assert "Thinking" not in without
    # Fences are longer than any run of backticks inside them.
    assert "`````\n" in with_thinking
    legacy = render(home, V10, Format.MARKDOWN)
    assert "<details><summary>Sub-agent: Find parser call sites</summary>" in legacy
    assert "Found one call site." in legacy
    notes = render(home, V21, Format.MARKDOWN, notes=True)
    assert "Turn finished in 7 s" in notes and "Turn finished" not in render(
        home, V21, Format.MARKDOWN
    )


def test_json_export_holds_every_item_whole_and_the_threads(home: Home):
    doc = orjson.loads(render(home, V21, Format.JSON))
    assert doc["format"] == "agentbar-replay" and doc["version"] == 1
    assert doc["session"]["session_id"] == V21 and doc["session"]["title"]
    kinds = [item["kind"] for item in doc["items"]]
    assert kinds[:4] == ["note", "user", "tool_call", "subagent"]
    (thread,) = doc["threads"]
    assert thread["thread"] == "a4c2d9" and thread["description"] == "Profile the build"
    assert [i["kind"] for i in thread["items"]] == ["user", "tool_call", "tool_result", "assistant"]
    assert all(not item["truncated"] for item in doc["items"])


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [name for name, _ in attrs]


def test_html_is_self_contained_scriptless_and_escapes_the_transcript(home: Home):
    page = render(home, XSS, Format.HTML)
    assert "<script" not in page.lower()
    for payload in PAYLOADS:
        assert payload not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page
    tags = _Tags()
    tags.feed(page)
    assert set(tags.tags) <= {
        "html", "head", "meta", "title", "style", "body", "main", "h1", "dl", "dt", "dd",
        "section", "header", "div", "details", "summary", "pre", "strong",
    }  # fmt: skip
    assert not [a for a in tags.attrs if a.startswith("on") or a in ("src", "href")]
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "http://" not in page and "https://" not in page  # nothing fetched from anywhere


def test_html_of_a_session_with_subagents(home: Home):
    page = render(home, V21, Format.HTML)
    assert '<details class="subagent" open><summary>Sub-agent: Profile the build' in page
    assert "webpack minify takes 80%" in page


def test_file_names_are_safe(home: Home):
    engine = home.caught_up()
    snap = snapshot(engine, XSS)
    engine.stop()
    name = filename(snap, Format.HTML)
    assert name == f"claude-script-alert-title-script-{XSS[:8]}.html"
    assert "/" not in name and "<" not in name


def test_every_synthetic_session_exports_each_result_under_its_call(tmp_path: Path):
    """Every Claude layout (1.0 inline sub-agents, 2.0, 2.1) and every Codex fixture."""
    home = make_home(tmp_path)
    codex = sorted(
        p.name for p in (SYNTHETIC / "codex").glob("*.jsonl") if "rollout-" not in p.name
    )
    for n, name in enumerate(codex):
        home.codex_rollout(name, f"019ad3f1-7c2e-7b10-9a41-{n:012d}")
    engine = home.caught_up()
    try:
        snaps = [s for s in engine.sessions() if s.transcript]
    finally:
        engine.stop()
    assert {s.key.agent for s in snaps} == {"claude", "codex"} and len(snaps) >= 10
    for snap in snaps:
        check_exports(home.replay(), snap)


def test_tokens_are_input_and_output_with_cache_apart(home: Home):
    engine = home.caught_up()
    try:
        snap = snapshot(engine, V21)
    finally:
        engine.stop()
    usage = snap.usage
    headline = usage.input_tokens + usage.output_tokens
    assert usage.cache_read_tokens > 0  # so the headline leaving it out is seen
    doc = orjson.loads("".join(export(home.replay(), snap, Format.JSON)))
    assert doc["session"]["headline_tokens"] == headline
    assert doc["session"]["usage"]["cache_read_tokens"] == usage.cache_read_tokens  # unchanged
    md = "".join(export(home.replay(), snap, Format.MARKDOWN))
    assert f"- **Tokens**: `{headline:,} ({usage.input_tokens:,} in, " in md
    assert f"- **Cache**: `{usage.cache_read_tokens:,} read, " in md


def test_the_title_is_whole_in_every_export(tmp_path: Path):
    home = make_home(tmp_path, claude=())
    long_id = "94000000-0000-4000-8000-000000000001"
    prompt = "Please " + " ".join(f"word{n}" for n in range(60)) + " end."
    t = ClaudeTranscript(long_id, "/work/long")
    write_lines(
        home.claude / "projects" / "-work-long" / f"{long_id}.jsonl",
        [t.prompt(prompt + "\nsecond line"), t.text("ok")],
    )
    engine = home.caught_up()
    try:
        snap = snapshot(engine, long_id)
    finally:
        engine.stop()
    assert snap.title is not None and snap.title.endswith("…") and len(snap.title) == 120
    md = "".join(export(home.replay(), snap, Format.MARKDOWN))
    assert md.startswith(f"# {prompt}\n")
    page = "".join(export(home.replay(), snap, Format.HTML))
    assert f"<title>{prompt}</title>" in page and f"<h1>{prompt}</h1>" in page
