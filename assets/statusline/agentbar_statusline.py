"""agentbar's status-line link: Claude Code runs this as its status-line command, as

    <python> -I -S <abs path>/agentbar_statusline.py --data-dir <abs dir> [--then <command>]

with the session's JSON on stdin. It records the parts agentbar shows (the 5-hour and 7-day
``rate_limits``, the session's ``cost``) into ``<data dir>/limits/claude-status-line.json`` and
then runs the person's own status-line command (``--then``, run by the shell exactly as Claude
would) with the same stdin, printing its output and exiting with its status; with none it prints
a short line of its own. Standard library only, and nothing agentbar records can stop the
person's status line: every failure to record is swallowed.
"""

import sys

try:
    # -I leaves this file's folder off sys.path: put it back, first, for the one import.
    cut = __file__.rfind("/")
    sys.path.insert(0, __file__[: max(cut, 1)] if cut >= 0 else ".")
    from agentbar_statusline_impl import run  # type: ignore[import-not-found]
except BaseException:  # a broken install must not take the status line away
    sys.stdout.write("agentbar: status-line link broken\n")
    sys.exit(0)
sys.exit(run(sys.argv))
