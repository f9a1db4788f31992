"""The address agentbar shows a person, to open in a browser (pure; any thread).

One function formats it, so the one-time browser code can take the token's place here alone.
It is shown to a person only: ``agentbar serve`` prints it on its own output (a terminal, or
the script that started it), a tray prints it when its standard error is a terminal. Never to
a log, and never by a detached process: they name the origin and where the rest is.
"""

from __future__ import annotations

from typing import TextIO


def url_to_show(origin: str, token: str) -> str:
    """The address to open: ``origin`` (``http://127.0.0.1:PORT``) with what lets a browser
    in (the page moves the token into a cookie at once)."""
    return f"{origin}/?token={token}"


def for_stream(origin: str, token: str, stream: TextIO, where: str) -> str:
    """The address to print on ``stream``: the whole of it on a person's terminal; otherwise
    (a log, a pipe to a file) the origin alone and ``where`` the rest can be found."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        terminal = False
    if terminal:
        return url_to_show(origin, token)
    return f"{origin} (the address with its token is in {where}, readable by you alone)"
