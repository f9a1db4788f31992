"""The shell's way to the running agentbar: its loopback API, found through ``server.json``,
started in the background when none runs (the calling thread; standard library HTTP).

Launched agents live in the long-lived agentbar process (the tray, or ``agentbar serve``), so
``agentbar launch``, ``tasks``, ``send``... are requests to it. When no agentbar runs,
``agentbar launch`` (and resume, fork, hand-off) starts ``agentbar serve --on-exit keep``
detached from the terminal (a session of its own; its address only in ``server.json``, its
errors in ``serve.log`` in the data folder, both 0600) and launches through it; ``agentbar
quit`` ends it. Requests carry the token and the server's own ``Origin``, which the server
requires of anything that changes something.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..errors import ServerError
from ..logs import SERVE_LOG
from ..privacy import open_private, private_dir, user_umask
from ..server.codes import with_code

START_TIMEOUT = 30.0


class ApiError(ServerError):
    """The server answered with an error (``status``, ``code``; the message is its own)."""

    title = "agentbar refused"

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class NoServer(ServerError):
    """No agentbar runs (or the one in ``server.json`` does not answer)."""

    title = "agentbar is not running"


@dataclass(frozen=True, slots=True)
class Client:
    origin: str  # http://127.0.0.1:PORT
    token: str
    pid: int
    tasks: bool  # the server launches agents

    @classmethod
    def find(cls, settings: Settings, *, timeout: float = 5.0) -> Client:
        """The agentbar ``server.json`` names, if it answers (within ``timeout`` seconds) with
        that token; ``NoServer`` else."""
        try:
            info = json.loads(settings.server_path.read_text())
            client = cls(
                origin=f"http://127.0.0.1:{int(info['port'])}",
                token=str(info["token"]),
                pid=int(info["pid"]),
                tasks=bool(info.get("tasks", False)),
            )
        except (OSError, ValueError, KeyError, TypeError):
            raise NoServer("no agentbar is running") from None
        try:
            client.request("GET", "/api/health", timeout=timeout)
        except (ApiError, OSError):
            raise NoServer(f"the agentbar in {settings.server_path} does not answer") from None
        return client

    @property
    def port(self) -> int:
        return int(self.origin.rsplit(":", 1)[1])

    def open_url(self, path: str = "/", *, seconds: float | None = None) -> str:
        """An address that opens ``path`` in a browser or a window once: a one-time code
        asked of the server (``POST /api/codes``), never the token. ``ApiError``/``OSError``
        when the server cannot give one."""
        body = None if seconds is None else {"seconds": seconds}
        doc = self.request("POST", "/api/codes", body, timeout=10.0)
        code = doc["code"] if isinstance(doc, dict) else None
        if not isinstance(code, str):
            raise ApiError(502, "bad_reply", "the server gave no code")
        return with_code(self.origin, path, code)

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, timeout: float = 60.0
    ) -> Any:
        """The reply's JSON; ``ApiError`` for an error status."""
        return self.call(method, path, body, timeout=timeout)[1]

    def call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, timeout: float = 60.0
    ) -> tuple[int, Any]:
        """The reply's status and JSON; ``ApiError`` for an error status."""
        return api_call(self.origin, self.token, method, path, body, timeout=timeout)


def api_call(
    origin: str,
    token: str,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    timeout: float = 60.0,
) -> tuple[int, Any]:
    """One request to the agentbar server at ``origin`` (``http://127.0.0.1:PORT``), with its
    token and its own ``Origin`` (which it requires of anything that changes something): the
    reply's status and JSON; ``ApiError`` for an error status, ``OSError`` when it does not
    answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(origin + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Origin", origin)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with _opener().open(request, timeout=timeout) as response:
            return int(response.status), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            problem = json.loads(exc.read())["error"]
            code, message = str(problem["code"]), str(problem["message"])
        except (ValueError, KeyError, TypeError, OSError):
            code, message = "http", f"HTTP {exc.code}"
        raise ApiError(exc.code, code, message) from None


def _opener() -> urllib.request.OpenerDirector:
    """No proxies: the server is on the loopback address, whatever ``http_proxy`` says."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def connect(settings: Settings, *, start: bool) -> Client:
    """The running agentbar that launches agents; with ``start``, one started now if none
    runs. Raises ``NoServer`` with what to do."""
    try:
        client = Client.find(settings)
    except NoServer:
        if not start:
            raise NoServer(
                "no agentbar is running: start the tray (agentbar) or agentbar serve"
            ) from None
        client = start_server(settings)
    if not client.tasks:
        raise NoServer(
            f"the running agentbar (pid {client.pid}) does not launch agents (agentbar window"
            " runs its own server): start the tray (agentbar) or agentbar serve"
        )
    return client


def start_server(settings: Settings) -> Client:
    """``agentbar serve --on-exit keep`` in the background, detached from this terminal (it
    keeps running after this command, and so do the agents it launches). It says where it is
    in ``server.json`` alone; ``serve.log`` (0600, rotated) gets its errors, never its
    address."""
    private_dir(settings.data_dir)
    with contextlib.suppress(OSError):
        settings.server_path.unlink()  # a leftover of a server that is gone
    log_path = settings.data_dir / SERVE_LOG
    # Its standard error until its own log takes over (a failure before that is seen here).
    log = open_private(log_path, os.O_WRONLY | os.O_APPEND)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentbar.core.cli", "serve", "--on-exit", "keep", "--detached"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # no SIGHUP when this terminal closes
            close_fds=True,
            env={**os.environ, "AGENTBAR_DATA_DIR": str(settings.data_dir)},
            # It makes its own files private; the agents it launches get the user's umask.
            umask=user_umask(),
        )
    finally:
        os.close(log)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise NoServer(
                f"agentbar serve exited at start (status {proc.returncode}); see {log_path}"
            )
        with contextlib.suppress(NoServer):
            return Client.find(settings)
        time.sleep(0.1)
    raise NoServer(f"agentbar serve did not start in time; see {log_path}")
