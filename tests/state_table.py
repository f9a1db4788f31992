"""The harness of the per-agent state tables: lines through the real adapter, the records
through the state machine, then fusion with the given registry and liveness."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agentbar.core.model import SessionState, Source, State, WaitingFor
from agentbar.core.sources.base import StreamParser, StreamSpec
from agentbar.core.state import fusion, turns
from agentbar.core.state.turns import TurnState


@dataclass
class Scenario:
    name: str
    lines: list[tuple[StreamSpec, dict[str, Any]]]
    expect: State
    waiting: WaitingFor | None = None
    source: Source = Source.TRANSCRIPT
    detail: str = ""
    registry: fusion.RegistryView | None = None
    alive: bool | None = True
    quiet: float = 0.5  # seconds between the last line and the decision


def decide(
    scenario: Scenario,
    parser_for: Callable[[StreamSpec], StreamParser],
    traits: fusion.AgentTraits,
) -> SessionState:
    parsers: dict[Path, StreamParser] = {}
    turn = TurnState()
    last_ts = 0.0
    for spec, line in scenario.lines:
        parser = parsers.setdefault(spec.path, parser_for(spec))
        for record in parser.parse(orjson.dumps(line)):
            turn = turns.reduce(turn, record)
            last_ts = max(last_ts, record.ts or 0.0)
    signals = fusion.Signals(
        turn=turn, registry=scenario.registry, alive=scenario.alive, last_activity=last_ts
    )
    return fusion.decide(signals, last_ts + scenario.quiet, traits)


def check(scenario: Scenario, got: SessionState) -> None:
    assert (got.state, got.waiting_for, got.source) == (
        scenario.expect,
        scenario.waiting,
        scenario.source,
    ), got
    assert scenario.detail in got.detail, got.detail
