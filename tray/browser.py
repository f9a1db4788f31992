"""The user's default browser, for when no pywebview window can open: open a page in it, or
say in one line how to open it by hand (the calling thread).

The address carries a one-time code, never the token: a browser keeps addresses in its history
and the command that starts it shows them in the process list, and a code is spent on the first
load (``core/server/codes.py``).
"""

from __future__ import annotations

import logging
import webbrowser

log = logging.getLogger(__name__)


def open_in_browser(url: str) -> bool:
    """Open ``url`` in the default browser (``$BROWSER`` first, as ``webbrowser`` reads it);
    False when there is none or it would not start."""
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    try:
        return bool(browser.open(url))
    except (OSError, webbrowser.Error) as exc:
        log.info("the browser did not start: %s", exc)
        return False


def open_this(url: str, minutes: int) -> str:
    """How to open ``url`` (a one-time address) by hand."""
    return f"open {url} in a browser (it works once, within {minutes} minute{'s' * (minutes != 1)})"


def by_hand(url: str, minutes: int) -> str:
    """The line that says how to open ``url`` without a browser agentbar can start."""
    return f"no browser to open it in: {open_this(url, minutes)}"
