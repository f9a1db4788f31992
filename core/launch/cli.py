"""``agentbar launch``, ``tasks``, ``send``, ``stop``, ``resume``, ``fork``, ``handoff`` and
``quit``: launched agents from the shell, through the running agentbar's API (main thread;
``client.py`` finds or starts that agentbar). ``approve``, ``deny`` and ``reply``, for any
session, are ``answers_cli.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO
from urllib.parse import quote, urlencode

import orjson

from ..config import Settings
from ..model import LOCAL_HOST
from ..text import natural_widths, short_path, table
from .client import ApiError, Client, NoServer, connect

COMMANDS = ("launch", "tasks", "send", "stop", "resume", "fork", "handoff", "quit")
BIND_WAIT_SECONDS = 10.0
STOP_TIMEOUT = 70.0  # a stop answers once the task is gone (a remote one: the server waits 60 s)


def add_parsers(commands: Any, agents: Sequence[str]) -> None:
    """The launch commands; ``agents``: the names ``launch`` and ``--to-agent`` take (the kits
    with a launch profile)."""
    launch = commands.add_parser("launch", help="start an agent in a terminal agentbar owns")
    launch.add_argument("agent", choices=list(agents))
    launch.add_argument("--project", metavar="DIR", help="the folder to run it in (default: here)")
    launch.add_argument("--prompt", metavar="TEXT", help="the first prompt")
    _output_args(launch)
    tasks = commands.add_parser("tasks", help="the agents agentbar launched")
    tasks.add_argument("--json", action="store_true", help="machine-readable output")
    tasks.add_argument(
        "--host",
        metavar="NAME",
        help="the agents launched on this remote host (its agentbar there lists them)",
    )
    send = commands.add_parser("send", help="type into a launched agent")
    send.add_argument("task_id", metavar="TASK_ID", help="the task (or a unique start of its id)")
    send.add_argument("--text", help="text to type and send ('-': read it from standard input)")
    send.add_argument(
        "--key",
        action="append",
        default=[],
        metavar="NAME",
        help="press a key (enter, escape, tab, up, ctrl-c, y, ...); repeatable",
    )
    send.add_argument("--no-enter", action="store_true", help="type the text without Enter")
    stop = commands.add_parser("stop", help="stop a launched agent (its own exit, then signals)")
    stop.add_argument("task_id", metavar="TASK_ID")
    stop.add_argument("--force", action="store_true", help="signals at once, no exit keys")
    stop.add_argument(
        "--host",
        metavar="NAME",
        help="the remote host the task was launched on (its agentbar there stops it)",
    )
    for name, what in (("resume", "resume"), ("fork", "fork")):
        again = commands.add_parser(name, help=f"{what} a session in a new terminal")
        again.add_argument("session_id", metavar="SESSION_ID", help="the id or a unique prefix")
        again.add_argument("--prompt", metavar="TEXT", help="a prompt to send with it")
        _host_arg(again, f"{what} it there")
        _output_args(again)
    handoff = commands.add_parser(
        "handoff", help="send a session's last answer or a brief of it to another agent"
    )
    handoff.add_argument("session_id", metavar="SESSION_ID", help="the id or a unique prefix")
    handoff.add_argument("--what", choices=["brief", "answer"], default="brief")
    _host_arg(handoff, "read it there")
    target = handoff.add_mutually_exclusive_group(required=True)
    target.add_argument("--to-task", metavar="TASK_ID", help="type it into this running task")
    target.add_argument("--to-agent", choices=list(agents), help="a new agent, same folder")
    target.add_argument("--print", action="store_true", help="only print it")
    _output_args(handoff)
    quit_cmd = commands.add_parser("quit", help="stop the running agentbar")
    choice = quit_cmd.add_mutually_exclusive_group()
    choice.add_argument("--keep", action="store_true",
                        help="its launched agents run on without it (the default)")  # fmt: skip
    choice.add_argument("--stop", action="store_true", help="stop its launched agents too")


def _host_arg(parser: argparse.ArgumentParser, there: str) -> None:
    parser.add_argument(
        "--host",
        metavar="NAME",
        help=f"the remote host the session is on ({there}); needed only when this machine "
        "has a session with that id too",
    )


def _output_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the task as JSON")
    parser.add_argument("--no-start", action="store_true",
                        help="fail instead of starting agentbar serve when none runs")  # fmt: skip


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    try:
        return _run(args, settings, out)
    except NoServer as exc:
        print(f"agentbar: {exc}", file=sys.stderr)
        return 3
    except ApiError as exc:
        print(f"agentbar: {exc}", file=sys.stderr)
        return 1 if exc.status < 500 else 2
    except (OSError, TimeoutError) as exc:
        print(f"agentbar: cannot reach the running agentbar: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    command = args.command
    starts = command in ("launch", "resume", "fork", "handoff") and not args.no_start
    client = connect(settings, start=starts)
    if command == "launch":
        project = os.path.abspath(args.project or os.getcwd())
        body = {"agent": args.agent, "project": project, "prompt": args.prompt}
        task = client.request("POST", "/api/tasks", body)["task"]
        return _show_launched(client, task, args.json, out)
    if command == "tasks":
        return _list(client, args.json, args.host, out)
    if command == "send":
        return _send(client, args, out)
    if command == "stop":
        return _stop(client, args, out)
    if command in ("resume", "fork"):
        path, host = _session_path(client, args.session_id, args.host)
        body = {"prompt": args.prompt}
        task = client.request("POST", f"{path}/{command}{host}", body)["task"]
        return _show_launched(client, task, args.json, out)
    if command == "handoff":
        return _handoff(client, args, out)
    if command == "quit":
        choice = "stop" if args.stop else "keep"
        reply = client.request("POST", "/api/quit", {"tasks": choice})
        running = reply.get("running", 0)
        kept = f"; its {running} running agent(s) {'stopped' if choice == 'stop' else 'kept'}"
        out.write(f"agentbar (pid {client.pid}) is quitting{kept if running else ''}\n")
        return 0
    raise SystemExit(f"unknown command {command!r}")


# -- launching -----------------------------------------------------------------------------


def _show_launched(client: Client, task: dict[str, Any], as_json: bool, out: TextIO) -> int:
    """Wait (briefly) for the task to learn its session, then say what was started."""
    if task.get("host", LOCAL_HOST) != LOCAL_HOST:
        return _show_launched_there(task, as_json, out)
    deadline = time.monotonic() + BIND_WAIT_SECONDS
    while task.get("session_id") is None and task["status"] == "running":
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
        task = client.request("GET", f"/api/tasks/{task['task_id']}")["task"]
    if as_json:
        out.write(orjson.dumps({"task": task}, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0 if task["status"] == "running" else 1
    out.write(
        f"task {task['task_id']}: {task['agent']} in {short_path(task['project'])} "
        f"(pid {task['pid']}), {_binding_text(task)}\n"
    )
    if task["status"] != "running":
        out.write(f"  it has already exited ({_exit_text(task)})\n")
        return 1
    out.write(
        f"  agentbar send {task['task_id']} --text '...'  ·  agentbar window "
        f"{task.get('session_id') or ''}".rstrip()
        + "\n"
    )
    return 0


def _show_launched_there(task: dict[str, Any], as_json: bool, out: TextIO) -> int:
    """A task started on a remote host (its manager is over there: nothing to wait for)."""
    if as_json:
        out.write(orjson.dumps({"task": task}, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    session = task.get("session_id")
    out.write(
        f"task {task['task_id']} on {task['host']}: {task['agent']} in {task['project']} "
        f"(pid {task['pid']} there), "
        + (f"session {session}" if session else "its session is not known yet")
        + "\n"
    )
    if session:
        out.write(f"  agentbar window {session}\n")
    return 0


def _binding_text(task: dict[str, Any]) -> str:
    binding = task.get("binding")
    if binding is None:
        return "session not known yet"
    seconds = binding["confirmed_seconds"] or binding["seconds"]
    return f"session {binding['session_id']} ({binding['path']}, {seconds:.2f} s)"


def _exit_text(task: dict[str, Any]) -> str:
    exit_status = task.get("exit")
    if not exit_status:
        return "running" if task["status"] == "running" else task["status"]
    if exit_status["code"] is not None:
        return f"exit status {exit_status['code']}"
    if exit_status["signal"] is not None:
        return f"signal {exit_status['signal']}"
    return "exited"


# -- listing -------------------------------------------------------------------------------


def _list(client: Client, as_json: bool, host: str | None, out: TextIO) -> int:
    """This machine's tasks, or a remote host's (``host``: its own agentbar there lists them;
    a host down is refused at once, exit 2)."""
    there = host not in (None, LOCAL_HOST)
    query = "?" + urlencode({"host": host}) if there else ""
    tasks = client.request("GET", f"/api/tasks{query}")["tasks"]
    if as_json:
        out.write(orjson.dumps({"tasks": tasks}, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    width = shutil.get_terminal_size((120, 24)).columns
    out.write(render_tasks(tasks, width=width, host=host if there else None))
    return 0


def render_tasks(tasks: list[dict[str, Any]], *, width: int, host: str | None = None) -> str:
    if not tasks:
        return f"No launched agents{f' on {host}' if host else ''}.\n"
    header = ("TASK", "AGENT", "STATUS", "STATE", "PROJECT", "SESSION", "PROMPT")
    rows = []
    for task in tasks:
        session = task.get("session") or {}
        state = session.get("state") or ""
        if task.get("waiting"):
            state = "input_required (approval)"
        elif session.get("waiting_for"):
            state = f"{state} ({session['waiting_for']})"
        status = task["status"] if task["status"] == "running" else _exit_text(task)
        rows.append(
            (
                task["task_id"],
                task["agent"],
                status,
                state,
                short_path(task["project"]),
                (task.get("session_id") or "")[:8],
                task.get("prompt") or "",
            )
        )
    widths = natural_widths(header, rows)
    budget = max(width - sum(widths[:6]) - 2 * 6, 10)
    widths[6] = min(widths[6], budget)
    return table(header, rows, widths)


# -- typing --------------------------------------------------------------------------------


def _send(client: Client, args: argparse.Namespace, out: TextIO) -> int:
    task_id = _task_id(client, args.task_id)
    text = args.text
    if text == "-":
        text = sys.stdin.read()
    if text is None and not args.key:
        print("agentbar: give --text TEXT or --key NAME", file=sys.stderr)
        return 2
    body: dict[str, Any] = {"text": text or "", "enter": not args.no_enter}
    if args.key:
        body["keys"] = args.key
        if text:
            # Text first (with Enter unless --no-enter), then the keys.
            client.request("POST", f"/api/tasks/{task_id}/input", {**body, "keys": None})
            body = {"keys": args.key, "enter": False}
    client.request("POST", f"/api/tasks/{task_id}/input", body)
    out.write(f"sent to task {task_id}\n")
    return 0


def _stop(client: Client, args: argparse.Namespace, out: TextIO) -> int:
    """Stop a task of this machine, or of a remote host (``--host``: its own agentbar there
    finds the task by its id or a unique start of it, and stops it)."""
    if args.host in (None, LOCAL_HOST):
        task_id, query = _task_id(client, args.task_id), ""
    else:
        task_id, query = args.task_id, "?" + urlencode({"host": args.host})
    task = client.request(
        "POST",
        f"/api/tasks/{quote(task_id)}/stop{query}",
        {"graceful": not args.force},
        timeout=STOP_TIMEOUT,
    )["task"]
    there = "" if args.host in (None, LOCAL_HOST) else f" on {args.host}"
    out.write(f"task {task['task_id']}{there}: {task['status']} ({_exit_text(task)})\n")
    return 0


def _task_id(client: Client, wanted: str) -> str:
    """The full id of the task ``wanted`` names (or starts)."""
    tasks = client.request("GET", "/api/tasks")["tasks"]
    return _unique(wanted, [t["task_id"] for t in tasks], "task")


def _session_path(client: Client, wanted: str, host: str | None) -> tuple[str, str]:
    """The API path of the session ``wanted`` names (or starts), and the query naming its
    host (``?host=NAME``; empty for this machine's): a remote host's is resumed, forked or
    read there."""
    sessions = client.request("GET", "/api/sessions?all=1")["sessions"]
    if host is not None:
        sessions = [s for s in sessions if s.get("host", LOCAL_HOST) == host]
    session_id = _unique(wanted, [s["session_id"] for s in sessions], "session")
    hosts = {s.get("host", LOCAL_HOST) for s in sessions if s["session_id"] == session_id}
    there = host or (hosts.pop() if len(hosts) == 1 else LOCAL_HOST)
    query = "" if there == LOCAL_HOST else "?" + urlencode({"host": there})
    return f"/api/sessions/{quote(session_id)}", query


def _unique(wanted: str, ids: list[str], what: str) -> str:
    if wanted in ids:
        return wanted
    found = sorted({i for i in ids if wanted and i.startswith(wanted)})
    if len(found) == 1:
        return found[0]
    if not found:
        raise ApiError(404, "not_found", f"no {what} {wanted!r}")
    raise ApiError(400, "ambiguous", f"{wanted!r} names {len(found)} {what}s: give more of it")


# -- hand-off ------------------------------------------------------------------------------


def _handoff(client: Client, args: argparse.Namespace, out: TextIO) -> int:
    path, host = _session_path(client, args.session_id, args.host)
    if args.print:
        what = f"{host}&" if host else "?"
        reply = client.request("GET", f"{path}/handoff{what}what={args.what}")
        out.write(reply["text"].rstrip("\n") + "\n")
        return 0
    target = {"task": _task_id(client, args.to_task)} if args.to_task else {"agent": args.to_agent}
    reply = client.request("POST", f"{path}/handoff{host}", {"what": args.what, "to": target})
    task = reply["task"]
    if args.to_task:
        out.write(f"sent the {args.what} ({reply['chars']} characters) to task {task['task_id']}\n")
        return 0
    return _show_launched(client, task, args.json, out)
