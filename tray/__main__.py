"""The ``agentbar`` command: the tray app, or one of the headless commands (main thread).

``core/cli.py`` builds the parser and runs the headless commands; the commands that open
something a person sees (``agentbar window``) are added here, since the core never imports
the tray.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from agentbar.core import cli
from agentbar.core.config import Settings
from agentbar.tray import window


def build_parser() -> argparse.ArgumentParser:
    parser = cli.build_parser("agentbar")
    window.add_parser(_subcommands(parser))
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise RuntimeError("the core parser has no subcommands")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "window":
            settings = Settings.from_env()
            cli.setup_logging(settings, verbose=args.verbose)
            return window.run(args, settings)
        if args.command is None:
            # The tray icon, menu and notifications are a later milestone of this build; until
            # then plain ``agentbar`` follows every session in the terminal instead.
            print(
                "agentbar: no tray in this build yet; following sessions here (Ctrl-C to stop)",
                file=sys.stderr,
            )
            args.command, args.json = "watch", False
        return cli.run(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
