"""Installs anywhere with nothing to compile: the README's run command, ``pip install .`` and
``pipx install .`` with wheels alone (``PIP_ONLY_BINARY=:all:``) in fresh environments here, and
for the platforms this machine cannot run, every dependency resolved to a wheel and mypy clean.

A local project directory is not a "binary" nor a source distribution from an index: pip
builds it with the build backend (setuptools, itself a wheel) whatever ``--only-binary`` says,
so ``PIP_ONLY_BINARY=:all:`` proves that nothing agentbar depends on is compiled.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import wheels
from cli_runner import agentbar
from packaging.requirements import Requirement
from polling import wait_for

from agentbar.core.config import Settings
from agentbar.core.launch.client import Client, NoServer
from agentbar.tray import notify

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
NOT_SHIPPED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "out", "corpus"
)
INSTALL_SECONDS = 900


def installed_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("agentbar")


def test_version_says_the_installed_version(tmp_path: Path) -> None:
    result = agentbar({**os.environ, "HOME": str(tmp_path)}, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"agentbar {installed_version()}\n"


# -- fresh environments, wheels only ---------------------------------------------------------


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project as a person gets it, so builds never write into this checkout."""
    copy = tmp_path_factory.mktemp("source") / "agentbar"
    shutil.copytree(REPO, copy, ignore=NOT_SHIPPED, symlinks=True)
    return copy


def clean_env(home: Path) -> dict[str, str]:
    """A person's shell on a machine without a desktop: a HOME of its own, no display, no bus,
    nothing of the test's own venv, and pip allowed wheels alone."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    active_venv = os.environ.get("VIRTUAL_ENV")
    if active_venv:
        parts = env.get("PATH", "").split(os.pathsep)
        env["PATH"] = os.pathsep.join(p for p in parts if p != str(Path(active_venv) / "bin"))
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        PIP_ONLY_BINARY=":all:",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def run(
    argv: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def readme_command(marker: str) -> str:
    """The fenced line right after ``<!-- marker -->`` in the README (as .ci/run reads it)."""
    text = (REPO / "README.md").read_text()
    found = re.search(rf"<!-- {marker} -->\s*```[^\n]*\n([^\n]+)\n```", text)
    assert found is not None, f"no {marker} in README.md"
    return found.group(1)


def check_installed(agentbar_bin: Path, env: dict[str, str]) -> None:
    """``agentbar --version`` and ``agentbar status`` of a fresh install, in a fresh HOME."""
    version = run([str(agentbar_bin), "--version"], env)
    assert version.returncode == 0, version.stderr
    assert version.stdout == f"agentbar {installed_version()}\n"
    status = run([str(agentbar_bin), "status"], env)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "Traceback" not in status.stderr
    assert status.stdout == "No agent sessions found.\n"


def test_the_readme_test_command_is_the_one_script() -> None:
    """``.ci/run`` runs what the README says; the README says ``scripts/test``, which installs
    what the suite needs itself (``.ci/run`` no longer does)."""
    assert readme_command("test-command") == "scripts/test"
    script = REPO / "scripts" / "test"
    assert os.access(script, os.X_OK)
    assert run(["bash", "-n", str(script)], dict(os.environ)).returncode == 0
    assert "apt-get" not in (REPO / ".ci" / "run").read_text()


@pytest.mark.slow
def test_the_readme_run_command_installs_with_wheels_only_and_runs_headless(
    source: Path, tmp_path: Path
) -> None:
    command = readme_command("run-command")
    env = clean_env(tmp_path / "home")
    tray = subprocess.Popen(
        ["bash", "-c", command],
        cwd=source,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        # Where it keeps server.json under that HOME (platformdirs' default on Linux).
        data = Path(env["HOME"]) / ".local" / "share" / "agentbar"
        settings = Settings.from_env({**env, "AGENTBAR_DATA_DIR": str(data)})

        def answering() -> Client | None:
            if tray.poll() is not None:
                raise AssertionError(f"it stopped: {tray.communicate()}")
            try:
                return Client.find(settings, timeout=2)
            except NoServer:
                return None

        client = wait_for(answering, INSTALL_SECONDS, "the installed agentbar to serve", 0.5)
        assert client.request("GET", "/api/health")["ok"] is True
        venv_bin = source / ".venv" / "bin"
        quit_run = run([str(venv_bin / "agentbar"), "quit"], env)
        assert quit_run.returncode == 0, quit_run.stderr
        _out, err = tray.communicate(timeout=60)
    finally:
        if tray.poll() is None:
            os.killpg(tray.pid, signal.SIGKILL)
            tray.wait()
    assert tray.returncode == 0, err[-3000:]
    # After pip's own output, agentbar's: one line about the display, one about the missing
    # notification service (no session bus here), no traceback.
    said = [line for line in err.splitlines() if line.startswith("agentbar: ")]
    assert said[0] == f"agentbar: {notify.NO_BUS}; notifications start when one appears"
    assert said[1].startswith("agentbar: no display (DISPLAY and WAYLAND_DISPLAY are unset)")
    assert len(said) == 2, said
    assert "Traceback" not in err
    check_installed(venv_bin / "agentbar", env)


@pytest.mark.slow
def test_pipx_installs_it_with_wheels_only(source: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    tools = tmp_path / "tools"
    made = run([sys.executable, "-m", "venv", str(tools)], env)
    assert made.returncode == 0, made.stderr
    got_pipx = run([str(tools / "bin" / "pip"), "install", "-q", "pipx"], env, timeout=600)
    assert got_pipx.returncode == 0, got_pipx.stderr[-3000:]
    env |= {"PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    env |= {"PIPX_MAN_DIR": str(tmp_path / "man")}
    installed = run(
        [str(tools / "bin" / "pipx"), "install", str(source)], env, timeout=INSTALL_SECONDS
    )
    assert installed.returncode == 0, (installed.stdout + installed.stderr)[-3000:]
    check_installed(tmp_path / "bin" / "agentbar", env)


def interpreter(version: str) -> str | None:
    """A working ``python3.X`` here: on PATH, or one of pyenv's versions (its shims answer
    "command not found" for a version that is not selected)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = [shutil.which(f"python{version}"), *pyenv.glob(f"versions/{version}.*/bin/python3")]
    for candidate in filter(None, found):
        probe = run([str(candidate), "-c", "import sys; print(sys.version)"], dict(os.environ))
        if probe.returncode == 0 and probe.stdout.startswith(f"{version}."):
            return str(candidate)
    return None


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_a_fresh_venv_of_each_python_installs_it_with_wheels_only(
    version: str, source: Path, tmp_path: Path
) -> None:
    python = interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine (the wheel checks below cover it)")
    env = clean_env(tmp_path / "home")
    venv = tmp_path / "venv"
    made = run([python, "-m", "venv", str(venv)], env)
    assert made.returncode == 0, made.stderr
    installed = run(
        [str(venv / "bin" / "pip"), "install", "-q", str(source)], env, timeout=INSTALL_SECONDS
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    check_installed(venv / "bin" / "agentbar", env)


# -- the platforms this machine cannot run ----------------------------------------------------


def required(extras: tuple[str, ...] = ()) -> list[str]:
    return wheels.project_requirements(REPO / "pyproject.toml", extras)


def test_the_target_markers_pick_each_platforms_dependencies() -> None:
    by_name = {t.name: t for t in wheels.TARGETS}
    winpty = Requirement("pywinpty>=2.0; sys_platform == 'win32'")
    assert by_name["win_amd64-cp311"].applies(winpty)
    assert not by_name["linux_x86_64-cp311"].applies(winpty)
    quartz = Requirement('pyobjc-framework-Quartz>=7.0; sys_platform == "darwin"')
    assert by_name["macos_arm64-cp313"].applies(quartz)
    gtk = Requirement("PyGObject==3.50.0; extra == 'gtk'")
    assert not by_name["linux_x86_64-cp312"].applies(gtk)
    assert by_name["linux_x86_64-cp312"].applies(gtk, extras=("gtk",))
    old = Requirement("importlib_resources; python_version < '3.9'")
    assert not any(t.applies(old) for t in wheels.TARGETS)
    # glibc 2.28 machines take every older manylinux wheel too (pip would not say so).
    tags = wheels.manylinux("x86_64", 28, 5)
    assert tags[0] == "manylinux_2_28_x86_64"
    assert {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_5_x86_64"} <= set(tags)


def test_no_required_dependency_needs_a_compiler_or_headers() -> None:
    names = {Requirement(r).name.lower() for r in required()}
    assert not names & {"pygobject", "pycairo", "pywebview", "dbus-python"}


@pytest.mark.slow
@pytest.mark.parametrize("platform", wheels.PLATFORMS, ids=lambda p: p.name)
def test_every_dependency_is_a_wheel_for(platform: wheels.Platform) -> None:
    targets = [wheels.Target(platform, python) for python in wheels.PYTHONS]
    with ThreadPoolExecutor(len(targets)) as pool:
        resolutions = list(pool.map(lambda t: wheels.resolve(t, required()), targets))
    for resolution in resolutions:
        assert resolution.no_wheel == {}, resolution.target.name
        assert {"orjson", "watchdog", "desktop-notifier"} <= set(resolution.wheels)
        # The tray: pystray on macOS and Windows, D-Bus and X11 in pure Python on Linux.
        tray = {"pystray"} if platform.sys_platform != "linux" else {"dbus-fast", "python-xlib"}
        assert tray <= set(resolution.wheels), resolution.target.name
    if platform.sys_platform == "win32":
        assert "pywinpty" in resolutions[0].wheels
        assert "ptyprocess" not in resolutions[0].wheels


@pytest.mark.slow
@pytest.mark.parametrize("platform", wheels.PLATFORMS[:3], ids=lambda p: p.name)
def test_the_window_extra_needs_only_one_pure_python_source(platform: wheels.Platform) -> None:
    """The README's word: ``[window]`` builds proxy_tools from source (pure Python, no
    compiler); everything else it brings is a wheel."""
    resolution = wheels.resolve(wheels.Target(platform, "3.12"), required(("window",)))
    assert set(resolution.no_wheel) == {"proxy-tools"}
    assert "pywebview" in resolution.wheels


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_mypy_is_clean_on(platform: str, tmp_path: Path) -> None:
    result = run(
        [str(BIN / "mypy"), "--platform", platform, "--cache-dir", str(tmp_path / "mypy-cache")],
        dict(os.environ),
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-5000:]
