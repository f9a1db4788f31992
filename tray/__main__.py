"""The ``agentbar`` command: the tray app, or one of the headless commands (main thread)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from agentbar.core import cli


def main(argv: Sequence[str] | None = None) -> int:
    parser = cli.build_parser("agentbar")
    args = parser.parse_args(argv)
    if args.command is None:
        # The tray icon, menu and notifications are a later milestone of this build; until
        # then plain ``agentbar`` follows every session in the terminal instead.
        print(
            "agentbar: no tray in this build yet; following sessions here (Ctrl-C to stop)",
            file=sys.stderr,
        )
        args.command, args.json = "watch", False
    try:
        return cli.run(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
