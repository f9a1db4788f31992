"""Claude's status-line link: the program Claude runs (a real subprocess, the real shell, the
person's own command behind it) and its install/uninstall on odd settings files (real files,
the real ``agentbar hooks ... --status-line`` CLI)."""

from __future__ import annotations

import json
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import agentbar
from other_user import PYTHON, OtherUser
from test_cli import env  # noqa: F401 - the fixture

from agentbar.core.agents.claude import statusline
from agentbar.core.hooks.errors import HooksFileError
from agentbar.core.limits_claude import read_windows, record_path

PAYLOAD = {
    "hook_event_name": "Status",
    "session_id": "aaaaaaaa-0000-4000-8000-000000000001",
    "transcript_path": "/h/.claude/projects/-w/aaaaaaaa.jsonl",
    "cwd": "/w",
    "model": {"id": "claude-opus-4-1", "display_name": "Opus"},
    "workspace": {"current_dir": "/w", "project_dir": "/w"},
    "version": "2.1.332",
    "cost": {"total_cost_usd": 0.42, "total_duration_ms": 45000},
    "rate_limits": {
        "five_hour": {"used_percentage": 23.5, "resets_at": 1_800_000_000},
        "seven_day": {"used_percentage": 41.2, "resets_at": 1_800_500_000},
    },
}
STDIN = json.dumps(PAYLOAD).encode()


def run_link(
    data_dir: Path, then: str | None, stdin: bytes = STDIN
) -> subprocess.CompletedProcess[bytes]:
    """The link exactly as Claude runs it: the installed command line, through the shell."""
    command = statusline.link_command(data_dir, then)
    return subprocess.run(
        ["/bin/sh", "-c", command], input=stdin, capture_output=True, timeout=30, check=False
    )


def test_records_the_payload_privately_and_passes_the_person_s_command_through(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    # The person's command sees the same stdin, its output (both streams) and exit status are
    # theirs: it echoes stdin's checksum, writes to stderr, exits 3.
    mine = "printf 'mine %s\\n' \"$(cksum)\"; printf 'warn\\n' >&2; exit 3"
    done = run_link(data, mine)
    expected = subprocess.run(
        ["/bin/sh", "-c", mine], input=STDIN, capture_output=True, check=False
    )
    assert (done.stdout, done.stderr, done.returncode) == (
        expected.stdout, expected.stderr, 3,
    )  # fmt: skip
    record = record_path(data)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    assert record.read_bytes() == STDIN  # what Claude handed it, as it came
    five, week = read_windows(record)
    assert (five.used_percent, week.used_percent) == (23.5, 41.2)
    assert [p.name for p in record.parent.iterdir()] == [record.name]  # no temporary left


def test_no_command_of_their_own_prints_a_short_line(tmp_path: Path) -> None:
    done = run_link(tmp_path / "data", None)
    assert done.returncode == 0
    assert done.stdout.decode() == "Opus | 5h 24% used | 7d 41% used | $0.42\n"


def test_a_broken_command_keeps_its_own_failure(tmp_path: Path) -> None:
    done = run_link(tmp_path / "data", "/nonexistent/statusline.sh")
    assert done.returncode == 127 and b"nonexistent" in done.stderr
    assert record_path(tmp_path / "data").exists()  # recorded all the same


def test_an_unwritable_data_dir_loses_nobody_s_status_line(
    other_user: OtherUser, reachable_dir: Path
) -> None:
    """The link run by a user who cannot write the data dir (root can write anywhere, so a
    second local user runs it): their line and exit status come through, nothing is written."""
    program = reachable_dir / "link"
    program.mkdir(mode=0o755)
    for name in ("agentbar_statusline.py", "agentbar_statusline_impl.py"):
        shutil.copy(statusline.script().parent / name, program / name)
        (program / name).chmod(0o644)
    data = reachable_dir / "data"
    data.mkdir(mode=0o755)  # root's: the other user may enter, not write
    command = shlex.join(
        [PYTHON, "-I", "-S", str(program / "agentbar_statusline.py"), "--data-dir", str(data),
         "--then", "echo mine; exit 4"]
    )  # fmt: skip
    done = other_user.run("/bin/sh", "-c", command, input=STDIN.decode())
    assert (done.stdout, done.stderr, done.returncode) == ("mine\n", "", 4)
    assert list(data.iterdir()) == []


def test_a_data_dir_that_is_a_file_loses_nobody_s_status_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_text("not a folder")
    done = run_link(data, "echo mine")
    assert (done.stdout, done.stderr, done.returncode) == (b"mine\n", b"", 0)


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1,2]", b"\xff\xfe", b"{" * 300_000])
def test_odd_stdin_is_passed_on_and_not_recorded(tmp_path: Path, stdin: bytes) -> None:
    done = run_link(tmp_path / "data", "cksum", stdin)
    direct = subprocess.run(["cksum"], input=stdin, capture_output=True, check=False)
    assert done.stdout == direct.stdout and done.returncode == 0
    assert not record_path(tmp_path / "data").exists()


def test_a_payload_larger_than_the_record_holds_is_passed_on_unrecorded(tmp_path: Path) -> None:
    payload = json.dumps({**PAYLOAD, "note": "x" * (70 * 1024)}).encode()
    done = run_link(tmp_path / "data", "cksum", payload)
    direct = subprocess.run(["cksum"], input=payload, capture_output=True, check=False)
    assert done.stdout == direct.stdout and done.returncode == 0
    assert not record_path(tmp_path / "data").exists()


# -- install / uninstall --------------------------------------------------------------------


def settings_of(env: dict[str, str]) -> Path:  # noqa: F811
    return Path(env["HOME"]) / ".claude" / "settings.json"


def hooks(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:  # noqa: F811
    return agentbar(env, "hooks", *args, "--status-line", "--agent", "claude")


ODD_FILES = {
    "with their command": '{\n  "statusLine": {"type": "command", "command": "~/bin/line.sh", '
    '"padding": 0},\n  "model": "opus"\n}\n',
    "crlf, bom, tabs": '\ufeff{\r\n\t"statusLine": {\r\n\t\t"type": "command",\r\n\t\t"command":'
    ' "printf \'%s\' \\"$(cat)\\" | jq -r .model.display_name"\r\n\t}\r\n}',
    "no status line": '{"permissions": {"allow": ["Bash(ls)"]}}',
    "empty": "",
    "unicode": '{"statusLine": {"type": "command", "command": "echo \u00e9t\u00e9 \u2713"}}\n',
}


@pytest.mark.parametrize("name", list(ODD_FILES))
def test_install_then_uninstall_gives_the_exact_bytes_back(
    env: dict[str, str],  # noqa: F811
    name: str,
) -> None:
    path = settings_of(env)
    path.parent.mkdir(parents=True)
    original = ODD_FILES[name].encode()
    path.write_bytes(original)
    path.chmod(0o640)
    dry = hooks(env, "install", "--dry-run")
    assert dry.returncode == 0 and "+" in dry.stdout and path.read_bytes() == original
    done = hooks(env, "install", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(path.read_bytes().decode("utf-8-sig"))
    assert statusline.is_link(data["statusLine"])
    before = json.loads(original.decode("utf-8-sig") or "{}").get("statusLine")
    argv = shlex.split(data["statusLine"]["command"])
    if before:
        assert argv[-2:] == ["--then", before["command"]]
        assert {k: v for k, v in data["statusLine"].items() if k != "command"} == {
            k: v for k, v in before.items() if k != "command"
        }
    else:
        assert "--then" not in argv
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert "installed" in hooks(env, "status").stdout
    assert hooks(env, "install", "--yes").stdout.strip().endswith("already installed")
    assert hooks(env, "uninstall", "--yes").returncode == 0
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert "not installed" in hooks(env, "status").stdout


def test_uninstall_after_the_person_edited_the_file_keeps_their_edit(
    env: dict[str, str],  # noqa: F811
) -> None:
    path = settings_of(env)
    path.parent.mkdir(parents=True)
    theirs = {"type": "command", "command": "~/bin/line.sh", "padding": 2}
    path.write_text(json.dumps({"statusLine": theirs}, indent=2))
    assert hooks(env, "install", "--yes").returncode == 0
    data = json.loads(path.read_text())
    data["model"] = "sonnet"  # an edit made since
    path.write_text(json.dumps(data, indent=2))
    assert hooks(env, "uninstall", "--yes").returncode == 0
    assert json.loads(path.read_text()) == {"statusLine": theirs, "model": "sonnet"}


def test_install_into_no_file_and_uninstall_removes_it(env: dict[str, str]) -> None:  # noqa: F811
    path = settings_of(env)
    path.parent.mkdir(parents=True)
    assert hooks(env, "install", "--yes").returncode == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert hooks(env, "uninstall", "--yes").returncode == 0
    assert not path.exists()


@pytest.mark.parametrize(
    "text",
    ["{not json", "[1]", '{"statusLine": {"type": "static", "text": "x"}}',
     '{"statusLine": {"type": "command", "command": 5}}', '{"statusLine": "echo hi"}'],
)  # fmt: skip
def test_files_it_cannot_edit_are_left_as_they_are(
    env: dict[str, str],  # noqa: F811
    text: str,
) -> None:
    path = settings_of(env)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    done = hooks(env, "install", "--yes")
    assert done.returncode == 2 and "left it as it is" in done.stdout
    assert path.read_text() == text


def test_not_confirmed_writes_nothing(env: dict[str, str]) -> None:  # noqa: F811
    path = settings_of(env)
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    done = hooks(env, "install")
    assert done.returncode == 1 and path.read_text() == "{}"


def test_plan_refuses_a_non_command_status_line(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"statusLine": {"type": "static"}}')
    with pytest.raises(HooksFileError):
        statusline.plan_install(path, tmp_path / "data", python=sys.executable)


def test_the_link_and_the_hooks_come_and_go_in_any_order(env: dict[str, str]) -> None:  # noqa: F811
    path = settings_of(env)
    path.parent.mkdir(parents=True)
    original = ODD_FILES["with their command"].encode()
    path.write_bytes(original)
    assert hooks(env, "install", "--yes").returncode == 0
    assert agentbar(env, "hooks", "install", "--agent", "claude", "--yes").returncode == 0
    assert hooks(env, "uninstall", "--yes").returncode == 0  # the link first: hooks stay
    data = json.loads(path.read_text())
    assert data["hooks"] and data["statusLine"]["command"] == "~/bin/line.sh"
    assert agentbar(env, "hooks", "uninstall", "--agent", "claude", "--yes").returncode == 0
    assert json.loads(path.read_text()) == json.loads(original)
