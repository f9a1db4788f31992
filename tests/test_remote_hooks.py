"""``agentbar hooks ... --host`` over a real channel: the far side is the real ``agentbar
channel`` over a temp HOME (tests/remote_far.py); its ``hooks_plan``, ``hooks_apply`` and
``hooks_status`` calls change the far Claude's settings.json exactly as ``agentbar hooks`` run
there would, back it up there, restore it byte for byte, and refuse a file that changed
between the plan shown and the write; an agentbar there without the calls is told to upgrade."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import agentbar
from remote_far import FarHome, make_far, near_settings, older_far, settings_with_far_module
from test_remote_channel import far_env, near_env

from agentbar.core.remote.cli import probe
from agentbar.core.remote.link import Link, RemoteError

A = "aaaaaaaa-0000-4000-8000-00000000000a"
SLOW = 60.0  # a far side's first start imports and reads everything
ORIGINAL = b'{\n  "model": "opus",\n  "env": {"EDITOR": "vi"}\n}\n'
CLAUDE = ("--agent", "claude")


@pytest.fixture
def far(tmp_path: Path) -> FarHome:
    far = make_far(tmp_path / "far")
    far.claude(A, "/srv/api", "remote hello world", start=time.time() - 600)
    settings_file(far).write_bytes(ORIGINAL)
    return far


@pytest.fixture
def link(far: FarHome) -> Iterator[Link]:
    link, _round_trip = probe(far.remote("box"), SLOW)
    try:
        yield link
    finally:
        link.stop()


def settings_file(far: FarHome) -> Path:
    return far.home / ".claude" / "settings.json"


def backup_file(far: FarHome) -> Path:
    return far.home / ".claude" / "settings.json.agentbar-backup"


def plan(link: Link, action: str) -> dict[str, object]:
    answer = link.call("hooks_plan", {"action": action, "agent": "claude"}, timeout=120)
    (change,) = answer["plans"]
    assert isinstance(change, dict)
    return change


def apply(link: Link, action: str, digest: object) -> list[str]:
    call = {"action": action, "agent": "claude", "digest": digest}
    done: list[str] = link.call("hooks_apply", call, timeout=120)["done"]
    return done


def test_the_hooks_calls_change_the_far_file_as_a_local_install_there_would(
    far: FarHome, link: Link
) -> None:
    there = far_env(far)
    dry = agentbar(there, "hooks", "install", *CLAUDE, "--dry-run", timeout=120, check=True)
    install = plan(link, "install")
    assert install["changed"] is True and install["diff"]
    assert f"claude: {install['shown']}\n{install['diff']}" in dry.stdout  # what it shows there
    assert settings_file(far).read_bytes() == ORIGINAL  # a plan writes nothing
    assert not backup_file(far).exists()

    done = apply(link, "install", install["digest"])
    installed = settings_file(far).read_bytes()
    assert b"agentbar" in installed and installed != ORIGINAL
    assert backup_file(far).read_bytes() == ORIGINAL
    assert f"backed up the original to {backup_file(far)}" in done
    status = link.call("hooks_status", {"agent": "claude"}, timeout=120)["text"]
    assert status == agentbar(there, "hooks", "status", *CLAUDE, timeout=120, check=True).stdout
    assert status.startswith("claude  installed")
    again = plan(link, "install")
    assert again["changed"] is False  # idempotent

    removal = plan(link, "uninstall")
    apply(link, "uninstall", removal["digest"])
    assert settings_file(far).read_bytes() == ORIGINAL  # byte for byte
    assert not backup_file(far).exists()

    # The far machine's own command writes the very bytes the calls wrote.
    agentbar(there, "hooks", "install", *CLAUDE, "--yes", timeout=120, check=True)
    assert settings_file(far).read_bytes() == installed


def test_a_file_changed_after_its_plan_was_shown_is_refused_and_left_as_it_is(
    far: FarHome, link: Link
) -> None:
    install = plan(link, "install")
    edited = ORIGINAL.replace(b"opus", b"sonnet")
    settings_file(far).write_bytes(edited)
    with pytest.raises(RemoteError) as refused:
        apply(link, "install", install["digest"])
    assert "changed since its change was shown; nothing was written" in str(refused.value)
    assert settings_file(far).read_bytes() == edited
    assert not backup_file(far).exists()
    with pytest.raises(RemoteError):  # a digest of nothing shown at all
        apply(link, "install", None)
    assert settings_file(far).read_bytes() == edited


def test_agentbar_hooks_host_shows_the_far_change_asks_and_writes_it_there(
    far: FarHome, tmp_path: Path
) -> None:
    near = tmp_path / "near"
    near_settings(near, far)
    here = near_env(near)
    asked = agentbar(here, "hooks", "install", "--host", "box", *CLAUDE, timeout=120)
    assert asked.returncode == 1, asked.stderr  # no terminal to ask on: nothing written
    assert "claude: not a terminal, so not asking: pass --yes to write" in asked.stdout
    assert f"+++ {settings_file(far)}" in asked.stdout
    assert settings_file(far).read_bytes() == ORIGINAL

    done = agentbar(here, "hooks", "install", "--host", "box", *CLAUDE, "--yes", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"claude: {settings_file(far)} on box\n")
    assert f"claude: backed up the original to {backup_file(far)}\n" in done.stdout
    assert backup_file(far).read_bytes() == ORIGINAL
    status = agentbar(here, "hooks", "status", "--host", "box", *CLAUDE, timeout=120)
    there = agentbar(far_env(far), "hooks", "status", *CLAUDE, timeout=120)
    assert (status.returncode, status.stdout) == (0, there.stdout)

    removed = agentbar(here, "hooks", "uninstall", "--host", "box", *CLAUDE, "-y", timeout=120)
    assert removed.returncode == 0, removed.stderr
    assert settings_file(far).read_bytes() == ORIGINAL

    unknown = agentbar(here, "hooks", "install", "--host", "nowhere", "--yes", timeout=60)
    assert unknown.returncode == 1
    assert "no remote named 'nowhere'" in unknown.stderr


def test_a_far_agentbar_without_the_hooks_calls_is_told_to_upgrade(
    far: FarHome, tmp_path: Path
) -> None:
    older = older_far("hooks_plan", "hooks_apply", "hooks_status")
    settings_with_far_module(far, tmp_path, "older_hooks_far", older)
    near = tmp_path / "near"
    done = agentbar(near_env(near), "hooks", "install", "--host", "box", "--yes", timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert "the agentbar on box is older than this one" in done.stderr
    assert "upgrade agentbar there" in done.stderr
    assert settings_file(far).read_bytes() == ORIGINAL
