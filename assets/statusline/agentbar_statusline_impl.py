"""The work of agentbar's status-line link (standard library only; runs in Claude's process
tree on every status-line refresh, so it must be cheap and must never fail the status line).

1. Read stdin whole.
2. Record it as it came (the JSON Claude hands its status line: the 5-hour and 7-day
   ``rate_limits``, the session's ``cost``...) when it is at most ``MAX_RECORD`` bytes and
   looks like a JSON object: a temporary file renamed over the last (atomic), 0600 in a 0700
   folder; the file's time is when it was seen. agentbar's engine parses it, so this program
   imports no ``json`` (its start-up is what every refresh pays).
3. Become ``/bin/sh -c <--then>`` (``exec``) with the same bytes on stdin: its stdout, stderr
   and exit status are the person's command's own. Without ``--then``: print a short line.
"""

from __future__ import annotations

import os
import sys

RECORD_NAME = "claude-status-line.json"
MAX_RECORD = 64 * 1024  # a payload is ~1-2 KiB; a larger one is not recorded
SHELL = "/bin/sh"
PIPE_BYTES = 60 * 1024  # under Linux's 64 KiB pipe buffer: written whole before the exec


def run(argv: list[str]) -> int:
    data_dir, then = _parse_args(argv[1:])
    raw = _read_stdin()
    if data_dir and 0 < len(raw) <= MAX_RECORD and raw.lstrip()[:1] == b"{":
        # The status line comes first. (Not contextlib.suppress: importing it costs ~2 ms.)
        try:  # noqa: SIM105
            _record(data_dir, raw)
        except Exception:
            pass
    if then is not None:
        return _run_then(then, raw)
    sys.stdout.write(_default_line(raw) + "\n")
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


def _record(data_dir: str, raw: bytes) -> None:
    folder = os.path.join(data_dir, "limits")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = os.path.join(folder, f".{RECORD_NAME}.{os.getpid()}.tmp")
    # Never through a link planted at the temporary name (Windows has no O_NOFOLLOW).
    no_follow = getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | no_follow, 0o600)
    try:
        os.write(fd, raw)
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


def _default_line(raw: bytes) -> str:
    """``Opus | 5h 24% used | 7d 41% used | $0.42`` (only when there is no command to run)."""
    import json  # noqa: PLC0415 - this path alone reads the payload

    try:
        payload = json.loads(raw.decode("utf-8", "replace")) if len(raw) <= MAX_RECORD else None
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
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
