"""The ``agentbar`` command: the tray app, or one of the headless commands (main thread).

``core/cli.py`` builds the parser and runs the headless commands; the commands that open
something a person sees (plain ``agentbar``: the tray; ``agentbar window``) and
``agentbar autostart`` are added here, since the core never imports the tray.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from agentbar.core import cli, privacy
from agentbar.core.config import Settings
from agentbar.tray import app, autostart, window


def build_parser() -> argparse.ArgumentParser:
    parser = cli.build_parser("agentbar")
    commands = _subcommands(parser)
    window.add_parser(commands)
    autostart.add_parser(commands)
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise RuntimeError("the core parser has no subcommands")


def main(argv: Sequence[str] | None = None) -> int:
    privacy.set_private_umask()  # before anything is written, whatever the command
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "autostart":
            return autostart.run(args, sys.stdout)
        if args.command in ("window", None):
            settings = Settings.from_env()
            cli.prepare(settings, verbose=args.verbose)
            if args.command == "window":
                return window.run(args, settings)
            return app.run(settings)
        return cli.run(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
