"""What the agents' process matchers read from a command line: its positional words and the
value of an option, in every spelling a person types (pure logic, no processes)."""

from __future__ import annotations

import pytest

from agentbar.core.sources.base import option_value, positionals


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--cd", "/a"], "/a"),
        (["--cd=/a"], "/a"),
        (["-C", "/a"], "/a"),
        (["-C/a"], "/a"),
        (["-C", "/a", "--cd", "/b"], "/b"),  # the last one counts
        (["exec", "--", "-C", "/a"], None),  # after -- nothing is an option
        (["--cd"], None),  # no value follows
        (["--cd", "--cd=/x"], "--cd=/x"),  # a value is never read as an option
        (["--cdrom=/x"], None),  # another option that starts alike
    ],
)
def test_option_value_reads_every_spelling(args: list[str], expected: str | None) -> None:
    assert option_value(args, "-C", "--cd", glued="-C") == expected


def test_a_glued_value_needs_the_glued_option() -> None:
    assert option_value(["-C/a"], "-C", "--cd") is None
    assert option_value(["--session-id", "abc"], "--session-id") == "abc"
    assert option_value(["-s", ""], "-s", "--session") == ""


def test_positionals_skip_the_values_of_value_options() -> None:
    args = ["-m", "gpt", "exec", "--json", "fix it", "--", "-x"]
    assert positionals(args, {"-m"}) == ["exec", "fix it", "-x"]
