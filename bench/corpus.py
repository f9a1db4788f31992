"""Generate a deterministic, realistic corpus of Claude Code and Codex CLI session files in a HOME.

Claude transcripts go to ``<home>/.claude/projects/<encoded cwd>/<uuid>.jsonl`` (2.1.x lines: user
prompts, assistant responses split one content block per line sharing ``message.id`` and
``requestId`` with the usage repeated, thinking blocks, Bash/Read/Edit/Grep/Task tool calls and
tool-result lines carrying whole files, progress and attachment lines, ``system/turn_duration``,
``ai-title``, ``file-history-snapshot``; some sessions with ``<uuid>/subagents/agent-*.jsonl``).
Codex rollouts go to ``<home>/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`` (session_meta
with a ~15 KB ``base_instructions``, turn_context, event_msg task_started / user_message /
token_count / agent_message / task_complete, response_item message / reasoning / function_call /
function_call_output / custom_tool_call with large outputs).

Session sizes are skewed like real use: most 50 KB–2 MB, about 2% of them 20–80 MB (capped at 60%
of the bytes); when the average asked for is under 50 KB every session is small instead. The
output depends only on (seed, sessions, size, ratio, projects, now); ``now`` defaults to the
current time and is written to ``<home>/corpus-manifest.json`` so a run can be reproduced.

    python bench/corpus.py --home /tmp/agentbar-corpus --sessions 600 --size 1G

Text is cut from a few pre-generated pools and every line is one ``orjson.dumps``; a session's
lines are written in one call, so a gigabyte takes well under a minute.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import math
import os
import random
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

KB = 1024
MB = 1024 * KB
GB = 1024 * MB
MANIFEST = "corpus-manifest.json"
GENERATOR_VERSION = 2  # bump when the output for the same parameters changes
CLAUDE_VERSION = "2.1.197"
CODEX_VERSION = "0.171.0"
CLAUDE_MODELS = ("claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929")
CODEX_MODELS = ("gpt-5.2-codex", "gpt-5.1-codex-max")
WRITE_CHUNK = 8 * MB


# -- sizes ---------------------------------------------------------------------------------------


def parse_size(text: str) -> int:
    """``1G``, ``300M``, ``64k`` or a plain byte count (powers of 1024)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[iI]?[bB]?\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    number, unit = float(match[1]), match[2].lower()
    return int(number * {"": 1, "k": KB, "m": MB, "g": GB}[unit])


def plan_sizes(rng: random.Random, sessions: int, total: int) -> list[int]:
    """Per-session byte targets summing to about ``total``, skewed like real use."""
    if sessions <= 0:
        return []
    average = total / sessions
    if average < 50 * KB:  # a corpus of small sessions (latency and idle benchmarks)
        weights = [rng.lognormvariate(0.0, 0.5) for _ in range(sessions)]
        scale = total / sum(weights)
        return [max(4 * KB, int(w * scale)) for w in weights]
    lo, hi = 50 * KB, 2 * MB
    big: list[int] = []
    want_big = round(sessions * 0.02)
    while len(big) < want_big:
        big.append(rng.randint(20 * MB, 80 * MB))
    while big and sum(big) > 0.6 * total:
        big.pop()
    # More big sessions when the small ones cannot hold the rest even at their largest.
    while len(big) < sessions - 1 and (total - sum(big)) / (sessions - len(big)) > 0.6 * hi:
        big.append(rng.randint(20 * MB, 80 * MB))
    rest = max(0, total - sum(big))
    normal = sessions - len(big)
    weights = [rng.lognormvariate(0.0, 1.0) for _ in range(normal)]

    def placed(scale: float) -> int:
        return sum(min(hi, max(lo, int(w * scale))) for w in weights)

    low, high = 1.0, float(hi)
    for _ in range(60):  # bisect the scale so the clamped sizes sum to ``rest``
        mid = math.sqrt(low * high)
        if placed(mid) < rest:
            low = mid
        else:
            high = mid
    sizes = [min(hi, max(lo, int(w * high))) for w in weights] + big
    rng.shuffle(sizes)
    return sizes


# -- text pools ------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.split()


_IDENTS = _words(
    "value config parser session record stream index cursor offset reader writer buffer "
    "state result error handler event watcher engine table row column path folder token "
    "usage model request response message content block payload item entry snapshot "
    "registry process pid clock tick budget limit count total size length width height name "
    "title detail summary items keys values data meta info options args kwargs self cls "
    "other node child parent"
)
_KEYWORDS = _words(
    "def class return if elif else for while in not and or is None True False import from "
    "as with try except finally raise yield lambda async await pass break continue"
)
_WORDS = _words(
    "the a an of to in for on with by from at as is are was be this that it its we you they "
    "file line test function module error change fix update add remove check run build read "
    "write parse state session agent engine index need should will can could would might "
    "must because so then now first next last also only just still already again here there "
    "when where which what why how all each every some any more most less few many much "
    "very quite looks seems works fails passes returns raises calls uses keeps makes takes "
    "gives shows"
)


def _code_pool(rng: random.Random, chars: int) -> str:
    lines: list[str] = []
    size = 0
    indent = 0
    while size < chars:
        roll = rng.random()
        if roll < 0.08:
            indent = 0
            name = f"{rng.choice(_IDENTS)}_{rng.choice(_IDENTS)}"
            line = f"def {name}(self, {rng.choice(_IDENTS)}: int) -> str:"
            indent = 4
        elif roll < 0.12:
            indent = 0
            line = f"class {rng.choice(_IDENTS).title()}{rng.choice(_IDENTS).title()}:"
            indent = 4
        elif roll < 0.18:
            line = ""
        elif roll < 0.26:
            line = " " * indent + f"# {' '.join(rng.choices(_WORDS, k=rng.randint(3, 10)))}"
        elif roll < 0.34:
            line = (
                " " * indent + f'log.info("{rng.choice(_WORDS)} %s → %d", {rng.choice(_IDENTS)}, n)'
            )
        else:
            words = rng.choices(_IDENTS + _KEYWORDS, k=rng.randint(2, 9))
            line = " " * (indent + 4 * rng.randint(0, 2)) + " ".join(words)
            if rng.random() < 0.3:
                line += f' = "{rng.choice(_IDENTS)}\\t{rng.randint(0, 9999)}"'
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


def _prose_pool(rng: random.Random, chars: int) -> str:
    parts: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choices(_WORDS + _IDENTS, k=rng.randint(6, 24)))
        sentence = sentence[0].upper() + sentence[1:] + rng.choice((".", ".", ".", "?", ":"))
        if rng.random() < 0.05:
            sentence += "\n\n"
        elif rng.random() < 0.05:
            sentence += f" `{rng.choice(_IDENTS)}.{rng.choice(_IDENTS)}()`"
        parts.append(sentence)
        size += len(sentence) + 1
    return " ".join(parts)


def _log_pool(rng: random.Random, chars: int) -> str:
    lines: list[str] = []
    size = 0
    while size < chars:
        roll = rng.random()
        name = (
            f"tests/test_{rng.choice(_IDENTS)}.py::test_{rng.choice(_IDENTS)}_{rng.choice(_IDENTS)}"
        )
        if roll < 0.5:
            outcome = rng.choice(("PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"))
            line = f"{name} {outcome} [{rng.randint(0, 100):3d}%]"
        elif roll < 0.7:
            where = f"src/{rng.choice(_IDENTS)}/{rng.choice(_IDENTS)}.py"
            words = " ".join(rng.choices(_WORDS, k=6))
            code = f"E{rng.randint(100, 999)}"
            line = f"{where}:{rng.randint(1, 900)}:{rng.randint(1, 80)}: {code} {words}"
        elif roll < 0.85:
            stamp = f"Nov {rng.randint(1, 29):2d} 12:{rng.randint(0, 59):02d}"
            file = f"{rng.choice(_IDENTS)}_{rng.choice(_IDENTS)}.py"
            line = f"-rw-r--r--  1 dev dev {rng.randint(100, 99999):6d} {stamp} {file}"
        else:
            line = f"    {' '.join(rng.choices(_IDENTS, k=rng.randint(3, 12)))}"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


def _tiled(rng: random.Random, base: str, chars: int) -> str:
    """``base`` repeated from different line starts up to ``chars`` (cheap variety)."""
    parts = [base]
    size = len(base)
    while size < chars:
        cut = base.find("\n", rng.randrange(len(base))) + 1
        parts.append(base[cut:] + base[:cut])
        size += len(base)
    return "".join(parts)


@dataclass
class _ProjectFile:
    path: str
    content: str
    numbered: str  # as Claude's Read tool shows it: "     1→line"
    lines: int


class Pools:
    """Text reused by every session: slices of a few large generated strings."""

    def __init__(self, rng: random.Random) -> None:
        self.code = _tiled(rng, _code_pool(rng, 768 * KB), 3 * MB)
        self.prose = _tiled(rng, _prose_pool(rng, 256 * KB), 1 * MB)
        self.log = _tiled(rng, _log_pool(rng, 512 * KB), 2 * MB)
        self.b64 = base64.b64encode(rng.randbytes(256 * KB)).decode()
        self.instructions = ("You are Codex, a coding agent based on GPT-5. " + self.prose)[
            : 15 * KB
        ]
        self.files: list[_ProjectFile] = []
        for _ in range(192):
            size = int(min(60 * KB, max(2 * KB, rng.lognormvariate(math.log(12 * KB), 0.8))))
            content = self._aligned(rng, self.code, size)
            lines = content.split("\n")
            numbered = "\n".join(f"{i:6d}→{text}" for i, text in enumerate(lines, start=1))
            folder = rng.choice(("src", "src/core", "src/app", "tests", "lib", "pkg/server"))
            path = f"{folder}/{rng.choice(_IDENTS)}_{rng.choice(_IDENTS)}.py"
            self.files.append(_ProjectFile(path, content, numbered, len(lines)))

    @staticmethod
    def _aligned(rng: random.Random, pool: str, size: int) -> str:
        start = pool.find("\n", rng.randrange(0, len(pool) - size - 1)) + 1
        return pool[start : start + size].rsplit("\n", 1)[0]

    def cut(self, rng: random.Random, pool: str, size: int) -> str:
        size = max(1, min(size, len(pool) - 1))
        start = rng.randrange(0, len(pool) - size)
        return pool[start : start + size]

    def sentence(self, rng: random.Random, lo: int, hi: int) -> str:
        return self.cut(rng, self.prose, rng.randint(lo, hi)).strip() or "ok"


# -- session descriptions --------------------------------------------------------------------------


@dataclass
class SessionInfo:
    agent: str  # "claude" or "codex"
    session_id: str
    cwd: str
    path: str  # the main transcript
    started_at: float  # epoch seconds of the first line
    ended_at: float  # epoch seconds of the last line
    bytes: int  # all of its files, sub-agents included
    files: int
    lines: int


@dataclass
class Corpus:
    home: str
    seed: int
    now: float
    target_bytes: int
    version: int = GENERATOR_VERSION
    sessions: list[SessionInfo] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total_bytes(self) -> int:
        return sum(s.bytes for s in self.sessions)

    @property
    def files(self) -> int:
        return sum(s.files for s in self.sessions)

    @property
    def lines(self) -> int:
        return sum(s.lines for s in self.sessions)

    def save(self) -> None:
        Path(self.home, MANIFEST).write_bytes(
            orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2)
        )

    @classmethod
    def load(cls, home: Path) -> Corpus:
        data = orjson.loads((home / MANIFEST).read_bytes())
        data.setdefault("version", 1)
        data["sessions"] = [SessionInfo(**s) for s in data["sessions"]]
        return cls(**data)

    def summary(self) -> str:
        claude = sum(1 for s in self.sessions if s.agent == "claude")
        sizes = sorted(s.bytes for s in self.sessions)
        median = sizes[len(sizes) // 2] if sizes else 0
        return (
            f"{len(self.sessions)} sessions ({claude} Claude, "
            f"{len(self.sessions) - claude} Codex), "
            f"{self.files} files, {self.lines:,} lines, {self.total_bytes / MB:,.1f} MiB "
            f"(median session {median / KB:,.0f} KiB, "
            f"largest {sizes[-1] / MB if sizes else 0:,.1f} MiB)"
        )


def iso(epoch: float) -> str:
    moment = dt.datetime.fromtimestamp(epoch, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode_cwd(cwd: str) -> str:
    """Claude's project folder name: every character outside [A-Za-z0-9] becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)[:200]


def new_uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _dumps(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


class _Sink:
    """Lines of one file, written in large chunks; counts bytes and lines."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._buf: list[bytes] = []
        self._pending = 0
        self.bytes = 0
        self.lines = 0

    def add(self, obj: dict[str, Any]) -> None:
        data = _dumps(obj)
        self._buf.append(data)
        self._pending += len(data)
        self.bytes += len(data)
        self.lines += 1
        if self._pending >= WRITE_CHUNK:
            self._flush()

    def _flush(self) -> None:
        self._fh.write(b"".join(self._buf))
        self._buf.clear()
        self._pending = 0

    def close(self, mtime: float) -> None:
        self._flush()
        self._fh.close()
        os.utime(self.path, (mtime, mtime))


# -- Claude ----------------------------------------------------------------------------------------


class ClaudeSession:
    """Writes one Claude Code 2.1.x transcript (and its sub-agents) line by line."""

    def __init__(
        self,
        rng: random.Random,
        pools: Pools,
        root: Path,
        session_id: str,
        cwd: str,
        start: float,
    ) -> None:
        self.rng = rng
        self.pools = pools
        self.session_id = session_id
        self.cwd = cwd
        self.limit = math.inf
        self.t = start
        self.folder = root / "projects" / encode_cwd(cwd)
        self.model = rng.choice(CLAUDE_MODELS)
        self.branch = rng.choice(("main", "main", "dev", f"fix/{rng.choice(_IDENTS)}"))
        self.slug = f"{rng.choice(_WORDS)}-{rng.choice(_IDENTS)}-{rng.choice(_IDENTS)}"
        self.parent: str | None = None
        self.titled = False
        self.allow_subagents = False

    @property
    def t(self) -> float:
        """The clock of the lines being written; never past ``limit`` (the corpus's "now")."""
        return self._t

    @t.setter
    def t(self, value: float) -> None:
        self._t = min(value, self.limit)

    # line shapes (also used by the latency benchmark to append live lines) ------------------

    def envelope(self, kind: str, *, agent_id: str | None = None, **fields: Any) -> dict[str, Any]:
        uuid = new_uuid(self.rng)
        obj: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": agent_id is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": CLAUDE_VERSION,
            "gitBranch": self.branch,
        }
        if agent_id is not None:
            obj["agentId"] = agent_id
        obj["slug"] = self.slug
        obj["type"] = kind
        obj.update(fields)
        obj["uuid"] = uuid
        obj["timestamp"] = iso(self.t)
        self.parent = uuid
        return obj

    def prompt(self, text: str, agent_id: str | None = None) -> dict[str, Any]:
        return self.envelope(
            "user",
            agent_id=agent_id,
            message={"role": "user", "content": text},
            permissionMode="default",
            promptId=new_uuid(self.rng),
        )

    def usage(self) -> dict[str, Any]:
        rng = self.rng
        created = rng.randint(0, 20000)
        return {
            "input_tokens": rng.randint(1, 12),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": rng.randint(10000, 180000),
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0,
                "ephemeral_1h_input_tokens": created,
            },
            "output_tokens": rng.randint(1, 4000),
            "service_tier": "standard",
        }

    def assistant(
        self,
        blocks: list[dict[str, Any]],
        message_id: str,
        request_id: str,
        usage: dict[str, Any],
        stop: str | None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """One API response: one line per content block, sharing ids and the usage."""
        out = []
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            message = {
                "model": self.model,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if last else None,
                "stop_sequence": None,
                "usage": usage,
            }
            out.append(
                self.envelope("assistant", agent_id=agent_id, message=message, requestId=request_id)
            )
            self.t += self.rng.uniform(0.05, 2.0)
        return out

    def answer(self, text: str, agent_id: str | None = None) -> list[dict[str, Any]]:
        return self.assistant(
            [{"type": "text", "text": text}],
            f"msg_01{self.pools.cut(self.rng, self.pools.b64, 22)}",
            f"req_011C{self.pools.cut(self.rng, self.pools.b64, 20)}",
            self.usage(),
            "end_turn",
            agent_id,
        )

    def turn_duration(self, messages: int) -> dict[str, Any]:
        return self.envelope(
            "system",
            subtype="turn_duration",
            durationMs=self.rng.randint(2000, 400000),
            messageCount=messages,
            isMeta=False,
        )

    # realistic traffic ------------------------------------------------------------------------

    def _pick_tool(
        self, roll: float, *, spawn: bool
    ) -> tuple[str, dict[str, Any], _ProjectFile | None]:
        """The tool a round calls, its input and the project file it is about (the same draws,
        in the same order, as ever: the corpus stays the same for the same seed)."""
        rng, pools = self.rng, self.pools
        project_file: _ProjectFile | None = None
        if spawn:
            name = "Task"
            tool_input: dict[str, Any] = {
                "description": pools.sentence(rng, 20, 60),
                "prompt": pools.sentence(rng, 200, 1500),
                "subagent_type": rng.choice(("general-purpose", "Explore", "Plan")),
            }
        elif roll < 0.40:
            name = "Read"
            project_file = rng.choice(pools.files)
            tool_input = {"file_path": f"{self.cwd}/{project_file.path}"}
        elif roll < 0.70:
            name = "Bash"
            tool_input = {
                "command": rng.choice(
                    ("pytest -x -q", "ls -la", "git diff", "ruff check .", "make test")
                )
                + f" {rng.choice(_IDENTS)}",
                "description": pools.sentence(rng, 10, 60),
            }
        elif roll < 0.88:
            name = "Edit"
            project_file = rng.choice(pools.files)
            old = pools.cut(rng, project_file.content, rng.randint(40, 800))
            tool_input = {
                "file_path": f"{self.cwd}/{project_file.path}",
                "old_string": old,
                "new_string": pools.cut(rng, pools.code, rng.randint(40, 900)),
                "replace_all": False,
            }
        else:
            name = "Grep"
            tool_input = {
                "pattern": rng.choice(_IDENTS),
                "path": self.cwd,
                "output_mode": "content",
            }
        return name, tool_input, project_file

    def _tool_round(
        self, agent_id: str | None, subagents: list[tuple[str, int]], budget: int
    ) -> Iterator[dict[str, Any]]:
        rng, pools = self.rng, self.pools
        message_id = f"msg_01{pools.cut(rng, pools.b64, 22)}"
        request_id = f"req_011C{pools.cut(rng, pools.b64, 20)}"
        usage = self.usage()
        blocks: list[dict[str, Any]] = []
        if rng.random() < 0.6:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": pools.sentence(rng, 200, 3000),
                    "signature": pools.cut(rng, pools.b64, rng.randint(400, 2400)),
                }
            )
        if rng.random() < 0.4:
            blocks.append({"type": "text", "text": pools.sentence(rng, 40, 600)})
        tool_id = f"toolu_01{pools.cut(rng, pools.b64, 22)}"
        roll = rng.random()
        spawn = agent_id is None and self.allow_subagents and budget > 200 * KB and roll < 0.04
        name, tool_input, project_file = self._pick_tool(roll, spawn=spawn)
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        lines = self.assistant(blocks, message_id, request_id, usage, "tool_use", agent_id)
        yield from lines
        assistant_uuid = lines[-1]["uuid"]
        self.t += rng.uniform(0.5, 30.0)
        # progress while the tool runs
        if name == "Bash":
            for k in range(rng.choice((0, 0, 1, 2, 4))):
                yield self.envelope(
                    "progress",
                    agent_id=agent_id,
                    data={
                        "type": "bash_progress",
                        "output": pools.cut(rng, pools.log, rng.randint(50, 600)),
                        "fullOutput": pools.cut(rng, pools.log, rng.randint(200, 3000)),
                        "elapsedTimeSeconds": 3 * (k + 1),
                        "totalLines": rng.randint(5, 400),
                    },
                    toolUseID=f"bash-progress-{k}",
                    parentToolUseID=tool_id,
                )
                self.t += 3.0
        elif name == "Edit":
            yield self.envelope(
                "progress",
                agent_id=agent_id,
                data={
                    "type": "hook_progress",
                    "hookEvent": "PostToolUse",
                    "hookName": "PostToolUse:Edit",
                    "command": "ruff format --quiet",
                },
                toolUseID=tool_id,
                parentToolUseID=tool_id,
            )
        elif spawn:
            sub_id = f"{rng.getrandbits(68):017x}"
            subagents.append((sub_id, rng.randint(30 * KB, max(40 * KB, budget // 4))))
            for _ in range(rng.randint(1, 5)):
                yield self.envelope(
                    "progress",
                    data={
                        "type": "agent_progress",
                        "agentId": sub_id,
                        "message": {"type": "assistant", "text": pools.sentence(rng, 40, 400)},
                    },
                    toolUseID=f"agent_msg_{pools.cut(rng, pools.b64, 12)}",
                    parentToolUseID=tool_id,
                )
                self.t += rng.uniform(2.0, 20.0)
        # the result
        result: Any
        if name == "Read":
            content = project_file.numbered
            result = {
                "type": "text",
                "file": {
                    "filePath": tool_input["file_path"],
                    "content": project_file.content,
                    "numLines": project_file.lines,
                    "startLine": 1,
                    "totalLines": project_file.lines,
                },
            }
        elif name == "Bash":
            size = int(min(60 * KB, rng.lognormvariate(math.log(1500), 1.4)))
            content = pools.cut(rng, pools.log, size)
            result = {"stdout": content, "stderr": "", "interrupted": False, "isImage": False}
        elif name == "Edit":
            content = (
                f"The file {tool_input['file_path']} has been updated. Here's the result of "
                "running `cat -n` on a snippet of the edited file:\n"
                + pools.cut(rng, project_file.numbered, 600)
            )
            result = {
                "filePath": tool_input["file_path"],
                "oldString": tool_input["old_string"],
                "newString": tool_input["new_string"],
                "originalFile": project_file.content,
                "structuredPatch": [
                    {
                        "oldStart": rng.randint(1, 300),
                        "oldLines": 6,
                        "newStart": rng.randint(1, 300),
                        "newLines": 8,
                        "lines": pools.cut(rng, pools.code, 500).split("\n"),
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            }
        elif spawn:
            content = pools.sentence(rng, 300, 3000)
            result = {
                "content": [{"type": "text", "text": content}],
                "totalDurationMs": rng.randint(10000, 300000),
                "totalTokens": rng.randint(5000, 90000),
                "totalToolUseCount": rng.randint(1, 40),
                "usage": self.usage(),
            }
        else:
            content = pools.cut(rng, pools.code, rng.randint(100, 4000))
            result = {"mode": "content", "numFiles": rng.randint(1, 30), "content": content}
        yield self.envelope(
            "user",
            agent_id=agent_id,
            message={
                "role": "user",
                "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": content}],
            },
            toolUseResult=result,
            sourceToolAssistantUUID=assistant_uuid,
        )
        if rng.random() < 0.25:
            yield self.envelope(
                "attachment",
                agent_id=agent_id,
                attachment={
                    "type": "hook_success",
                    "hookName": f"PostToolUse:{name}",
                    "content": "",
                },
            )
        self.t += rng.uniform(0.5, 5.0)

    def turns(
        self, sink_bytes: Any, budget: int, subagents: list[tuple[str, int]]
    ) -> Iterator[dict[str, Any]]:
        """Whole turns until ``sink_bytes()`` reaches ``budget``; the last turn ends cleanly."""
        rng, pools = self.rng, self.pools
        while sink_bytes() < budget:
            self.t += rng.uniform(20.0, 900.0)  # the person reads, thinks, types
            if rng.random() < 0.5:
                yield {
                    "type": "file-history-snapshot",
                    "messageId": new_uuid(rng),
                    "snapshot": {
                        "messageId": new_uuid(rng),
                        "trackedFileBackups": {
                            f.path: {
                                "backupFileName": f"{rng.getrandbits(64):016x}@v1",
                                "version": rng.randint(1, 9),
                                "backupTime": iso(self.t),
                            }
                            for f in rng.sample(pools.files, rng.randint(0, 6))
                        },
                        "timestamp": iso(self.t),
                    },
                    "isSnapshotUpdate": False,
                }
            prompt = pools.sentence(rng, 20, 400)
            if rng.random() < 0.1:  # pasted logs or code
                prompt += "\n\n" + pools.cut(rng, pools.log, rng.randint(500, 8000))
            yield self.prompt(prompt)
            messages = 1
            for _ in range(rng.randint(0, 2)):
                kind = rng.choice(("todo_reminder", "nested_memory", "edited_text_file", "file"))
                attachment: dict[str, Any] = {"type": kind}
                if kind in ("nested_memory", "file"):
                    project_file = rng.choice(pools.files)
                    attachment["path"] = f"{self.cwd}/{project_file.path}"
                    attachment["content"] = project_file.content[: rng.randint(500, 20000)]
                else:
                    attachment["content"] = pools.sentence(rng, 40, 400)
                yield self.envelope("attachment", attachment=attachment)
            self.t += rng.uniform(1.0, 8.0)
            rounds = min(int(rng.expovariate(1 / 5)), 40)
            for _ in range(rounds):
                yield from self._tool_round(None, subagents, budget)
                messages += 2
                if sink_bytes() >= budget * 1.05:
                    break
            if rng.random() < 0.5:
                yield from self.assistant(
                    [
                        {
                            "type": "thinking",
                            "thinking": pools.sentence(rng, 100, 1500),
                            "signature": pools.cut(rng, pools.b64, 800),
                        },
                        {"type": "text", "text": pools.sentence(rng, 80, 2500)},
                    ],
                    f"msg_01{pools.cut(rng, pools.b64, 22)}",
                    f"req_011C{pools.cut(rng, pools.b64, 20)}",
                    self.usage(),
                    "end_turn",
                )
            else:
                yield from self.answer(pools.sentence(rng, 80, 2500))
            messages += 1
            if rng.random() < 0.1:
                yield self.envelope(
                    "system",
                    subtype="stop_hook_summary",
                    hookCount=1,
                    hookInfos=[{"command": "notify-send done"}],
                    hookErrors=[],
                    preventedContinuation=False,
                    stopReason="",
                    hasOutput=False,
                    level="suggestion",
                )
            if rng.random() < 0.9 or sink_bytes() >= budget:
                yield self.turn_duration(messages)
            if not self.titled or rng.random() < 0.03:
                self.titled = True
                yield {
                    "type": "ai-title",
                    "aiTitle": pools.sentence(rng, 15, 60),
                    "sessionId": self.session_id,
                }
            if rng.random() < 0.2:
                yield {
                    "type": "last-prompt",
                    "lastPrompt": prompt[:200],
                    "sessionId": self.session_id,
                }

    def subagent_lines(
        self, agent_id: str, budget: int, sink_bytes: Any
    ) -> Iterator[dict[str, Any]]:
        self.parent = None
        yield self.prompt(self.pools.sentence(self.rng, 200, 1500), agent_id=agent_id)
        ignored: list[tuple[str, int]] = []
        while sink_bytes() < budget:
            yield from self._tool_round(agent_id, ignored, budget)
        yield from self.answer(self.pools.sentence(self.rng, 200, 3000), agent_id=agent_id)


def write_claude(
    rng: random.Random,
    pools: Pools,
    home: Path,
    session_id: str,
    cwd: str,
    start: float,
    budget: int,
    limit: float = math.inf,
) -> SessionInfo:
    session = ClaudeSession(rng, pools, home / ".claude", session_id, cwd, start)
    session.limit = limit
    path = session.folder / f"{session_id}.jsonl"
    sink = _Sink(path)
    subagents: list[tuple[str, int]] = []
    with_subagents = rng.random() < 0.15
    main_budget = int(budget * (0.75 if with_subagents else 1.0))
    session.allow_subagents = with_subagents
    for obj in session.turns(lambda: sink.bytes, main_budget, subagents):
        sink.add(obj)
    end = session.t
    sink.close(end)
    total, files, lines = sink.bytes, 1, sink.lines
    left = budget - total
    for agent_id, wanted in subagents:
        if left <= 0:
            break
        sub_path = session.folder / session_id / "subagents" / f"agent-{agent_id}.jsonl"
        sub = _Sink(sub_path)
        saved_parent = session.parent
        session.t = start + rng.uniform(0, max(1.0, end - start))
        for obj in session.subagent_lines(agent_id, min(wanted, left), lambda s=sub: s.bytes):
            sub.add(obj)
        sub.close(session.t)
        meta = {"agentType": "general-purpose", "description": "sub-task", "toolUseId": "toolu_x"}
        sub_path.with_suffix("").with_suffix(".meta.json").write_bytes(orjson.dumps(meta))
        session.parent = saved_parent
        total, files, lines, left = (
            total + sub.bytes,
            files + 1,
            lines + sub.lines,
            left - sub.bytes,
        )
    return SessionInfo("claude", session_id, cwd, str(path), start, end, total, files, lines)


# -- Codex -----------------------------------------------------------------------------------------


class CodexSession:
    """Writes one Codex rollout (envelope format, legacy history mode)."""

    def __init__(
        self, rng: random.Random, pools: Pools, session_id: str, cwd: str, start: float
    ) -> None:
        self.rng = rng
        self.pools = pools
        self.session_id = session_id
        self.cwd = cwd
        self.limit = math.inf
        self.t = start
        self.model = rng.choice(CODEX_MODELS)
        self.turn = 0
        self.tokens = [0, 0, 0]  # input, cached, output (running totals)

    @property
    def t(self) -> float:
        """The clock of the lines being written; never past ``limit`` (the corpus's "now")."""
        return self._t

    @t.setter
    def t(self, value: float) -> None:
        self._t = min(value, self.limit)

    def line(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        self.t += self.rng.uniform(0.01, 1.5)
        return {"timestamp": iso(self.t), "type": kind, "payload": payload}

    def event(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.line("event_msg", payload)

    def item(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.line("response_item", payload)

    def meta(self) -> dict[str, Any]:
        return self.line(
            "session_meta",
            {
                "id": self.session_id,
                "timestamp": iso(self.t),
                "cwd": self.cwd,
                "originator": "codex_cli_rs",
                "cli_version": CODEX_VERSION,
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": self.pools.instructions},
                "git": {
                    "commit_hash": f"{self.rng.getrandbits(160):040x}",
                    "branch": "main",
                    "repository_url": f"git@example.com:dev/{os.path.basename(self.cwd)}.git",
                },
            },
        )

    def turn_started(self) -> list[dict[str, Any]]:
        self.turn += 1
        return [
            self.event(
                {
                    "type": "task_started",
                    "turn_id": f"turn-{self.turn}",
                    "started_at": int(self.t),
                    "model_context_window": 272000,
                }
            ),
            self.line(
                "turn_context",
                {
                    "turn_id": f"turn-{self.turn}",
                    "cwd": self.cwd,
                    "approval_policy": "on-request",
                    "sandbox_policy": {"type": "workspace-write", "network_access": False},
                    "model": self.model,
                    "effort": "medium",
                    "summary": "auto",
                    "current_date": iso(self.t)[:10],
                    "timezone": "UTC",
                },
            ),
        ]

    def prompt(self, text: str) -> list[dict[str, Any]]:
        return [
            self.item(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                }
            ),
            self.event(
                {
                    "type": "user_message",
                    "message": text,
                    "images": [],
                    "local_images": [],
                    "text_elements": [],
                }
            ),
        ]

    def token_count(self) -> dict[str, Any]:
        rng = self.rng
        last = [rng.randint(2000, 60000), 0, rng.randint(20, 3000)]
        last[1] = int(last[0] * rng.uniform(0.5, 0.95))
        self.tokens = [a + b for a, b in zip(self.tokens, last, strict=True)]

        def usage(v: list[int]) -> dict[str, int]:
            return {
                "input_tokens": v[0],
                "cached_input_tokens": v[1],
                "output_tokens": v[2],
                "reasoning_output_tokens": v[2] // 3,
                "total_tokens": v[0] + v[2],
            }

        return self.event(
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": usage(self.tokens),
                    "last_token_usage": usage(last),
                    "model_context_window": 258400,
                },
                "rate_limits": {
                    "primary": {
                        "used_percent": rng.uniform(0, 90),
                        "window_minutes": 300,
                        "resets_at": int(self.t) + 3600,
                    },
                    "secondary": {
                        "used_percent": rng.uniform(0, 60),
                        "window_minutes": 10080,
                        "resets_at": int(self.t) + 86400,
                    },
                },
            }
        )

    def turn_complete(self, text: str) -> list[dict[str, Any]]:
        return [
            self.event({"type": "agent_message", "message": text}),
            self.item(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                    "phase": "final_answer",
                }
            ),
            self.token_count(),
            self.event(
                {
                    "type": "task_complete",
                    "turn_id": f"turn-{self.turn}",
                    "last_agent_message": text,
                    "completed_at": int(self.t),
                    "duration_ms": self.rng.randint(2000, 400000),
                }
            ),
        ]

    def _round(self) -> Iterator[dict[str, Any]]:
        rng, pools = self.rng, self.pools
        if rng.random() < 0.7:
            yield self.item(
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": pools.sentence(rng, 60, 600)}],
                    "content": None,
                    "encrypted_content": pools.cut(rng, pools.b64, rng.randint(1000, 9000)),
                }
            )
            yield self.event({"type": "agent_reasoning", "text": pools.sentence(rng, 60, 600)})
        call_id = f"call_{pools.cut(rng, pools.b64, 24)}"
        if rng.random() < 0.2:
            project_file = rng.choice(pools.files)
            patch = (
                f"*** Begin Patch\n*** Update File: {project_file.path}\n@@\n"
                + "\n".join(
                    "-" + ln for ln in pools.cut(rng, project_file.content, 400).split("\n")
                )
                + "\n"
                + "\n".join("+" + ln for ln in pools.cut(rng, pools.code, 600).split("\n"))
                + "\n*** End Patch"
            )
            yield self.item(
                {
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call_id,
                    "name": "apply_patch",
                    "input": patch,
                }
            )
            self.t += rng.uniform(0.2, 3.0)
            output = orjson.dumps(
                {
                    "output": f"Success. Updated the following files:\nM {project_file.path}\n",
                    "metadata": {"exit_code": 0, "duration_seconds": 0.1},
                }
            ).decode()
            yield self.item(
                {"type": "custom_tool_call_output", "call_id": call_id, "output": output}
            )
        else:
            if rng.random() < 0.45:
                project_file = rng.choice(pools.files)
                cmd = f"sed -n '1,400p' {project_file.path}"
                body = project_file.content
            else:
                cmd = rng.choice(
                    (
                        "pytest -q",
                        "rg -n " + rng.choice(_IDENTS),
                        "ls -la",
                        "git status",
                        "cargo test",
                    )
                )
                body = pools.cut(
                    rng, pools.log, int(min(60 * KB, rng.lognormvariate(math.log(1500), 1.4)))
                )
            arguments = orjson.dumps(
                {"cmd": cmd, "workdir": self.cwd, "yield_time_ms": 10000}
            ).decode()
            yield self.item(
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": arguments,
                    "call_id": call_id,
                }
            )
            self.t += rng.uniform(0.2, 60.0)
            output = (
                f"Chunk ID: {rng.getrandbits(24):06x}\n"
                f"Wall time: {rng.uniform(0.01, 40):.4f} seconds\n"
                f"Process exited with code {rng.choice((0, 0, 0, 1))}\n"
                f"Original token count: {len(body) // 4}\nOutput:\n{body}"
            )
            yield self.item({"type": "function_call_output", "call_id": call_id, "output": output})
        yield self.token_count()

    def turns(self, sink_bytes: Any, budget: int) -> Iterator[dict[str, Any]]:
        rng, pools = self.rng, self.pools
        yield self.meta()
        first = True
        while sink_bytes() < budget:
            self.t += rng.uniform(20.0, 900.0)
            yield from self.turn_started()
            if first:
                first = False
                yield self.item(
                    {
                        "type": "message",
                        "role": "developer",
                        "content": [
                            {
                                "type": "input_text",
                                "text": "<permissions instructions>\n"
                                + pools.sentence(rng, 800, 3000)
                                + "\n</permissions instructions>",
                            }
                        ],
                    }
                )
                yield self.item(
                    {
                        "type": "message",
                        "role": "user",
                        "content": [
                            {
                                "type": "input_text",
                                "text": f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n"
                                "  <shell>bash</shell>\n</environment_context>",
                            }
                        ],
                    }
                )
            yield from self.prompt(pools.sentence(rng, 20, 400))
            for _ in range(min(int(rng.expovariate(1 / 6)), 50)):
                yield from self._round()
                if sink_bytes() >= budget * 1.05:
                    break
            yield from self.turn_complete(pools.sentence(rng, 80, 2500))


def codex_path(home: Path, session_id: str, start: float) -> Path:
    moment = dt.datetime.fromtimestamp(start, tz=dt.UTC)
    return (
        home
        / ".codex"
        / "sessions"
        / moment.strftime("%Y/%m/%d")
        / f"rollout-{moment.strftime('%Y-%m-%dT%H-%M-%S')}-{session_id}.jsonl"
    )


def write_codex(
    rng: random.Random,
    pools: Pools,
    home: Path,
    session_id: str,
    cwd: str,
    start: float,
    budget: int,
    limit: float = math.inf,
) -> SessionInfo:
    session = CodexSession(rng, pools, session_id, cwd, start)
    session.limit = limit
    path = codex_path(home, session_id, start)
    sink = _Sink(path)
    for obj in session.turns(lambda: sink.bytes, budget):
        sink.add(obj)
    sink.close(session.t)
    return SessionInfo(
        "codex", session_id, cwd, str(path), start, session.t, sink.bytes, 1, sink.lines
    )


# -- live lines (what a running agent appends; used by the latency benchmark) --------------------


def _statement(text: str) -> str:
    """An answer that does not end on a question (that would be ``input_required``)."""
    return text.rstrip("?:. ") + "."


class LiveWriter:
    """Builds the bytes one agent appends for one step of a turn, stamped with the current time.

    ``start_turn`` is what makes a finished session ``running`` again (Claude: the user's prompt
    line; Codex: ``event_msg/task_started``); ``finish_turn`` is what makes it ``done`` (Claude: the
    final assistant text with ``stop_reason: end_turn`` plus ``system/turn_duration``; Codex:
    ``event_msg/agent_message`` plus ``event_msg/task_complete``). Each is written with one
    ``write()``, as the agents do.
    """

    def __init__(self, pools: Pools, info: SessionInfo, seed: int) -> None:
        rng = random.Random(seed)
        if info.agent == "claude":
            self._claude: ClaudeSession | None = ClaudeSession(
                rng, pools, Path("/nonexistent"), info.session_id, info.cwd, time.time()
            )
            self._codex: CodexSession | None = None
        else:
            self._claude = None
            self._codex = CodexSession(rng, pools, info.session_id, info.cwd, time.time())
            self._codex.turn = 1000

    def start_turn(self) -> bytes:
        if self._claude is not None:
            session = self._claude
            session.t = time.time()
            return _dumps(session.prompt(session.pools.sentence(session.rng, 20, 200)))
        assert self._codex is not None
        codex = self._codex
        codex.t = time.time() - 0.01
        return _dumps(codex.turn_started()[0])

    def finish_turn(self) -> bytes:
        if self._claude is not None:
            session = self._claude
            session.t = time.time() - 0.5
            lines = session.answer(_statement(session.pools.sentence(session.rng, 80, 400)))
            session.t = time.time()
            lines.append(session.turn_duration(4))
            return b"".join(_dumps(line) for line in lines)
        assert self._codex is not None
        codex = self._codex
        codex.t = time.time() - 0.05
        done = codex.turn_complete(_statement(codex.pools.sentence(codex.rng, 80, 400)))
        return _dumps(done[0]) + _dumps(done[-1])


# -- the corpus ------------------------------------------------------------------------------------


def generate(
    home: Path,
    sessions: int,
    total_bytes: int,
    *,
    seed: int = 1,
    claude_share: float = 2 / 3,
    projects: int | None = None,
    now: float | None = None,
    progress: bool = False,
) -> Corpus:
    """Write ``sessions`` sessions totalling about ``total_bytes`` under ``home`` and return
    their description (also saved as ``<home>/corpus-manifest.json``). ``projects`` distinct
    working folders are shared by the sessions (default: one per five sessions, at least 3)."""
    started = time.perf_counter()
    now = float(int(time.time())) if now is None else now
    rng = random.Random(seed)
    pools = Pools(random.Random(seed + 1))
    projects = projects or max(3, sessions // 5)
    cwds = [
        f"/home/dev/src/{rng.choice(_IDENTS)}-{rng.choice(_IDENTS)}-{i}" for i in range(projects)
    ]
    sizes = plan_sizes(rng, sessions, total_bytes)
    corpus = Corpus(home=str(home), seed=seed, now=now, target_bytes=total_bytes)
    home.mkdir(parents=True, exist_ok=True)
    done = 0
    claude_count = round(sessions * claude_share)
    agents = ["claude"] * claude_count + ["codex"] * (sessions - claude_count)
    rng.shuffle(agents)
    for i, (budget, agent) in enumerate(zip(sizes, agents, strict=True)):
        session_rng = random.Random(rng.getrandbits(64))
        cwd = cwds[i % projects] if projects >= sessions else session_rng.choice(cwds)
        # Recent sessions are the common case; a few are weeks old. Leave room for its length
        # (about 1 s per 60 bytes plus the pauses between turns); later lines are clamped to now.
        est_seconds = budget / 60.0 + 1200.0
        age = min(session_rng.expovariate(1 / (3 * 86400)), 29 * 86400)
        start = now - age - est_seconds - 60.0
        session_id = new_uuid(session_rng)
        write = write_claude if agent == "claude" else write_codex
        corpus.sessions.append(
            write(session_rng, pools, home, session_id, cwd, start, budget, now - 1.0)
        )
        done += budget
        if progress and (i % 50 == 49 or i == len(sizes) - 1):
            rate = corpus.total_bytes / MB / (time.perf_counter() - started)
            print(
                f"  {i + 1}/{sessions} sessions, "
                f"{corpus.total_bytes / MB:,.0f} MiB ({rate:,.0f} MiB/s)",
                file=sys.stderr,
            )
    corpus.seconds = time.perf_counter() - started
    corpus.save()
    return corpus


def ensure(
    home: Path, sessions: int, total_bytes: int, *, seed: int = 1, **kwargs: Any
) -> tuple[Corpus, bool]:
    """The corpus at ``home`` when its manifest matches these parameters, else a new one; and
    whether it was generated now."""
    try:
        corpus = Corpus.load(home)
    except (OSError, ValueError, TypeError):
        corpus = None
    if (
        corpus is not None
        and corpus.seed == seed
        and corpus.version == GENERATOR_VERSION
        and len(corpus.sessions) == sessions
        and corpus.target_bytes == total_bytes
        and all(os.path.exists(s.path) for s in corpus.sessions)
    ):
        return corpus, False
    if home.exists() and any(home.iterdir()) and not (home / MANIFEST).exists():
        raise SystemExit(f"{home} exists and is not a generated corpus; refusing to write into it")
    for sub in (".claude", ".codex"):
        _remove_tree(home / sub)
    return generate(home, sessions, total_bytes, seed=seed, **kwargs), True


def _remove_tree(path: Path) -> None:
    import shutil

    if path.exists():
        shutil.rmtree(path)


def transcript_files(home: Path) -> list[Path]:
    """Every generated transcript file (what the engine reads), sorted."""
    found = [
        p
        for root in (home / ".claude" / "projects", home / ".codex" / "sessions")
        for p in root.rglob("*.jsonl")
    ]
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--home", type=Path, required=True, help="the HOME to write .claude/ and .codex/ into"
    )
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument(
        "--size", type=parse_size, default=parse_size("1G"), help="total bytes: 1G, 300M, …"
    )
    parser.add_argument(
        "--claude-share", type=float, default=2 / 3, help="fraction of sessions that are Claude's"
    )
    parser.add_argument("--projects", type=int, default=None, help="distinct working folders")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--now", type=float, default=None, help="epoch seconds the newest sessions end near"
    )
    args = parser.parse_args(argv)
    if args.home.exists() and any(args.home.iterdir()) and not (args.home / MANIFEST).exists():
        parser.error(f"{args.home} is not empty and holds no {MANIFEST}")
    for sub in (".claude", ".codex"):
        _remove_tree(args.home / sub)
    corpus = generate(
        args.home,
        args.sessions,
        args.size,
        seed=args.seed,
        claude_share=args.claude_share,
        projects=args.projects,
        now=args.now,
        progress=True,
    )
    print(corpus.summary())
    print(
        f"written in {corpus.seconds:.1f} s ({corpus.total_bytes / MB / corpus.seconds:,.0f} MiB/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
