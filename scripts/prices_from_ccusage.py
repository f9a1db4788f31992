"""Write core/usage/prices.json from the price snapshot ccusage 20 bundles (a maintainer's tool).

ccusage 20 ships as a native binary whose offline price tables are raw deflate streams inside
it: LiteLLM's (compacted), and models.dev's, which it falls back on for the models LiteLLM's
lacks (Gemini's). This finds both, keeps the models Claude Code, Codex, Gemini CLI and opencode
sessions name, and writes agentbar's dated table, so that agentbar's cost equals
``ccusage --offline`` on the same files. Run: python scripts/prices_from_ccusage.py BIN
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
LITELLM = b'{"anthropic.claude'  # how each snapshot's JSON starts
MODELS_DEV = b'{"@cf/'
MILLION = 1_000_000


def snapshot(binary: bytes, mark: bytes) -> dict[str, Any]:
    """The first raw-deflate stream in ``binary`` whose JSON starts with ``mark``."""
    for start in range(len(binary)):
        try:
            head = zlib.decompressobj(-15).decompress(binary[start : start + 512], 64)
        except zlib.error:
            continue
        if head.startswith(mark):
            table: dict[str, Any] = json.loads(zlib.decompressobj(-15).decompress(binary[start:]))
            return table
    raise SystemExit("no price snapshot found in that binary")


def gemini(catalog: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Gemini's models from models.dev (USD per million tokens there), per token."""
    out = {}
    for name, entry in sorted(catalog.items()):
        cost = entry.get("cost") or {}
        if not name.startswith("gemini-") or "@" in name or ":" in name:
            continue
        if "input" not in cost or "output" not in cost:
            continue
        price: dict[str, Any] = {
            k: cost[k] / MILLION for k in ("input", "output", "cache_read") if k in cost
        }
        for tier in cost.get("tiers", []):
            if tier.get("tier", {}).get("size") == 200_000:
                price["tier_applies"] = "request"  # a context tier: the whole request
                for k in ("input", "output", "cache_read"):
                    if k in tier:
                        price[f"{k}_above_200k"] = tier[k] / MILLION
        out[name] = price
    return out


def main(path: str, version: str) -> None:
    binary = Path(path).read_bytes()
    table = snapshot(binary, LITELLM)
    models = {
        name: {FIELDS[k]: v for k, v in sorted(entry.items()) if k in FIELDS}
        for name, entry in sorted(table.items())
        if KEEP.match(name) and "i" in entry and "o" in entry
    }
    for name, price in models.items():
        if name.startswith("claude-"):  # Anthropic bills a one-hour cache write at 2x input
            price["cache_write_1h"] = 2 * price["input"]
    for name, price in gemini(snapshot(binary, MODELS_DEV)).items():
        models.setdefault(name, price)
    doc = {
        "source": f"ccusage {version} offline snapshot (LiteLLM and models.dev prices)",
        "date": dt.date.today().isoformat(),
        "unit": "USD per token",
        "tier_tokens": 200000,
        "models": models,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(models)} models -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "20.0.24")
