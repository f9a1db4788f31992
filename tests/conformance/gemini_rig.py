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
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_terminal import PASTE_PAUSE
from rig_base import RECORDING, AgentRun, PinnedVersion, RunRecorder

MODEL = "gemini-2.5-flash"
READY = "Type your message"  # the input box's placeholder: the TUI takes input
APPROVAL_PROMPT = "Allow once"
QUESTION_HINT = "Enter to select"
CANCELLED = "Request cancelled."

GAP_APPROVAL = "approval"  # a call waiting for the person is not in the chat until it ran
GAP_QUESTION_TOOL = "question tool"  # the same for ask_user's question


@dataclass(frozen=True)
class GeminiVersion(PinnedVersion):
    AGENT = "gemini"
    PACKAGE = "@google/gemini-cli"

    version: str
    legacy_json: bool  # one JSON document per chat, rewritten whole
    gaps: frozenset[str] = field(default_factory=frozenset)


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


class GeminiRun(AgentRun):
    """One scenario: the rig, the watch, Gemini CLI TUIs in the project folder, the recorder."""

    version: GeminiVersion

    def __init__(self, rig: Any, version: GeminiVersion, scenario: str) -> None:
        super().__init__(rig, version, scenario)
        gemini_env(rig.env, rig.server.url)
        self.gemini_home.mkdir(parents=True, exist_ok=True)
        (self.gemini_home / "settings.json").write_text(json.dumps(settings(), indent=2) + "\n")
        self.watch = rig.start_watch()
        self.recorder = Recorder(self)

    @property
    def gemini_home(self) -> Path:
        return Path(self.rig.home) / ".gemini"

    # -- the TUI ---------------------------------------------------------------------------

    def start(self, *args: str, timeout: float = 90.0) -> float:
        return self.open_terminal(args, READY, timeout)

    def submit(self, text: str) -> int:
        """Type a prompt like a person and send it once it shows in the input box; returns the
        watch position before it. A TUI that has just started (a resumed one redraws its
        history) can drop what is typed: then it is typed again."""
        assert self.term is not None
        mark = self.watching.count()
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
        return self.exit_with("/quit")

    # -- what it left on disk --------------------------------------------------------------

    def chats(self) -> list[Path]:
        found: list[Path] = []
        for folder in ("tmp", "data"):
            found.extend(sorted((self.gemini_home / folder).glob("*/chats/**/*.json*")))
        return [p for p in found if p.suffix in (".json", ".jsonl")]


# ---------------------------------------------------------------------------------------------
# Recording: the chats as they were at each moment a scenario checked, for the unit tests
# ---------------------------------------------------------------------------------------------


class Recorder(RunRecorder):
    """With ``AGENTBAR_RECORD=1``: at each ``mark`` note how many lines every JSONL chat had
    (a JSON chat, rewritten whole, is copied as it is), and which Gemini CLI processes ran; at
    ``save`` copy the chats and the project map, sanitised, and write ``scenario.json``."""

    run: GeminiRun

    def __init__(self, run: GeminiRun) -> None:
        super().__init__(run)
        self.snapshots: dict[str, str] = {}  # saved name -> sanitised content

    def on_disk(self) -> dict[str, Any]:
        files: dict[str, Any] = {}
        for path in self.run.chats():
            rel = self._relative(path)
            if path.suffix == ".json":
                name = f"snapshots/{len(self.marks)}/{rel}"
                self.snapshots[name] = self.sanitise(_read_document(path))
                files[rel] = {"snapshot": name}
            else:
                files[rel] = {"lines": path.read_bytes().count(b"\n")}
        return {"files": files, "processes": self.processes(r"^node")}

    def save(self) -> None:
        if not RECORDING or not self.marks:  # (a scenario that checks no chat: nothing to keep)
            return
        run = self.run
        target = self.fresh_target()
        for path in run.chats():
            if path.suffix == ".jsonl":
                self.copy_lines(path, target / self._relative(path))
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
                out.write_text(self.sanitise(extra.read_text()))
        self.write_scenario(target, [list(s) for s in run.states()])

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.run.gemini_home).as_posix()


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
