"""A real agentbar server over a throwaway HOME of fixture sessions, and Debian's Chromium driven
by Playwright, for the web UI's browser tests.

The world: every synthetic and recorded fixture transcript copied into the agents' own layout,
plus sessions written here with "now" timestamps and fake live processes, one per state the
board shows (an approval, a question, running, failed, done), one rich replay (thinking, tool
calls, a long and a cut output, a sub-agent, a compaction, an error, an unknown line), one long
transcript that takes many pages, one carrying script and markup, and a few that tests make
change while a page is open. The engine runs with its real watcher and ticker; only the process
table is fake (the liveness of an agent is not what these tests are about).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_lines import ClaudeTranscript, registry, write_lines
from codex_lines import CodexRollout
from polling import end_process

from agentbar.core.config import Settings
from agentbar.core.decisions import BookChange, Decision, DecisionBook
from agentbar.core.engine import Engine
from agentbar.core.index import Index
from agentbar.core.limits_claude import ClaudeStatusLineRecord, record_path
from agentbar.core.lock import InstanceLock
from agentbar.core.model import Agent
from agentbar.core.procs import FakeProcessTable
from agentbar.core.replay.files import AgentRoots
from agentbar.core.search import Searcher
from agentbar.core.server.runner import LoopbackServer
from agentbar.core.service import Service
from agentbar.core.sources.base import ProcessInfo

DATA = Path(__file__).parent / "data"
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

APPROVE = "a1000000-0000-4000-8000-000000000001"
QUESTION = "a2000000-0000-4000-8000-000000000002"
RUNNING = "a3000000-0000-4000-8000-000000000003"
FAILED = "a4000000-0000-4000-8000-000000000004"
DONE = "a5000000-0000-4000-8000-000000000005"
LIVE_BOARD = "a6000000-0000-4000-8000-000000000006"
LIVE_REPLAY = "a7000000-0000-4000-8000-000000000007"
# Ended a few minutes ago (no process): the board's "Ended recently" group, whatever the date.
ENDED_CODEX = "019ad3f1-0000-7000-8000-0000000e0d0e"
RICH = "b1000000-0000-4000-8000-000000000001"
LONG = "b2000000-0000-4000-8000-000000000002"
XSS = "b3000000-0000-4000-8000-000000000003"
SUBAGENT_ID = "f00dcafe"

LONG_TURNS = 1500
LONG_HIT_TURN = 400
HIT_WORD = "quetzalcoatl"
APPROVE_COMMAND = "rm -rf build/ && npm run build"
QUESTION_TEXT = "Which test framework should I use?"

XSS_PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[click me](javascript:alert(3))",
    '<a href="javascript:alert(4)">plain link</a>',
    "<iframe src=javascript:alert(5)></iframe>",
    "<svg onload=alert(6)><circle/></svg>",
    '<div style="background:url(javascript:alert(7))" onclick="alert(8)">styled</div>',
    "![remote](http://127.0.0.1:1/track.png)",
]
XSS_TEXT = "\n\n".join(XSS_PAYLOADS)


@dataclass
class World:
    root: Path
    home: Path
    settings: Settings
    processes: FakeProcessTable
    server: LoopbackServer | None = None
    service: Service | None = None
    # The server's decision book: tests open requests in it as a holder would.
    decisions: DecisionBook = field(default_factory=DecisionBook)
    transcripts: dict[str, Path] = field(default_factory=dict)
    writers: dict[str, ClaudeTranscript] = field(default_factory=dict)
    fixture_ids: list[tuple[str, str]] = field(default_factory=list)

    @property
    def claude(self) -> Path:
        return self.settings.homes_of(Agent("claude"))[0]

    @property
    def codex(self) -> Path:
        return self.settings.homes_of(Agent("codex"))[0]

    @property
    def origin(self) -> str:
        assert self.server is not None
        return self.server.origin

    @property
    def token(self) -> str:
        assert self.server is not None
        return self.server.token

    def url(self, path: str = "/") -> str:
        """An address that opens ``path`` once: a one-time code the server trades for its
        cookie."""
        assert self.server is not None
        return self.server.open_url(path)

    def api(self, path: str) -> Any:
        import urllib.request

        request = urllib.request.Request(
            self.origin + path, headers={"X-Agentbar-Token": self.token}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return orjson.loads(response.read())

    def sessions(self) -> dict[str, dict[str, Any]]:
        return {s["session_id"]: s for s in self.api("/api/sessions?all=1")["sessions"]}

    def append(self, session_id: str, *lines: dict[str, Any]) -> None:
        write_lines(self.transcripts[session_id], list(lines))

    def wait_for(
        self, what: str, check: Callable[[], bool], timeout: float = 30.0, step: float = 0.05
    ) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(step)

    def wait_state(self, session_id: str, state: str, timeout: float = 30.0) -> dict[str, Any]:
        found: dict[str, Any] = {}

        def check() -> bool:
            s = self.sessions().get(session_id)
            if s is not None and s["state"] == state:
                found.update(s)
                return True
            return False

        self.wait_for(f"{session_id} to be {state}", check, timeout)
        return found

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            if self.server.searcher is not None:
                self.server.searcher.close()
        if self.service is not None:
            self.service.close()


# -- building the HOME ------------------------------------------------------------------------


def copy_fixtures(world: World) -> None:
    """Every fixture transcript, laid out where the agents write them."""
    for version in sorted((DATA / "synthetic" / "claude").iterdir()):
        shutil.copytree(version, world.claude, dirs_exist_ok=True)
    for recorded in sorted((DATA / "recorded").glob("claude-*/*")):
        for sub in ("projects",):
            if (recorded / sub).is_dir():
                shutil.copytree(recorded / sub, world.claude / sub, dirs_exist_ok=True)
    folder = world.codex / "sessions" / "2026" / "11" / "29"
    folder.mkdir(parents=True, exist_ok=True)
    for fixture in sorted((DATA / "synthetic" / "codex").glob("*.jsonl")):
        first = fixture.read_bytes().split(b"\n", 1)[0]
        try:
            obj = orjson.loads(first)
            session_id = obj.get("payload", obj)["id"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            session_id = fixture.stem[-36:]
        name = (
            fixture.name
            if fixture.name.startswith("rollout-")
            else f"rollout-2026-11-29T10-00-00-{session_id}.jsonl"
        )
        (folder / name).write_bytes(fixture.read_bytes())
        world.fixture_ids.append(("codex", session_id))
    for recorded in sorted((DATA / "recorded").glob("codex-*/*/sessions")):
        shutil.copytree(recorded, world.codex / "sessions", dirs_exist_ok=True)


def transcript(world: World, session_id: str, cwd: str, start: float) -> ClaudeTranscript:
    t = ClaudeTranscript(session_id, cwd, start=start, step=0.5)
    world.writers[session_id] = t
    world.transcripts[session_id] = (
        world.claude / "projects" / cwd.replace("/", "-") / f"{session_id}.jsonl"
    )
    return t


def live(
    world: World,
    pid: int,
    session_id: str,
    cwd: str,
    status: str | None,
    now: float,
    waiting_for: str | None = None,
) -> None:
    """A fake live agent process; with ``status``, its registry file too."""
    started = now - 600
    world.processes.add(
        ProcessInfo(
            pid=pid,
            ppid=1,
            create_time=started - 1,
            name="claude",
            cmdline=("claude", "--resume", session_id),
            cwd=cwd,
        )
    )
    if status is not None:
        entry = registry(
            pid,
            session_id,
            status=status,
            waiting_for=waiting_for,
            cwd=cwd,
            started_at=started,
            updated_at=now - 5,
        )
        path = world.claude / "sessions" / f"{pid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(entry))


def write(world: World, session_id: str, lines: list[dict[str, Any]]) -> None:
    write_lines(world.transcripts[session_id], lines)


def board_sessions(world: World, now: float) -> None:
    start = now - 300
    t = transcript(world, APPROVE, "/work/alpha", start)
    write(
        world,
        APPROVE,
        [
            t.prompt("Clean the build folder and rebuild"),
            t.bash(APPROVE_COMMAND, "toolu_ap1"),
        ],
    )
    live(world, 7001, APPROVE, "/work/alpha", "waiting", now, "permission prompt")

    t = transcript(world, QUESTION, "/work/beta", start)
    write(
        world,
        QUESTION,
        [
            t.prompt("Set up the tests"),
            t.tool_use(
                "AskUserQuestion",
                {
                    "questions": [
                        {
                            "question": QUESTION_TEXT,
                            "header": "Framework",
                            "multiSelect": False,
                            "options": [
                                {"label": "pytest", "description": "plain asserts"},
                                {"label": "unittest", "description": "stdlib"},
                            ],
                        }
                    ]
                },
                "toolu_q1",
            ),
        ],
    )
    live(world, 7002, QUESTION, "/work/beta", "waiting", now, "input needed")

    t = transcript(world, RUNNING, "/work/alpha", start)
    write(world, RUNNING, [t.prompt("Run the whole test suite"), t.bash("pytest -x", "toolu_r1")])
    live(world, 7003, RUNNING, "/work/alpha", "busy", now)

    t = transcript(world, FAILED, "/work/beta", start)
    write(world, FAILED, [t.prompt("Summarise the changes"), t.synthetic_error("API Error: 500")])
    live(world, 7004, FAILED, "/work/beta", "idle", now)

    t = transcript(world, DONE, "/work/gamma", start)
    write(
        world,
        DONE,
        [t.prompt("Say hello"), t.text("Hello!", stop_reason="end_turn"), t.turn_duration()],
    )
    live(world, 7005, DONE, "/work/gamma", "idle", now)

    for session_id, pid in ((LIVE_BOARD, 7006), (LIVE_REPLAY, 7007)):
        t = transcript(world, session_id, "/work/gamma", start)
        write(
            world, session_id, [t.prompt(f"Work on {session_id[:2]}"), t.bash("make", "toolu_live")]
        )
        live(world, pid, session_id, "/work/gamma", None, now)

    rollout = CodexRollout(ENDED_CODEX, "/work/gamma", start=start)
    day = time.strftime("%Y/%m/%d", time.gmtime(start))
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(start))
    write_lines(
        world.codex / "sessions" / day / f"rollout-{stamp}-{ENDED_CODEX}.jsonl",
        [
            rollout.meta(),
            rollout.started(),
            rollout.prompt("Bump the version"),
            rollout.answer("Bumped to 2.0."),
            rollout.complete("Bumped to 2.0."),
        ],
    )


def rich_session(world: World, now: float) -> None:
    start = now - 7200
    t = transcript(world, RICH, "/work/rich", start)
    long_output = "\n".join(f"line {i}: " + "x" * 40 for i in range(200))
    huge_output = "".join(f"chunk {i:05d} " + "y" * 50 + "\n" for i in range(400))  # > 8000
    lines = [
        t.prompt("Profile the **build** and tell me what is slow"),
        t.thinking("I should look at the webpack config first, then profile."),
        t.text(
            "Let me check.\n\n| step | time |\n| --- | --- |\n| minify | 80% |\n\n"
            "```js\nconsole.log('hi')\n```"
        ),
        t.bash("npm run build -- --profile", "toolu_b1"),
        t.tool_result("toolu_b1", long_output),
        t.bash("cat build.log", "toolu_b2"),
        t.tool_result("toolu_b2", huge_output),
        t.bash("rm -rf /", "toolu_b3"),
        t.tool_result("toolu_b3", denied=True),
        t.tool_use(
            "Agent",
            {
                "description": "Dig into minify",
                "prompt": "why is minify slow",
                "subagent_type": "general-purpose",
            },
            "toolu_agent",
        ),
        t.tool_result("toolu_agent", "terser is single threaded"),
        t.api_error("Overloaded", 1, 10),
        t.bookkeeping("frobnicate", sessionId=RICH, payload={"mystery": "<b>raw</b>"}),
        t._base(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            compactMetadata={"trigger": "auto", "preTokens": 150000},
        ),
        t.prompt("So what should I do?"),
        t.text("Switch the minifier to **esbuild**.", stop_reason="end_turn"),
        t.turn_duration(),
    ]
    write(world, RICH, lines)
    sub = ClaudeTranscript(
        RICH, "/work/rich", start=start + 10, step=0.5, sidechain=True, agent_id=SUBAGENT_ID
    )
    folder = world.claude / "projects" / "-work-rich" / RICH / "subagents"
    write_lines(
        folder / f"agent-{SUBAGENT_ID}.jsonl",
        [
            sub.prompt("why is minify slow"),
            sub.bash("node --cpu-prof build.js", "toolu_s1"),
            sub.tool_result("toolu_s1", "terser: 41 s"),
            sub.text("terser is single threaded", stop_reason="end_turn"),
        ],
    )
    (folder / f"agent-{SUBAGENT_ID}.meta.json").write_bytes(
        orjson.dumps(
            {
                "agentType": "general-purpose",
                "description": "Dig into minify",
                "toolUseId": "toolu_agent",
            }
        )
    )


def long_session(world: World, now: float) -> None:
    start = now - 86400 * 2
    t = transcript(world, LONG, "/work/long", start)
    t.step = 0.01
    path = world.transcripts[LONG]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for turn in range(LONG_TURNS):
            word = f" {HIT_WORD}" if turn == LONG_HIT_TURN else ""
            fh.write(orjson.dumps(t.prompt(f"Question number {turn}{word}?")) + b"\n")
            answer = f"Answer number {turn}{word}. " + ("lorem ipsum dolor sit amet " * 20)
            fh.write(orjson.dumps(t.text(answer, stop_reason="end_turn")) + b"\n")


def xss_session(world: World, now: float) -> None:
    start = now - 3600
    cwd = "/work/xss<img src=x onerror=alert(9)>"
    t = transcript(world, XSS, cwd, start)
    write(
        world,
        XSS,
        [
            t.prompt(XSS_TEXT),
            t.thinking(XSS_TEXT),
            t.text(XSS_TEXT),
            t.bash("<img src=x onerror=alert(10)>", "toolu_x1"),
            t.tool_result("toolu_x1", XSS_TEXT),
            t.bookkeeping("<script>alert(11)</script>", sessionId=XSS, html=XSS_TEXT),
            t.text("done", stop_reason="end_turn"),
        ],
    )


def build_world(root: Path) -> World:
    home = root / "home"
    settings = Settings(
        homes={Agent("claude"): (home / ".claude",), Agent("codex"): (home / ".codex",)},
        data_dir=root / "data",
    )
    for folder in (
        home / ".claude" / "projects",
        home / ".claude" / "sessions",
        home / ".codex" / "sessions",
    ):
        folder.mkdir(parents=True, exist_ok=True)
    world = World(root=root, home=home, settings=settings, processes=FakeProcessTable())
    copy_fixtures(world)
    now = time.time()
    board_sessions(world, now)
    rich_session(world, now)
    long_session(world, now)
    xss_session(world, now)
    return world


def start_world(world: World) -> None:
    """The engine (real watcher and ticker, fake process table) and the server, in-process."""
    serve_world(world)
    world.service.start()
    expected = {
        APPROVE: "input_required",
        QUESTION: "input_required",
        RUNNING: "running",
        FAILED: "failed",
        DONE: "done",
        LIVE_BOARD: "running",
        LIVE_REPLAY: "running",
    }

    def ready() -> bool:
        sessions = world.sessions()
        wanted = {*expected, RICH, LONG, XSS}
        if not wanted <= sessions.keys():
            return False
        if any(sessions[k]["state"] != v for k, v in expected.items()):
            return False
        counts = sessions[LONG].get("counts") or {}
        return counts.get("prompt", 0) >= LONG_TURNS  # the search index has caught up

    world.wait_for("the engine to read the world", ready, timeout=90)


@contextlib.contextmanager
def running_world(root: Path) -> Iterator[World]:
    world = build_world(root)
    try:
        start_world(world)
        yield world
    finally:
        world.close()


# -- the decision book, heard ---------------------------------------------------------------


@pytest.fixture
def book(world: World) -> Iterator[list[BookChange]]:
    """The world's book, heard; whatever a test left open is withdrawn after it."""
    changes: list[BookChange] = []
    unsubscribe = world.decisions.subscribe(changes.append)
    try:
        yield changes
    finally:
        unsubscribe()
        for request in world.decisions.pending():
            world.decisions.withdraw(request.request_id, "the test ended")


def answered(changes: list[BookChange], request_id: str, world: World) -> Decision:
    """The decision ``request_id`` got (waited for: the page's click reaches the book)."""
    world.wait_for(
        f"{request_id} answered",
        lambda: any(c.request.request_id == request_id and c.decision for c in changes),
        timeout=15,
    )
    found = next(c.decision for c in changes if c.request.request_id == request_id and c.decision)
    assert found is not None
    return found


# -- Playwright -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("web-world")) as w:
        yield w


@contextlib.contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright, headless, closed at the end (its event loop runs in
    the calling thread while it is open)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    with launched_chromium() as b:
        yield b


class PageErrors:
    """What went wrong inside a page: uncaught errors, dialogs (an alert() that ran)."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    context.set_default_timeout(20_000)
    pg = context.new_page()
    problems = PageErrors()
    pg.on("pageerror", lambda exc: problems.errors.append(str(exc)))

    def on_dialog(dialog: Any) -> None:
        problems.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    pg.on("dialog", on_dialog)
    pg.problems = problems
    try:
        yield pg
    finally:
        context.close()
    assert not problems.errors, f"errors in the page: {problems.errors}"
    assert not problems.dialogs, f"dialogs opened: {problems.dialogs}"


def serve_world(world: World) -> Engine:
    """The engine (real watcher and ticker, fake process table) and the server, in-process:
    the server started, the engine not yet (nothing read: a cold start)."""
    settings = world.settings
    lock = InstanceLock(settings.lock_path)
    assert lock.acquire()
    engine = Engine(
        settings.sources(),
        Index.open(settings.index_path),
        processes=world.processes,
        traits=settings.traits(),
        tick_seconds=1.0,
        claude_limits=ClaudeStatusLineRecord(record_path(settings.data_dir)),
    )
    world.service = Service(engine=engine, lock=lock, owner=True)
    world.server = LoopbackServer(
        engine,
        AgentRoots(settings.agent_roots),
        kits=settings.kits,
        searcher=Searcher(settings.index_path),
        decisions=world.decisions,
    )
    world.server.start()
    return engine


def open_replay(
    page: Any, world: World, session_id: str, query: str = "", agent: str = "claude"
) -> None:
    page.goto(world.url(f"/session/{agent}/{session_id}{query}"))
    page.wait_for_selector("#app[data-ready='true']")


# -- a display for the real window ------------------------------------------------------------


@pytest.fixture(scope="session")
def xvfb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A private X server (Xvfb picks a free display and says which on a pipe), and the
    environment a GTK window needs under it."""

    from desktop import start_xvfb

    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is not installed (apt-get install xvfb)")
    server, display = start_xvfb()
    runtime = tmp_path_factory.mktemp("xdg-runtime")
    runtime.chmod(0o700)
    env = {
        "DISPLAY": display,
        "GDK_BACKEND": "x11",
        "NO_AT_BRIDGE": "1",
        "PYWEBVIEW_GUI": "gtk",
        "XDG_RUNTIME_DIR": str(runtime),
        "WEBKIT_DISABLE_COMPOSITING_MODE": "1",
    }
    try:
        yield env
    finally:
        end_process(server)
