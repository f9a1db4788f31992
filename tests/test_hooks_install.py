"""Installing agentbar's hooks into the user's own settings files: golden before/after files
for varied real-world settings (tests/data/hooks/), then for each one: install twice (the second
changes nothing), uninstall (byte for byte the original), a dry run (untouched), and a crash in
the middle of the write (the file stays valid and unchanged).

Set AGENTBAR_UPDATE_GOLDEN=1 to rewrite the golden "after" files from the current code (then
read the diff before committing it).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agentbar.core.agents.claude import settings as claude_settings
from agentbar.core.agents.claude.events import CALLER as CLAUDE_CALLER
from agentbar.core.agents.claude.events import HOLD_CALLER as CLAUDE_HOLD_CALLER
from agentbar.core.agents.claude.events import claude_events
from agentbar.core.agents.claude.launch import launch_args as claude_launch_args
from agentbar.core.agents.claude.launch import launch_settings as claude_launch_settings
from agentbar.core.agents.codex import config as codex_config
from agentbar.core.agents.codex.events import CALLER as CODEX_CALLER
from agentbar.core.agents.codex.events import CODEX_EVENTS
from agentbar.core.agents.codex.launch import BYPASS_TRUST as CODEX_BYPASS_TRUST
from agentbar.core.agents.codex.launch import launch_args as codex_launch_args
from agentbar.core.config import Settings
from agentbar.core.hooks import cli as hooks_cli
from agentbar.core.hooks import files, installer, json_settings
from agentbar.core.hooks.errors import HooksFileError
from agentbar.core.hooks.spec import HookCaller, HookCommand, hook_script, parse_version
from agentbar.core.hooks.target import command_notes
from agentbar.core.model import Agent

DATA = Path(__file__).parent / "data" / "hooks"
UPDATE = os.environ.get("AGENTBAR_UPDATE_GOLDEN") == "1"
COMMAND = HookCommand(
    python="/opt/agentbar/bin/python3",
    script="/opt/agentbar/lib/agentbar/assets/hooks/agentbar_hook.py",
    data_dir="/home/me/.local/share/agentbar",
)
CLAUDE_VERSION = "2.1.197 (Claude Code)"
CODEX_VERSION = "codex-cli 0.171.0"
VERSIONS = {
    "old_claude_version": "2.0.30 (Claude Code)",
    "old_codex": "codex-cli 0.100.0",
    "old_codex_features": "codex-cli 0.100.0",
}
ERRORS = {
    "invalid_json": "not valid JSON",
    "hooks_not_object": '"hooks" is a list',
    "top_level_array": "not an object",
    "event_not_list": '"hooks.Stop" is a dict',
    "invalid_toml": "not valid TOML",
    "hooks_not_table": "not a table",
    "duplicate_key": "not valid TOML",
}


def cases(agent: str) -> list[str]:
    suffix = ".before.json" if agent == "claude" else ".before.toml"
    names = sorted(p.name[: -len(suffix)] for p in (DATA / agent).glob("*" + suffix))
    return [*names, "missing_file"]


def golden_cases() -> list[tuple[str, str]]:
    return [(a, n) for a in ("claude", "codex") for n in cases(a) if n not in ERRORS]


def error_cases() -> list[tuple[str, str]]:
    return [(a, n) for a in ("claude", "codex") for n in cases(a) if n in ERRORS]


def ext(agent: str) -> str:
    return "json" if agent == "claude" else "toml"


def before_of(agent: str, name: str) -> bytes | None:
    if name == "missing_file":
        return None
    return (DATA / agent / f"{name}.before.{ext(agent)}").read_bytes()


def settings_for(tmp_path: Path) -> Settings:
    return Settings(
        homes={
            Agent("claude"): (tmp_path / "home" / ".claude",),
            Agent("codex"): (tmp_path / "home" / ".codex",),
            Agent("gemini"): (tmp_path / "home" / ".gemini",),
        },
        data_dir=tmp_path / "data",
    )


def target_file(settings: Settings, agent: str) -> Path:
    return installer.target(Agent(agent), settings).path


def put(settings: Settings, agent: str, data: bytes | None) -> Path:
    path = target_file(settings, agent)
    if data is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return path


def version(agent: str, name: str) -> str:
    return VERSIONS.get(name, CLAUDE_VERSION if agent == "claude" else CODEX_VERSION)


def install(settings: Settings, agent: str, name: str = "", **kw: Any) -> installer.Plan:
    plan = installer.plan_install(
        Agent(agent), settings, command=COMMAND, version=version(agent, name), **kw
    )
    installer.apply(plan, settings)
    return plan


def uninstall(settings: Settings, agent: str) -> installer.Plan:
    plan = installer.plan_uninstall(Agent(agent), settings)
    installer.apply(plan, settings)
    return plan


def parses(agent: str, data: bytes) -> Any:
    text = data.decode("utf-8").lstrip("\ufeff")
    return json.loads(text) if agent == "claude" and text.strip() else tomllib.loads(text)


def without_agentbar(agent: str, original: bytes) -> Any:
    """The original's content with any (earlier) agentbar entries taken out, by hand."""
    data = parses(agent, original)
    if b"agentbar_hook.py" not in original:
        return data
    hooks = data.get("hooks", {})
    for event in list(hooks):
        groups = [
            g
            for g in hooks[event]
            if not any("agentbar_hook.py" in h["command"] for h in g["hooks"])
        ]
        if groups:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks:
        data.pop("hooks", None)
    if "agentbar_hook.py" in str(data.get("notify", "")):
        del data["notify"]
    return data


# -- golden files -----------------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "name"), golden_cases())
def test_install_matches_the_golden_file(tmp_path: Path, agent: str, name: str) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, agent, before_of(agent, name))
    plan = install(settings, agent, name)
    assert plan.changed
    written = path.read_bytes()
    golden = DATA / agent / f"{name}.after.{ext(agent)}"
    if UPDATE:
        golden.write_bytes(written)
    assert written == golden.read_bytes(), plan.diff()
    parses(agent, written)


@pytest.mark.parametrize(("agent", "name"), golden_cases())
def test_a_second_install_changes_nothing(tmp_path: Path, agent: str, name: str) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, agent, before_of(agent, name))
    install(settings, agent, name)
    first = path.read_bytes()
    again = install(settings, agent, name)
    assert not again.changed
    assert "already installed" in again.summary
    assert path.read_bytes() == first


@pytest.mark.parametrize(("agent", "name"), golden_cases())
def test_uninstall_restores_the_original_byte_for_byte(
    tmp_path: Path, agent: str, name: str
) -> None:
    settings = settings_for(tmp_path)
    original = before_of(agent, name)
    path = put(settings, agent, original)
    install(settings, agent, name)
    plan = uninstall(settings, agent)
    assert plan.changed
    if original is None:
        assert not path.exists()
        assert not path.parent.exists()  # the folder agentbar made for it goes too
    elif b"agentbar_hook.py" in original:
        # An earlier agentbar's entries were in the original: they go too, nothing else.
        assert b"agentbar_hook.py" not in path.read_bytes()
        assert parses(agent, path.read_bytes()) == without_agentbar(agent, original)
        return
    else:
        assert path.read_bytes() == original
    assert not files.backup_path(path).exists()
    assert not installer.plan_uninstall(Agent(agent), settings).changed  # nothing left


@pytest.mark.parametrize(("agent", "name"), golden_cases())
def test_uninstall_after_the_user_changed_the_file_removes_only_agentbars_entries(
    tmp_path: Path, agent: str, name: str
) -> None:
    settings = settings_for(tmp_path)
    original = before_of(agent, name)
    path = put(settings, agent, original)
    install(settings, agent, name)
    # The user (or the agent) edits the file afterwards.
    text = path.read_bytes().decode("utf-8")
    if agent == "claude":
        data, style = claude_settings.load(text, "x")
        data["addedLater"] = "✓"
        path.write_text(claude_settings.dump(data, style), encoding="utf-8", newline="")
    else:
        path.write_text(text + '\n[added_later]\nx = "✓"\n', encoding="utf-8", newline="")
    plan = uninstall(settings, agent)
    assert plan.changed and "only agentbar's entries" in " ".join(plan.notes)
    left = path.read_bytes()
    assert b"agentbar_hook.py" not in left
    expected = without_agentbar(agent, original or b"")
    got = parses(agent, left)
    if agent == "claude":
        assert got.pop("addedLater") == "✓"
    else:
        assert got.pop("added_later") == {"x": "✓"}
    assert got == expected


@pytest.mark.parametrize(("agent", "name"), golden_cases())
def test_a_dry_run_shows_the_change_and_writes_nothing(
    tmp_path: Path, agent: str, name: str
) -> None:
    settings = settings_for(tmp_path)
    original = before_of(agent, name)
    path = put(settings, agent, original)
    out = io.StringIO()
    code = run_cli(settings, "install", "--agent", agent, "--dry-run", version=version(agent, name))
    assert code == 0
    out_text = LAST_OUTPUT[0]
    assert "dry run, nothing written" in out_text
    assert "+" in out_text and "agentbar_hook.py" in out_text
    assert (path.read_bytes() if path.exists() else None) == original
    assert not files.backup_path(path).exists()
    assert not (settings.data_dir / "hooks").exists()
    del out


@pytest.mark.parametrize("breaks", ["replace", "fsync"])
@pytest.mark.parametrize(("agent", "name"), golden_cases())
def test_a_crash_in_the_middle_of_the_write_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, name: str, breaks: str
) -> None:
    settings = settings_for(tmp_path)
    original = before_of(agent, name)
    path = put(settings, agent, original)
    plan = installer.plan_install(
        Agent(agent), settings, command=COMMAND, version=version(agent, name)
    )

    def crash(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, breaks, crash)
    with pytest.raises(OSError):
        installer.apply(plan, settings)
    monkeypatch.undo()
    assert (path.read_bytes() if path.exists() else None) == original
    if original is not None and original.strip():
        parses(agent, path.read_bytes())
    leftovers = [p.name for p in path.parent.glob("*agentbar-tmp")] if path.parent.exists() else []
    assert leftovers == []


@pytest.mark.parametrize(("agent", "name"), error_cases())
def test_an_invalid_file_is_refused_and_left_untouched(
    tmp_path: Path, agent: str, name: str
) -> None:
    settings = settings_for(tmp_path)
    original = before_of(agent, name)
    path = put(settings, agent, original)
    with pytest.raises(HooksFileError, match=ERRORS[name]):
        installer.plan_install(Agent(agent), settings, command=COMMAND, version=None)
    code = run_cli(settings, "install", "--agent", agent, "--yes")
    assert code == 2
    assert "left it as it is" in LAST_OUTPUT[0]
    assert path.read_bytes() == original
    assert not files.backup_path(path).exists()


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_an_unreadable_file_is_refused_and_left_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, agent, b"{}\n" if agent == "claude" else b"")
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert run_cli(settings, "install", "--agent", agent, "--yes") == 2
    assert "cannot read" in LAST_OUTPUT[0] and "Permission denied" in LAST_OUTPUT[0]
    monkeypatch.undo()
    assert path.read_bytes() == (b"{}\n" if agent == "claude" else b"")


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_folder_where_the_file_should_be_is_refused(tmp_path: Path, agent: str) -> None:
    settings = settings_for(tmp_path)
    path = target_file(settings, agent)
    path.mkdir(parents=True)
    assert run_cli(settings, "install", "--agent", agent, "--yes") == 2
    assert "is a folder" in LAST_OUTPUT[0]
    assert path.is_dir()
    assert run_cli(settings, "status", "--agent", agent) == 0


# -- what install and uninstall promise beyond the goldens -------------------------------------


def test_the_original_is_backed_up_once_and_never_overwritten(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    original = b'{\n  "model": "opus"\n}\n'
    path = put(settings, "claude", original)
    install(settings, "claude")
    backup = files.backup_path(path)
    assert backup.read_bytes() == original
    # Edited, reinstalled by a moved agentbar: the backup still holds the first original.
    data, style = claude_settings.load(path.read_text(), "x")
    data["theme"] = "dark"
    path.write_text(claude_settings.dump(data, style))
    moved = HookCommand("/new/python", "/new/agentbar_hook.py", "/new/data")
    plan = installer.plan_install(Agent("claude"), settings, command=moved, version=CLAUDE_VERSION)
    installer.apply(plan, settings)
    assert backup.read_bytes() == original
    assert "/new/agentbar_hook.py" in path.read_text()
    assert "/opt/agentbar" not in path.read_text()  # the earlier entries were replaced
    # The file is not as the first install left it: uninstall only takes agentbar's entries out.
    uninstall(settings, "claude")
    assert json.loads(path.read_text()) == {"model": "opus", "theme": "dark"}
    assert backup.read_bytes() == original  # kept: it is the person's copy now


def test_a_reinstall_over_agentbars_own_untouched_install_still_restores_exactly(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path)
    original = (DATA / "codex" / "comments_and_tables.before.toml").read_bytes()
    path = put(settings, "codex", original)
    install(settings, "codex")
    moved = HookCommand("/new/python", "/new/agentbar_hook.py", "/new/data")
    plan = installer.plan_install(Agent("codex"), settings, command=moved, version=CODEX_VERSION)
    installer.apply(plan, settings)
    uninstall(settings, "codex")
    assert path.read_bytes() == original


def test_the_file_mode_is_kept_and_a_new_file_is_private(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, "claude", b"{}\n")
    path.chmod(0o644)
    install(settings, "claude")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    codex = target_file(settings, "codex")
    install(settings, "codex")
    assert stat.S_IMODE(codex.stat().st_mode) == 0o600


def test_a_symlinked_settings_file_is_written_through_to_its_target(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    original = b'{\n  "model": "opus"\n}\n'
    dotfiles.write_bytes(original)
    link = target_file(settings, "claude")
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    plan = install(settings, "claude")
    assert "->" in plan.target.shown
    assert link.is_symlink()
    assert b"agentbar_hook.py" in dotfiles.read_bytes()
    uninstall(settings, "claude")
    assert link.is_symlink() and dotfiles.read_bytes() == original


def test_a_file_changed_between_the_plan_and_the_write_is_not_overwritten(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, "claude", b'{"a": 1}\n')
    plan = installer.plan_install(
        Agent("claude"), settings, command=COMMAND, version=CLAUDE_VERSION
    )
    path.write_bytes(b'{"a": 2}\n')  # Claude rewrote it meanwhile
    with pytest.raises(HooksFileError, match="changed while agentbar was working"):
        installer.apply(plan, settings)
    assert path.read_bytes() == b'{"a": 2}\n'


def test_codex_trust_records_of_agentbars_hooks_go_with_them(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    original = (DATA / "codex" / "hooks_state_present.before.toml").read_bytes()
    path = put(settings, "codex", original)
    install(settings, "codex")
    status = codex_config.status(codex_config.load(path.read_text(), "x"), str(path))
    stop = next(h for h in status.hooks if h.event == "Stop")
    assert stop.key == f"{path}:stop:1:0" and stop.trust == "needs review"
    # The person trusts it in Codex's /hooks; Codex records that in the file.
    with path.open("a") as fh:
        fh.write(f'\n[hooks.state."{stop.key}"]\ntrusted_hash = "sha256:feed"\n')
    status = codex_config.status(codex_config.load(path.read_text(), "x"), str(path))
    assert next(h for h in status.hooks if h.event == "Stop").trust == "trusted"
    run_cli(settings, "status", "--agent", "codex")
    assert "1 trusted" in LAST_OUTPUT[0] and "still need trusting" in LAST_OUTPUT[0]
    uninstall(settings, "codex")
    assert tomllib.loads(path.read_text()) == tomllib.loads(original.decode())


def test_codex_notify_of_the_users_own_is_left_alone_and_said_so(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    put(settings, "codex", (DATA / "codex" / "existing_notify.before.toml").read_bytes())
    plan = install(settings, "codex")
    assert any("already have a notify program" in n for n in plan.notes)
    assert any("/hooks" in n and "trust" in n for n in plan.notes)


def test_codex_without_notify_when_asked(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, "codex", b'model = "gpt-5"\n')
    install(settings, "codex", notify=False)
    assert "notify" not in tomllib.loads(path.read_text())
    assert not installer.plan_install(
        Agent("codex"), settings, command=COMMAND, version=CODEX_VERSION, notify=False
    ).changed


def test_an_old_codex_gets_the_feature_flag_and_uninstall_takes_it_back(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    original = (DATA / "codex" / "old_codex_features.before.toml").read_bytes()
    path = put(settings, "codex", original)
    install(settings, "codex", "old_codex_features")
    assert tomllib.loads(path.read_text())["features"]["codex_hooks"] is True
    path.write_text(path.read_text() + "\n# a note of mine\n")  # changed: structural removal
    uninstall(settings, "codex")
    assert tomllib.loads(path.read_text()) == tomllib.loads(original.decode())


def test_claude_disable_all_hooks_is_reported(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    put(settings, "claude", b'{"disableAllHooks": true}\n')
    plan = install(settings, "claude")
    assert any("disableAllHooks" in n for n in plan.notes)
    status = installer.status(Agent("claude"), settings, command=COMMAND, version=CLAUDE_VERSION)
    assert any("disableAllHooks" in n for n in status.notes)


def test_claude_events_follow_the_version() -> None:
    assert claude_events(None)[-1] == "SessionEnd"
    assert "PermissionRequest" not in claude_events("2.0.44")
    assert "PermissionRequest" in claude_events("2.0.45 (Claude Code)")
    assert "StopFailure" not in claude_events("2.1.77") and "StopFailure" in claude_events("2.1.78")
    assert claude_events("1.0.38") == ["PreToolUse", "PostToolUse", "Notification", "Stop"]
    assert parse_version("codex-cli 0.171.0") == (0, 171, 0)
    assert parse_version("nonsense") is None


# -- status and the command line ---------------------------------------------------------------

LAST_OUTPUT = [""]


def run_cli(
    settings: Settings,
    *argv: str,
    version: str | None = CLAUDE_VERSION,
    confirm: Any = None,
) -> int:
    from agentbar.core import cli

    parser = cli.build_parser()
    args = parser.parse_args(["hooks", *argv])
    out = io.StringIO()
    code = hooks_cli.run(
        args,
        settings,
        out,
        confirm=confirm or (lambda question: None),
        version_of=lambda agent: version,
    )
    LAST_OUTPUT[0] = out.getvalue()
    return code


def test_status_install_status_uninstall(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    assert run_cli(settings, "status") == 0
    lines = LAST_OUTPUT[0].splitlines()
    assert lines[0].startswith("claude  not installed")
    assert lines[1].startswith("codex   not installed")
    assert lines[2].startswith("gemini  not installed")
    assert run_cli(settings, "install", "--yes") == 0
    out = LAST_OUTPUT[0]
    assert "claude: installed agentbar's hooks for 11 events" in out
    assert "codex: installed agentbar's hooks for 10 events" in out
    assert "gemini: installed agentbar's hooks for 7 events" in out
    assert "type /hooks" in out
    assert (settings.data_dir / "events" / "claude").is_dir()  # ready for the hook program
    run_cli(settings, "status")
    out = LAST_OUTPUT[0]
    assert "claude  installed" in out and "(11 events)" in out
    assert "10 hooks, 0 trusted; agentbar's notify" in out
    assert "another agentbar" not in out and "broken" not in out
    assert run_cli(settings, "install", "--yes") == 0
    assert LAST_OUTPUT[0].count("already installed") == 3
    assert run_cli(settings, "uninstall", "--yes") == 0
    assert "removed" in LAST_OUTPUT[0]
    run_cli(settings, "status")
    assert LAST_OUTPUT[0].count("not installed") == 3


def test_install_asks_and_a_no_writes_nothing(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, "claude", b"{}\n")
    asked: list[str] = []

    def no(question: str) -> bool:
        asked.append(question)
        return False

    assert run_cli(settings, "install", "--agent", "claude", confirm=no) == 1
    assert asked == [f"Write this change to {path}? [y/N] "]
    assert path.read_bytes() == b"{}\n"
    assert run_cli(settings, "install", "--agent", "claude", confirm=lambda q: True) == 0
    assert b"agentbar_hook.py" in path.read_bytes()


def test_install_without_a_terminal_needs_yes(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, "claude", b"{}\n")
    assert run_cli(settings, "install", "--agent", "claude") == 1
    assert "pass --yes" in LAST_OUTPUT[0]
    assert path.read_bytes() == b"{}\n"


def test_one_bad_file_does_not_stop_the_other_agent(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    put(settings, "claude", b"{ not json")
    codex = put(settings, "codex", b"")
    assert run_cli(settings, "install", "--yes") == 2
    assert b"agentbar_hook.py" in codex.read_bytes()


def test_the_top_level_command_delegates_to_the_hooks_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentbar.tray.__main__ import main

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENTBAR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setattr(hooks_cli, "detect_version", lambda agent: None)
    assert main(["hooks", "status"]) == 0
    out = capsys.readouterr().out
    assert "claude" in out and "codex" in out and "not installed" in out
    with pytest.raises(SystemExit):
        main(["hooks", "install", "--agent", "nosuchagent"])


def test_status_sees_a_broken_installation(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    install(settings, "claude")  # COMMAND's paths do not exist on this machine
    status = installer.status(Agent("claude"), settings, command=COMMAND, version=CLAUDE_VERSION)
    assert status.installed
    assert any("broken: /opt/agentbar/bin/python3 no longer exists" in n for n in status.notes)


def test_status_calls_an_earlier_versions_hook_command_outdated_and_install_updates_it(
    tmp_path: Path,
) -> None:
    # What agentbar wrote before each agent's kit put its needs on the hook's command line
    # (the bare agent name: Codex's "{}" on Stop and Claude's pid were the hook program's own).
    settings = settings_for(tmp_path)
    old = {
        agent: (DATA / agent / f"missing_file.after.{ext(agent)}")
        .read_text()
        .replace(COMMAND.shell(caller), COMMAND.shell(Agent(agent)))
        .replace(COMMAND.shell(CLAUDE_HOLD_CALLER), COMMAND.shell(Agent(agent)))
        .replace(", ".join(f'"{a}"' for a in caller.args()[2:]) + ", ", "")
        for agent, caller in (("claude", CLAUDE_CALLER), ("codex", CODEX_CALLER))
    }
    assert "--pid-env" not in old["claude"] and "--reply" not in old["codex"]
    for agent, text in old.items():
        put(settings, agent, text.encode())
        before = installer.status(
            Agent(agent), settings, command=COMMAND, version=version(agent, "")
        )
        outdated = [n for n in before.notes if "agentbar hooks install" in n]
        assert outdated and all("earlier" in n for n in outdated), before.notes
        assert not any("another agentbar" in n for n in before.notes), before.notes
        plan = install(settings, agent)
        assert plan.changed
        after = installer.status(
            Agent(agent), settings, command=COMMAND, version=version(agent, "")
        )
        assert not any("agentbar hooks install" in n for n in after.notes), after.notes


# -- the per-launch layers ---------------------------------------------------------------------


def test_the_claude_launch_layer_is_settings_json_with_agentbars_hooks_only() -> None:
    layer = claude_launch_settings(COMMAND)
    assert list(layer) == ["hooks"]
    assert list(layer["hooks"]) == claude_events(None)
    (group,) = layer["hooks"]["PermissionRequest"]
    assert group == {"hooks": [COMMAND.handler(CLAUDE_CALLER)]}
    assert "--pid-env CLAUDE_PID" in group["hooks"][0]["command"]
    flag, value = claude_launch_args(COMMAND, version="2.0.30")
    assert flag == "--settings"
    assert json.loads(value) == claude_launch_settings(COMMAND, version="2.0.30")
    assert "PermissionRequest" not in json.loads(value)["hooks"]


def test_the_codex_launch_overrides_are_toml_codex_can_read() -> None:
    args = codex_launch_args(
        COMMAND, bypass_trust=True, version="codex-cli 0.171.0", notify=True, enable_hooks=True
    )
    assert args[0] == CODEX_BYPASS_TRUST
    pairs = args[1:]
    assert pairs[::2] == ["-c"] * (len(pairs) // 2)
    merged: dict[str, Any] = {}
    for override in pairs[1::2]:
        key, _, value = override.partition("=")
        parsed = tomllib.loads(f"v = {value}")["v"]
        node = merged
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = parsed
    assert list(merged["hooks"]) == list(CODEX_EVENTS)
    assert merged["hooks"]["Stop"] == [{"hooks": [COMMAND.handler(CODEX_CALLER)]}]
    assert "--reply 'Stop={}'" in merged["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert merged["features"] == {"hooks": True}
    assert merged["notify"] == COMMAND.argv(CODEX_CALLER, notify=True)
    assert CODEX_BYPASS_TRUST not in codex_launch_args(COMMAND)
    # A Codex from before the flag would refuse to start with it.
    assert CODEX_BYPASS_TRUST not in codex_launch_args(
        COMMAND, bypass_trust=True, version="codex-cli 0.99.0"
    )
    with pytest.raises(ValueError, match="needs the Codex version"):
        codex_launch_args(COMMAND, bypass_trust=True)


def test_the_shell_command_survives_spaces_and_quotes() -> None:
    odd = HookCommand("/Users/Me Too/py thon", "/a'b/agentbar_hook.py", '/data "dir"')
    import shlex

    for caller in (CLAUDE_CALLER, CODEX_CALLER):
        assert shlex.split(odd.shell(caller)) == odd.argv(caller)


def test_the_current_command_points_at_this_installations_hook() -> None:
    command = HookCommand.current(Path("/tmp/x"))
    assert Path(command.script).is_file()
    assert Path(command.script).name == "agentbar_hook.py"
    assert command.argv(Agent("codex"))[-2:] == ["--data-dir", "/tmp/x"]


def test_unused_argparse_namespace_is_harmless() -> None:
    # The hooks parser is wired into the main one: every action parses.
    from agentbar.core import cli

    parser = cli.build_parser()
    for argv in (
        ["hooks", "status"],
        ["hooks", "install", "--agent", "codex", "--dry-run", "--no-notify"],
        ["hooks", "uninstall", "--yes"],
    ):
        assert isinstance(parser.parse_args(argv), argparse.Namespace)


def test_status_calls_a_hook_whose_translator_is_gone_broken(tmp_path: Path) -> None:
    gone = tmp_path / "myagent_hook_payload.py"
    caller = HookCaller(Agent("myagent"), translator=gone)
    command = HookCommand(sys.executable, str(hook_script()), str(tmp_path)).shell(caller)
    assert command_notes({command}, command) == [
        f"broken: {gone.resolve()} no longer exists (run install again)"
    ]


# -- the holding PermissionRequest entry (the hook route, issue 17) ----------------------------


def test_claudes_permission_request_entry_holds_and_the_others_do_not(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = put(settings, "claude", b'{"permissions": {"allow": ["Bash(ls:*)"]}}\n')
    install(settings, "claude")
    hooks = json.loads(path.read_text())["hooks"]
    for event, groups in hooks.items():
        (handler,) = groups[0]["hooks"]
        holding = event == "PermissionRequest"
        assert ("--hold PermissionRequest --hold-seconds 600" in handler["command"]) == holding
        assert handler["timeout"] == (630 if holding else 5), event
    status = installer.status(Agent("claude"), settings, command=COMMAND, version=CLAUDE_VERSION)
    assert status.summary == "installed (11 events)"
    # COMMAND's paths do not exist here ("broken"); neither command line is called outdated.
    assert not any("outdated" in n or "another agentbar" in n for n in status.notes), status.notes


def test_an_install_from_before_the_hook_route_is_upgraded_and_still_undone_exactly(
    tmp_path: Path,
) -> None:
    """An earlier agentbar's PermissionRequest entry (no --hold, 5 s) is called outdated, and a
    new install replaces it in place; uninstall still gives the user's file back as it was."""
    settings = settings_for(tmp_path)
    original = b'{\n  "model": "opus"\n}\n'
    path = put(settings, "claude", original)
    earlier = claude_settings.load(original.decode(), "x")[0]
    earlier = json_settings.add(earlier, COMMAND.handler(CLAUDE_CALLER), claude_events(None))
    path.write_text(json.dumps(earlier, indent=2) + "\n")
    before = installer.status(Agent("claude"), settings, command=COMMAND, version=CLAUDE_VERSION)
    assert any("outdated" in note for note in before.notes), before.notes
    plan = install(settings, "claude")
    assert plan.changed and "--hold PermissionRequest" in plan.diff()
    (group,) = json.loads(path.read_text())["hooks"]["PermissionRequest"]
    assert group == {"hooks": [COMMAND.handler(CLAUDE_HOLD_CALLER, 630)]}
    assert not install(settings, "claude").changed  # idempotent
    uninstall(settings, "claude")
    assert json.loads(path.read_text()) == {"model": "opus"}
