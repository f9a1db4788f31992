"""agentbar's hook: Claude Code and Codex run this on every hook event, as

    <python> -I -S <abs path>/agentbar_hook.py --agent claude|codex --data-dir <abs dir>

with the event's JSON on stdin (Codex's legacy ``notify``: ``--notify`` and the JSON as the last
argument). It appends one line to ``<data dir>/events/<agent>/<session id>.jsonl`` and always
exits 0. The work is in ``agentbar_hook_impl.py`` next to it: a script run as ``__main__`` is
compiled on every run, an imported module is loaded from its cached bytecode.
"""

import sys

try:
    # -I leaves this file's folder off sys.path: put it back, first, for the one import.
    cut = max(__file__.rfind("/"), __file__.rfind("\\") if sys.platform == "win32" else -1)
    sys.path.insert(0, __file__[: max(cut, 1)] if cut >= 0 else ".")
    from agentbar_hook_impl import run  # type: ignore[import-not-found]
except BaseException:  # a broken install must not break the agent either
    sys.exit(0)
run(sys.argv)
