"""A scripted agent CLI for the launch tests: behaves on a PTY like ``claude`` or ``codex`` do,
as far as agentbar can tell, in a fraction of a second.

    fake_agent.py --agent claude [--settings JSON] [--session-id ID] [--resume ID
                  [--fork-session]] [PROMPT]
    fake_agent.py --agent codex [-c hooks.<Event>=TOML]... [resume ID | fork ID] [PROMPT]
    fake_agent.py --agent claude|codex --version

It prints a coloured banner, answers ``/status`` with its session id in ANSI noise (Claude:
cursor-positioned text in a panel that Esc closes; Codex: a box-drawn table), runs the hooks
it was given (``--settings`` / ``-c hooks.*``: SessionStart, UserPromptSubmit, PreToolUse,
PermissionRequest, PostToolUse, Stop, SessionEnd) the way the agents do (JSON on stdin, via
``sh -c``), writes a real transcript (Claude JSONL, or a Codex rollout) and, for Claude, its
``sessions/<pid>.json`` registry, and shows a permission prompt for a prompt ``run: <command>``
(Claude: Enter or 1 allows, Esc refuses; Codex: y allows, Esc refuses) and then really runs the
command. Ctrl-C twice, ``/exit`` or ``/quit`` leave; ``/clear`` starts a new session (Claude).

Knobs (environment): FAKE_AGENT_VERSION (what --version prints), FAKE_AGENT_HOOKS=0 (run no
hooks), FAKE_AGENT_REGISTRY=0 (no registry), FAKE_AGENT_IGNORE_SESSION_ID=1 (pick its own id),
FAKE_AGENT_STATUS=0 (``/status`` without the id), FAKE_AGENT_HOOK_DELAY / FAKE_AGENT_START_DELAY
(seconds), FAKE_AGENT_DIALOG_GUARD (seconds a dialog ignores keys, default 0.3),
FAKE_AGENT_DEAF=1 (ignores Ctrl-C and /exit), FAKE_AGENT_TRAP_TERM=1 (ignores SIGTERM),
FAKE_AGENT_CHILD=1 (starts a long-running child in its session), FAKE_AGENT_WORK (seconds a
turn takes, default 0.1).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import termios
import time
import tomllib
import tty
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from claude_lines import ClaudeTranscript, registry
from codex_lines import CodexRollout

ESC = "\x1b"
VERSIONS = {"claude": "2.1.332 (Claude Code)", "codex": "codex-cli 0.171.0"}


def env_flag(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


class Args:
    def __init__(self, argv: list[str]) -> None:
        self.agent = "claude"
        self.version = False
        self.settings: dict[str, Any] = {}
        self.hooks: dict[str, list[str]] = {}
        self.session_id: str | None = None
        self.resume: str | None = None
        self.fork = False
        self.prompt: str | None = None
        words: list[str] = []
        i = 0
        while i < len(argv):
            arg = argv[i]
            if arg == "--agent":
                self.agent, i = argv[i + 1], i + 2
            elif arg in ("--version", "-V"):
                self.version, i = True, i + 1
            elif arg == "--settings":
                self.settings, i = json.loads(argv[i + 1]), i + 2
            elif arg == "--session-id":
                self.session_id, i = argv[i + 1], i + 2
            elif arg in ("--resume", "-r"):
                self.resume, i = argv[i + 1], i + 2
            elif arg == "--fork-session":
                self.fork, i = True, i + 1
            elif arg == "-c":
                key, _, value = argv[i + 1].partition("=")
                if key.startswith("hooks."):
                    groups = tomllib.loads(f"v = {value}")["v"]
                    self.hooks[key[len("hooks.") :]] = [
                        h["command"] for g in groups for h in g["hooks"]
                    ]
                i += 2
            elif arg == "--":
                words += argv[i + 1 :]
                break
            elif arg.startswith("-"):
                i += 1
            else:
                words.append(arg)
                i += 1
        if self.agent == "codex" and words[:1] in (["resume"], ["fork"]):
            self.fork = words[0] == "fork"
            self.resume = words[1]
            words = words[2:]
        self.prompt = " ".join(words) or None
        for event, groups in (self.settings.get("hooks") or {}).items():
            self.hooks[event] = [h["command"] for g in groups for h in g["hooks"]]


class Agent:
    def __init__(self, args: Args) -> None:
        self.args = args
        self.kind = args.agent
        self.cwd = os.getcwd()
        self.pid = os.getpid()
        home = Path(os.environ.get("HOME", "/tmp"))
        self.claude_root = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
        self.codex_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
        self.session_id = self._pick_session()
        self.started = time.time()
        self.turns = 0
        self.calls = 0
        self.interrupts = 0.0
        self._open_transcript()
        self.child: subprocess.Popen[bytes] | None = None

    # -- sessions and files ----------------------------------------------------------------

    def _pick_session(self) -> str:
        args = self.args
        if args.resume and not args.fork:
            return args.resume
        if args.session_id and env_flag("FAKE_AGENT_IGNORE_SESSION_ID") != "1":
            return args.session_id
        if self.kind == "codex":
            return str(uuid.uuid4())  # (real Codex ids are UUIDv7; shaped the same)
        return str(uuid.uuid4())

    def _open_transcript(self) -> None:
        now = time.time()
        if self.kind == "claude":
            folder = self.claude_root / "projects" / re.sub(r"[^A-Za-z0-9]", "-", self.cwd)
            self.transcript = folder / f"{self.session_id}.jsonl"
            self.claude = ClaudeTranscript(self.session_id, self.cwd, start=now, step=0.001)
            self.rollout_lines: CodexRollout | None = None
        else:
            day = time.strftime("%Y/%m/%d", time.gmtime(now))
            stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(now))
            self.transcript = (
                self.codex_home / "sessions" / day / f"rollout-{stamp}-{self.session_id}.jsonl"
            )
            if self.args.resume and not self.args.fork:
                found = sorted((self.codex_home / "sessions").glob(f"**/*{self.session_id}.jsonl"))
                if found:
                    self.transcript = found[0]
            self.rollout_lines = CodexRollout(self.session_id, self.cwd, start=now, step=0.001)

    def write(self, *lines: dict[str, Any]) -> None:
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        with open(self.transcript, "ab") as fh:
            for line in lines:
                fh.write(json.dumps(line).encode() + b"\n")

    def now(self) -> None:
        """Keep the builders' clocks on the wall clock."""
        if self.kind == "claude":
            self.claude.now = max(self.claude.now, time.time())
        elif self.rollout_lines is not None:
            self.rollout_lines.now = max(self.rollout_lines.now, time.time())

    def registry(self, status: str, waiting_for: str | None = None) -> None:
        if self.kind != "claude" or env_flag("FAKE_AGENT_REGISTRY", "1") == "0":
            return
        folder = self.claude_root / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        entry = registry(
            self.pid,
            self.session_id,
            status=status,
            waiting_for=waiting_for,
            cwd=self.cwd,
            started_at=self.started,
            updated_at=time.time(),
        )
        tmp = folder / f".{self.pid}.tmp"
        tmp.write_text(json.dumps(entry))
        os.replace(tmp, folder / f"{self.pid}.json")

    def drop_registry(self) -> None:
        with contextlib.suppress(OSError):
            (self.claude_root / "sessions" / f"{self.pid}.json").unlink()

    def hook(self, event: str, **fields: Any) -> None:
        if env_flag("FAKE_AGENT_HOOKS", "1") == "0":
            return
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": self.cwd,
            "hook_event_name": event,
            **fields,
        }
        env = {**os.environ, "CLAUDE_PID": str(self.pid)} if self.kind == "claude" else None
        for command in self.args.hooks.get(event, []):
            subprocess.run(
                ["/bin/sh", "-c", command],
                input=json.dumps(payload).encode(),
                env=env,
                capture_output=True,  # as the agents do: a hook's output is theirs to read
                check=False,
                timeout=10,
            )

    # -- the screen ------------------------------------------------------------------------

    def out(self, text: str) -> None:
        os.write(1, text.replace("\n", "\r\n").encode())

    def banner(self) -> None:
        name = "Claude Code" if self.kind == "claude" else "OpenAI Codex"
        self.out(f"{ESC}[1;35m✻ Fake {name}{ESC}[0m  {ESC}[2m{self.cwd}{ESC}[0m\n")
        self.out(f"{ESC}[?2004h")  # bracketed paste, as both TUIs ask for
        self.footer()

    def footer(self) -> None:
        hint = "? for shortcuts" if self.kind == "claude" else "← for agents"
        self.out(f"{ESC}[2m{hint}{ESC}[0m\n> ")

    def status(self) -> None:
        shown = self.session_id if env_flag("FAKE_AGENT_STATUS", "1") != "0" else "(hidden)"
        if self.kind == "claude":
            # A panel drawn with cursor movements: no newline between label and value.
            self.out(
                f"{ESC}[2J{ESC}[H{ESC}[1mStatus{ESC}[0m{ESC}[3;1H{ESC}[38;5;246mVersion:"
                f"{ESC}[0m{ESC}[3;14H2.1.332{ESC}[4;1H{ESC}[38;5;246mSession ID:{ESC}[0m"
                f"{ESC}[4;14H{shown}{ESC}[5;1H{ESC}]8;;https://example.invalid{ESC}\\cwd"
                f"{ESC}]8;;{ESC}\\{ESC}[5;14H{self.cwd}{ESC}[7;1HEsc to close"
            )
            self.wait_key({ESC})
            self.out(f"{ESC}[2J{ESC}[H")
            self.footer()
        else:
            self.out(
                f"╭{'─' * 60}╮\n│  {ESC}[1mModel:{ESC}[0m     mock-model{' ' * 37}│\n"
                f"│  {ESC}[1mSession:{ESC}[22m   {shown}   │\n╰{'─' * 60}╯\n"
            )
            self.footer()

    def wait_key(self, accepted: set[str], guard: float = 0.0) -> str:
        shown = time.monotonic()
        while True:
            key = os.read(0, 16).decode("utf-8", "replace")
            if time.monotonic() - shown < guard:
                continue  # a dialog drops keys that come right after it appears
            for char in (key, key[:1]):
                if char in accepted:
                    return char

    # -- a turn ----------------------------------------------------------------------------

    def turn(self, prompt: str) -> None:
        self.turns += 1
        self.now()
        self.registry("busy")
        self.hook("UserPromptSubmit", prompt=prompt)
        work = float(env_flag("FAKE_AGENT_WORK", "0.1"))
        if self.kind == "claude":
            self.write(self.claude.prompt(prompt))
        else:
            r = self.rollout_lines
            assert r is not None
            self.write(r.started(), r.prompt(prompt))
        time.sleep(work)
        match = re.match(r"run:\s*(.+)", prompt)
        asked = re.match(r"ask:\s*(.+)", prompt)
        if match:
            answer = self.tool_turn(match.group(1).strip())
        elif asked:
            answer = self.ask_turn(*[part.strip() for part in asked.group(1).split("|")])
        else:
            answer = f"You said: {prompt}"
        self.now()
        if self.kind == "claude":
            self.write(
                self.claude.text(answer, stop_reason="end_turn"), self.claude.turn_duration()
            )
        else:
            r = self.rollout_lines
            assert r is not None
            self.write(r.answer(answer), r.complete(answer))
        self.out(f"● {answer}\n")
        self.hook("Stop", last_assistant_message=answer, stop_hook_active=False)
        self.registry("idle")
        self.footer()

    def tool_turn(self, command: str) -> str:
        self.calls += 1
        call_id = f"toolu_{self.calls:02d}" if self.kind == "claude" else f"call_{self.calls}"
        self.now()
        if self.kind == "claude":
            self.write(self.claude.bash(command, call_id=call_id, stop_reason="tool_use"))
            tool_input: dict[str, Any] = {"command": command, "description": "run it"}
        else:
            r = self.rollout_lines
            assert r is not None
            self.write(r.exec(command, call_id, escalate=True))
            tool_input = {"cmd": command}
        tool = "Bash" if self.kind == "claude" else "exec_command"
        self.hook("PreToolUse", tool_name=tool, tool_input=tool_input, tool_use_id=call_id)
        self.hook("PermissionRequest", tool_name=tool, tool_input=tool_input)
        self.registry("waiting", "permission prompt")
        guard = float(env_flag("FAKE_AGENT_DIALOG_GUARD", "0.3"))
        if self.kind == "claude":
            self.out(
                f"\n{ESC}[1mBash command{ESC}[0m\n  {command}\n  run it\n\n"
                f"Do you want to proceed?\n{ESC}[36m❯ 1. Yes{ESC}[0m\n"
                f"  2. Yes, and don't ask again for this command\n"
                f"  3. No, and tell Claude what to do differently {ESC}[2m(esc){ESC}[0m\n"
            )
            key = self.wait_key({"\r", "1", ESC, "3"}, guard)
            allowed = key in ("\r", "1")
        else:
            self.out(
                f"\nWould you like to run the following command?\n\n  $ {command}\n\n"
                f"› 1. Yes, proceed (y)\n  2. Yes, and don't ask again (a)\n"
                f"  3. No, and tell Codex what to do differently (esc)\n"
            )
            key = self.wait_key({"y", "\r", "1", ESC, "n"}, guard)
            allowed = key in ("y", "\r", "1")
        self.out(f"{ESC}[2J{ESC}[H")  # the dialog goes
        self.registry("busy")
        self.now()
        if not allowed:
            if self.kind == "claude":
                self.write(self.claude.tool_result(call_id, denied=True))
            else:
                r = self.rollout_lines
                assert r is not None
                self.write(r.output(call_id, "rejected by user"))
            return "Understood, I will not run it."
        result = subprocess.run(
            ["/bin/sh", "-c", command], capture_output=True, text=True, check=False, timeout=60
        )
        output = (result.stdout + result.stderr).strip() or "(no output)"
        if self.kind == "claude":
            self.write(self.claude.tool_result(call_id, output))
        else:
            r = self.rollout_lines
            assert r is not None
            self.write(r.output(call_id, output))
        self.hook("PostToolUse", tool_name=tool, tool_input=tool_input, tool_response=output)
        return f"Ran it: {output}"

    def ask_turn(self, question: str, *labels: str) -> str:
        """A question dialog drawn as Claude Code 2.1.332 draws AskUserQuestion's (rows copied
        from its screen): arrows move the highlight, Enter picks, on "Type something." the
        typed text is the answer, Esc dismisses."""
        self.registry("waiting", "question")
        choices = [*labels, "Type something.", "Chat about this"]
        at, typed = 0, ""
        guard = float(env_flag("FAKE_AGENT_DIALOG_GUARD", "0.3"))
        shown = time.monotonic()
        while True:
            rows = []
            for index, label in enumerate(choices):
                mark = "❯" if index == at else " "
                text = typed if label == "Type something." and index == at and typed else label
                rows.append(f"{mark} {index + 1}. {text}")
                if index < len(labels):
                    rows.append("     an option")
            self.out(
                f"{ESC}[2J{ESC}[H{'─' * 60}\n ☐ Pick\n\n{question}\n\n" + "\n".join(rows)
                + "\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n"
            )  # fmt: skip
            key = os.read(0, 64).decode("utf-8", "replace")
            if time.monotonic() - shown < guard:
                continue  # a dialog drops keys that come right after it appears
            if key == f"{ESC}[A":
                at = max(at - 1, 0)
            elif key == f"{ESC}[B":
                at = min(at + 1, len(choices) - 1)
            elif key == ESC:
                answer = "You dismissed it."
                break
            elif key == "\r":
                picked = choices[at]
                own = picked == "Type something."
                answer = f"You wrote: {typed}" if own else f"You chose: {picked}"
                break
            elif choices[at] == "Type something.":
                typed += key.strip("\r")
        self.out(f"{ESC}[2J{ESC}[H")  # the dialog goes
        self.registry("busy")
        return answer

    # -- the loop --------------------------------------------------------------------------

    def leave(self, code: int = 0) -> None:
        self.hook("SessionEnd", reason="exit")
        self.drop_registry()
        self.out(f"{ESC}[?2004l\nBye.\n")
        os._exit(code)

    def start(self) -> None:
        time.sleep(float(env_flag("FAKE_AGENT_START_DELAY", "0")))
        self.banner()
        if self.kind == "codex" and (not self.args.resume or self.args.fork):
            assert self.rollout_lines is not None
            if not self.transcript.exists():
                self.write(self.rollout_lines.meta(), self.rollout_lines.context())
        self.registry("idle")
        time.sleep(float(env_flag("FAKE_AGENT_HOOK_DELAY", "0")))
        source = "resume" if self.args.resume and not self.args.fork else "startup"
        if self.args.fork:
            source = "fork" if self.kind == "claude" else "startup"
        self.hook("SessionStart", source=source)
        if env_flag("FAKE_AGENT_CHILD") == "1":
            self.child = subprocess.Popen(["sleep", "600"])
        if self.args.prompt:
            self.turn(self.args.prompt)

    def run(self) -> None:
        deaf = env_flag("FAKE_AGENT_DEAF") == "1"
        line = ""
        pasting = False
        while True:
            data = os.read(0, 4096).decode("utf-8", "replace")
            if not data:
                self.leave()
            # Inside a bracketed paste, Enter is a newline in the input, as in the real TUIs.
            data = data.replace(f"{ESC}[200~", "\x01").replace(f"{ESC}[201~", "\x02")
            for char in data:
                if char in "\x01\x02":
                    pasting = char == "\x01"
                elif pasting and char == "\r":
                    line += "\n"
                    self.out("\n")
                elif char == "\x03":
                    if deaf:
                        continue
                    if time.monotonic() - self.interrupts < 2.0:
                        self.leave()
                    self.interrupts = time.monotonic()
                    line = ""
                    self.out("\nPress Ctrl-C again to exit\n> ")
                elif char == "\r":
                    text, line = line.strip(), ""
                    self.out("\n")
                    self.command(text, deaf)
                elif char == "\x7f":
                    line = line[:-1]
                    self.out("\b \b")
                elif char == ESC or ord(char) < 32:
                    continue
                else:
                    line += char
                    self.out(char)

    def command(self, text: str, deaf: bool) -> None:
        if not text:
            self.footer()
        elif text in ("/exit", "/quit"):
            if not deaf:
                self.leave()
            self.footer()
        elif text == "/status":
            self.status()
        elif text == "/clear" and self.kind == "claude":
            self.hook("SessionEnd", reason="clear")
            self.session_id = str(uuid.uuid4())
            self._open_transcript()
            self.registry("idle")
            self.hook("SessionStart", source="clear")
            self.out(f"{ESC}[2J{ESC}[H(no content)\n")
            self.footer()
        else:
            self.turn(text)


def main() -> None:
    args = Args(sys.argv[1:])
    if args.version:
        print(env_flag("FAKE_AGENT_VERSION") or VERSIONS[args.agent])
        return
    agent = Agent(args)
    if env_flag("FAKE_AGENT_TRAP_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *_: agent.leave(143))
    saved = termios.tcgetattr(0) if os.isatty(0) else None
    if saved is not None:
        tty.setraw(0)
    try:
        agent.start()
        agent.run()
    finally:
        if saved is not None:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    main()
