"""A real OpenSSH server on 127.0.0.1 and a second local user behind it, for the remote tests
(the test's thread starts and stops it; sshd runs as root in the foreground).

What a person has, made by the test: Debian's ``sshd`` with a config, host key and pid file of
its own in a temporary folder (no system service; ``UsePAM no``, keys only, loopback only), a
user of its own with a HOME holding ``.ssh/authorized_keys`` for a key pair the test made, and a
client config naming the server ``rig`` (port, key, known host key, ``BatchMode yes``), so a
remote's command is just ``ssh -F CONFIG rig``. On the far side agentbar is installed from this
checkout into a venv of Debian's ``/usr/bin/python3`` under ``/var/tmp`` (the test venv lives
under /root, which that user cannot enter), made once per state of the code and reused.

- One far user per checkout (its name carries a hash of the checkout's path), so the rigs of two
  checkouts on one machine never kill each other's processes.
- The far HOME is emptied and its ``authorized_keys`` written again for each test.
- ``stop()`` ends the listener and every connection it serves (a host that goes down), and
  ``start()`` brings it back on the same port with the same host key.
- At the end: sshd stopped, every process of the far user killed (it is never left logged in:
  no TTY is asked for, so nothing is written to utmp either).

``FarClaude`` plays a live Claude session of the far user (transcript, registry, a ``sleep`` as
its process). Outside pytest (bench/bench_remote.py): ``rig_unavailable``, ``prepare_machine``
and ``rig_running``.

Needs root (CI and these machines run as root): elsewhere the tests are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest
from claude_lines import ClaudeTranscript, registry
from other_user import PYTHON, OtherUser, ensure_user, runuser, why_not
from polling import wait_for

REPO = Path(__file__).resolve().parents[1]
SSHD = "/usr/sbin/sshd"
ALIAS = "rig"
CACHE_ROOT = Path("/var/tmp")
# What the far venv is built from: a change to any of these makes a new one.
SHIPPED = ("core", "tray", "assets", "pyproject.toml", "setup.py", "README.md")
GIT_LS_FILES = ("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--")
INSTALL_SECONDS = 900
FAKE_AGENT_FILES = ("fake_agent.py", "claude_lines.py", "codex_lines.py")
SSHD_CONFIG = """\
Port {port}
ListenAddress 127.0.0.1
AddressFamily inet
HostKey {host_key}
PidFile {pid_file}
AuthorizedKeysFile .ssh/authorized_keys
AllowUsers {user}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin no
StrictModes yes
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
PermitTTY no
LogLevel VERBOSE
"""
CLIENT_CONFIG = """\
Host {alias}
  HostName 127.0.0.1
  Port {port}
  User {user}
  IdentityFile {key}
  IdentitiesOnly yes
  HostKeyAlias {alias}
  UserKnownHostsFile {known_hosts}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  RequestTTY no
  ConnectTimeout 5
  ControlMaster no
  ControlPath none
  LogLevel ERROR

Host {alias}-nokey
  HostName 127.0.0.1
  Port {port}
  User {user}
  IdentityFile none
  IdentitiesOnly yes
  IdentityAgent none
  HostKeyAlias {alias}
  UserKnownHostsFile {known_hosts}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  RequestTTY no
  ConnectTimeout 5
  LogLevel ERROR
"""


def checkout_hash() -> str:
    return hashlib.sha256(str(REPO).encode()).hexdigest()[:8]


def shipped_files() -> list[Path]:
    """The files the far venv is built from, relative: git's tracked and new (not ignored)
    ones, or, in a copy that is not a git checkout, every file but caches."""
    try:
        listed = subprocess.run(
            [*GIT_LS_FILES, *SHIPPED],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout
        names = {Path(os.fsdecode(name)) for name in listed.split(b"\0") if name}
    except (OSError, subprocess.CalledProcessError):
        names = {
            path.relative_to(REPO)
            for top in SHIPPED
            for path in ([REPO / top] if (REPO / top).is_file() else (REPO / top).rglob("*"))
            if "__pycache__" not in path.parts and path.suffix != ".pyc"
        }
    return sorted(name for name in names if (REPO / name).is_file())


def code_hash(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for name in files:
        digest.update(bytes(name) + b"\0" + (REPO / name).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


# -- the far side's agentbar ------------------------------------------------------------------


@dataclass(frozen=True)
class FarInstall:
    """agentbar installed for the far user: ``agentbar`` is the program a remote names."""

    venv: Path

    @property
    def agentbar(self) -> Path:
        return self.venv / "bin" / "agentbar"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def _copy_shipped(files: list[Path], into: Path) -> None:
    """The files a person gets, copied, so pip's build never writes into this checkout."""
    for name in files:
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, into / name)


def _pip(venv: Path, *args: str) -> None:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def far_install(cache: Path) -> FarInstall:
    """The venv for this state of the code under ``cache``, made when missing: Debian's Python,
    the dependencies from the indexes pip is configured with (pip's own wheel cache keeps them),
    then this checkout. Older venvs of this checkout are removed. Safe against a second test
    run doing the same at once (a lock file)."""
    cache.mkdir(mode=0o755, exist_ok=True)
    cache.chmod(0o755)
    files = shipped_files()
    venv = cache / f"venv-{code_hash(files)}"
    with open(cache / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "ready").exists():
            for old in cache.glob("venv-*"):
                shutil.rmtree(old, ignore_errors=True)
            subprocess.run([PYTHON, "-m", "venv", str(venv)], check=True, capture_output=True)
            with tempfile.TemporaryDirectory(prefix="agentbar-rig-src-") as source:
                _copy_shipped(files, Path(source))
                _pip(venv, source)
            (venv / "ready").write_text(str(REPO))
            # Readable and runnable by the far user, writable by root alone.
            subprocess.run(["chmod", "-R", "go+rX,go-w", str(venv)], check=True)
    return FarInstall(venv)


# -- keys and the far user --------------------------------------------------------------------


@dataclass(frozen=True)
class Keys:
    folder: Path

    @property
    def host_key(self) -> Path:
        return self.folder / "ssh_host_ed25519_key"

    @property
    def client_key(self) -> Path:
        return self.folder / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.folder / "known_hosts"


def make_keys(folder: Path) -> Keys:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    keys = Keys(folder)
    for path, comment in ((keys.host_key, "rig host"), (keys.client_key, "rig client")):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
            check=True,
            capture_output=True,
        )
    # The client names the server's key by its alias (HostKeyAlias), whatever the port.
    host_public = keys.host_key.with_suffix(".pub").read_text().split()[:2]
    keys.known_hosts.write_text(f"{ALIAS} {' '.join(host_public)}\n")
    return keys


@dataclass(frozen=True)
class FarUser:
    """The person on the other machine: ``user`` and its HOME (the one sshd gives it)."""

    user: OtherUser
    home: Path

    @property
    def name(self) -> str:
        return self.user.name

    def give(self, path: Path) -> None:
        """Make ``path`` and the folders between it and the HOME the far user's own."""
        path = path.resolve()
        while path != self.home and self.home in path.parents:
            os.chown(path, self.user.uid, self.user.gid)
            path = path.parent

    def write_lines(self, path: Path, lines: list[dict[str, Any]]) -> None:
        """Append JSON lines to ``path`` under the far HOME in one write, as an agent does."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as fh:
            fh.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        self.give(path)

    def write_bytes(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.give(path)

    def processes(self) -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["uids"]):
            with contextlib.suppress(psutil.Error, TypeError):
                if proc.info["uids"].real == self.user.uid:
                    found.append(proc)
        return found

    def kill_all(self) -> None:
        """End every process of the far user (its agentbar, its shells): by pid, this user's
        own (made for this checkout alone)."""
        for proc in self.processes():
            with contextlib.suppress(psutil.Error):
                proc.kill()
        wait_for(lambda: not self.processes(), 10, "the far user's processes to end", 0.05)

    def reset_home(self, keys: Keys) -> None:
        """An empty HOME with nothing but the test's public key in ``authorized_keys``."""
        self.kill_all()
        if self.home.exists():
            shutil.rmtree(self.home)
        ssh = self.home / ".ssh"
        ssh.mkdir(mode=0o700, parents=True)
        self.home.chmod(0o750)
        public = keys.client_key.with_suffix(".pub").read_text()
        (ssh / "authorized_keys").write_text(public)
        (ssh / "authorized_keys").chmod(0o600)
        for path in (self.home, ssh, ssh / "authorized_keys"):
            os.chown(path, self.user.uid, self.user.gid)


@dataclass
class FarClaude:
    """One live Claude session of the far user: its transcript and registry in the far HOME,
    and a ``sleep`` of the far user as its process (the registry names its pid)."""

    far: FarUser
    session_id: str
    project: str
    transcript: ClaudeTranscript = field(init=False)
    process: subprocess.Popen[bytes] = field(init=False)
    started: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        self.transcript = ClaudeTranscript(self.session_id, self.project, start=self.started)
        user = self.far.user
        self.process = subprocess.Popen(
            ["sleep", "600"], user=user.uid, group=user.gid, extra_groups=[], cwd=self.far.home
        )

    @property
    def path(self) -> Path:
        folder = self.project.replace("/", "-")
        return self.far.home / ".claude" / "projects" / folder / f"{self.session_id}.jsonl"

    def write(self, *lines: dict[str, Any]) -> None:
        self.far.write_lines(self.path, list(lines))

    def say(self, status: str) -> None:
        entry = registry(
            self.process.pid,
            self.session_id,
            status=status,
            waiting_for="permission prompt" if status == "waiting" else None,
            cwd=self.project,
            started_at=self.started,
            updated_at=time.time(),
        )
        path = self.far.home / ".claude" / "sessions" / f"{self.process.pid}.json"
        self.far.write_bytes(path, orjson.dumps(entry))

    def ask(self, command: str) -> None:
        """It asks to run ``command`` (a Bash call with no result, the registry waiting)."""
        self.write(self.transcript.prompt(f"please {command}"), self.transcript.bash(command))
        self.say("waiting")

    def approved(self) -> None:
        """The call was allowed: its result, and the registry busy."""
        self.say("busy")
        self.write(self.transcript.tool_result())

    def end(self) -> None:
        self.process.kill()
        self.process.wait(5)


def far_user(cache: Path) -> FarUser:
    """This checkout's far user: a login shell (sshd runs commands through it), a HOME under
    ``cache`` and a password field of ``*`` (no password, but not locked: without PAM, sshd
    refuses a locked account even to a key)."""
    name = f"agentbar-rig-{checkout_hash()}"
    home = cache / "home"
    user = ensure_user(name, "--home-dir", str(home), "--shell", "/bin/sh", "--password", "*")
    entry = pwd.getpwnam(name)
    if entry.pw_dir != str(home) or entry.pw_shell != "/bin/sh":
        subprocess.run(
            ["usermod", "--home", str(home), "--shell", "/bin/sh", "--password", "*", name],
            check=True,
            capture_output=True,
        )
    return FarUser(user, home)


# -- the server ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5) as s:
        s.settimeout(2)
        return s.recv(64).startswith(b"SSH-")
    return False


@dataclass
class SshRig:
    """One test's server and far HOME. ``command`` is what a remote's ``command`` is."""

    folder: Path
    keys: Keys
    far: FarUser
    install: FarInstall
    port: int = field(default_factory=free_port)
    sshd: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        return self.folder / "ssh_config"

    @property
    def log(self) -> Path:
        return self.folder / "sshd.log"

    @property
    def command(self) -> list[str]:
        return ["ssh", "-F", str(self.config), ALIAS]

    @property
    def keyless_command(self) -> list[str]:
        """A host entry with no key under ``BatchMode``: where a person would be asked for a
        password."""
        return ["ssh", "-F", str(self.config), f"{ALIAS}-nokey"]

    @property
    def agentbar(self) -> str:
        return str(self.install.agentbar)

    def write_configs(self) -> None:
        (self.folder / "sshd_config").write_text(
            SSHD_CONFIG.format(
                port=self.port,
                host_key=self.keys.host_key,
                pid_file=self.folder / "sshd.pid",
                user=self.far.name,
            )
        )
        self.config.write_text(
            CLIENT_CONFIG.format(
                alias=ALIAS,
                port=self.port,
                user=self.far.name,
                key=self.keys.client_key,
                known_hosts=self.keys.known_hosts,
            )
        )
        self.config.chmod(0o600)

    def start(self) -> None:
        """sshd in the foreground (``-D``), logging to a file (``-e``), answering when done."""
        assert self.sshd is None or self.sshd.poll() is not None, "sshd is running"
        # sshd's privilege separation folder (made by the system service, which is not run).
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        config = self.folder / "sshd_config"
        checked = subprocess.run(
            [SSHD, "-t", "-f", str(config)], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stderr
        with open(self.log, "ab") as log:
            self.sshd = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )

        def up() -> bool:
            assert self.sshd is not None
            if self.sshd.poll() is not None:
                raise AssertionError(f"sshd stopped: {self.log.read_text()[-2000:]}")
            return answers(self.port)

        wait_for(up, 10, "sshd to answer", 0.05)

    def stop(self) -> None:
        """The host goes down: the listener and every connection it serves end at once."""
        if self.sshd is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.sshd.pid, signal.SIGKILL)
        self.sshd.wait(10)
        for proc in self.serving_processes():
            with contextlib.suppress(psutil.Error):
                proc.kill()
        self.sshd = None

    def serving_processes(self) -> list[psutil.Process]:
        """The sshd processes of this rig's connections (each in a session of its own: the
        listener's process group does not hold them), the far user's unprivileged one too."""
        found = []
        for proc in psutil.process_iter(["exe"]):
            with contextlib.suppress(psutil.Error):
                if proc.info["exe"] == SSHD and (
                    any(str(self.folder) in part for part in proc.cmdline())
                    or any(c.laddr and c.laddr.port == self.port for c in proc.net_connections())
                ):
                    found.append(proc)
        return found

    def wire_bytes(self) -> tuple[int, int]:
        """Bytes on the wire of this rig's connections so far, encrypted, as the kernel counts
        them at the server's end: (sent to the near side, received from it)."""
        said = subprocess.run(
            ["ss", "-tinH", "state", "established", f"( sport = :{self.port} )"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        sent = sum(int(n) for n in re.findall(r"\bbytes_sent:(\d+)", said))
        received = sum(int(n) for n in re.findall(r"\bbytes_received:(\d+)", said))
        return sent, received

    def with_fake_agents(self) -> str:
        """The far agentbar as a program whose ``claude`` is the launch tests' scripted CLI
        (tests/fake_agent.py and the lines it writes, copied into the far HOME, run by the far
        venv's Python): a script of the far user's that sets ``AGENTBAR_CLAUDE``, as a
        person's own environment there would, then runs agentbar."""
        folder = self.far.home / "fake-agents"
        for name in FAKE_AGENT_FILES:
            self.far.write_bytes(folder / name, (REPO / "tests" / name).read_bytes())
        claude = f"{self.install.python} {folder / 'fake_agent.py'} --agent claude"
        script = folder / "agentbar"
        self.far.write_bytes(
            script,
            f'#!/bin/sh\nAGENTBAR_CLAUDE="{claude}"\nexport AGENTBAR_CLAUDE\n'
            f'exec {self.agentbar} "$@"\n'.encode(),
        )
        script.chmod(0o755)
        return str(script)

    def ssh(self, *words: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """``ssh rig WORDS`` as a person would type it (the far shell reads the words)."""
        return subprocess.run(
            [*self.command, *words], capture_output=True, text=True, timeout=timeout, check=False
        )

    def channel_like(self) -> list[str]:
        """A command that reaches the far user the way ``docker exec -i`` or ``wsl.exe -d``
        reach a container or a distribution: straight to the program, standard streams as the
        channel, the far user's own HOME, and no network at all."""
        return [
            runuser(),
            "-u",
            self.far.name,
            "--",
            "env",
            "-i",
            f"HOME={self.far.home}",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "LANG=C.UTF-8",
        ]


@dataclass(frozen=True)
class RigMachine:
    """What stays for the whole test run: the far user, its agentbar, the keys."""

    far: FarUser
    install: FarInstall
    keys: Keys


def rig_unavailable() -> str | None:
    """Why this machine cannot run the rig (None: it can)."""
    reason = why_not("usermod")
    if reason is not None:
        return reason
    for tool in (SSHD, shutil.which("ssh"), shutil.which("ssh-keygen")):
        if tool is None or not Path(tool).exists():
            return "OpenSSH is not installed (scripts/test installs openssh-server)"
    return None


def prepare_machine(keys_folder: Path) -> RigMachine:
    """The far user, its agentbar (built when the code changed) and a fresh key pair."""
    cache = CACHE_ROOT / f"agentbar-rig-{checkout_hash()}"
    install = far_install(cache)
    return RigMachine(far_user(cache), install, make_keys(keys_folder))


@contextlib.contextmanager
def rig_running(machine: RigMachine, folder: Path) -> Iterator[SshRig]:
    """A running sshd in ``folder`` (made here), and a fresh far HOME; all stopped after."""
    folder.mkdir(mode=0o700)
    machine.far.reset_home(machine.keys)
    rig = SshRig(folder, machine.keys, machine.far, machine.install)
    rig.write_configs()
    rig.start()
    try:
        yield rig
    finally:
        rig.stop()
        machine.far.kill_all()


@pytest.fixture(scope="session")
def rig_machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RigMachine]:
    reason = rig_unavailable()
    if reason is not None:
        pytest.skip(reason)
    machine = prepare_machine(tmp_path_factory.mktemp("rig-keys") / "keys")
    try:
        yield machine
    finally:
        machine.far.kill_all()


@pytest.fixture
def ssh_rig(rig_machine: RigMachine, tmp_path: Path) -> Iterator[SshRig]:
    """A running sshd for this test, and a fresh far HOME."""
    with rig_running(rig_machine, tmp_path / "rig") as rig:
        yield rig
