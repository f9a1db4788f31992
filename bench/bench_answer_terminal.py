"""Measure how long an answer given in the decision book takes to clear the approval prompt on a
launched task's screen (the TERMINAL route), per agent.

Each sample is one approval prompt up on a task agentbar launched (a real PTY, with a
``DecisionBook`` handed to its ``TaskManager``): once its request is in the book and a person
would have read it (``READ_SECONDS``, which also keeps the dialog's key guard out of the
figure), the clock starts at ``DecisionBook.decide(ALLOW)`` and stops

- ``off screen``: when the dialog is no longer on the task's VT screen (the agent's profile
  reads it off the screen every 5 ms), what a person watching the terminal sees;
- ``cleared``: when the task reports the prompt gone (``TaskInfo.waiting`` is None, or the
  next command's dialog: a prompt stays off the screen ``task.PROMPT_GONE_SECONDS`` before it
  counts as gone, so a redraw is not taken for an answer), what the menu, the API and "Needs
  you" see.

Baseline, in the same run: ``tests/fake_agent.py`` as Claude (a scripted agent on a real PTY that
draws Claude's dialog and reacts to its key at once): what agentbar's own part costs. The real
CLIs (``--real``: Claude Code, Codex, Gemini CLI, opencode from the conformance cache) run
against the conformance suite's scripted model server, one session each asking for
``--runs`` commands in a row.

    python bench/bench_answer_terminal.py [--runs 20] [--real] [--json F]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchlib import REPO, distribution, machine, real_cli_home, table, write_json

sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "conformance")]

from launch_rig import launch_rig  # noqa: E402

from agentbar.core.config import Settings  # noqa: E402
from agentbar.core.decisions import (  # noqa: E402
    Decision,
    DecisionBook,
    PendingRequest,
    StaleRequest,
    Verdict,
)
from agentbar.core.launch.manager import TaskManager  # noqa: E402
from agentbar.core.launch.options import LaunchOptions  # noqa: E402
from agentbar.core.launch.prompts import Prompt  # noqa: E402
from agentbar.core.launch.request import LaunchRequest  # noqa: E402
from agentbar.core.launch.terminal_route import same_dialog  # noqa: E402
from agentbar.core.model import Agent  # noqa: E402

READ_SECONDS = 1.0
POLL_SECONDS = 0.005


def wait(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(POLL_SECONDS)
    raise TimeoutError(what)


def answer_once(
    manager: TaskManager, book: DecisionBook, task_id: str, seen: set[str]
) -> tuple[float, float] | None:
    """Wait for the next request of the task, answer it; (off screen, cleared) in ms. None:
    the request was withdrawn while it was being read (the dialog changed under it)."""

    def fresh() -> PendingRequest | None:
        return next((r for r in book.for_session(task_id) if r.request_id not in seen), None)

    request: PendingRequest = wait(fresh, 120, "the next request")
    seen.add(request.request_id)
    task = manager.task(task_id)
    profile = manager.profile(task.request.agent)
    shown = profile.find_prompt(task.screen_text().split("\n"))
    time.sleep(READ_SECONDS)
    started = time.monotonic()
    try:
        book.decide(Decision(request.request_id, Verdict.ALLOW, origin="bench"))
    except StaleRequest:
        return None
    assert shown is not None

    def gone(prompt: Prompt | None) -> bool:  # or the next one up already
        return prompt is None or not same_dialog(prompt, shown)

    wait(lambda: gone(profile.find_prompt(task.screen_text().split("\n"))), 15, "off screen")
    off = time.monotonic() - started
    wait(lambda: gone(manager.get(task_id).waiting), 15, "cleared")
    cleared = time.monotonic() - started
    return off * 1000, cleared * 1000


def measure_fake(runs: int) -> dict[str, Any]:
    offs, clears = [], []
    tmp = tempfile.TemporaryDirectory(prefix="bench-answer-")
    with tmp, launch_rig(Path(tmp.name), engine=False) as rig:
        book = DecisionBook()
        manager = rig.manager(engine=False, decisions=book)
        info = rig.launch(manager, Agent("claude"))
        rig.bound(manager, info.task_id)  # started, its input ready
        seen: set[str] = set()
        for index in range(runs):
            manager.send_text(info.task_id, f"run: touch fake-{index}.txt")
            answered = answer_once(manager, book, info.task_id, seen)
            assert answered is not None, "the fake agent's dialog never changes under a reader"
            offs.append(answered[0])
            clears.append(answered[1])
            wait(lambda: "Ran it" in manager.task(info.task_id).screen_text(), 10, "ran")
    return {"off_screen": distribution(offs), "cleared": distribution(clears)}


def real_plans(runs: int, url: str) -> dict[str, tuple[Agent, list[Any], dict[str, Any]]]:
    from codex_rig import VERSIONS as CODEX_VERSIONS
    from model_server import Reply, thinking

    codex = CODEX_VERSIONS[0]

    def commands(make: Callable[[str], Any], last: Any) -> list[Any]:
        return [make(f"touch made-{index}.txt") for index in range(runs)] + [last]

    return {
        "claude": (Agent("claude"), commands(
            lambda c: thinking(Reply.tool("Bash", {"command": c, "description": "make it"})),
            thinking(Reply.text("Done.")),
        ), {}),
        "codex": (Agent("codex"), commands(
            lambda c: codex.command(c, "make it"), Reply.text("Done.")
        ), {"bypass_hook_trust": True}),
        "gemini": (Agent("gemini"), commands(
            lambda c: thinking(Reply.tool("run_shell_command", {"command": c})),
            thinking(Reply.text("Done.")),
        ), {}),
        "opencode": (Agent("opencode"), commands(
            lambda c: thinking(Reply.tool("bash", {"command": c, "description": "Make it"})),
            Reply.text("Done."),
        ), {}),
    }  # fmt: skip


def measure_real(runs: int) -> dict[str, Any]:
    from claude_rig import VERSIONS as CLAUDE_VERSIONS
    from cli_install import ensure_installed
    from codex_rig import VERSIONS as CODEX_VERSIONS
    from gemini_rig import VERSIONS as GEMINI_VERSIONS
    from gemini_rig import gemini_env
    from gemini_rig import settings as gemini_settings
    from opencode_rig import VERSIONS as OPENCODE_VERSIONS
    from opencode_rig import opencode_env
    from opencode_rig import write_config as write_opencode

    versions = {"claude": CLAUDE_VERSIONS[0], "codex": CODEX_VERSIONS[0],
                "gemini": GEMINI_VERSIONS[0], "opencode": OPENCODE_VERSIONS[0]}  # fmt: skip
    results: dict[str, Any] = {}
    for name, version in versions.items():
        binary = ensure_installed(version.cli)
        with real_cli_home("bench-answer-real-") as rig:
            home, project, server, env = rig.home, rig.project, rig.server, rig.env
            gemini_env(env, server.url)
            (home / ".gemini").mkdir()
            (home / ".gemini" / "settings.json").write_text(json.dumps(gemini_settings()))
            env = opencode_env(env)
            write_opencode(home, server.url)
            agent, script, options = real_plans(runs, server.url)[name]
            server.script.add(*script)
            program = (str(binary), *(("-a", "on-request", "-s", "read-only")
                                      if name == "codex" else ()))  # fmt: skip
            book = DecisionBook()
            manager = TaskManager(
                Settings.from_env(env),
                options=LaunchOptions(programs={agent: program}, scrape_status=False, **options),
                env=env,
                decisions=book,
            )
            manager.start()
            offs, clears, withdrawn = [], [], []
            try:
                info = manager.launch(LaunchRequest(agent, str(project), prompt="make the files"))
                seen: set[str] = set()
                while len(offs) < runs and len(withdrawn) < runs:
                    answered = answer_once(manager, book, info.task_id, seen)
                    if answered is None:
                        withdrawn.append(manager.task(info.task_id).screen_text())
                        continue
                    offs.append(answered[0])
                    clears.append(answered[1])
            finally:
                manager.shutdown(keep=False)
            results[version.label] = {
                "off_screen": distribution(offs),
                "cleared": distribution(clears),
                "withdrawn_while_read": len(withdrawn),
                "withdrawn_screens": withdrawn[:3],
            }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=20, help="approvals per agent")
    parser.add_argument("--real", action="store_true", help="also the real CLIs (npm cache)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": machine(), "runs": args.runs,
                               "fake claude (baseline)": measure_fake(args.runs)}  # fmt: skip
    if args.real:
        results.update(measure_real(args.runs))
    results["machine_after"] = machine()
    rows = []
    for label, figures in results.items():
        if not isinstance(figures, dict) or "cleared" not in figures:
            continue
        for what in ("off_screen", "cleared"):
            d = figures[what]
            rows.append([label, what.replace("_", " "), d["count"], f"{d['p50_ms']:.0f}",
                         f"{d['p90_ms']:.0f}", f"{d['p99_ms']:.0f}",
                         figures.get("withdrawn_while_read", 0)])  # fmt: skip
    header = ["agent", "answer -> prompt", "n", "p50 ms", "p90 ms", "p99 ms", "withdrawn"]
    print(table(rows, header))
    print(f"load average: {results['machine']['loadavg_1m']} -> "
          f"{results['machine_after']['loadavg_1m']}")  # fmt: skip
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
