"""Gemini CLI in the conformance rig: the pinned versions and what each does differently, its
settings against the scripted model, a person-like driver, and the recorder that copies what a
run left on disk into ``tests/data/recorded/gemini-<version>/<scenario>/``.

Pointing it at the scripted model (read from the installed bundle, ``contentGenerator.ts``):
``GOOGLE_GEMINI_BASE_URL`` is the Gemini API's base URL (the CLI then calls
``<url>/v1beta/models/<model>:streamGenerateContent?alt=sse``), ``GEMINI_API_KEY`` any string,
and ``security.auth.selectedType: "gemini-api-key"`` in ``~/.gemini/settings.json`` so that no
login dialog comes up. The same file turns off what would reach the network or get in the way:
auto-update and its notice, usage statistics, telemetry, the IDE integration and its nudge,
folder trust, and retries (``general.maxAttempts: 1``: a model error fails at once, not after
ten attempts with backoff).

Versions. 0.61.0 is the current release (``npm view @google/gemini-cli version``); 0.38.2 is
the last release that writes a chat as one JSON document (0.39.1 writes JSONL). What differs,
as seen on the real programs:

==========================  ======================  ======================
                            0.38.2                  0.61.0
==========================  ======================  ======================
chat file                   ``session-*.json``,     ``session-*.jsonl``,
                            rewritten whole         appended
history copies              none                    after an interrupt or a
                                                    denial, and on resume
session summary (title)     ``summary`` at exit     none seen
==========================  ======================  ======================

Both write a tool call only once it has finished: an approval or an ``ask_user`` question on
screen leaves nothing in the chat (``GAP_APPROVAL``), so without agentbar's hooks a waiting
Gemini CLI reads as running.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from agent_terminal import PASTE_PAUSE, AgentTerminal
from cli_install import Cli, cache_dir, ensure_installed
from watch_events import Seen, WatchEvents

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "data" / "recorded"
RECORDING = os.environ.get("AGENTBAR_RECORD") == "1"

PROJECT_PLACEHOLDER = "/home/user/project"
HOME_PLACEHOLDER = "/home/user"
RIG_PLACEHOLDER = "/home/user/rig"
CACHE_PLACEHOLDER = "/opt/agentbar-conformance"
LONG_TEXT = 1500

MODEL = "gemini-2.5-flash"
READY = "Type your message"  # the input box's placeholder: the TUI takes input
APPROVAL_PROMPT = "Allow once"
QUESTION_HINT = "Enter to select"
CANCELLED = "Request cancelled."

GAP_APPROVAL = "approval"  # a call waiting for the person is not in the chat until it ran
GAP_QUESTION_TOOL = "question tool"  # the same for ask_user's question


@dataclass(frozen=True)
class GeminiVersion:
    version: str
    legacy_json: bool  # one JSON document per chat, rewritten whole
    gaps: frozenset[str] = field(default_factory=frozenset)

    @property
    def cli(self) -> Cli:
        return Cli("gemini", "@google/gemini-cli", self.version)

    @property
    def label(self) -> str:
        return self.cli.label


_GAPS = frozenset({GAP_APPROVAL, GAP_QUESTION_TOOL})
VERSIONS = [
    GeminiVersion("0.61.0", legacy_json=False, gaps=_GAPS),
    GeminiVersion("0.38.2", legacy_json=True, gaps=_GAPS),
]


def settings(hooks: dict[str, Any] | None = None) -> dict[str, Any]:
    """``~/.gemini/settings.json`` for an offline run against the scripted model."""
    document: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "maxAttempts": 1,
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ide": {"enabled": False, "hasSeenNudge": True},
        "model": {"name": MODEL},
    }
    if hooks is not None:
        document["hooks"] = hooks
    return document


def gemini_env(env: dict[str, str], server_url: str) -> None:
    env["GEMINI_API_KEY"] = "conformance"
    env["GOOGLE_GEMINI_BASE_URL"] = server_url


class GeminiRun:
    """One scenario: the rig, the watch, Gemini CLI TUIs in the project folder, the recorder."""

    def __init__(self, rig: Any, version: GeminiVersion, scenario: str) -> None:
        self.rig = rig
        self.version = version
        self.scenario = scenario
        self.binary = ensure_installed(version.cli)
        gemini_env(rig.env, rig.server.url)
        self.gemini_home.mkdir(parents=True, exist_ok=True)
        (self.gemini_home / "settings.json").write_text(json.dumps(settings(), indent=2) + "\n")
        self.watch: WatchEvents = rig.start_watch()
        self.term: AgentTerminal | None = None
        self.recorder = Recorder(self)
        self.gaps_seen: list[str] = []
        self._terminals = 0

    @property
    def gemini_home(self) -> Path:
        return Path(self.rig.home) / ".gemini"

    # -- the TUI ---------------------------------------------------------------------------

    def start(self, *args: str, timeout: float = 90.0) -> float:
        self._terminals += 1
        self.term = self.rig.terminal([str(self.binary), *args], name=f"gemini-{self._terminals}")
        return self.term.wait_for(READY, timeout=timeout)

    def submit(self, text: str) -> int:
        """Type a prompt like a person and send it once it shows in the input box; returns the
        watch position before it. A TUI that has just started (a resumed one redraws its
        history) can drop what is typed: then it is typed again."""
        assert self.term is not None
        mark = self.watch.count()
        before = self.term.text().count(text)
        for _ in range(3):
            self.term.type(text)
            try:
                self.term.wait_for(re.compile(f"(?s)({re.escape(text)}.*){{{before + 1}}}"), 5)
                break
            except AssertionError:
                continue
        time.sleep(PASTE_PAUSE)
        self.term.press("enter")
        return mark

    def quit(self) -> float:
        assert self.term is not None
        self.term.submit("/quit")
        status = self.term.wait_exit(timeout=30)
        assert status is not None, f"gemini did not exit; screen:\n{self.term.text()}"
        return time.perf_counter()

    # -- what agentbar says ----------------------------------------------------------------

    def wait(
        self,
        state: str,
        *,
        after: int,
        waiting_for: str | None = None,
        timeout: float = 30.0,
        sid: str | None = None,
    ) -> Seen:
        def match(event: dict[str, Any]) -> bool:
            return (
                event["agent"] == "gemini"
                and (sid is None or event["session_id"] == sid)
                and event["state"] == state
                and (waiting_for is None or event["waiting_for"] == waiting_for)
            )

        return self.watch.wait_for(match, timeout, after=after)

    def after(self, seen: Seen) -> int:
        return self.watch.events().index(seen) + 1

    def latest(self, sid: str) -> dict[str, Any]:
        events = self.watch.events(sid)
        assert events, "agentbar reported nothing for the session"
        return events[-1].event

    def states(self) -> list[tuple[str, str | None, str]]:
        return [
            (s.event["state"], s.event["waiting_for"], s.event["detail"])
            for s in self.watch.events()
        ]

    def delay(self, record_delay: Any, what: str, screen_at: float, seen: Seen) -> None:
        record_delay(self.version.label, self.scenario, what, screen_at, seen.at)

    def chats(self) -> list[Path]:
        found: list[Path] = []
        for folder in ("tmp", "data"):
            found.extend(sorted((self.gemini_home / folder).glob("*/chats/**/*.json*")))
        return [p for p in found if p.suffix in (".json", ".jsonl")]


# ---------------------------------------------------------------------------------------------
# Recording: the chats as they were at each moment a scenario checked, for the unit tests
# ---------------------------------------------------------------------------------------------


class Recorder:
    """With ``AGENTBAR_RECORD=1``: at each ``mark`` note how many lines every JSONL chat had
    (a JSON chat, rewritten whole, is copied as it is), and which Gemini CLI processes ran; at
    ``save`` copy the chats and the project map, sanitised, and write ``scenario.json``."""

    def __init__(self, run: GeminiRun) -> None:
        self.run = run
        self.marks: list[dict[str, Any]] = []
        self.snapshots: dict[str, str] = {}  # saved name -> sanitised content

    def mark(
        self,
        label: str,
        state: str,
        *,
        waiting_for: str | None = None,
        detail: str | None = None,
        gap: str | None = None,
    ) -> None:
        if not RECORDING:
            return
        files: dict[str, Any] = {}
        for path in self.run.chats():
            rel = self._relative(path)
            if path.suffix == ".json":
                name = f"snapshots/{len(self.marks)}/{rel}"
                self.snapshots[name] = self._sanitise(_read_document(path))
                files[rel] = {"snapshot": name}
            else:
                files[rel] = {"lines": path.read_bytes().count(b"\n")}
        self.marks.append(
            {
                "label": label,
                "files": files,
                "processes": self._processes(),
                "expect": {"state": state, "waiting_for": waiting_for, "detail": detail},
                **({"gap": gap} if gap else {}),
            }
        )

    def save(self) -> None:
        if not RECORDING or not self.marks:  # (a scenario that checks no chat: nothing to keep)
            return
        run = self.run
        target = RECORDED / f"gemini-{run.version.version}" / run.scenario
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for path in run.chats():
            if path.suffix == ".jsonl":
                out = target / self._relative(path)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(
                    "".join(self._sanitise_line(line) for line in path.read_text().splitlines(True))
                )
        for name, content in self.snapshots.items():
            out = target / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(content)
        for extra in [
            run.gemini_home / "projects.json",
            *run.gemini_home.glob("tmp/*/.project_root"),
        ]:
            if extra.exists():
                out = target / self._relative(extra)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(self._sanitise(extra.read_text()))
        document = {
            "agent": "gemini",
            "version": run.version.version,
            "scenario": run.scenario,
            "project": PROJECT_PLACEHOLDER,
            "marks": self.marks,
            "live_events": [list(s) for s in run.states()],
        }
        (target / "scenario.json").write_text(
            self._sanitise(json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
        )

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.run.gemini_home).as_posix()

    def _processes(self) -> list[dict[str, Any]]:
        marker = str(self.run.rig.home)
        watch_pid = self.run.watch.proc.pid
        found = []
        for proc in psutil.process_iter(["pid", "ppid", "name", "cmdline", "create_time"]):
            info = proc.info
            cmdline = info["cmdline"] or []
            if proc.pid in (os.getpid(), watch_pid) or not re.match(r"^node", info["name"] or ""):
                continue
            try:
                environ = proc.environ()
                cwd = proc.cwd()
            except psutil.Error:
                continue
            if environ.get("HOME") != marker:
                continue
            found.append(
                {
                    "pid": proc.pid,
                    "ppid": info["ppid"],
                    "create_time": info["create_time"],
                    "name": info["name"],
                    "cmdline": [self._sanitise(a) for a in cmdline],
                    "cwd": self._sanitise(cwd),
                }
            )
        return found

    def _sanitise(self, text: str) -> str:
        rig = self.run.rig
        for real, placeholder in (
            (str(rig.project), PROJECT_PLACEHOLDER),
            (str(rig.home), HOME_PLACEHOLDER),
            (str(rig.root), RIG_PLACEHOLDER),
            (str(cache_dir()), CACHE_PLACEHOLDER),
            (rig.server.url, "http://127.0.0.1:9"),
        ):
            text = text.replace(real, placeholder)
        return text

    def _sanitise_line(self, line: str) -> str:
        end = "\n" if line.endswith("\n") else ""
        try:
            value = json.loads(line)
        except ValueError:
            return self._sanitise(line)
        return self._sanitise(json.dumps(_cut_long_strings(value), ensure_ascii=False)) + end


def _read_document(path: Path) -> str:
    """A JSON chat as a whole document: the CLI truncates and then writes it, and a read in
    between finds it empty; read again a moment later."""
    text = ""
    for _ in range(50):
        text = path.read_text()
        try:
            json.loads(text)
            return text
        except ValueError:
            time.sleep(0.01)
    raise AssertionError(f"{path} never held a whole JSON document: {text[:200]!r}")


def _cut_long_strings(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return f"{value[:300]}[... {len(value) - 300} characters cut by the recorder]"
    if isinstance(value, dict):
        return {k: _cut_long_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_long_strings(v) for v in value]
    return value
