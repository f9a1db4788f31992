"""opencode in the conformance rig: the pinned versions and what each does differently, its
configuration against the scripted model, a person-like driver, and the recorder that copies
what a run left on disk into ``tests/data/recorded/opencode-<version>/<scenario>/``.

Versions. 1.18.33 is the current release (``npm view opencode-ai version``); its npm package
carries the native binary as ``bin/opencode.exe`` on every platform (npm installs the platform
package ``opencode-linux-x64`` of the same version beside it). 1.1.65 is the last release
before the SQLite database (1.2): a node launcher ``bin/opencode`` that starts the native
binary, and one JSON file per session, message and part under ``storage/``.

Pointed at the scripted model by a custom provider in ``~/.config/opencode/opencode.json``:
``"npm": "@ai-sdk/anthropic"`` (bundled in the binary: nothing is fetched) with ``baseURL`` on
127.0.0.1, one model with ``tool_call``, ``autoupdate`` off, ``share`` disabled,
``OPENCODE_DISABLE_MODELS_FETCH`` (no models.dev), ``OPENCODE_DISABLE_AUTOUPDATE``,
``OPENCODE_DISABLE_SHARE``, ``OPENCODE_DISABLE_LSP_DOWNLOAD``; ``"permission": {"bash": "ask"}``
makes a command need approval (every tool is allowed by default).

==========================  =======================  ==========================
                            1.1.65                   1.18.33
==========================  =======================  ==========================
sessions kept in            storage/*.json           opencode.db (WAL)
session created            at the first prompt      at the first prompt
waiting permission on disk  no (tool ``running``)    no (tool ``running``)
plugin events               permission.asked/replied permission.asked/replied
question tool               ``question``             ``question``
==========================  =======================  ==========================
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli_runner import agentbar
from rig_base import RECORDING, AgentRun, PinnedVersion, RunRecorder
from watch_events import WatchEvents

READY = "ctrl+p commands"  # the footer, on the start screen and in a resumed session
TYPE_PAUSE = 0.03  # opentui takes typed keys one by one; a burst is taken for a paste
GAP_APPROVAL = "approval"  # without agentbar's plugin a waiting permission is on no disk


@dataclass(frozen=True)
class OpencodeVersion(PinnedVersion):
    AGENT = "opencode"
    PACKAGE = "opencode-ai"

    version: str
    database: bool  # sessions in opencode.db (1.2+), else storage/*.json
    gaps: frozenset[str] = field(default_factory=frozenset)


VERSIONS = [
    OpencodeVersion("1.18.33", database=True),
    OpencodeVersion("1.1.65", database=False),
]


def write_config(home: Path, server_url: str) -> None:
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/anthropic",
                "name": "Mock",
                "options": {"baseURL": f"{server_url}/v1", "apiKey": "conformance"},
                "models": {"mock-model": {"name": "Mock", "tool_call": True}},
            }
        },
        "model": "mock/mock-model",
        "small_model": "mock/mock-model",
        "permission": {"bash": "ask"},
    }
    (folder / "opencode.json").write_text(json.dumps(config, indent=1))


def opencode_env(env: dict[str, str]) -> dict[str, str]:
    return {
        **env,
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }


class OpencodeRun(AgentRun):
    """One scenario: the rig, the watch (started by the scenario: after the plugin, if any),
    opencode TUIs in the project folder, the recorder."""

    version: OpencodeVersion

    def __init__(self, rig: Any, version: OpencodeVersion, scenario: str) -> None:
        super().__init__(rig, version, scenario)
        rig.env.update(opencode_env(rig.env))
        write_config(rig.home, rig.server.url)
        self.recorder = Recorder(self)

    @property
    def data_dir(self) -> Path:
        return self.rig.home / ".local" / "share" / "opencode"

    @property
    def database(self) -> Path:
        return self.data_dir / "opencode.db"

    def install_plugin(self) -> None:
        """agentbar's plugin, as a person installs it."""
        result = agentbar(self.rig.env, "hooks", "install", "--agent", "opencode", "--yes")
        assert result.returncode == 0, result.stderr
        assert (self.rig.home / ".config" / "opencode" / "plugins" / "agentbar.js").exists()

    def start_watch(self) -> WatchEvents:
        self.watch = self.rig.start_watch()
        return self.watch

    # -- the TUI ---------------------------------------------------------------------------

    def start(self, *args: str, timeout: float = 90.0) -> float:
        at = self.open_terminal(args, READY, timeout)
        time.sleep(0.5)  # the input box takes keys a moment after it is drawn
        return at

    def type(self, text: str) -> None:
        assert self.term is not None
        for char in text:
            self.term.type(char)
            time.sleep(TYPE_PAUSE)

    def submit(self, text: str) -> int:
        """Type a prompt like a person and send it; returns the watch position before it."""
        assert self.term is not None
        mark = self.watching.count()
        self.type(text)
        self.term.wait_for(text)
        time.sleep(0.3)
        self.term.press("enter")
        return mark

    def exit(self) -> float:
        """``/exit``; returns the moment the process was seen gone."""
        assert self.term is not None
        self.type("/exit")
        time.sleep(0.5)
        self.term.press("enter")
        return self.gone()


# ---------------------------------------------------------------------------------------------
# Recording: the database (or the storage folder) at each moment a scenario checked
# ---------------------------------------------------------------------------------------------


class Recorder(RunRecorder):
    """With ``AGENTBAR_RECORD=1``: at each ``mark`` copy opencode's sessions as they are now
    (the database through SQLite's backup API, read-only; or the storage folder) and the
    plugin's event lines, sanitised, into ``<NN>/``, with the state agentbar reported there in
    ``scenario.json``."""

    run: OpencodeRun

    def on_disk(self) -> dict[str, Any]:
        if not self.marks and self.target().exists():
            shutil.rmtree(self.target())
        name = f"{len(self.marks) + 1:02d}"
        out = self.target() / name
        out.mkdir(parents=True)
        if self.run.version.database:
            copy_database(self.run.database, out / "opencode.db", self.sanitise)
        else:
            copy_storage(self.run.data_dir / "storage", out / "storage", self.sanitise)
        for path in sorted((self.run.rig.data / "events" / "opencode").glob("*.jsonl")):
            events = out / "events" / path.name
            events.parent.mkdir(parents=True, exist_ok=True)
            events.write_text(self.sanitise(path.read_text()))
        return {"folder": name}

    def save(self) -> None:
        if not RECORDING or not self.marks:
            return
        self.write_scenario(self.target(), [list(s) for s in self.run.states()])


def copy_database(source: Path, target: Path, sanitise: Any) -> None:
    """A consistent copy of opencode's database (read-only backup), its texts sanitised and
    kept in WAL mode as opencode keeps it; only the tables agentbar reads, with their rows."""
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    try:
        reader.backup(copy)
    finally:
        reader.close()
    for table in ("session", "message", "part", "project", "event"):
        columns = [r[1] for r in copy.execute(f"PRAGMA table_info({table})")]
        types = {r[1]: r[2] for r in copy.execute(f"PRAGMA table_info({table})")}
        for column in columns:
            if types[column].lower() == "text":
                rows = copy.execute(f"SELECT rowid, {column} FROM {table}").fetchall()
                for rowid, value in rows:
                    if isinstance(value, str) and sanitise(value) != value:
                        copy.execute(
                            f"UPDATE {table} SET {column} = ? WHERE rowid = ?",
                            (sanitise(value), rowid),
                        )
    copy.commit()
    copy.execute("PRAGMA journal_mode=WAL")
    copy.execute("VACUUM")
    copy.close()


def copy_storage(source: Path, target: Path, sanitise: Any) -> None:
    for path in sorted(source.glob("*/*/*.json")):
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(sanitise(path.read_text()))
