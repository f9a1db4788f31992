"""The work of agentbar's status-line link (standard library only; runs in Claude's process
tree on every status-line refresh, so it must be cheap and must never fail the status line).

1. Read stdin whole (at most ``MAX_STDIN`` bytes are recorded; all of it is passed on).
2. Record what agentbar shows (``rate_limits``, ``cost``, the session, the model, the version)
   with the time, atomically (a temporary file renamed over the last), 0600 in a 0700 folder.
3. Become ``/bin/sh -c <--then>`` (``exec``) with the same bytes on stdin: its stdout, stderr
   and exit status are the person's command's own. Without ``--then``: print a short line.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

SHELL = "/bin/sh"
PIPE_BYTES = 60 * 1024  # under Linux's 64 KiB pipe buffer: written whole before the exec
MAX_STDIN = 256 * 1024  # a payload is ~2 KiB; anything past this is not recorded
RECORD_NAME = "claude-status-line.json"
KEPT_KEYS = ("rate_limits", "cost", "session_id", "version", "model")
MAX_VALUE_CHARS = 4096  # each kept value, serialised


def run(argv: list[str]) -> int:
    data_dir, then = _parse_args(argv[1:])
    raw = _read_stdin()
    payload = _loads(raw)
    if data_dir:
        with contextlib.suppress(Exception):  # the status line comes first
            _record(data_dir, payload)
    if then is not None:
        return _run_then(then, raw)
    sys.stdout.write(_default_line(payload) + "\n")
    sys.stdout.flush()
    return 0


def _parse_args(args: list[str]) -> tuple[str | None, str | None]:
    data_dir = os.environ.get("AGENTBAR_DATA_DIR") or None
    then = None
    i = 0
    while i < len(args):
        if args[i] == "--data-dir" and i + 1 < len(args):
            data_dir = args[i + 1]
            i += 2
        elif args[i] == "--then" and i + 1 < len(args):
            then = args[i + 1]
            i += 2
        else:
            i += 1
    return data_dir, then


def _read_stdin() -> bytes:
    try:
        return sys.stdin.buffer.read()
    except (OSError, ValueError):
        return b""


def _loads(raw: bytes) -> dict[str, object] | None:
    if not raw or len(raw) > MAX_STDIN:
        return None
    try:
        value = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _record(data_dir: str, payload: dict[str, object] | None) -> None:
    if payload is None:
        return
    kept: dict[str, object] = {}
    for key in KEPT_KEYS:
        value = payload.get(key)
        if value is not None and len(json.dumps(value)) <= MAX_VALUE_CHARS:
            kept[key] = value
    if not kept:
        return
    folder = os.path.join(data_dir, "limits")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    line = json.dumps({"recorded_at": time.time(), "payload": kept}, separators=(",", ":"))
    tmp = os.path.join(folder, f".{RECORD_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
    try:
        os.replace(tmp, os.path.join(folder, RECORD_NAME))
    except OSError:
        os.unlink(tmp)
        raise


def _run_then(command: str, raw: bytes) -> int:
    """Become the person's command (``exec``): its output, colours and exit status are then
    theirs, unchanged, and no Python waits behind it. The payload it reads is put back on
    stdin through a pipe, written whole first (it fits in the pipe's buffer); a larger one is
    fed by a child process instead."""
    sys.stdout.flush()
    if len(raw) <= PIPE_BYTES:
        try:
            read_end, write_end = os.pipe()
            os.write(write_end, raw)
            os.close(write_end)
            os.dup2(read_end, 0)
            os.close(read_end)
            os.execv(SHELL, [SHELL, "-c", command])
        except OSError as exc:
            sys.stdout.write(f"agentbar: cannot run the status-line command: {exc.strerror}\n")
            return 0
    import subprocess  # noqa: PLC0415 - only for a payload too large for a pipe

    try:
        return subprocess.run([SHELL, "-c", command], input=raw, check=False).returncode
    except OSError as exc:
        sys.stdout.write(f"agentbar: cannot run the status-line command: {exc.strerror}\n")
        return 0


def _default_line(payload: dict[str, object] | None) -> str:
    if payload is None:
        return "agentbar"
    parts = []
    model = payload.get("model")
    if isinstance(model, dict) and isinstance(model.get("display_name"), str):
        parts.append(str(model["display_name"])[:40])
    limits = payload.get("rate_limits")
    for key, name in (("five_hour", "5h"), ("seven_day", "7d")):
        window = limits.get(key) if isinstance(limits, dict) else None
        used = window.get("used_percentage") if isinstance(window, dict) else None
        if isinstance(used, (int, float)) and not isinstance(used, bool) and 0 <= used < 1e6:
            parts.append(f"{name} {min(used, 100):.0f}% used")
    cost = payload.get("cost")
    usd = cost.get("total_cost_usd") if isinstance(cost, dict) else None
    if isinstance(usd, (int, float)) and not isinstance(usd, bool) and 0 <= usd < 1e9:
        parts.append(f"${usd:.2f}")
    return " | ".join(parts) or "agentbar"
