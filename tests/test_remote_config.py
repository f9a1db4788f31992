"""``[[remotes]]`` in settings.toml and ``agentbar remote add|list|remove|test``: the person's
file kept as it was around the edit (comments, other sections), written 0600 with a backup,
bad names and commands refused in one line, and ``remote test`` over a real channel saying
version, sessions and round trip, or in one line why not."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import orjson
import pytest
from cli_runner import agentbar
from remote_far import make_far
from test_cli import write_claude

from agentbar.core.remote import remotes as config
from agentbar.core.remote.link import channel_argv
from agentbar.core.remote.remotes import Remote, RemoteConfigError

BEFORE = """# my settings
[notifications]
enabled = true  # keep me

[answers]
codex_hold_seconds = 0
"""


def test_add_and_remove_keep_the_rest_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(BEFORE)
    config.add(path, Remote("devbox", ("ssh", "devbox")))
    config.add(path, Remote("box", ("docker", "exec", "-i", "box"), "/opt/agentbar"))
    text = path.read_text()
    assert text.startswith(BEFORE)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (tmp_path / "settings.toml.bak").exists()
    found = config.load(path)
    assert found.remotes == (
        Remote("devbox", ("ssh", "devbox")),
        Remote("box", ("docker", "exec", "-i", "box"), "/opt/agentbar"),
    )
    with pytest.raises(RemoteConfigError, match="exists already"):
        config.add(path, Remote("devbox", ("ssh", "other")))
    config.remove(path, "devbox")
    config.remove(path, "box")
    assert path.read_text() == BEFORE
    with pytest.raises(RemoteConfigError, match="no remote named"):
        config.remove(path, "box")


@pytest.mark.parametrize("name", ["", "local", "a b", "../x", "-x", "é", "x" * 65])
def test_bad_names_are_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(RemoteConfigError):
        config.add(tmp_path / "settings.toml", Remote(name, ("ssh", "x")))
    assert not (tmp_path / "settings.toml").exists()


def test_bad_entries_are_problems_not_crashes() -> None:
    found = config.parse(
        '[[remotes]]\nname = "ok"\ncommand = ["ssh", "ok"]\n'
        '[[remotes]]\nname = "bad name"\ncommand = ["ssh"]\n'
        '[[remotes]]\nname = "nocmd"\ncommand = "ssh nocmd"\n'
        '[[remotes]]\nname = "ok"\ncommand = ["ssh", "again"]\n'
    )
    assert [r.name for r in found.remotes] == ["ok"]
    assert len(found.problems) == 3
    assert config.parse("remotes = [").problems
    assert config.parse("").remotes == ()


def test_a_file_that_does_not_parse_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("[broken\n")
    with pytest.raises(RemoteConfigError, match="not valid TOML"):
        config.add(path, Remote("devbox", ("ssh", "devbox")))
    assert path.read_text() == "[broken\n"


def test_ssh_gets_batch_mode_and_keepalives_unless_the_command_sets_them() -> None:
    argv = channel_argv(Remote("d", ("ssh", "-p", "2222", "devbox")))
    assert argv == [
        "ssh",
        "-oBatchMode=yes",
        "-oServerAliveInterval=15",
        "-oServerAliveCountMax=3",
        "-p",
        "2222",
        "devbox",
        "agentbar",
        "channel",
    ]
    own = channel_argv(Remote("d", ("/usr/bin/ssh", "-o", "BatchMode=no", "devbox"), "ab"))
    assert "-oBatchMode=yes" not in own and own[-2:] == ["ab", "channel"]
    assert channel_argv(Remote("c", ("docker", "exec", "-i", "c1"))) == [
        "docker", "exec", "-i", "c1", "agentbar", "channel"]  # fmt: skip


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    (tmp_path / "near").mkdir()
    env.update(HOME=str(tmp_path / "near"), AGENTBAR_DATA_DIR=str(tmp_path / "data"),
               AGENTBAR_CONFIG_DIR=str(tmp_path / "config"))  # fmt: skip
    return env


def test_the_remote_commands(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    far = make_far(tmp_path / "far")
    write_claude(far.home / ".claude", "aaaaaaaa-0000-4000-8000-0000000000aa", "/srv/a", "hi",
                 start=time.time() - 60)  # fmt: skip
    remote = far.remote("box")
    added = agentbar(env, "remote", "add", "box", "--agentbar", remote.program, "--",
                     *remote.command)  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "added box" in added.stdout
    listed = agentbar(env, "remote", "list")
    assert listed.stdout.startswith("box ")
    tested = agentbar(env, "remote", "test", "box", timeout=120)
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.startswith("box: agentbar ")
    assert ", 1 sessions, round trip " in tested.stdout and tested.stdout.endswith(" ms\n")
    status = agentbar(env, "status", "--json", "--all", timeout=120)
    doc = orjson.loads(status.stdout)
    assert [(r["host"], r["title"]) for r in doc["sessions"]] == [("box", "hi")]
    assert [(h["name"], h["state"]) for h in doc["hosts"]] == [("box", "connected")]
    table = agentbar(env, "status", "--all", timeout=120).stdout
    header, row = table.splitlines()[:2]
    assert header.split()[:4] == ["STATE", "ID", "HOST", "AGENT"]
    assert row.split()[:4] == ["ended", "aaaaaaaa", "box", "claude"]
    again = agentbar(env, "remote", "add", "box", "--", "ssh", "x")
    assert again.returncode == 2 and "exists already" in again.stderr
    bare = agentbar(env, "remote", "add", "x")
    assert bare.returncode == 2 and "give the command" in bare.stderr
    assert agentbar(env, "remote", "remove", "box").returncode == 0
    assert "No remotes" in agentbar(env, "remote", "list").stdout


def test_remote_test_says_in_one_line_what_is_wrong(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    far = make_far(tmp_path / "far")
    command = far.remote().command[:-2]  # env HOME=... : no python -m, no agentbar there
    agentbar(env, "remote", "add", "gone", "--agentbar", "no-such-agentbar", "--", *command)
    missing = agentbar(env, "remote", "test", "gone", timeout=60)
    assert missing.returncode == 1
    assert missing.stderr == (
        "agentbar: gone: agentbar is not installed on gone: install it there with: "
        "pipx install agentbar (or python3 -m pip install --user agentbar)\n"
    )
    denied = "echo 'me@pw: Permission denied (publickey,password).' >&2; exit 255"
    agentbar(env, "remote", "add", "pw", "--", "sh", "-c", denied, "--")
    asks = agentbar(env, "remote", "test", "pw", timeout=60)
    assert asks.returncode == 1 and "asks for a password" in asks.stderr
    agentbar(env, "remote", "add", "slow", "--", "sh", "-c", "sleep 600", "--")
    slow = agentbar(env, "remote", "test", "slow", "--timeout", "3", timeout=60)
    assert slow.returncode == 1 and "timed out" in slow.stderr, slow.stderr
    nothing = agentbar(env, "remote", "test", "nope")
    assert nothing.returncode == 2 and "no remote named 'nope'" in nothing.stderr
