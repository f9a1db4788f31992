"""The ``agentbar`` command: the tray app, or one of the headless commands (main thread).

``core/cli.py`` builds the parser and runs the headless commands; the commands that open
something a person sees (plain ``agentbar``: the tray; ``agentbar window``) and
``agentbar autostart`` are added here, since the core never imports the tray.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..core import cli, privacy
from ..core.closed_pipe import quiet_on_closed_pipe
from ..core.config import Settings
from . import app, autostart, window


def build_parser() -> argparse.ArgumentParser:
    parser, commands = cli.parser_and_commands("agentbar")
    window.add_parser(commands)
    autostart.add_parser(commands)
    return parser


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
        return quiet_on_closed_pipe(lambda: cli.run(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
