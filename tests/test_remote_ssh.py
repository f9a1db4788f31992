"""Issue 13 end to end over a real OpenSSH server (tests/remote_rig.py): a far user on 127.0.0.1
with Claude and Codex sessions in its HOME and agentbar installed there; here, the real
``agentbar serve``, ``status``, ``watch`` and ``remote`` commands of a near HOME whose
``settings.toml`` names the rig as a remote. What a person sees: the far sessions with their
host, their changes, replay and search through the channel, an approval held there answered
here, a host going down and coming back, and the one-line messages when it cannot be reached.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest
from claude_lines import ClaudeTranscript, write_lines
from cli_runner import agentbar, kill_left_behind, start_agentbar
from codex_lines import CodexRollout
from other_user import PYTHON
from polling import end_process, wait_for
from remote_rig import FarClaude, FarUser, SshRig
from test_limits import codex_limits, window
from tray_rig import Tray

from agentbar.core.agents.claude.events import HOLD_CALLER
from agentbar.core.config import Settings
from agentbar.core.launch.client import ApiError, Client, NoServer

HOST = "rig"
SID = "5d1e7c2a-9b3f-4e8d-a6c1-2f0e9d8c7b6a"  # the same id here and there: never mixed up
OTHER = "7e2f8d3b-0c4a-4f9e-b7d2-3a1f0e9d8c7b"
CODEX_ID = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01"
SECONDS = 60  # a first connection: ssh, then the far engine reading its HOME


# -- the far side: agents of the far user ---------------------------------------------------------


def far_codex(far: FarUser, project: str) -> Path:
    rollout = CodexRollout(CODEX_ID, project, start=time.time() - 60)
    path = far.home / ".codex" / "sessions" / "2026" / "12" / "02"
    path = path / f"rollout-2026-12-02T10-00-00-{CODEX_ID}.jsonl"
    far.write_lines(
        path,
        [
            rollout.meta(),
            rollout.context(),
            rollout.event("user_message", message="refactor the parser on the devbox"),
            rollout.event("agent_message", message="Done: the parser is refactored."),
        ],
    )
    return path


@pytest.fixture
def far_claudes(ssh_rig: SshRig) -> Iterator[list[FarClaude]]:
    made: list[FarClaude] = []
    yield made
    for claude in made:
        claude.end()


# -- the near side: this machine's agentbar ------------------------------------------------------


@dataclass
class Near:
    env: dict[str, str]
    serve: subprocess.Popen[str] | None = None

    @property
    def home(self) -> Path:
        return Path(self.env["HOME"])

    @property
    def settings(self) -> Settings:
        return Settings.from_env(self.env)

    def run(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        return agentbar(self.env, *args, timeout=timeout)

    def add_remote(self, name: str, command: list[str], program: str) -> None:
        added = self.run("remote", "add", name, "--agentbar", program, "--", *command)
        assert added.returncode == 0, added.stderr

    def start(self) -> Client:
        self.serve = start_agentbar(self.env, "serve")

        def answering() -> Client | None:
            assert self.serve is not None
            if self.serve.poll() is not None:
                raise AssertionError(f"serve ended: {self.serve.communicate()[1][-3000:]}")
            try:
                return Client.find(self.settings, timeout=2)
            except NoServer:
                return None

        return wait_for(answering, SECONDS, "the near agentbar to serve", 0.2)

    @property
    def client(self) -> Client:
        return Client.find(self.settings, timeout=10)

    def get(self, path: str) -> Any:
        return self.client.request("GET", path, timeout=60)

    def raw(self, path: str) -> bytes:
        """A GET whose reply is not JSON (an export), with the token."""
        client = self.client
        request = urllib.request.Request(
            client.origin + path, headers={"Authorization": f"Bearer {client.token}"}
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=60) as response:
            return bytes(response.read())

    def sessions(self) -> list[dict[str, Any]]:
        return list(self.get("/api/sessions")["sessions"])

    def session(self, session_id: str, host: str = HOST) -> dict[str, Any] | None:
        return next(
            (s for s in self.sessions() if s["session_id"] == session_id and s["host"] == host),
            None,
        )

    def host(self, name: str = HOST) -> dict[str, Any]:
        hosts = self.get("/api/hosts")["hosts"]
        return next(h for h in hosts if h["name"] == name)

    def wait_state(self, session_id: str, state: str, host: str = HOST) -> dict[str, Any]:
        def there() -> dict[str, Any] | None:
            found = self.session(session_id, host)
            return found if found is not None and found["state"] == state else None

        try:
            return wait_for(there, SECONDS, f"{session_id[:8]}@{host} to be {state}", 0.1)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; hosts {self.get('/api/hosts')}; {self.said()}") from None

    def said(self) -> str:
        """What the near agentbar logged (its log file, for a failure's message)."""
        log = Path(self.env["AGENTBAR_DATA_DIR"]) / "agentbar.log"
        return log.read_text()[-3000:] if log.exists() else "(no log)"

    def wait_host(self, state: str, name: str = HOST, timeout: float = SECONDS) -> dict[str, Any]:
        return wait_for(
            lambda: (h := self.host(name))["state"] == state and h,
            timeout,
            f"{name} to be {state}",
            0.1,
        )

    def stop(self) -> None:
        if self.serve is not None:
            end_process(self.serve, 20)
            self.serve = None


@pytest.fixture
def near(tmp_path: Path) -> Iterator[Near]:
    home = tmp_path / "near"
    for folder in (".claude/projects", ".claude/sessions", ".codex/sessions"):
        (home / folder).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "XDG_"))}
    env.update(
        HOME=str(home),
        AGENTBAR_DATA_DIR=str(tmp_path / "data"),
        AGENTBAR_CONFIG_DIR=str(tmp_path / "config"),
    )
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        env.pop(name, None)
    side = Near(env)
    try:
        yield side
    finally:
        side.stop()
        kill_left_behind(tmp_path / "data", home)


def local_claude(near: Near, session_id: str, project: str) -> None:
    """A finished Claude session of this machine (no process: it is idle or ended here)."""
    t = ClaudeTranscript(session_id, project, start=time.time() - 30)
    path = near.home / ".claude" / "projects" / project.replace("/", "-") / f"{session_id}.jsonl"
    write_lines(path, [t.prompt("the local one"), t.text("Done.", stop_reason="end_turn")])


# -- sessions, changes, replay, search ------------------------------------------------------------


def test_far_sessions_appear_with_their_host_and_follow_the_far_files(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    far = ssh_rig.far
    claude = FarClaude(far, SID, "/srv/api")
    far_claudes.append(claude)
    claude.ask("make deploy")
    far_codex(far, "/srv/parser")
    local_claude(near, SID, "/work/here")
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    near.start()

    waiting = near.wait_state(SID, "input_required")
    assert waiting["project"] == "/srv/api"
    assert waiting["detail"] == "Bash: make deploy"
    codex = wait_for(lambda: near.session(CODEX_ID), SECONDS, "the far Codex session")
    assert (codex["agent"], codex["project"]) == ("codex", "/srv/parser")
    # The same id on this machine is another session, shown apart.
    local = wait_for(lambda: near.session(SID, "local"), SECONDS, "the local session")
    assert local["project"] == "/work/here"
    host = near.host()
    assert (host["state"], host["detail"]) == ("connected", "")
    assert host["sessions"] >= 2

    # The far side opened no port but its own loopback server for the hooks, private to it.
    listening = [
        c.laddr
        for proc in far.processes()
        for c in proc.net_connections()
        if c.status == psutil.CONN_LISTEN
    ]
    assert listening and all(addr.ip == "127.0.0.1" for addr in listening), listening
    far_data = far.home / ".local" / "share" / "agentbar"
    assert stat.S_IMODE(far_data.stat().st_mode) == 0o700
    assert stat.S_IMODE((far_data / "server.json").stat().st_mode) == 0o600

    # A line written there changes the state here.
    claude.approved()
    near.wait_state(SID, "running")
    assert near.session(SID, "local")["project"] == "/work/here"


def test_status_json_names_the_host_of_every_session(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    claude = FarClaude(ssh_rig.far, SID, "/srv/api")
    far_claudes.append(claude)
    claude.ask("make deploy")
    far_codex(ssh_rig.far, "/srv/parser")
    local_claude(near, SID, "/work/here")
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    listed = near.run("status", "--json", "--all")
    assert listed.returncode == 0, listed.stderr
    rows = orjson.loads(listed.stdout)["sessions"]
    assert {(r["host"], r["session_id"]) for r in rows} == {
        ("local", SID),
        (HOST, SID),
        (HOST, CODEX_ID),
    }


def test_the_host_s_limits_and_reading_come_through_ssh_named_by_it(
    ssh_rig: SshRig, near: Near
) -> None:
    """The far user's Codex names its windows there; this machine's API shows them as the
    host's, apart from this machine's (none here: only its note), and the host's first reading
    as done, in its status."""
    now = time.time()
    rollout = CodexRollout(CODEX_ID, "/srv/parser", start=now - 60)
    token_count = rollout.tokens(100, 0, 10)
    token_count["payload"]["rate_limits"] = codex_limits(
        window(38.0, 300, now + 3600), window(7.0, 10080, now + 86400)
    )
    path = ssh_rig.far.home / ".codex" / "sessions" / "2026" / "12" / "02"
    path = path / f"rollout-2026-12-02T10-00-00-{CODEX_ID}.jsonl"
    ssh_rig.far.write_lines(path, [rollout.meta(), rollout.context(), token_count])
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    near.start()

    def theirs() -> list[dict[str, Any]] | None:
        return [w for w in near.get("/api/limits")["limits"] if w["host"] == HOST] or None

    five, week = wait_for(theirs, SECONDS, "the host's windows", 0.2)
    assert (five["agent"], five["window"], five["used_percent"]) == ("codex", "5h", 38.0)
    assert five["text"].startswith(f"Codex on {HOST}: 62 % of 5 h left, resets ")
    assert (week["window"], week["stale"]) == ("weekly", False)
    assert not [w for w in near.get("/api/limits")["limits"] if w["host"] == "local"]
    host = wait_for(lambda: (h := near.host())["progress"] and h["progress"]["done"] and h,
                    SECONDS, "the host's reading done", 0.2)  # fmt: skip
    assert host["progress"]["host"] == HOST


def test_agentbar_usage_host_prints_the_far_user_s_usage_and_a_host_down_is_2(
    ssh_rig: SshRig, near: Near
) -> None:
    """The far user's Codex spent tokens there: ``agentbar usage --host`` here prints what the
    far user's own ``agentbar usage`` prints there (run over ssh, as a person would), tables
    and JSON; with the host down it says so in one line and ends 2."""
    now = time.time()
    rollout = CodexRollout(CODEX_ID, "/srv/parser", start=now - 60)
    path = ssh_rig.far.home / ".codex" / "sessions" / "2026" / "12" / "02"
    path = path / f"rollout-2026-12-02T10-00-00-{CODEX_ID}.jsonl"
    ssh_rig.far.write_lines(path, [rollout.meta(), rollout.context(),
                                   rollout.tokens(12_000, 2_000, 345)])  # fmt: skip
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    for options in ((), ("--json",)):
        here = near.run("usage", "--host", HOST, *options)
        assert here.returncode == 0, here.stderr
        there = subprocess.run([*ssh_rig.command, ssh_rig.agentbar, "usage", *options],
                               capture_output=True, text=True, timeout=90, check=False)  # fmt: skip
        assert there.returncode == 0, there.stderr
        assert here.stdout == there.stdout
    (session,) = orjson.loads(here.stdout)["sessions"]
    assert (session["agent"], session["project"]) == ("codex", "/srv/parser")
    assert (session["input_tokens"], session["output_tokens"]) == (10_000, 345)
    ssh_rig.stop()
    down = near.run("usage", "--host", HOST)
    assert down.returncode == 2, down.stderr
    assert down.stdout == ""
    assert down.stderr.count("\n") == 1, down.stderr
    assert down.stderr.startswith(f"agentbar: {HOST}: host down"), down.stderr


@dataclass
class Watch:
    """``agentbar watch --json`` of the near side (a process with its own link to the rig):
    every change it printed, as it runs."""

    proc: subprocess.Popen[str]
    heard: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(cls, near: Near) -> Watch:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentbar.tray", "watch", "--json"],
            env=near.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        watch = cls(proc)
        threading.Thread(target=watch._read, daemon=True).start()
        return watch

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with contextlib.suppress(orjson.JSONDecodeError):
                doc = orjson.loads(line)
                if isinstance(doc, dict):
                    self.heard.append(doc)

    def of(self, session_id: str, state: str | None = None) -> list[dict[str, Any]]:
        """What it heard of the rig's ``session_id`` (in ``state``)."""
        return [
            c
            for c in self.heard
            if (c["host"], c["session_id"]) == (HOST, session_id)
            and (state is None or c["state"] == state)
        ]

    def wait_live(self, probe: FarClaude) -> None:
        """Until the link is followed: the far list is shown with no change reported, so a
        change made before it arrived would never be heard. ``probe`` asks and is answered
        again and again until the watch hears it."""

        def heard_probe() -> bool:
            if probe.path.exists() and self.of(probe.session_id):
                return True
            probe.ask("true")
            time.sleep(0.5)
            probe.approved()
            return bool(self.of(probe.session_id))

        wait_for(heard_probe, SECONDS, "the watch to follow the rig", 0.5)
        wait_for(
            lambda: self.of(probe.session_id)[-1]["state"] == "running",
            SECONDS,
            "the probe's last change to be heard",
        )

    def stop(self) -> None:
        end_process(self.proc, 10)


def test_a_change_there_is_heard_here_once_naming_the_host(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    claude = FarClaude(ssh_rig.far, OTHER, "/srv/web")
    probe = FarClaude(ssh_rig.far, SID, "/srv/probe")
    far_claudes += [claude, probe]
    claude.say("busy")
    claude.write(claude.transcript.prompt("build the site"))
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    watch = Watch.start(near)
    try:
        watch.wait_live(probe)
        claude.ask("rm -rf dist")
        change = wait_for(
            lambda: watch.of(OTHER, "input_required"), SECONDS, "the watch to hear it"
        )[0]
        assert change["host"] == HOST
        assert change["project"] == "/srv/web"
        assert change["prev_state"] == "running"
        # The far side's next update frames carry the session again: not a second report.
        claude.write(claude.transcript.progress())
        time.sleep(5.0)
        assert len(watch.of(OTHER)) == 1, watch.heard
    finally:
        watch.stop()


def test_replay_and_search_go_through_the_channel(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    claude = FarClaude(ssh_rig.far, SID, "/srv/api")
    far_claudes.append(claude)
    t = claude.transcript
    lines = [t.prompt("explain the quarterly zebrafish report")]
    for n in range(60):
        lines += [t.text(f"paragraph {n} of the answer"), t.prompt(f"and then {n}?")]
    claude.write(*lines)
    claude.say("idle")
    local_claude(near, SID, "/work/here")
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    near.start()
    near.wait_host("connected")
    wait_for(lambda: near.session(SID), SECONDS, "the far session")

    page = near.get(f"/api/sessions/{SID}/items?host={HOST}&limit=20")
    assert page["host"] == HOST
    texts = orjson.dumps(page).decode()
    assert "paragraph" in texts
    assert "the local one" not in texts
    assert len(page["items"]) <= 20
    # Paged: an earlier page holds what the last one did not, never the whole transcript.
    first = page["items"][0]
    before = near.get(f"/api/sessions/{SID}/items?host={HOST}&limit=20&before={first['offset']}")
    assert before["items"] and before["items"][-1]["offset"] < first["offset"]

    found = near.get("/api/search?q=zebrafish")["hits"]
    assert [(h["host"], h["session_id"]) for h in found] == [(HOST, SID)]

    # The export is made there and streamed here in chunks, whole.
    exported = near.raw(f"/api/sessions/{SID}/export?host={HOST}&format=md").decode()
    assert "quarterly zebrafish report" in exported
    assert "paragraph 0 of" in exported and "paragraph 59 of" in exported
    assert "the local one" not in exported


# -- resume, fork, hand-off ----------------------------------------------------------------------


def far_finished_claude(far: FarUser, session_id: str, project: Path) -> None:
    """A finished Claude session of the far user, run in ``project`` (a folder of its HOME)."""
    project.mkdir()
    far.give(project)
    t = ClaudeTranscript(session_id, str(project), start=time.time() - 60)
    folder = far.home / ".claude" / "projects" / str(project).replace("/", "-")
    far.write_lines(
        folder / f"{session_id}.jsonl",
        [t.prompt("the far work"), t.text("Done there.", stop_reason="end_turn")],
    )


def test_a_far_session_is_resumed_and_forked_on_its_host(ssh_rig: SshRig, near: Near) -> None:
    """``agentbar resume`` and the fork route run the far user's agent over there (its
    scripted ``claude``), never one here; ``agentbar tasks --host`` lists them as that host's
    agentbar does; ``agentbar stop --host`` stops it there; the hand-off is read there; with the
    host down all of them are refused at once."""
    project = ssh_rig.far.home / "work"
    far_finished_claude(ssh_rig.far, SID, project)
    local_claude(near, SID, "/work/here")  # the same id here: never mixed up
    near.add_remote(HOST, ssh_rig.command, ssh_rig.with_fake_agents())
    near.start()
    near.wait_host("connected")
    wait_for(lambda: near.session(SID), SECONDS, "the far session")

    resumed = near.run("resume", SID, "--host", HOST, "--json", "--no-start")
    assert resumed.returncode == 0, resumed.stderr
    task = orjson.loads(resumed.stdout)["task"]
    assert (task["host"], task["mode"], task["source"]) == (HOST, "resume", SID)
    assert task["project"] == str(project)
    assert psutil.Process(task["pid"]).uids().real == ssh_rig.far.user.uid  # run over there
    wait_for(
        lambda: (near.session(SID) or {}).get("task_id") == task["task_id"],
        SECONDS,
        "the far session bound to its resumed task",
    )
    assert near.session(SID, "local")["task_id"] is None  # type: ignore[index]
    assert near.get("/api/tasks")["tasks"] == []  # this machine launched nothing
    again = near.run("resume", SID, "--host", HOST, "--no-start")
    assert again.returncode == 1 and "runs this session" in again.stderr, again.stderr

    forked = near.client.request(
        "POST", f"/api/sessions/{SID}/fork?host={HOST}", {"prompt": "go on"}, timeout=60
    )["task"]
    assert (forked["host"], forked["mode"], forked["source"]) == (HOST, "fork", SID)
    wait_for(
        lambda: [
            s["session_id"]
            for s in near.sessions()
            if s["task_id"] == forked["task_id"] and s["host"] == HOST and s["session_id"] != SID
        ],
        SECONDS,
        "the forked session there",
    )

    # Listed from here by its own agentbar there: the far user's two tasks, naming the host.
    listed = near.run("tasks", "--host", HOST, "--json")
    assert listed.returncode == 0, listed.stderr
    there = orjson.loads(listed.stdout)["tasks"]
    assert sorted((t["task_id"], t["host"], t["mode"]) for t in there) == sorted(
        [(task["task_id"], HOST, "resume"), (forked["task_id"], HOST, "fork")]
    )
    assert {t["pid"] for t in there} == {task["pid"], forked["pid"]}
    table = near.run("tasks", "--host", HOST)
    assert table.returncode == 0, table.stderr
    assert task["task_id"] in table.stdout and forked["task_id"] in table.stdout, table.stdout
    assert near.run("tasks").stdout == "No launched agents.\n"  # this machine's: none
    unknown_host = near.run("tasks", "--host", "nowhere")
    assert unknown_host.returncode == 1, unknown_host.stderr
    assert "no remote host named 'nowhere'" in unknown_host.stderr, unknown_host.stderr

    # Stopped from here by its own agentbar there: the far user's agent is gone, reaped.
    far_agent = psutil.Process(forked["pid"])
    stopped = near.run("stop", forked["task_id"][:6], "--host", HOST)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.startswith(f"task {forked['task_id']} on {HOST}: exited"), stopped.stdout
    assert not far_agent.is_running() or far_agent.status() == psutil.STATUS_ZOMBIE
    shown = near.client.request("GET", f"/api/tasks/{forked['task_id']}?host={HOST}")["task"]
    assert (shown["status"], shown["host"]) == ("exited", HOST)
    unknown = near.run("stop", "abcdef12", "--host", HOST)
    assert unknown.returncode == 1 and "no task 'abcdef12'" in unknown.stderr, unknown.stderr
    assert near.run("stop", forked["task_id"]).returncode == 1  # not this machine's task

    printed = near.run("handoff", SID, "--host", HOST, "--what", "answer", "--print", "--no-start")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == "Done there.\n"

    ssh_rig.stop()
    near.wait_host("unreachable", timeout=30)
    down = near.run("fork", SID, "--host", HOST, "--no-start", timeout=20)
    assert down.returncode == 2, down.stderr
    assert f"{HOST} is unreachable" in down.stderr, down.stderr
    down = near.run("stop", task["task_id"], "--host", HOST, timeout=20)
    assert down.returncode == 2 and f"{HOST} is unreachable" in down.stderr, down.stderr
    down = near.run("tasks", "--host", HOST, timeout=20)
    assert down.returncode == 2 and f"{HOST} is unreachable" in down.stderr, down.stderr


# -- approvals -------------------------------------------------------------------------------------


def far_hook_path(ssh_rig: SshRig) -> str:
    said = ssh_rig.ssh(
        str(ssh_rig.install.python),
        "-c",
        "'import agentbar.assets, pathlib; "
        'print(pathlib.Path(agentbar.assets.__file__).parent / "hooks" / "agentbar_hook.py")\'',
    )
    assert said.returncode == 0, said.stderr
    return said.stdout.strip()


def test_an_approval_held_there_is_answered_here(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    claude = FarClaude(ssh_rig.far, SID, "/srv/api")
    far_claudes.append(claude)
    claude.ask("npm test")
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    near.start()
    near.wait_state(SID, "input_required")
    hook = far_hook_path(ssh_rig)
    payload = {
        "session_id": SID,
        "transcript_path": str(claude.path),
        "cwd": "/srv/api",
        "permission_mode": "default",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test", "description": "Run the tests"},
    }
    data_dir = str(ssh_rig.far.home / ".local" / "share" / "agentbar")
    # The hook as Claude runs it there: the far user's, its payload on stdin, held by the far
    # side's own server until a decision comes.
    held = subprocess.Popen(
        [*ssh_rig.command, PYTHON, "-I", "-S", hook, *HOLD_CALLER.args(), "--data-dir", data_dir],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert held.stdin is not None
        held.stdin.write(orjson.dumps(payload))
        held.stdin.close()

        def asked() -> dict[str, Any] | None:
            for request in near.get("/api/decisions")["requests"]:
                if request.get("session_id") == SID:
                    return dict(request)
            return None

        request = wait_for(asked, SECONDS, "the far request to be asked here", 0.2)
        assert request.get("host") == HOST
        assert request["summary"] == "npm test"
        status, _ = near.client.call(
            "POST", f"/api/decisions/{request['request_id']}", {"verdict": "allow", "origin": "cli"}
        )
        assert status == 200
        held.wait(30)
        assert held.stdout is not None and held.stderr is not None
        out, err = held.stdout.read(), held.stderr.read()
    finally:
        if held.poll() is None:
            held.kill()
            held.wait()
    assert held.returncode == 0, err
    decision = orjson.loads(out)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "allow"
    wait_for(lambda: not asked(), 20, "the request to close here")


# -- faults --------------------------------------------------------------------------------------


@dataclass
class Asking:
    """The rig's session ``SID`` waiting for an approval, shown by the near ``serve``, and a
    watch following the rig since its probe session (``OTHER``) was heard to its last change."""

    claude: FarClaude
    watch: Watch
    probe_heard: int

    def told_once_what_changed_meanwhile(self) -> None:
        """After a reconnect: the session's run told once, nothing told again."""
        watch = self.watch
        wait_for(lambda: watch.of(SID, "running"), 90, "the watch to hear it after reconnecting")
        assert [c["state"] for c in watch.of(SID)] == ["running"], watch.heard
        assert len(watch.of(OTHER)) == self.probe_heard, watch.heard


@contextlib.contextmanager
def asking(ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]) -> Iterator[Asking]:
    claude = FarClaude(ssh_rig.far, SID, "/srv/api")
    probe = FarClaude(ssh_rig.far, OTHER, "/srv/probe")
    far_claudes += [claude, probe]
    claude.ask("make deploy")
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    near.start()
    near.wait_state(SID, "input_required")
    watch = Watch.start(near)
    try:
        watch.wait_live(probe)
        yield Asking(claude, watch, len(watch.of(OTHER)))
    finally:
        watch.stop()


def test_a_host_going_down_and_back_is_said_and_reported_once(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    local = ClaudeTranscript(OTHER, "/work/here", start=time.time())
    local_path = near.home / ".claude" / "projects" / "-work-here" / f"{OTHER}.jsonl"
    write_lines(local_path, [local.prompt("the local one")])
    with asking(ssh_rig, near, far_claudes) as it:
        ssh_rig.stop()
        down = near.wait_host("unreachable", timeout=30)
        assert down["detail"].startswith(("connection dropped", "host down")), down
        # Its sessions stay shown as last seen; this machine's go on.
        assert near.session(SID) is not None
        before = near.session(OTHER, "local")
        assert before is not None
        write_lines(local_path, [local.text("local answer", stop_reason="end_turn")])
        wait_for(
            lambda: near.session(OTHER, "local")["last_activity"] != before["last_activity"],
            SECONDS,
            "the local session to go on",
        )
        tested = near.run("remote", "test", HOST)
        assert tested.returncode == 1
        said = tested.stderr.strip().splitlines()
        assert len(said) == 1, tested.stderr
        assert said[0].startswith(f"agentbar: {HOST}: host down"), said

        # Meanwhile the call was allowed there; the host comes back (the backoff may have
        # grown to a few tens of seconds).
        it.claude.approved()
        ssh_rig.start()
        near.wait_host("connected", timeout=90)
        near.wait_state(SID, "running")
        it.told_once_what_changed_meanwhile()


def test_a_host_that_asks_for_a_password_says_so_in_one_line(ssh_rig: SshRig, near: Near) -> None:
    near.add_remote(HOST, ssh_rig.keyless_command, ssh_rig.agentbar)
    tested = near.run("remote", "test", HOST)
    assert tested.returncode == 1
    assert tested.stdout == ""
    assert tested.stderr.count("\n") == 1, tested.stderr
    assert tested.stderr.startswith(f"agentbar: {HOST}: asks for a password"), tested.stderr


def test_a_host_without_agentbar_says_how_to_install_it(ssh_rig: SshRig, near: Near) -> None:
    near.add_remote(HOST, ssh_rig.command, "/nowhere/bin/agentbar")
    tested = near.run("remote", "test", HOST)
    assert tested.returncode == 1
    assert tested.stderr.count("\n") == 1, tested.stderr
    line = tested.stderr.strip()
    assert line.startswith(f"agentbar: {HOST}: agentbar is not installed on {HOST}"), line
    assert "pip install" in line or "pipx install" in line


def test_the_documented_add_order_keeps_the_option(ssh_rig: SshRig, near: Near) -> None:
    added = near.run("remote", "add", HOST, "--agentbar", ssh_rig.agentbar, "--", *ssh_rig.command)
    assert added.returncode == 0, added.stderr
    listed = near.run("remote", "list")
    assert listed.stdout.split() == [HOST, *ssh_rig.command, f"[{ssh_rig.agentbar}]"]


def test_remote_test_reports_version_and_sessions(ssh_rig: SshRig, near: Near) -> None:
    far_codex(ssh_rig.far, "/srv/parser")
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    listed = near.run("remote", "list")
    assert listed.returncode == 0
    assert HOST in listed.stdout and "ssh -F" in listed.stdout
    tested = near.run("remote", "test", HOST)
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.startswith(f"{HOST}: agentbar "), tested.stdout
    assert "1 sessions" in tested.stdout


# -- a container-like channel --------------------------------------------------------------------


def test_a_container_like_command_is_a_remote_too(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    """``docker exec -i`` and ``wsl.exe -d`` run the program straight away with the standard
    streams as the channel: ``runuser`` into the far user with a clean environment does the
    same here."""
    claude = FarClaude(ssh_rig.far, SID, "/srv/api")
    far_claudes.append(claude)
    claude.ask("cargo build")
    near.add_remote("box", ssh_rig.channel_like(), ssh_rig.agentbar)
    tested = near.run("remote", "test", "box")
    assert tested.returncode == 0, tested.stderr
    near.start()
    waiting = near.wait_state(SID, "input_required", host="box")
    assert waiting["detail"] == "Bash: cargo build"
    claude.approved()
    near.wait_state(SID, "running", host="box")
    with pytest.raises(ApiError):
        near.get(f"/api/sessions/{SID}/items?host=nowhere")


# -- the tray ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_tray_notifies_a_far_approval_naming_the_host(
    ssh_rig: SshRig, tray: Tray, far_claudes: list[FarClaude]
) -> None:
    """The real tray on its private desktop, dunst as the notification server: a session of
    the rig that starts waiting is told as that host's."""
    added = agentbar(
        tray.env, "remote", "add", "--agentbar", ssh_rig.agentbar, HOST, "--", *ssh_rig.command
    )
    assert added.returncode == 0, added.stderr
    tray.launch()
    wait_for(
        lambda: any(h["state"] == "connected" for h in tray.api("/api/hosts")["hosts"]),
        SECONDS,
        "the tray's link to the rig",
        0.2,
    )
    claude = FarClaude(ssh_rig.far, SID, "/srv/api")
    far_claudes.append(claude)
    claude.say("busy")
    claude.write(claude.transcript.prompt("deploy it"))
    wait_for(lambda: tray.state(SID) == "running", SECONDS, "the far session in the tray", 0.2)
    claude.write(claude.transcript.bash("make deploy"))
    # The far engine reads the call before the registry says "waiting" (on a busy machine the
    # two writes can be read in the other order, and the wait is then told without its command).
    wait_for(lambda: "make deploy" in ((tray.session(SID) or {}).get("detail") or ""), SECONDS,
             "the far side's read of the call", 0.2)  # fmt: skip
    claude.say("waiting")
    shown = tray.desktop.wait_notification(lambda n: "api" in n["summary"], SECONDS)
    assert shown["summary"] == f"Claude Code in api on {HOST} needs your approval", shown
    assert "make deploy" in shown["body"]


def test_a_host_that_never_answers_says_so_in_one_line(ssh_rig: SshRig, near: Near) -> None:
    """A port that takes the connection and says nothing (a hung machine, a firewall that
    swallows): ssh's own timeout ends the wait, the remote test says so in one line."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        near.add_remote(HOST, [*ssh_rig.command[:-1], "-p", str(port), "rig"], ssh_rig.agentbar)
        started = time.monotonic()
        tested = near.run("remote", "test", HOST)
        took = time.monotonic() - started
    assert tested.returncode == 1
    assert tested.stderr.count("\n") == 1, tested.stderr
    assert tested.stderr.startswith(f"agentbar: {HOST}: "), tested.stderr
    assert "timed out" in tested.stderr, tested.stderr
    assert took < 40, took  # ssh's ConnectTimeout (5 s) or the channel's hello wait (20 s)


def test_a_dropped_connection_comes_back_by_itself_with_nothing_told_twice(
    ssh_rig: SshRig, near: Near, far_claudes: list[FarClaude]
) -> None:
    """The connection breaks (its sshd processes end) while the server stays up: the link
    reconnects at its first backoff and tells only what changed meanwhile."""
    with asking(ssh_rig, near, far_claudes) as it:
        connected_since = near.host()["since"]
        assert ssh_rig.sshd is not None
        listener = ssh_rig.sshd.pid
        for proc in ssh_rig.serving_processes():
            if proc.pid != listener:
                proc.kill()
        it.claude.approved()
        near.wait_state(SID, "running")
        it.told_once_what_changed_meanwhile()
        again = near.wait_host("connected")
        assert again["since"] != connected_since, "the connection was never dropped"


def test_status_with_the_host_down_shows_this_machine_and_one_line_for_it(
    ssh_rig: SshRig, near: Near
) -> None:
    local_claude(near, SID, "/work/here")
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    ssh_rig.stop()
    started = time.monotonic()
    shown = near.run("status", "--all")
    took = time.monotonic() - started
    assert shown.returncode == 0, shown.stderr
    assert "/work/here" in shown.stdout
    about = [line for line in shown.stdout.splitlines() if line.startswith(f"({HOST}:")]
    assert len(about) == 1, shown.stdout
    assert about[0].startswith(f"({HOST}: unreachable: host down"), about
    assert took < 45, took  # the remotes are waited for 30 s at most
    listed = orjson.loads(near.run("status", "--json").stdout)
    assert [(h["name"], h["state"]) for h in listed["hosts"]] == [(HOST, "unreachable")]
    assert {s["host"] for s in listed["sessions"]} == {"local"}


# -- hooks installed there from here ---------------------------------------------------------------


def test_agentbar_hooks_install_host_writes_the_far_settings_and_uninstall_restores_them(
    ssh_rig: SshRig, near: Near
) -> None:
    """``agentbar hooks install --host`` shows the far user's Claude settings change here and
    writes it there (backed up there); ``status --host`` prints what ``status`` prints there;
    ``uninstall --host`` restores the file byte for byte; with the host down: one line, 2."""
    original = b'{\n  "model": "opus"\n}\n'
    settings = ssh_rig.far.home / ".claude" / "settings.json"
    ssh_rig.far.write_bytes(settings, original)
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)

    def far_file(name: str = "settings.json") -> str:
        said = ssh_rig.ssh("cat", str(settings.parent / name))
        return said.stdout if said.returncode == 0 else "(missing)"

    done = near.run("hooks", "install", "--host", HOST, "--agent", "claude", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"claude: {settings} on {HOST}\n"), done.stdout
    assert "+" in done.stdout and "agentbar_hook.py" in done.stdout  # the far diff, shown here
    assert "agentbar_hook.py" in far_file()
    assert far_file("settings.json.agentbar-backup") == original.decode()
    here = near.run("hooks", "status", "--host", HOST, "--agent", "claude")
    there = ssh_rig.ssh(ssh_rig.agentbar, "hooks", "status", "--agent", "claude", timeout=90)
    assert (here.returncode, here.stdout) == (0, there.stdout), here.stderr
    assert here.stdout.startswith("claude  installed"), here.stdout

    removed = near.run("hooks", "uninstall", "--host", HOST, "--agent", "claude", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert far_file() == original.decode()
    assert far_file("settings.json.agentbar-backup") == "(missing)"

    ssh_rig.stop()
    down = near.run("hooks", "install", "--host", HOST, "--yes")
    assert down.returncode == 2, down.stderr
    assert down.stdout == ""
    assert down.stderr.count("\n") == 1, down.stderr
    assert down.stderr.startswith(f"agentbar: {HOST}: host down"), down.stderr


def test_agentbar_hooks_status_line_host_links_the_far_claude_and_uninstall_restores_it(
    ssh_rig: SshRig, near: Near
) -> None:
    """``agentbar hooks install --status-line --host`` puts the far agentbar's own link (its
    python, its data dir) before the far user's own status-line command in the far settings,
    shown here as the far command shows it; ``status`` prints what it prints there;
    ``uninstall`` gives the far file its bytes back."""
    original = b'{\n  "statusLine": {"type": "command", "command": "~/bin/line.sh"}\n}\n'
    settings = ssh_rig.far.home / ".claude" / "settings.json"
    ssh_rig.far.write_bytes(settings, original)
    near.add_remote(HOST, ssh_rig.command, ssh_rig.agentbar)
    link = ("--status-line", "--agent", "claude")

    def far_file() -> str:
        said = ssh_rig.ssh("cat", str(settings))
        return said.stdout if said.returncode == 0 else "(missing)"

    done = near.run("hooks", "install", "--host", HOST, *link, "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"claude: {settings} on {HOST}\n"), done.stdout
    assert "agentbar_statusline.py" in done.stdout  # the far diff, shown here
    argv = shlex.split(orjson.loads(far_file())["statusLine"]["command"])
    python, script, data = argv[0], argv[3], Path(argv[argv.index("--data-dir") + 1])
    venv = str(ssh_rig.install.venv)  # the far agentbar's python and program, its data dir
    assert python.startswith(venv) and script.startswith(venv), argv
    assert data.is_relative_to(ssh_rig.far.home), argv
    assert argv[-2:] == ["--then", "~/bin/line.sh"]  # the far user's own line, run after it
    here = near.run("hooks", "status", "--host", HOST, *link)
    there = ssh_rig.ssh(ssh_rig.agentbar, "hooks", "status", *link, timeout=90)
    assert (here.returncode, here.stdout) == (0, there.stdout), here.stderr
    assert "status-line link installed (then runs: ~/bin/line.sh)" in here.stdout

    removed = near.run("hooks", "uninstall", "--host", HOST, *link, "--yes")
    assert removed.returncode == 0, removed.stderr
    assert far_file() == original.decode()
