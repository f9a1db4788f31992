"""agentbar's hook program (the work behind ``agentbar_hook.py``; see that file for how the
agents run it).

Reads one hook event (stdin, or Codex ``notify``'s last argument) and appends ONE normalised
line to ``<data dir>/events/<agent>/<session id>.jsonl`` with a single ``write`` on an
``O_APPEND`` descriptor, the line kept well under 4 KiB so concurrent invocations never
interleave. It must never harm the agent: it prints nothing the agent would act on (only the
no-op answer an agent may require for an event, such as Codex's ``{}`` for ``Stop``, which
means "carry on"), swallows every error, and does nothing when the data dir is missing or
unwritable (it never creates the data dir itself; ``events/<agent>/`` inside it, yes).

It names no agent: whatever differs between them comes on the command line each agent's kit
installs (``HookCaller`` in ``core/hooks/spec.py``): ``--agent NAME`` (any name safe as a folder
name), ``--pid-env VAR`` (the variable carrying the agent's pid), ``--session-env VAR`` (one
carrying the session id when the payload has none; repeatable), ``--reply EVENT=TEXT`` (what
to print for that event; repeatable) and ``--translate FILE`` (a standard-library-only module
in the agent's own package whose ``translate(event, payload)`` gives the event under the names
the state machine reads, for an agent whose hooks name things their own way).

Deciding (``--hold EVENT``, repeatable; ``--hold-seconds N``): for such an event, once its line
is written, it hands the payload to the running agentbar and waits, at most N seconds, for the
person's answer, then prints exactly what agentbar answered (the agent's own decision format,
made by the agent's kit) or nothing. It reads ``<data dir>/server.json`` (this user's file,
readable by them alone) for the port and token, connects to 127.0.0.1 and POSTs ``{agent,
event, pid, payload}`` to ``/api/hook/requests``; agentbar holds the response until the person
answers, or until the request is withdrawn (the person answered in the terminal; an empty
answer). A task agentbar launched itself (``AGENTBAR_TASK_ID`` set) holds nothing: its prompts
are answered on its own screen (the terminal route). No ``server.json``, a refused or reset
connection (agentbar not running, or killed while we wait), an answer that is not a whole
``200``, a timeout: nothing is printed, so the agent asks in its terminal as it always did.
Without ``server.json`` this costs one failed ``open``.

Standard library only, and only its cheapest parts, because the agent waits for every run:
``_json`` rather than ``json`` (which imports ``re`` and doubled the start-up time), the
built-in ``posix`` module rather than ``os`` on POSIX systems, no ``pathlib``.
"""

import _json  # the C half of ``json``: parses the same, without importing ``re``
import sys
import time

if sys.platform == "win32":
    import os as _os

    SEP = "\\"

    def _env(name: str) -> str | None:
        return _os.environ.get(name)

else:
    import posix as _os  # built in and already loaded: ``os`` would cost an import

    SEP = "/"

    def _env(name: str) -> str | None:
        value = _os.environ.get(name.encode())
        return None if value is None else value.decode("utf-8", "surrogateescape")


VERSION = 1
AGENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
AGENT_NAME_MAX = 32
# Names Windows keeps for devices in every folder: no folder may be called that.
DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(10)]
)
REQUIRED = ("v", "ts", "agent", "event", "session_id", "pid")
LINE_CAP = 3800  # bytes, newline included: one write of a line this size is never torn
SESSION_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
HOLD_SECONDS = 600  # how long a held event waits for the person, unless told otherwise
HOLD_SECONDS_MAX = 86400
CONNECT_SECONDS = 1.0  # loopback: a live server accepts at once, a dead port refuses at once
SERVER_FILE_MAX = 4096
HOLD_PATH = "/api/hook/requests"
TASK_ENV = "AGENTBAR_TASK_ID"  # set in the agents agentbar launches (core/launch/commands.py)
SEND_MAX = 60 * 1024  # the server takes bodies up to 64 KiB: longer strings are cut to fit
CUT_STRINGS_AT = (4096, 512, 64)  # tried in turn until the payload fits
NEST_MAX = 32
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"})
# Field caps in characters; the line cap then squeezes the biggest ones if it must.
CAPS = {
    "cwd": 1024,
    "transcript_path": 1024,
    "tool_summary": 300,
    "message": 500,
    "last_assistant_message": 1000,
    "error": 300,
    "reason": 200,
}
# Fields shortened, then dropped, in this order when a line is still over the cap.
SQUEEZE = ("last_assistant_message", "message", "tool_summary", "error", "reason",
           "transcript_path", "cwd")  # fmt: skip


def main(argv: list[str]) -> None:
    now = time.time()
    args = _parse_args(argv)
    if args is None:
        return
    notify = args.notify
    raw = (argv[-1] if len(argv) > 1 else "") if notify else _read_stdin()
    payload = _loads(raw)
    if not isinstance(payload, dict):
        payload = {}
    event = _text(payload.get("type") if notify else payload.get("hook_event_name"))
    if notify and not event:
        event = "agent-turn-complete"
    reply = None if notify else args.replies.get(event)
    if reply is not None:
        # An agent that parses a hook's stdout as its contract (Codex on Stop) gets its no-op
        # answer, whatever happens next. Nothing else is ever printed.
        _print(reply + "\n")
    if not event:
        return
    if args.translate:
        event, payload = _translated(args.translate, event, payload)
    session_id = _session_id(payload, notify, args.session_envs)
    if session_id is None:
        return
    record = _record(now, args, event, session_id, p=payload)
    try:  # noqa: SIM105 - contextlib would cost an import on every event
        _append(args.data_dir, args.agent, session_id, _line(record))
    except Exception:
        pass  # a full disk loses the line, not the question to the person
    if event in args.holds and not notify:
        answer = _held_answer(args, event, raw, record["pid"])
        if answer:
            _print(answer)


# -- input ----------------------------------------------------------------------------------


class _Args:
    """The command line: who runs us and what differs for that agent."""

    __slots__ = ("agent", "data_dir", "hold_seconds", "holds", "notify", "pid_env", "replies",
                 "session_envs", "translate")  # fmt: skip

    def __init__(self) -> None:
        self.agent = ""
        self.holds: list[str] = []
        self.hold_seconds = HOLD_SECONDS
        self.data_dir = ""
        self.notify = False
        self.pid_env = ""
        self.session_envs: list[str] = []
        self.replies: dict[str, str] = {}
        self.translate = ""


def _parse_args(argv: list[str]) -> _Args | None:
    args = _Args()
    data_dir = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else None
        if arg == "--notify":
            args.notify, i = True, i + 1
        elif args.notify:
            break  # the notify payload (and anything Codex adds before it)
        elif value is None:
            i += 1
        elif arg == "--agent":
            args.agent, i = value, i + 2
        elif arg == "--data-dir":
            data_dir, i = value, i + 2
        elif arg == "--pid-env":
            args.pid_env, i = value, i + 2
        elif arg == "--session-env":
            args.session_envs.append(value)
            i += 2
        elif arg == "--translate":
            args.translate, i = value, i + 2
        elif arg in ("--hold", "--hold-seconds"):
            _hold_option(args, arg, value)
            i += 2
        elif arg == "--reply":
            event, equals, text = value.partition("=")
            if event and equals:
                args.replies[event] = text
            i += 2
        else:
            i += 1
    if not is_agent_name(args.agent):
        return None
    data_dir = data_dir or _env("AGENTBAR_DATA_DIR") or _default_data_dir()
    if not data_dir:
        return None
    args.data_dir = data_dir
    return args


def _hold_option(args: _Args, arg: str, value: str) -> None:
    if arg == "--hold":
        args.holds.append(value)
    elif value.isdigit() and 0 < int(value) <= HOLD_SECONDS_MAX:
        args.hold_seconds = int(value)


def is_agent_name(name: object) -> bool:
    """Safe as the name of the folder its events go to, on every system: lower-case letters,
    digits, ``_`` and ``-``, a letter first, at most 32, no device name. Every kit's agent
    passes (``HookCaller`` checks it with this)."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= AGENT_NAME_MAX
        and "a" <= name[0] <= "z"
        and all(c in AGENT_CHARS for c in name)
        and name not in DEVICE_NAMES
    )


def _default_data_dir() -> str | None:
    """platformdirs' user data dir for "agentbar", computed without platformdirs."""
    if sys.platform == "win32":
        base = _env("LOCALAPPDATA")
        return base + SEP + "agentbar" if base else None
    else:
        home = _env("HOME")
        if not home:
            return None
        if sys.platform == "darwin":
            return home + "/Library/Application Support/agentbar"
        else:
            base = (_env("XDG_DATA_HOME") or "").strip() or home + "/.local/share"
            return base + "/agentbar"


def _read_stdin() -> bytes:
    stdin = sys.stdin
    if stdin is None:
        return b""
    # Read it all, however large: an agent writing to a pipe nobody drains would block.
    return stdin.buffer.read()


class _Context:
    """What ``_json.make_scanner`` reads off ``json.JSONDecoder``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.lower().replace("infinity", "inf"))


def _loads(raw: bytes | str) -> object:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    start = len(text) - len(text.lstrip())
    if start == len(text):
        return None
    try:
        value, end = _json.make_scanner(_Context())(text, start)  # type: ignore[arg-type]
    except Exception:
        return None
    if text[end:].strip():
        return None  # trailing garbage: not one JSON document
    return value


def _session_id(payload: dict[str, object], notify: bool, names: list[str]) -> str | None:
    """The payload's session id, then the agent's own variables for it (``--session-env``, in
    order); never anything of agentbar's own (a task id would name the wrong session)."""
    candidates = (
        payload.get("thread-id") if notify else None,
        payload.get("session_id"),
        *(_env(name) for name in names),
    )
    for value in candidates:
        if isinstance(value, str) and value:
            return value if _safe_name(value) else None
    return None


def _safe_name(value: str) -> bool:
    """Usable as a file name as it is: no separators, no dot-dot, nothing odd."""
    return (
        0 < len(value) <= 128 and value[0] not in ".-" and all(c in SESSION_ID_CHARS for c in value)
    )


def _translated(path: str, event: str, payload: dict[str, object]) -> tuple[str, dict[str, object]]:
    """The event as the agent's translator gives it; as it came when the translator is missing,
    fails or answers something else (an agent's own name changes no state: nothing lost)."""
    cut = max(path.rfind("/"), path.rfind("\\") if sys.platform == "win32" else -1)
    folder, name = path[: max(cut, 0)], path[cut + 1 :]
    if cut < 0 or not name.endswith(".py"):
        return event, payload
    sys.path.insert(0, folder)
    try:
        new_event, new_payload = __import__(name[:-3]).translate(event, payload)
    except Exception:
        return event, payload
    finally:
        sys.path.remove(folder)
    if isinstance(new_event, str) and new_event and isinstance(new_payload, dict):
        return new_event, new_payload
    return event, payload


# -- the record -----------------------------------------------------------------------------


def _record(
    now: float, args: _Args, event: str, session_id: str, *, p: dict[str, object]
) -> dict[str, object]:
    notify = args.notify
    tool_input = p.get("tool_input")
    tool_name = _text(p.get("tool_name"))
    last = p.get("last-assistant-message") if notify else p.get("last_assistant_message")
    record: dict[str, object] = {
        "v": VERSION,
        "ts": round(now, 3),
        "agent": args.agent,
        "event": event[:64],
        "session_id": session_id,
        "transcript_path": _text(p.get("transcript_path")),
        "cwd": _text(p.get("cwd")),
        "tool_name": tool_name[:128],
        "tool_summary": _summary(tool_name, tool_input),
        "notification_type": _text(p.get("notification_type"))[:64],
        "message": _one_line(_text(p.get("message")) or _text(p.get("title"))),
        "source": _text(p.get("source"))[:64],
        "reason": _text(p.get("reason")),
        "last_assistant_message": _text(last),
        "turn_id": _text(p.get("turn-id") if notify else p.get("turn_id"))[:128],
        "permission_mode": _text(p.get("permission_mode"))[:64],
        "agent_id": _text(p.get("agent_id"))[:128],
        "pid": _agent_pid(args.pid_env),
        "error": _error(p),
    }
    for key, cap in CAPS.items():
        value = record[key]
        if isinstance(value, str) and len(value) > cap:
            record[key] = _cut(value, cap)
    # Empty fields are left out: a line per tool call adds up.
    return {k: v for k, v in record.items() if v != "" or k in REQUIRED}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _one_line(text: str) -> str:
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if line:
            return line
    return ""


def _error(p: dict[str, object]) -> str:
    error = p.get("error")
    if isinstance(error, dict):
        error = error.get("message") or error.get("type")
    text = _one_line(_text(error))
    details = _one_line(_text(p.get("error_details")))
    return f"{text}: {details}" if text and details else text or details


def _summary(tool: str, tool_input: object) -> str:
    """One line a person can read: the command, the file, the question."""
    if isinstance(tool_input, str):
        return _cut(_one_line(tool_input), CAPS["tool_summary"])
    if not isinstance(tool_input, dict):
        return ""
    command = tool_input.get("command") or tool_input.get("cmd")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if isinstance(command, str) and command:
        if "*** Begin Patch" in command:  # Codex's apply_patch carries the whole patch
            return _patch_files(command)
        return _one_line(command)
    questions = tool_input.get("questions")
    if isinstance(questions, list) and questions and isinstance(questions[0], dict):
        return _one_line(_text(questions[0].get("question")))
    for key in ("file_path", "notebook_path", "path", "url", "query", "pattern", "question",
                "plan", "description", "prompt", "skill", "subject"):  # fmt: skip
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _one_line(value)
    for value in tool_input.values():
        if isinstance(value, str) and value.strip():
            return _one_line(value)
    return ""


def _patch_files(patch: str) -> str:
    files = []
    for line in patch.splitlines():
        for verb in ("Add", "Update", "Delete"):
            prefix = f"*** {verb} File: "
            if line.startswith(prefix):
                files.append(line[len(prefix) :].strip())
    return "apply_patch " + ", ".join(files) if files else "apply_patch"


def _agent_pid(pid_env: str) -> int | None:
    """The agent's process: named by its variable when it has one (``--pid-env``); otherwise
    our parent, or the parent of the shell the agent ran us through (Linux only: elsewhere we
    cannot look without spawning). None when we were orphaned (Codex's notify is
    fire-and-forget: its parent may be gone)."""
    named = _env(pid_env) if pid_env else None
    if named and named.isdigit():
        return int(named)
    pid = _os.getppid()
    if pid <= 1:
        return None
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read().decode("utf-8", "replace")
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            if name in SHELLS:
                return int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return pid


# -- deciding -------------------------------------------------------------------------------


def _held_answer(args: _Args, event: str, raw: bytes | str, pid: object) -> str:
    """What the running agentbar answers for this event ("" for no decision, whatever went
    wrong: no agentbar, no answer in time, a broken connection)."""
    if _env(TASK_ENV):
        return ""  # a task agentbar launched: its prompt is answered on its own screen
    server = _server_info(args.data_dir)
    if server is None:
        return ""
    port, token = server
    body = _hold_body(args.agent, event, raw, pid)
    if body is None:
        return ""
    import _socket  # noqa: PLC0415 - only when deciding: the C module, without ``socket``'s own imports

    deadline = time.monotonic() + args.hold_seconds
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        sock.connect(("127.0.0.1", port))
        host = f"127.0.0.1:{port}"
        head = (
            f"POST {HOLD_PATH} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n"
            f"X-Agentbar-Token: {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        sock.sendall(head.encode("ascii") + body)
        return _answer(_receive(sock, deadline))
    except Exception:  # refused, reset, timed out: no decision
        return ""
    finally:
        sock.close()


def _server_info(data_dir: str) -> tuple[int, str] | None:
    """The port and token of the agentbar serving this data dir, from its ``server.json`` (a
    regular file of this user's that nobody else can read); None otherwise."""
    path = data_dir.rstrip(SEP) + SEP + "server.json"
    flags = _os.O_RDONLY | getattr(_os, "O_NOFOLLOW", 0) | getattr(_os, "O_CLOEXEC", 0)
    try:
        fd = _os.open(path, flags)
    except (OSError, ValueError):
        return None  # agentbar is not running: the common case, one failed open
    try:
        st = _os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > SERVER_FILE_MAX:
            return None
        if sys.platform != "win32" and (st.st_uid != _os.getuid() or st.st_mode & 0o077):
            return None
        info = _loads(_os.read(fd, SERVER_FILE_MAX))
    except (OSError, ValueError):
        return None
    finally:
        _os.close(fd)
    if not isinstance(info, dict):
        return None
    port, token = info.get("port"), info.get("token")
    if not (isinstance(port, int) and 0 < port < 65536 and isinstance(token, str)):
        return None
    if not (0 < len(token) <= 256 and all(c.isalnum() or c in "-_" for c in token)):
        return None
    return port, token


def _hold_body(agent: str, event: str, raw: bytes | str, pid: object) -> bytes | None:
    """The request's JSON: the payload as the agent sent it when it fits, else with its long
    strings cut (a file's whole new content is not needed to ask about writing it)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    head = (
        '{"agent":' + _json.encode_basestring(agent) + ',"event":'
        + _json.encode_basestring(event) + ',"pid":'
        + (str(pid) if isinstance(pid, int) else "null") + ',"payload":'
    )  # fmt: skip
    body = (head + text.strip() + "}").encode("utf-8", "replace")
    if len(body) <= SEND_MAX:
        return body
    payload = _loads(text)
    for limit in CUT_STRINGS_AT:
        body = (head + _encode(payload, limit, 0) + "}").encode("utf-8", "replace")
        if len(body) <= SEND_MAX:
            return body
    return None


def _encode(value: object, limit: int, depth: int) -> str:
    """JSON for ``value`` with every string cut to ``limit`` characters."""
    if isinstance(value, str):
        return _json.encode_basestring(_cut(value, limit))
    if value is None or isinstance(value, bool):
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value * 0 == 0 else "null"  # NaN and infinities are no JSON
    if depth >= NEST_MAX:
        return "null"
    if isinstance(value, list):
        return "[" + ",".join(_encode(v, limit, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = (
            _json.encode_basestring(_cut(str(k), limit)) + ":" + _encode(v, limit, depth + 1)
            for k, v in value.items()
        )
        return "{" + ",".join(items) + "}"
    return "null"


def _receive(sock: object, deadline: float) -> bytes:
    """Everything the server sends until it closes (``Connection: close``), or b"" when the
    deadline passes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b""
        sock.settimeout(left)  # type: ignore[attr-defined]
        chunk = sock.recv(65536)  # type: ignore[attr-defined]
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _answer(response: bytes) -> str:
    """The body of a whole ``200`` (its ``Content-Length`` all there); "" for anything else."""
    head, sep, body = response.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not sep or not lines[0].startswith(b"HTTP/1.1 200 "):
        return ""
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    if length is None or length != len(body):
        return ""  # cut short, or a shape we never send: no decision
    return body.decode("utf-8", "replace")


# -- output ---------------------------------------------------------------------------------


def _line(record: dict[str, object]) -> bytes:
    line = _dumps(record)
    for key in SQUEEZE:
        if len(line) <= LINE_CAP:
            return line
        value = record.get(key)
        if isinstance(value, str) and len(value) > 120:
            record[key] = _cut(value, 120)
            line = _dumps(record)
        if len(line) > LINE_CAP:
            record[key] = ""
            line = _dumps(record)
    if len(line) <= LINE_CAP:
        return line
    return _dumps({k: record[k] for k in REQUIRED})


def _dumps(record: dict[str, object]) -> bytes:
    """Flat JSON of strings, numbers and None, one line (``_json`` escapes every control
    character, so no newline can end up inside)."""
    parts = []
    for key, value in record.items():
        if isinstance(value, str):
            text = _json.encode_basestring(value)
        elif isinstance(value, bool) or value is None:
            text = "true" if value is True else "false" if value is False else "null"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, float):
            text = repr(value)
        else:
            text = _json.encode_basestring(str(value))
        parts.append(f'"{key}":{text}')
    return ("{" + ",".join(parts) + "}\n").encode("utf-8", "replace")


def _append(data_dir: str, agent: str, session_id: str, line: bytes) -> None:
    if not _is_dir(data_dir):
        return  # agentbar is not installed here (any more): leave no trace
    folder = data_dir.rstrip(SEP) or SEP
    for part in ("events", agent):
        folder = folder + SEP + part
        try:  # noqa: SIM105 - contextlib would cost an import on every event
            _os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
    flags = _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT
    for extra in ("O_CLOEXEC", "O_NOFOLLOW", "O_BINARY"):
        flags |= getattr(_os, extra, 0)
    fd = _os.open(folder + SEP + session_id + ".jsonl", flags, 0o600)
    try:
        _os.write(fd, line)  # one write: appends never interleave
    finally:
        _os.close(fd)


def _is_dir(path: str) -> bool:
    try:
        mode = _os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return (mode & 0o170000) == 0o040000


def _print(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except Exception:
        pass


def run(argv: list[str]) -> None:
    """Run for one event and leave: exit status 0 whatever happened."""
    try:
        _os.umask(0o077)  # what it writes is the user's alone (this process's umask only)
        main(argv)
    except BaseException:  # nothing may reach the agent, not even Ctrl-C
        pass
    finally:
        try:  # noqa: SIM105
            sys.stdout.flush()
        except BaseException:
            pass
        _os._exit(0)  # no interpreter teardown: a few milliseconds the agent does not wait
