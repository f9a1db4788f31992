"""A running agentbar loads only what it uses at rest: pyte and its Unicode tables (a launched
task's screen) and tomlkit (the Codex hook installer's TOML editing) come with their first use,
not with every start: held all day, they cost the tray megabytes for nothing (bench/README.md,
"The tray's memory"). Checked in a fresh interpreter that imports the tray's modules, runs the
engine and the server over a HOME with sessions, and lists ``sys.modules``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from claude_lines import ClaudeTranscript, write_lines

# Imported only by the code that needs them, each named by the module that imports it.
ON_DEMAND = ("pyte", "wcwidth", "tomlkit")
ON_DEMAND_OURS = ("agentbar.core.launch.emulator", "agentbar.core.agents.codex.config")

AT_REST = r"""
import json, os, sys, urllib.request

from agentbar.tray import __main__, app, badge, notify, presenter, worker, xembed  # noqa: F401
from agentbar.tray.sni import service  # noqa: F401
from agentbar.core.app import Agentbar
from agentbar.core.config import Settings

agentbar = Agentbar.open(Settings.from_env(os.environ))
try:
    with agentbar.serving() as server:
        agentbar.start()
        assert agentbar.wait_ready(60), "the engine never caught up"
        request = urllib.request.Request(
            server.url.rstrip("/") + "/api/sessions?all=1",
            headers={"Authorization": f"Bearer {server.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            listed = json.loads(response.read())["sessions"]
finally:
    agentbar.close()
print(json.dumps({"sessions": len(listed), "modules": sorted(sys.modules)}))
"""

ON_USE = r"""
import json, sys

from agentbar.core.agents.codex.hooks import HOOKS
from agentbar.core.launch.screen import Screen

Screen(24, 80).feed(b"hello")
HOOKS.remove("", "config.toml", None)
print(json.dumps(sorted(sys.modules)))
"""


def run(code: str, home: Path, tmp_path: Path) -> object:
    env = dict(
        os.environ,
        HOME=str(home),
        AGENTBAR_DATA_DIR=str(tmp_path / "data"),
        AGENTBAR_CONFIG_DIR=str(tmp_path / "config"),
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def home_with_sessions(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for n in range(3):
        session = f"{n:08x}-0000-4000-8000-000000000000"
        t = ClaudeTranscript(session, f"/work/p{n}")
        path = home / ".claude" / "projects" / f"-work-p{n}" / f"{session}.jsonl"
        write_lines(path, [t.prompt("Tidy the tests"), t.text("Done.")])
    return home


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in names or m in names]


def test_the_tray_at_rest_does_not_load_what_only_a_task_or_an_install_needs(
    tmp_path: Path,
) -> None:
    found = run(AT_REST, home_with_sessions(tmp_path), tmp_path)
    assert isinstance(found, dict)
    assert found["sessions"] == 3  # the engine read them and the server listed them
    modules = found["modules"]
    assert "agentbar.core.launch.screen" in modules  # the launcher is there, its emulator not
    assert loaded(modules, ON_DEMAND) == []
    assert [m for m in ON_DEMAND_OURS if m in modules] == []


def test_what_is_loaded_on_demand_loads_when_used(tmp_path: Path) -> None:
    modules = run(ON_USE, tmp_path / "home", tmp_path)
    assert isinstance(modules, list)
    assert {m.split(".")[0] for m in loaded(modules, ON_DEMAND)} == set(ON_DEMAND)
    assert [m for m in ON_DEMAND_OURS if m in modules] == list(ON_DEMAND_OURS)
