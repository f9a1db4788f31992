"""``agentbar hooks ... --host`` over a real channel: the far side is the real ``agentbar
channel`` over a temp HOME (tests/remote_far.py); its ``hooks_plan``, ``hooks_apply`` and
``hooks_status`` calls change the far Claude's settings.json exactly as ``agentbar hooks`` run
there would, back it up there, restore it byte for byte, and refuse a file that changed
between the plan shown and the write; an agentbar there without the calls is told to upgrade.
Its ``status_line_*`` calls do the same for Claude's status-line link there (``--status-line
--host``): the far data dir and link command, the far status-line command kept behind it."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import agentbar
from remote_far import FarHome, make_far, near_settings, older_far, settings_with_far_module
from test_remote_channel import far_env, near_env

from agentbar.core.remote.cli import probe
from agentbar.core.remote.link import UPGRADE_HINT, Link, RemoteError

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


def plan(
    link: Link, action: str, kind: str = "hooks", agent: str | None = "claude"
) -> dict[str, object]:
    """The far side's one planned change (``kind``: ``hooks`` or ``status_line``'s calls)."""
    answer = link.call(f"{kind}_plan", {"action": action, "agent": agent}, timeout=120)
    assert answer["problems"] == []
    (change,) = answer["plans"]
    assert isinstance(change, dict)
    return change


def apply(link: Link, action: str, digest: object, kind: str = "hooks") -> list[str]:
    call = {"action": action, "agent": "claude", "digest": digest}
    done: list[str] = link.call(f"{kind}_apply", call, timeout=120)["done"]
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


# -- Claude's status-line link there: --status-line --host ---------------------------------------

THEIR_LINE = b'{\n  "statusLine": {"type": "command", "command": "~/bin/line.sh", "padding": 0},\n  "model": "opus"\n}\n'  # noqa: E501
STATUS_LINE = ("--status-line", "--agent", "claude")


def link_backup(far: FarHome) -> Path:
    return far.home / ".claude" / "settings.json.agentbar-status-line-backup"


def link_record(far: FarHome) -> Path:
    return far.data / "limits" / "status-line-link.json"


def status_line_plan(link: Link, action: str) -> dict[str, object]:
    return plan(link, action, "status_line", agent=None)


def status_line_apply(link: Link, action: str, digest: object) -> list[str]:
    return apply(link, action, digest, "status_line")


def their_link(path: Path) -> dict[str, object]:
    """The ``statusLine`` value of the settings file at ``path``."""
    value = json.loads(path.read_bytes())["statusLine"]
    assert isinstance(value, dict)
    return value


def test_the_status_line_calls_link_the_far_claude_as_a_local_install_there_would(
    far: FarHome, link: Link
) -> None:
    """The far machine's own settings.json, data dir and link command; its own status-line
    command kept behind the link, the other keys as they were; uninstall: the bytes back."""
    settings_file(far).write_bytes(THEIR_LINE)
    there = far_env(far)
    dry = agentbar(there, "hooks", "install", *STATUS_LINE, "--dry-run", timeout=120, check=True)
    install = status_line_plan(link, "install")
    assert install["changed"] is True and install["path"] == str(settings_file(far))
    assert f"claude: {install['path']}\n{install['diff']}" in dry.stdout  # what it shows there
    assert settings_file(far).read_bytes() == THEIR_LINE  # a plan writes nothing
    assert not link_backup(far).exists() and not link_record(far).exists()

    done = status_line_apply(link, "install", install["digest"])
    assert done[0] == "status-line link installed"
    linked = their_link(settings_file(far))
    argv = shlex.split(str(linked["command"]))
    assert argv[argv.index("--data-dir") + 1] == str(far.data)  # the far data dir
    assert argv[-2:] == ["--then", "~/bin/line.sh"]  # their own command, run after it
    assert (linked["type"], linked["padding"]) == ("command", 0)
    assert json.loads(settings_file(far).read_bytes())["model"] == "opus"
    installed = settings_file(far).read_bytes()
    assert link_backup(far).read_bytes() == THEIR_LINE
    assert (
        json.loads(link_record(far).read_bytes())["previous"]
        == json.loads(THEIR_LINE)["statusLine"]
    )
    status = link.call("status_line_status", {"agent": None}, timeout=120)
    local = agentbar(there, "hooks", "status", *STATUS_LINE, timeout=120, check=True)
    assert status == {"text": local.stdout, "failed": False}
    assert "status-line link installed (then runs: ~/bin/line.sh)" in status["text"]
    assert status_line_plan(link, "install")["changed"] is False  # idempotent

    removal = status_line_plan(link, "uninstall")
    assert status_line_apply(link, "uninstall", removal["digest"]) == [
        "status-line link removed (file restored)"
    ]
    assert settings_file(far).read_bytes() == THEIR_LINE  # byte for byte
    assert not link_backup(far).exists() and not link_record(far).exists()

    # The far machine's own command writes the very bytes the calls wrote.
    agentbar(there, "hooks", "install", *STATUS_LINE, "--yes", timeout=120, check=True)
    assert settings_file(far).read_bytes() == installed


def test_a_status_line_change_made_stale_by_an_edit_there_is_refused_and_nothing_written(
    far: FarHome, link: Link
) -> None:
    settings_file(far).write_bytes(THEIR_LINE)
    install = status_line_plan(link, "install")
    edited = THEIR_LINE.replace(b"opus", b"sonnet")
    settings_file(far).write_bytes(edited)
    with pytest.raises(RemoteError) as refused:
        status_line_apply(link, "install", install["digest"])
    assert "changed since its change was shown; nothing was written" in str(refused.value)
    assert settings_file(far).read_bytes() == edited
    assert not link_backup(far).exists() and not link_record(far).exists()
    with pytest.raises(RemoteError):  # a digest of nothing shown at all
        status_line_apply(link, "install", None)
    assert settings_file(far).read_bytes() == edited

    settings_file(far).write_text('{"statusLine": "echo hi"}')  # not a command it can wrap
    (cannot,) = link.call("status_line_plan", {"action": "install"}, timeout=120)["plans"]
    assert cannot == {
        "agent": "claude",
        "error": f"{settings_file(far)}: statusLine is not a command agentbar can run after its "
        "own",
    }


def test_agentbar_hooks_status_line_host_shows_the_far_change_asks_and_writes_it_there(
    far: FarHome, tmp_path: Path
) -> None:
    settings_file(far).write_bytes(THEIR_LINE)
    near = tmp_path / "near"
    near_settings(near, far)
    here, there = near_env(near), far_env(far)
    host = ("--host", "box", *STATUS_LINE)

    dry = agentbar(here, "hooks", "install", *host, "--dry-run", timeout=120)
    local_dry = agentbar(there, "hooks", "install", *STATUS_LINE, "--dry-run", timeout=120)
    assert dry.returncode == 0, dry.stderr
    shown = f"claude: {settings_file(far)}"
    assert dry.stdout == local_dry.stdout.replace(f"{shown}\n", f"{shown} on box\n", 1)
    assert "agentbar_statusline.py" in dry.stdout  # the far diff, shown here
    asked = agentbar(here, "hooks", "install", *host, timeout=120)
    assert asked.returncode == 1, asked.stderr  # no terminal to ask on: nothing written
    assert "claude: not a terminal, so not asking: pass --yes to write" in asked.stdout
    assert settings_file(far).read_bytes() == THEIR_LINE

    done = agentbar(here, "hooks", "install", *host, "--yes", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{shown} on box\n")
    assert "claude: status-line link installed\n" in done.stdout
    assert their_link(settings_file(far))["command"] != "~/bin/line.sh"
    status = agentbar(here, "hooks", "status", *host, timeout=120)
    local = agentbar(there, "hooks", "status", *STATUS_LINE, timeout=120)
    assert (status.returncode, status.stdout) == (0, local.stdout)
    assert "status-line link installed (then runs: ~/bin/line.sh)" in status.stdout

    removed = agentbar(here, "hooks", "uninstall", *host, "-y", timeout=120)
    assert removed.returncode == 0, removed.stderr
    assert settings_file(far).read_bytes() == THEIR_LINE

    codex = agentbar(here, "hooks", "install", "--host", "box", "--status-line", "--agent",
                     "codex", "--yes", timeout=60)  # fmt: skip
    assert codex.returncode == 1
    assert codex.stdout == "codex: the status-line link is Claude Code's only\n"

    settings_file(far).write_text("{not json")
    unreadable = agentbar(here, "hooks", "status", *host, timeout=120)
    assert unreadable.returncode == 1
    assert unreadable.stdout.endswith("; agentbar left it as it is.\n")
    refused = agentbar(here, "hooks", "install", *host, "--yes", timeout=120)
    assert refused.returncode == 1
    assert refused.stdout.endswith("; agentbar left it as it is.\n")
    assert settings_file(far).read_text() == "{not json"


def test_a_far_agentbar_without_the_status_line_calls_is_told_to_upgrade(
    far: FarHome, tmp_path: Path
) -> None:
    older = older_far("status_line_plan", "status_line_apply", "status_line_status")
    settings_with_far_module(far, tmp_path, "older_status_line_far", older)
    here = near_env(tmp_path / "near")
    for action in ("install", "status"):
        done = agentbar(here, "hooks", action, "--host", "box", "--status-line", timeout=120)
        assert done.returncode == 1, done.stderr
        assert done.stdout == ""
        assert done.stderr.endswith(  # (after the one line on the near config made private)
            "agentbar: the agentbar on box is older than this one and cannot set up Claude's "
            f"status-line link from here: upgrade agentbar there ({UPGRADE_HINT})\n"
        )
    assert settings_file(far).read_bytes() == ORIGINAL


_ODD_FAR = """
import sys

from agentbar.core.remote import far
from agentbar.tray.__main__ import main

_init = far.FarSide.__init__


def _odd(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self._ops["status_line_plan"] = lambda args: {"plans": [{"agent": "claude"}]}
    self._ops["status_line_status"] = lambda args: {"text": "claude: ok\\n", "failed": "no"}


far.FarSide.__init__ = _odd
sys.exit(main())
"""


def test_answers_that_do_not_read_are_a_clear_error_and_nothing_is_written(
    far: FarHome, tmp_path: Path
) -> None:
    settings_with_far_module(far, tmp_path, "odd_status_line_far", _ODD_FAR)
    here = near_env(tmp_path / "near")
    for command, what in ((("install", "--yes"), "a plan"), (("status",), "a status")):
        done = agentbar(here, "hooks", *command, "--host", "box", "--status-line", timeout=120)
        assert done.returncode == 1, done.stderr
        said = done.stderr.splitlines()[-1]  # (after a first line: the near config made private)
        assert said == f"agentbar: box's agentbar answered {what} that does not read"
        assert "Traceback" not in done.stderr
    assert settings_file(far).read_bytes() == ORIGINAL
