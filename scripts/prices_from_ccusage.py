"""Write core/usage/prices.json from the price snapshot ccusage 20 bundles (a maintainer's tool).

ccusage 20 ships as a native binary whose offline price table (LiteLLM's, compacted) is a raw
deflate stream inside it. This finds that stream, keeps the models Claude Code, Codex, Gemini
CLI and opencode sessions name, and writes agentbar's dated table, so that agentbar's cost
equals ``ccusage --offline`` on the same files. Run: python scripts/prices_from_ccusage.py BIN
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
import zlib
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "core" / "usage" / "prices.json"
KEEP = re.compile(r"^(claude-|gpt-|o1|o3|o4|codex-|gemini-)")
FIELDS = {  # ccusage's compact names -> agentbar's
    "i": "input",
    "o": "output",
    "cr": "cache_read",
    "cc": "cache_write",
    "ia": "input_above_200k",
    "oa": "output_above_200k",
    "cra": "cache_read_above_200k",
    "cca": "cache_write_above_200k",
}
MARK = b'{"anthropic.claude'


def snapshot(binary: bytes) -> dict[str, Any]:
    """The first raw-deflate stream in ``binary`` that inflates to the compact table."""
    for start in range(len(binary)):
        try:
            head = zlib.decompressobj(-15).decompress(binary[start : start + 512], 64)
        except zlib.error:
            continue
        if head.startswith(MARK):
            table: dict[str, Any] = json.loads(zlib.decompressobj(-15).decompress(binary[start:]))
            return table
    raise SystemExit("no price snapshot found in that binary")


def main(path: str, version: str) -> None:
    table = snapshot(Path(path).read_bytes())
    models = {
        name: {FIELDS[k]: v for k, v in sorted(entry.items()) if k in FIELDS}
        for name, entry in sorted(table.items())
        if KEEP.match(name) and "i" in entry and "o" in entry
    }
    for name, price in models.items():
        if name.startswith("claude-"):  # Anthropic bills a one-hour cache write at 2x input
            price["cache_write_1h"] = 2 * price["input"]
    doc = {
        "source": f"ccusage {version} offline snapshot (LiteLLM model prices)",
        "date": dt.date.today().isoformat(),
        "unit": "USD per token",
        "tier_tokens": 200000,
        "models": models,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(models)} models -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "20.0.24")
