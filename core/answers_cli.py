"""``agentbar approve``, ``deny`` and ``reply``: answer what a session waits for, from the shell,
through the running agentbar's decisions API (main thread; standard library HTTP).

A session is named by its id, a unique start of it, or the id of a task agentbar launched. The
command lists ``GET /api/decisions``, picks the open request of that session (several: it names
them and asks for ``--request``; none: the session is not waiting, exit 1) and answers it with
``POST /api/decisions/ID`` (origin "cli"). The answer names that request's own id, so a request
answered in the terminal meanwhile is refused as stale (exit 1), never landing on a later one.
A launched task whose approval prompt is on its screen but not in the book yet is answered with
its keys, as before (``/api/tasks/ID/approve|deny``); one whose answer ends in a question gets
the reply typed into its input, as a person would (``/api/tasks/ID/input``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, TextIO

import orjson

from .config import Settings
from .launch.client import ApiError, Client, NoServer

COMMANDS = ("approve", "deny", "reply")
START_HINT = "start it with `agentbar` (the tray) or `agentbar serve`"
KIND_OF = {"approve": ("approval",), "deny": ("approval", "question"), "reply": ("question",)}
SUMMARY_CHARS = 100


class NotWaiting(Exception):
    """The session is not waiting for this kind of answer, or cannot be told which request."""


def add_parsers(commands: Any) -> None:
    helps = {
        "approve": "allow what a session waits for approval of",
        "deny": "refuse what a session waits for approval of (or decline its question)",
        "reply": "answer a session's question",
    }
    for name in COMMANDS:
        parser = commands.add_parser(name, help=helps[name])
        parser.add_argument(
            "session", metavar="SESSION", help="a session id, a unique start of one, or a task id"
        )
        if name == "reply":
            what = "the answer (one TEXT per question when it asks several)"
            parser.add_argument("text", nargs="+", metavar="TEXT", help=what)
        if name == "deny":
            parser.add_argument("--message", metavar="TEXT", help="tell the agent why")
        parser.add_argument("--request", metavar="ID", help="which request, when it has several")
        parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    try:
        client = Client.find(settings)
    except NoServer as exc:
        print(f"agentbar: {exc}: {START_HINT}", file=sys.stderr)
        return 3
    try:
        return _answer(client, args, out)
    except NotWaiting as exc:
        print(f"agentbar: {exc}", file=sys.stderr)
        return 1
    except ApiError as exc:  # a stale request (answered in the terminal meanwhile) is a 409
        print(f"agentbar: {exc}", file=sys.stderr)
        return 1 if exc.status < 500 else 2
    except (OSError, TimeoutError) as exc:
        print(f"agentbar: cannot reach the running agentbar: {exc}", file=sys.stderr)
        return 2


@dataclass(frozen=True, slots=True)
class Answer:
    verdict: str
    message: str | None = None
    replies: tuple[str, ...] = ()


def _answer(client: Client, args: argparse.Namespace, out: TextIO) -> int:
    requests = client.request("GET", "/api/decisions")["requests"]
    kinds = KIND_OF[args.command]
    try:
        request = pick(requests, args.session, kinds, args.request)
    except NotWaiting:
        task = _task(client, args.session)
        if task is None:
            _check_known(client, args.session, requests)
            raise
        if task.get("session_id") and any(r["session_id"] == task["session_id"] for r in requests):
            request = pick(requests, task["session_id"], kinds, args.request)
        elif args.request is None and _on_screen(task, args.command):
            return _answer_task(client, task, args, out)
        else:
            raise
    answer = answer_for(args, request)
    body: dict[str, Any] = {"verdict": answer.verdict, "origin": "cli"}
    if answer.message:
        body["message"] = answer.message
    if answer.replies:
        body["replies"] = list(answer.replies)
    reply = client.request("POST", f"/api/decisions/{request['request_id']}", body)
    if args.json:
        doc = {"request": reply["request"], "verdict": reply["verdict"], **_said(answer)}
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    out.write(line(reply["request"], answer) + "\n")
    return 0


def pick(
    requests: list[dict[str, Any]], wanted: str, kinds: tuple[str, ...], request_id: str | None
) -> dict[str, Any]:
    """The one open request of the session (or task) ``wanted`` names, of one of ``kinds``;
    ``NotWaiting`` when there is none or it is ambiguous."""
    exact = [r for r in requests if wanted in (r["session_id"], r.get("task_id"))]
    found = exact or [
        r
        for r in requests
        if wanted
        and (r["session_id"].startswith(wanted) or (r.get("task_id") or "").startswith(wanted))
    ]
    sessions = sorted({r["session_id"] for r in found})
    if len(sessions) > 1:
        names = ", ".join(s[:12] for s in sessions[:5])
        raise NotWaiting(
            f"{wanted!r} names {len(sessions)} waiting sessions ({names}): give more of it"
        )
    of_kind = [r for r in found if r["kind"] in kinds]
    if request_id is not None:
        of_kind = [r for r in of_kind if r["request_id"].startswith(request_id)]
        if len(of_kind) != 1:
            raise NotWaiting(f"session {wanted!r} has no single open request {request_id!r}")
    if not of_kind:
        what = " or ".join(f"an {k}" if k[0] in "aeiou" else f"a {k}" for k in kinds)
        raise NotWaiting(f"session {wanted!r} is not waiting for {what} in agentbar")
    if len(of_kind) > 1:
        listed = "; ".join(f"{r['request_id']} {describe(r)}" for r in of_kind)
        raise NotWaiting(
            f"session {wanted!r} has {len(of_kind)} open requests ({listed}): "
            "name one with --request ID"
        )
    return of_kind[0]


def answer_for(args: argparse.Namespace, request: dict[str, Any]) -> Answer:
    """The answer the command gives ``request``."""
    if args.command == "approve":
        return Answer("allow")
    if args.command == "deny":
        return Answer("deny", message=args.message)
    asked = max(1, len(request.get("questions") or []))
    texts = tuple(args.text)
    if asked == 1:
        return Answer("reply", replies=(" ".join(texts),))
    if len(texts) != asked:
        raise NotWaiting(
            f"the request asks {asked} questions: give {asked} answers, one TEXT each (quoted)"
        )
    return Answer("reply", replies=texts)


def describe(request: dict[str, Any]) -> str:
    """``claude 71000000: Bash npm test`` (a question: its first question)."""
    questions = request.get("questions") or []
    what = questions[0]["text"] if request["kind"] == "question" and questions else None
    what = what or f"{request['tool']} {request['summary']}".strip()
    if len(what) > SUMMARY_CHARS:
        what = what[: SUMMARY_CHARS - 1] + "…"
    return f"{request['agent']} {request['session_id'][:8]}: {what}"


def line(request: dict[str, Any], answer: Answer) -> str:
    """What was answered, in one line."""
    if answer.verdict == "allow":
        return f"approved {describe(request)}"
    if answer.verdict == "deny":
        said = f" (told: {answer.message})" if answer.message else ""
        return f"denied {describe(request)}{said}"
    return f"replied to {describe(request)}: {' | '.join(answer.replies)}"


def _said(answer: Answer) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if answer.message:
        doc["message"] = answer.message
    if answer.replies:
        doc["replies"] = list(answer.replies)
    return doc


# -- launched tasks whose prompt is on their screen but not in the book ------------------------


def _task(client: Client, wanted: str) -> dict[str, Any] | None:
    """The launched task ``wanted`` names (its id, its session's id, or a unique start of its
    id), when this agentbar launches agents."""
    if not client.tasks:
        return None
    tasks = client.request("GET", "/api/tasks")["tasks"]
    named = [t for t in tasks if wanted in (t["task_id"], t.get("session_id"))]
    named = named or [t for t in tasks if wanted and t["task_id"].startswith(wanted)]
    return named[0] if len(named) == 1 else None


def _on_screen(task: dict[str, Any], command: str) -> bool:
    """Whether a launched task shows what ``command`` answers on its screen without it being
    in the book: an approval prompt (approve, deny), or a question asked in its answer (reply:
    typed into its input like a person would)."""
    if command != "reply":
        return bool(task.get("waiting"))
    session = task.get("session") or {}
    asked = (session.get("state"), session.get("waiting_for")) == ("input_required", "question")
    return task.get("status") == "running" and asked and not task.get("waiting")


def _answer_task(
    client: Client, task: dict[str, Any], args: argparse.Namespace, out: TextIO
) -> int:
    task_id = str(task["task_id"])
    if args.command == "reply":
        text = " ".join(args.text)
        client.request("POST", f"/api/tasks/{task_id}/input", {"text": text, "enter": True})
        if args.json:
            out.write(orjson.dumps({"task_id": task_id, "typed": text}).decode() + "\n")
        else:
            out.write(f"replied to task {task_id} (typed into it): {text}\n")
        return 0
    reply = client.request("POST", f"/api/tasks/{task_id}/{args.command}", {})
    answer = reply["answer"]
    if args.json:
        out.write(orjson.dumps({"task_id": task_id, "answer": answer}).decode() + "\n")
        return 0
    verb = "approved" if args.command == "approve" else "denied"
    note = "" if answer["cleared"] else " (the prompt is still on its screen)"
    out.write(f"{verb} task {task_id}: {answer['question']}{note}\n")
    return 0


def _check_known(client: Client, wanted: str, requests: list[dict[str, Any]]) -> None:
    """``NotWaiting`` saying so when ``wanted`` names no session and no task at all."""
    sessions = client.request("GET", "/api/sessions?all=1")["sessions"]
    ids = [str(s["session_id"]) for s in sessions] + [str(r["session_id"]) for r in requests]
    if client.tasks:
        ids += [str(t["task_id"]) for t in client.request("GET", "/api/tasks")["tasks"]]
    if not any(i == wanted or (wanted and i.startswith(wanted)) for i in ids):
        raise NotWaiting(f"no session or task {wanted!r}")
