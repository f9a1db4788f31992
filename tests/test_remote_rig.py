"""The OpenSSH rig itself (tests/remote_rig.py): a key login to the far user on 127.0.0.1 alone,
its HOME and agentbar, a host going down and coming back, and the container-like command."""

from __future__ import annotations

import os
import socket
import subprocess

import psutil
from remote_rig import SSHD, SshRig


def test_a_key_login_reaches_the_far_user_and_its_home(ssh_rig: SshRig) -> None:
    said = ssh_rig.ssh("id -un; echo $HOME; pwd")
    assert said.returncode == 0, said.stderr
    home = str(ssh_rig.far.home)
    assert said.stdout.split() == [ssh_rig.far.name, home, home]
    # No terminal is asked for or allowed: the far user is never left logged in (utmp).
    who = subprocess.run(["who"], capture_output=True, text=True, check=False)
    assert ssh_rig.far.name not in who.stdout
    assert ssh_rig.ssh("tty").stdout.strip() == "not a tty"


def test_the_far_agentbar_runs_with_debians_python(ssh_rig: SshRig) -> None:
    said = ssh_rig.ssh(
        ssh_rig.agentbar, "--version", ";", str(ssh_rig.install.python), "-c", "'import sys'"
    )
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith("agentbar ")
    status = ssh_rig.ssh(ssh_rig.agentbar, "status")
    assert status.returncode == 0, status.stderr
    assert status.stdout == "No agent sessions found.\n"
    assert "Traceback" not in status.stderr
    # It ran as the far user, in the far HOME: its data dir is there.
    assert (ssh_rig.far.home / ".local" / "share" / "agentbar").is_dir()


def test_sshd_listens_on_loopback_alone_and_refuses_a_keyless_login(ssh_rig: SshRig) -> None:
    assert ssh_rig.sshd is not None
    listening = [
        c.laddr
        for c in psutil.Process(ssh_rig.sshd.pid).net_connections()
        if c.status == psutil.CONN_LISTEN
    ]
    assert listening == [("127.0.0.1", ssh_rig.port)]
    refused = subprocess.run(
        [*ssh_rig.keyless_command, "id"], capture_output=True, text=True, timeout=30, check=False
    )
    assert refused.returncode == 255
    assert "Permission denied" in refused.stderr


def test_a_host_that_goes_down_drops_its_connections_and_comes_back(ssh_rig: SshRig) -> None:
    held = subprocess.Popen(
        [*ssh_rig.command, "cat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert held.stdin is not None and held.stdout is not None
        held.stdin.write(b"ping\n")
        held.stdin.flush()
        assert held.stdout.readline() == b"ping\n"
        ssh_rig.stop()
        assert held.wait(15) == 255
    finally:
        if held.poll() is None:
            held.kill()
            held.wait()
    assert not any(
        p.info["exe"] == SSHD and ssh_rig.port in {c.laddr.port for c in p.net_connections()}
        for p in psutil.process_iter(["exe"])
    )
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", ssh_rig.port)) != 0
    down = ssh_rig.ssh("true")
    assert down.returncode == 255
    assert "Connection refused" in down.stderr
    ssh_rig.start()
    again = ssh_rig.ssh("id -un")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == ssh_rig.far.name


def test_the_container_like_command_reaches_the_far_user_over_its_streams(ssh_rig: SshRig) -> None:
    said = subprocess.run(
        [*ssh_rig.channel_like(), "sh", "-c", "id -un; echo $HOME; cat"],
        input="through stdin\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": os.environ["PATH"], "SECRET_OF_THE_NEAR_SIDE": "x"},
    )
    assert said.returncode == 0, said.stderr
    assert said.stdout.splitlines() == [ssh_rig.far.name, str(ssh_rig.far.home), "through stdin"]
    leaked = subprocess.run(
        [*ssh_rig.channel_like(), "env"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": os.environ["PATH"], "SECRET_OF_THE_NEAR_SIDE": "x"},
    )
    assert "SECRET_OF_THE_NEAR_SIDE" not in leaked.stdout
