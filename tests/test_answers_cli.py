"""``agentbar approve``, ``deny`` and ``reply`` as a person runs them: the real CLI entry point
in a child process, against a real loopback server (found through ``server.json``) whose
decision book holds the requests."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from cli_runner import agentbar
from replay_rig import Home, make_home
from server_rig import Running, serving

from agentbar.core.decisions import (
    BookChange,
    DecisionBook,
    PendingRequest,
    Question,
    RequestKind,
    Route,
    new_request_id,
)
from agentbar.core.server.runner import write_server_file

SESSION = "71000000-aaaa-4bbb-8ccc-000000000001"
OTHER = "72000000-aaaa-4bbb-8ccc-000000000002"


def request(
    session: str = SESSION, *, kind: RequestKind = RequestKind.APPROVAL, **extra: object
) -> PendingRequest:
    fields: dict[str, object] = {
        "request_id": new_request_id(), "agent": "claude", "session_id": session, "kind": kind,
        "route": Route.HOOK, "tool": "Bash", "summary": "npm test", "opened_at": time.time(),
    }  # fmt: skip
    fields.update(extra)
    return PendingRequest(**fields)  # type: ignore[arg-type]


class Shell:
    def __init__(self, home: Home, running: Running, book: DecisionBook) -> None:
        self.home, self.running, self.book = home, running, book
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
        self.env.update(HOME=str(home.home), AGENTBAR_DATA_DIR=str(home.settings.data_dir))
        self.changes: list[BookChange] = []
        book.subscribe(self.changes.append)

    def run(self, *args: str) -> tuple[int, str, str]:
        done = agentbar(self.env, *args)
        return done.returncode, done.stdout, done.stderr


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    home = make_home(tmp_path)
    book = DecisionBook()
    with serving(home, decisions=book) as running:
        home.settings.data_dir.mkdir(parents=True, exist_ok=True)
        write_server_file(home.settings.server_path, running.server.info())
        yield Shell(home, running, book)


def test_approve_answers_the_session_s_request_with_origin_cli(shell: Shell) -> None:
    waiting = request()
    shell.book.open(waiting)
    shell.book.open(request(OTHER, summary="make deploy"))
    code, out, err = shell.run("approve", SESSION[:6])
    assert (code, err) == (0, "")
    assert out == "approved claude 71000000: Bash npm test\n"
    decision = shell.book.wait(waiting.request_id, 0)
    assert decision is not None and (decision.verdict, decision.origin) == ("allow", "cli")
    assert [r.session_id for r in shell.book.pending()] == [OTHER]  # the other one untouched


def test_deny_carries_the_message_and_json_says_what_was_answered(shell: Shell) -> None:
    waiting = request()
    shell.book.open(waiting)
    code, out, _ = shell.run("deny", SESSION, "--message", "use the staging db", "--json")
    assert code == 0
    doc = orjson.loads(out)
    assert doc["verdict"] == "deny" and doc["message"] == "use the staging db"
    assert doc["request"]["request_id"] == waiting.request_id
    decision = shell.book.wait(waiting.request_id, 0)
    assert decision is not None and decision.message == "use the staging db"


def test_reply_answers_a_question_one_text_per_question(shell: Shell) -> None:
    one = request(kind=RequestKind.QUESTION, tool="AskUserQuestion", summary="",
                  questions=(Question("Which style?", options=("Tabs", "Spaces")),))  # fmt: skip
    shell.book.open(one)
    code, out, _ = shell.run("reply", SESSION, "Tabs,", "please")
    assert code == 0 and out == "replied to claude 71000000: Which style?: Tabs, please\n"
    decision = shell.book.wait(one.request_id, 0)
    assert decision is not None and decision.replies == ("Tabs, please",)
    two = request(kind=RequestKind.QUESTION, tool="AskUserQuestion", summary="",
                  questions=(Question("Style?"), Question("Width?")))  # fmt: skip
    shell.book.open(two)
    code, _, err = shell.run("reply", SESSION, "tabs")
    assert code == 1 and "asks 2 questions: give 2 answers" in err
    assert shell.book.get(two.request_id) is not None  # nothing was sent
    assert shell.run("reply", SESSION, "tabs", "4")[0] == 0
    decision = shell.book.wait(two.request_id, 0)
    assert decision is not None and decision.replies == ("tabs", "4")


def test_approve_does_not_answer_a_question_nor_reply_an_approval(shell: Shell) -> None:
    shell.book.open(request(kind=RequestKind.QUESTION, tool="AskUserQuestion", summary="",
                            questions=(Question("Which?"),)))  # fmt: skip
    code, out, err = shell.run("approve", SESSION)
    assert (code, out) == (1, "")
    assert err == f"agentbar: session {SESSION!r} is not waiting for an approval in agentbar\n"
    assert len(shell.book.pending()) == 1


def test_several_open_requests_are_named_and_one_is_chosen_with_request(shell: Shell) -> None:
    first, second = request(), request(summary="make deploy")
    shell.book.open(first)
    shell.book.open(second)
    code, _, err = shell.run("approve", SESSION)
    assert code == 1
    assert "has 2 open requests" in err and first.request_id in err and second.request_id in err
    assert "--request ID" in err and len(err.splitlines()) == 1
    assert len(shell.book.pending()) == 2
    code, out, _ = shell.run("approve", SESSION, "--request", second.request_id[:6])
    assert code == 0 and "make deploy" in out
    assert [r.request_id for r in shell.book.pending()] == [first.request_id]


def test_a_prefix_naming_two_waiting_sessions_is_refused(shell: Shell) -> None:
    shell.book.open(request())
    shell.book.open(request(OTHER))
    code, _, err = shell.run("approve", "7")
    assert code == 1 and "names 2 waiting sessions" in err
    assert len(shell.book.pending()) == 2


def test_a_session_that_is_not_waiting_or_does_not_exist_is_one_clear_line(shell: Shell) -> None:
    known = shell.running.engine.sessions()[0].key.session_id
    code, out, err = shell.run("approve", known)
    assert (code, out) == (1, "")
    assert err == f"agentbar: session {known!r} is not waiting for an approval in agentbar\n"
    code, _, err = shell.run("deny", "zzzz-nothing")
    assert code == 1 and err == "agentbar: no session or task 'zzzz-nothing'\n"


class AnsweredMeanwhile(DecisionBook):
    """A real book where the person answers in the terminal right after the CLI listed the
    requests (the holder withdraws it): the race the request's own id guards against."""

    def pending(self) -> tuple[PendingRequest, ...]:
        listed = super().pending()
        for waiting in listed:
            self.withdraw(waiting.request_id, "answered in the terminal")
        return listed


def test_a_request_answered_in_the_terminal_meanwhile_is_stale(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    book = AnsweredMeanwhile()
    with serving(home, decisions=book) as running:
        write_server_file(home.settings.server_path, running.server.info())
        shell = Shell(home, running, book)
        waiting = request()
        book.open(waiting)
        code, out, err = shell.run("approve", SESSION)
        assert (code, out) == (1, "")
        assert err.startswith(f"agentbar: request {waiting.request_id} is no longer waiting")
        assert "nothing was sent" in err
        closed = [c for c in shell.changes if not c.opened]
        assert [(c.reason, c.decision) for c in closed] == [("answered in the terminal", None)]


def test_no_agentbar_running_says_so_and_how_to_start_it(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "AGENTBAR_DATA_DIR": str(tmp_path / "data")}
    done = agentbar(env, "approve", SESSION)
    assert done.returncode == 3
    assert done.stderr == (
        "agentbar: no agentbar is running: start it with `agentbar` (the tray) or "
        "`agentbar serve`\n"
    )
