"""Gemini CLI chats: how fast the parser reads a JSONL chat, and what a legacy JSON chat (one
document, rewritten whole on every change, read whole again each time) costs per change as it
grows.

The chats are built from the shapes the real CLI 0.61.0 / 0.38.2 wrote in the conformance
scenarios (``tests/data/recorded/gemini-*``): turns of a prompt, a response whose tool call is
re-appended once it ran (with its result), the tool's answer going back, and a final answer,
plus the ``$set`` lines between them. Run: ``python bench/bench_gemini.py [--turns N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchlib import MB, OUT_DIR, machine, table, write_json

from agentbar.core.agents.gemini.chat import GeminiChatParser
from agentbar.core.agents.gemini.files import AGENT
from agentbar.core.sources.base import StreamKind, StreamSpec

OUTPUT = "x" * 2000  # a tool's output, as the CLI keeps it in the call and in the answer


def turn(n: int) -> list[dict[str, Any]]:
    ts = f"2026-12-01T23:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    call = {
        "id": f"run_shell_command__{n}",
        "name": "run_shell_command",
        "displayName": "Shell",
        "args": {"command": f"ls dir{n}", "description": "list"},
        "status": "success",
        "timestamp": ts,
        "result": [
            {
                "functionResponse": {
                    "id": f"run_shell_command__{n}",
                    "name": "run_shell_command",
                    "response": {"output": OUTPUT},
                }
            }
        ],
    }
    tokens = {"input": 1200, "output": 80, "cached": 0, "thoughts": 0, "tool": 0, "total": 1280}
    gemini = {
        "id": f"g{n}",
        "timestamp": ts,
        "type": "gemini",
        "content": "",
        "thoughts": [],
        "tokens": tokens,
        "model": "gemini-2.5-flash",
    }
    return [
        {"id": f"u{n}", "timestamp": ts, "type": "user", "content": [{"text": f"prompt {n}"}]},
        {"$set": {"lastUpdated": ts}},
        gemini,
        {"$set": {"lastUpdated": ts}},
        {**gemini, "toolCalls": [call]},
        {
            "id": f"r{n}",
            "timestamp": ts,
            "type": "user",
            "content": [{"functionResponse": call["result"][0]["functionResponse"]}],
        },
        {
            "id": f"a{n}",
            "timestamp": ts,
            "type": "gemini",
            "content": f"Answer {n}.",
            "thoughts": [],
            "tokens": tokens,
            "model": "gemini-2.5-flash",
        },
        {"$set": {"lastUpdated": ts}},
    ]


META = {
    "sessionId": "2b2ab139-5d0f-4096-b846-0957a6724455",
    "projectHash": "ab" * 32,
    "startTime": "2026-12-01T23:00:00.000Z",
    "lastUpdated": "2026-12-01T23:00:00.000Z",
    "kind": "main",
}


def jsonl_rate(turns: int, repeats: int) -> dict[str, float]:
    lines = [json.dumps(META).encode()]
    for n in range(turns):
        lines += [json.dumps(obj).encode() for obj in turn(n)]
    size = sum(len(line) + 1 for line in lines)
    spec = StreamSpec(AGENT, StreamKind.TRANSCRIPT, Path("/h/.gemini/tmp/p/chats/session-x.jsonl"))
    times = []
    records = 0
    for _ in range(repeats):
        parser = GeminiChatParser(spec, None)
        start = time.perf_counter()
        records = sum(len(parser.parse(line)) for line in lines)
        times.append(time.perf_counter() - start)
    best = statistics.median(times)
    return {"bytes": size, "lines": len(lines), "records": records, "mb_per_s": size / best / MB}


def document_cost(turns: int, repeats: int) -> dict[str, float]:
    """One legacy chat of ``turns`` turns (messages only, as 0.38 writes them), parsed whole:
    what every change to it costs the engine."""
    messages = [obj for n in range(turns) for obj in turn(n) if "id" in obj]
    latest = {m["id"]: m for m in messages}  # a document holds each message once
    doc = json.dumps({**META, "messages": list(latest.values())}, indent=2).encode()
    data = doc.replace(b"\n", b" ")
    spec = StreamSpec(
        AGENT, StreamKind.TRANSCRIPT, Path("/h/.gemini/tmp/p/chats/s.json"), whole_document=True
    )
    times = []
    for _ in range(repeats):
        parser = GeminiChatParser(spec, None)
        start = time.perf_counter()
        parser.parse(data)
        times.append(time.perf_counter() - start)
    return {"turns": turns, "bytes": len(doc), "ms_per_change": statistics.median(times) * 1000}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns in the JSONL chat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "gemini.json")
    args = parser.parse_args(argv)
    rate = jsonl_rate(args.turns, args.repeats)
    docs = [document_cost(n, args.repeats) for n in (10, 100, 500, 1000)]
    print(
        f"JSONL chat: {rate['bytes'] / MB:.1f} MB, {rate['lines']} lines, "
        f"{rate['records']} records: {rate['mb_per_s']:.1f} MB/s (median of {args.repeats})"
    )
    print(
        table(
            [
                (d["turns"], f"{d['bytes'] / MB:.2f} MB", f"{d['ms_per_change']:.1f} ms")
                for d in docs
            ],
            ("turns", "JSON chat", "read whole, per change"),
        )
    )
    write_json(args.json, {"machine": machine(), "jsonl": rate, "documents": docs})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
