"""The fast decoding of transcript lines (only the fields the parsers read) equals the full one.

Claude transcripts are decoded that way (agents/claude/fields.py); Codex rollouts are read
alongside them, decoded whole either way, so that the stream table's own reading (the tail,
the counters) is compared on both agents' files too. Every stream is read twice through a real
stream table over real files: as the engine reads it (``load_fields``: msgspec typed dicts,
anything unsure decoded whole) and inside ``full_decode()`` (every line through
``orjson.loads`` into the same parsers, the reference). The records, the search rows, every
counter of the stream (malformed, oversized, unknown, odd timestamps, clamped numbers, adapter
failures), its owner and its parser's checkpoint must be equal. The corpora: every recorded
and synthetic fixture under tests/data, the line writers' sessions, generated corpora
(bench/corpus.py) of several seeds, and those lines mutated the fuzzer's ways and more (keys
reordered or repeated, quotes and backslashes inside strings, key names inside values, huge
numbers, nesting at the parsers' limits, broken encodings). A last test runs the comparison
against deliberately wrong fast paths and requires it to fail.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbar.core.agents.claude import fields as claude_fields
from agentbar.core.agents.claude import transcript
from agentbar.core.config import Settings
from agentbar.core.sources.base import Unsure, full_decode, json_value, load_fields
from agentbar.core.streams import StreamTable

from .claude_lines import ClaudeTranscript
from .codex_lines import CodexRollout
from .fuzz_lines import MUTATORS, SourceFile, load_corpus, mutate

ROOT = Path(__file__).resolve().parents[1]
CLAUDE_DIR = ".claude/projects/-work-demo"
CODEX_DIR = ".codex/sessions/2026/11/29"
CLAUDE_ID = "11111111-2222-3333-4444-555555555555"
CODEX_ID = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01"


def _corpus_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_corpus", ROOT / "bench" / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# -- reading a HOME both ways ------------------------------------------------------------------


def read_home(home: Path, data_dir: Path) -> dict[str, Any]:
    """Everything a stream table makes of every stream under ``home``, by path."""
    settings = Settings.from_env({"HOME": str(home), "AGENTBAR_DATA_DIR": str(data_dir)})
    table = StreamTable(settings.sources(), max_line_bytes=64 * 1024)
    seen: dict[str, Any] = {}
    for stream in sorted(table.scan(), key=lambda s: s.path):
        records, search = [], []
        while True:
            outcome = table.read(stream, 256 * 1024)  # several batches: counters carry over
            records += outcome.records
            search += outcome.search
            if not outcome.more:
                break
        seen[stream.path] = {
            "records": records,
            "search": search,
            "counters": (
                stream.malformed,
                stream.oversized,
                stream.unknown,
                stream.odd_times,
                stream.clamped,
                stream.bugs,
            ),
            "owner": outcome.owner,
            "checkpoint": stream.parser.checkpoint(),
            "last_error": stream.last_error,
        }
    table.close_all()
    return seen


def differences(home: Path, data_dir: Path) -> list[str]:
    """Where the fast decoding and the full one disagree (empty: nowhere)."""
    fast = read_home(home, data_dir)
    with full_decode():
        full = read_home(home, data_dir)
    assert fast.keys() == full.keys()
    found = []
    for path, got in fast.items():
        want = full[path]
        for part in want:
            if got[part] != want[part]:
                if part == "records":
                    pairs = zip(got[part], want[part], strict=False)
                    first = next(((g, w) for g, w in pairs if g != w), None)
                    found.append(f"{path}: records differ, first {first}")
                else:
                    found.append(f"{path}: {part} {got[part]!r} != {want[part]!r}")
    return found


def assert_same(home: Path, data_dir: Path) -> dict[str, Any]:
    assert differences(home, data_dir) == []
    return read_home(home, data_dir)


def dumps(obj: Any) -> bytes:
    """A line as the agents write it (Python's writer: integers of any width)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def write(home: Path, target: str, lines: list[bytes]) -> None:
    path = home / target
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def fast_share(lines: list[bytes], line_fields: Callable[[bytes], object]) -> float:
    """The share of ``lines`` the fast path decodes (so that equality is not vacuous)."""
    return sum(line_fields(line) is not None for line in lines) / max(1, len(lines))


# -- the corpora -------------------------------------------------------------------------------


def test_recorded_and_synthetic_fixtures(tmp_path: Path) -> None:
    corpus = load_corpus()
    for f in corpus.files:
        write(tmp_path / "home", f.target, list(f.lines))
    seen = assert_same(tmp_path / "home", tmp_path / "data")
    assert sum(len(s["records"]) for s in seen.values()) > 1000
    assert sum(len(s["search"]) for s in seen.values()) > 100
    claude = corpus.lines("claude")  # type: ignore[arg-type]
    assert fast_share(claude, claude_fields.line_fields) > 0.8


def test_line_writers_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, f"{CLAUDE_DIR}/{CLAUDE_ID}.jsonl", [dumps(line) for line in _claude_session()])
    name = f"rollout-2026-11-29T10-00-00-{CODEX_ID}.jsonl"
    write(home, f"{CODEX_DIR}/{name}", [dumps(line) for line in _codex_session()])
    seen = assert_same(home, tmp_path / "data")
    assert all(s["records"] for s in seen.values())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_corpora(tmp_path: Path, seed: int) -> None:
    corpus = _corpus_module()
    home = tmp_path / "home"
    corpus.generate(home, 12, 3 * 1024 * 1024, seed=seed, now=1_796_178_343.0)
    seen = assert_same(home, tmp_path / "data")
    assert sum(len(s["search"]) for s in seen.values()) > 100
    lines = [
        line for path in corpus.transcript_files(home) for line in path.read_bytes().splitlines()
    ]
    claude = [line for line in lines if b'"sessionId"' in line]
    assert fast_share(claude, claude_fields.line_fields) > 0.9


@pytest.mark.parametrize("seed", [4, 5])
def test_generated_corpora_mutated(tmp_path: Path, seed: int) -> None:
    """A generated corpus with a mutant after about one line in eight."""
    corpus = _corpus_module()
    home = tmp_path / "home"
    corpus.generate(home, 8, 2 * 1024 * 1024, seed=seed, now=1_796_178_343.0)
    rng = random.Random(seed)
    for path in corpus.transcript_files(home):
        lines: list[bytes] = []
        for index, line in enumerate(path.read_bytes().splitlines()):
            lines.append(line)
            if index and rng.random() < 0.125:
                mutant = (
                    mutate(rng, line).line
                    if rng.random() < 0.5
                    else rng.choice(EXTRA_MUTATORS)(rng, line)
                )
                lines.append(mutant.replace(b"\n", b" "))
        path.write_bytes(b"".join(line + b"\n" for line in lines))
    seen = assert_same(home, tmp_path / "data")
    assert any(s["counters"][0] for s in seen.values())  # malformed mutants among them


@pytest.mark.parametrize("seed", range(6))
def test_mutated_lines(tmp_path: Path, seed: int) -> None:
    """The fixtures with mutants between their lines: the fuzzer's mutators and this file's."""
    rng = random.Random(seed)
    home = tmp_path / "home"
    for f in load_corpus().files:
        write(home, f.target, list(_with_mutants(rng, f)))
    assert_same(home, tmp_path / "data")


def _with_mutants(rng: random.Random, f: SourceFile) -> Iterator[bytes]:
    for index, line in enumerate(f.lines):
        yield line
        if index == 0 and f.agent == "codex":
            continue  # the first line decides the rollout's format: keep it
        for _ in range(rng.randint(0, 3)):
            if rng.random() < 0.5:
                yield mutate(rng, line).line
            else:
                yield rng.choice(EXTRA_MUTATORS)(rng, line)


# -- mutations beyond the fuzzer's ---------------------------------------------------------------


def _tree(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _slots(value: Any) -> list[tuple[Any, Any]]:
    slots: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, item in items:
            slots.append((node, key))
            stack.append(item)
    return slots


def reorder_keys(rng: random.Random, line: bytes) -> bytes:
    tree = _tree(line)
    for parent, key in [(None, None), *_slots(tree)]:
        node = tree if parent is None else parent[key]
        if isinstance(node, dict):
            items = list(node.items())
            rng.shuffle(items)
            node.clear()
            node.update(items)
    return orjson.dumps(tree) if tree is not None else line


def repeat_key(rng: random.Random, line: bytes) -> bytes:
    """A key written twice with another value first (the last one counts, in both decoders)."""
    tree = _tree(line)
    keyed = [(p, k) for p, k in _slots(tree) if isinstance(p, dict)]
    if not keyed:
        return line
    parent, key = rng.choice(keyed)
    text = orjson.dumps(parent)
    decoy = orjson.dumps(rng.choice(["x", 1, None, {"type": "text"}, [1], 10**19, 1.5, True]))
    doubled = b"{" + orjson.dumps(key) + b":" + decoy + b"," + text[1:]
    return line.replace(text, doubled, 1) if text in line else line


def quotes_in_strings(rng: random.Random, line: bytes) -> bytes:
    """Escaped quotes, backslashes and key names inside string values."""
    tree = _tree(line)
    texts = [(p, k) for p, k in _slots(tree) if isinstance(p[k], str)]
    if not texts:
        return line
    parent, key = rng.choice(texts)
    parent[key] = parent[key] + rng.choice(
        [
            '", "type": "user", "x": "',
            '\\", \\"is_error\\": true, \\"',
            '"},"usage":{"input_tokens":99},"a":{"b":"',
            "\\\\",
            '\\"',
            '"payload":{"type":"function_call_output"}',
            "\u2028\u00e9\U0001f600",
            "\x00\x1f",
        ]
    )
    return orjson.dumps(tree)


def overflow_and_depth(rng: random.Random, line: bytes) -> bytes:
    """A number past a float's range or nesting near the decoders' limits in a skipped field,
    sometimes with a wide integer where a token count is read: the lines whose full decode goes
    down the lenient path."""
    tree = _tree(line)
    if not isinstance(tree, dict):
        return line
    marker = "\x01skip\x01"
    tree["skippedField"] = marker
    depth = rng.choice((10, 254, 255, 900, 985, 990, 993, 995, 1000, 1023, 1024, 1025))
    filler = rng.choice(
        [b"1e400", b"-1e999", b"1" * 400, b"[" * depth + b"1" + b"]" * depth, b'"\xff\xfe"']
    )
    if rng.random() < 0.5:
        filler = b"[" + filler + b"," + b"[" * depth + b"]" * depth + b"]"
    usage = _find_dict(tree, "usage") or _find_dict(tree, "total_token_usage")
    if usage is not None and rng.random() < 0.5:
        usage[rng.choice(list(usage) or ["input_tokens"])] = rng.choice([2**63, 2**64, 10**30])
        return json.dumps(tree).encode().replace(json.dumps(marker).encode(), filler, 1)
    return orjson.dumps(tree).replace(orjson.dumps(marker), filler, 1)


def _find_dict(tree: Any, key: str) -> dict[str, Any] | None:
    for parent, k in _slots(tree):
        if k == key and isinstance(parent[k], dict):
            return parent[k]  # type: ignore[no-any-return]
    return None


EXTRA_MUTATORS: list[Callable[[random.Random, bytes], bytes]] = [
    reorder_keys,
    repeat_key,
    quotes_in_strings,
    overflow_and_depth,
]


def test_hostile_lines_at_the_limits(tmp_path: Path) -> None:
    """Each hostile shape on its own, on lines of every kind the fast path decodes."""
    home = tmp_path / "home"
    claude = [dumps(line) for line in _claude_session()]
    codex = [dumps(line) for line in _codex_session()]
    rng = random.Random(7)
    hostile_claude, hostile_codex = [claude[0]], [codex[0]]
    for mutator in [*EXTRA_MUTATORS, *MUTATORS.values()]:
        for _ in range(3):
            hostile_claude += [mutator(rng, line) for line in claude[1:]]
            hostile_codex += [mutator(rng, line) for line in codex[1:]]
    write(home, f"{CLAUDE_DIR}/{CLAUDE_ID}.jsonl", [x.replace(b"\n", b" ") for x in hostile_claude])
    name = f"rollout-2026-11-29T10-00-00-{CODEX_ID}.jsonl"
    write(home, f"{CODEX_DIR}/{name}", [x.replace(b"\n", b" ") for x in hostile_codex])
    seen = assert_same(home, tmp_path / "data")
    counters = [s["counters"] for s in seen.values()]
    assert any(c[0] for c in counters)  # malformed lines were among them
    assert any(c[4] for c in counters)  # and clamped numbers


def test_nesting_at_the_recursion_limits(tmp_path: Path) -> None:
    """Every depth around json's and msgspec's limits, with a number orjson refuses, a broken
    character or nothing else beside it: the full decode refuses some of these lines (json's
    recursion limit, on the lenient path) and the fast one must refuse the same ones."""
    claude = [dumps(line) for line in _claude_session()]
    codex = [dumps(line) for line in _codex_session()]

    def hostile(line: bytes, depth: int, extra: bytes) -> bytes:
        return line[:-1] + b',"zz":[' + extra + b"," + b"[" * depth + b"]" * depth + b"]}"

    for extra in (b"1e400", b'"\xff"', b"1"):
        home = tmp_path / extra.hex() / "home"
        hostile_claude, hostile_codex = [claude[0]], [codex[0]]
        for depth in range(780, 1030):  # json's limit is ~1000 less the stack's depth
            hostile_claude += [hostile(line, depth, extra) for line in claude[1:6]]
            hostile_codex += [hostile(line, depth, extra) for line in codex[1:12]]
        write(home, f"{CLAUDE_DIR}/{CLAUDE_ID}.jsonl", hostile_claude)
        name = f"rollout-2026-11-29T10-00-00-{CODEX_ID}.jsonl"
        write(home, f"{CODEX_DIR}/{name}", hostile_codex)
        seen = assert_same(home, home.parent / "data")
        assert any(s["counters"][0] for s in seen.values())


# -- the guards ----------------------------------------------------------------------------------


def test_json_value_refuses_what_it_cannot_decode_alone() -> None:
    import msgspec

    def raw(data: bytes) -> msgspec.Raw:
        return msgspec.json.decode(b'{"x":' + data + b"}", type=dict[str, msgspec.Raw])["x"]

    assert json_value(raw(b'{"command":"ls","n":[1,2.5,null,true]}')) == {
        "command": "ls",
        "n": [1, 2.5, None, True],
    }
    for unsure in (b"18446744073709551616", b"[-9223372036854775809]", b"[" * 300 + b"]" * 300):
        with pytest.raises(Unsure):
            json_value(raw(unsure))


def test_load_fields_gives_way_to_the_full_decode() -> None:
    decoder = claude_fields._DECODER
    assert load_fields(b'{"type":"user","timestamp":"2026-11-29T10:00:00.000Z"}', decoder)
    for line in (b"[1]", b'{"type":"user"', b'{"type":5}', b'{"a":"\\ud800"}', b"", b"{} x"):
        assert load_fields(line, decoder) is None
    with full_decode():
        assert load_fields(b'{"type":"user"}', decoder) is None


# -- the comparison can fail ---------------------------------------------------------------------


def _broken(
    line_fields: Callable[[bytes], dict[str, Any] | None], damage: Callable[[dict[str, Any]], None]
) -> Callable[[bytes], dict[str, Any] | None]:
    def wrong(line: bytes) -> dict[str, Any] | None:
        obj = line_fields(line)
        if obj is not None:
            damage(obj)
        return obj

    return wrong


def _drop_usage(obj: dict[str, Any]) -> None:
    message = obj.get("message")
    if isinstance(message, dict) and isinstance(message.get("usage"), dict):
        message["usage"].pop("output_tokens", None)


def _drop_timestamp(obj: dict[str, Any]) -> None:
    obj.pop("timestamp", None)


def _text_in_other_type(obj: dict[str, Any]) -> None:
    if obj.get("type") == "user":
        obj["isMeta"] = True


@pytest.mark.parametrize(
    ("module", "damage"),
    [(transcript, _drop_usage), (transcript, _text_in_other_type), (transcript, _drop_timestamp)],
)
def test_a_wrong_fast_path_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: Any, damage: Any
) -> None:
    for f in load_corpus().files:
        write(tmp_path / "home", f.target, list(f.lines))
    monkeypatch.setattr(module, "line_fields", _broken(module.line_fields, damage))
    assert differences(tmp_path / "home", tmp_path / "data")


# -- sessions from the line writers ---------------------------------------------------------------


def _claude_session() -> list[dict[str, Any]]:
    t = ClaudeTranscript()
    lines = [
        t.prompt('fix the "quoted" \\ bug in src/a.py'),
        t.thinking("let me look"),
        t.text("I will run the tests"),
        t.bash('pytest -q "tests/test a.py"', call_id="toolu_01"),
        t.tool_result("toolu_01", "1 failed\n" * 50),
        t.tool_result("toolu_02", "rejected", is_error=True),
        t.tool_use("Read", {"file_path": "/w/a.py", "limit": 10**30}, call_id="toolu_03"),
        t.tool_use("Weird", {"n": 1.5, "deep": [[[[1]]]]}, call_id="toolu_04"),
        t.tool_use("AskUserQuestion", {"questions": [{"question": "Which?"}]}, "toolu_05"),
        t.progress(),
        t.turn_duration(2),
        t.api_error("overloaded", 1, 10),
        t.synthetic_error("API Error: 500"),
        t.interrupt(),
        t.meta("<local-command-stdout>x</local-command-stdout>"),
        t.bookkeeping("ai-title", aiTitle="Fixing tests"),
        t.bookkeeping("summary", summary="A summary"),
        t.bookkeeping("file-history-snapshot", snapshot={"files": {}}),
    ]
    return lines


def _codex_session() -> list[dict[str, Any]]:
    r = CodexRollout()
    return [
        r.meta(),
        r.context(),
        r.started(),
        r.prompt('build the "thing"'),
        r.reasoning("thinking hard"),
        r.exec("ls -la", call_id="call_1"),
        r.output("call_1", "Exit code: 1\nOutput:\nboom"),
        r.call("request_user_input", {"questions": [{"question": "Go?"}]}, call_id="call_2"),
        r.output("call_2", "rejected by user"),
        r.answer("done", phase="final_answer"),
        r.tokens(1000, 200, 50),
        r.tokens(2**70, -5, 1.5),
        r.event("thread_name_updated", thread_name="A name"),
        r.event(
            "item_completed",
            item={"type": "UserMessage", "content": [{"type": "text", "text": "hi"}]},
        ),
        r.event("user_message", message="", images=["x.png"]),
        r.complete("done"),
        r.aborted(),
    ]
