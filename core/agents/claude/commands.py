"""Claude's slash-command lines read as what the person typed: the command's name and its
arguments, and the output a local command printed (pure; any thread).

Claude Code writes ``/init`` or ``/plugin:command args`` as a user line of tags,
``<command-name>/plugin:command</command-name> <command-message>plugin:command is running…
</command-message> <command-args>args</command-args>`` in any order (2.1.x writes the same text
as the ``content`` of a ``system`` ``local_command`` line), and what a local command printed as
``<local-command-stdout>…</local-command-stdout>`` (agent-formats.md 1.4, 1.5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAG = re.compile(r"<(command-name|command-message|command-args)>(.*?)</\1>", re.DOTALL)
_OUTPUT = re.compile(r"<local-command-(stdout|stderr)>(.*?)(?:</local-command-\1>|\Z)", re.DOTALL)
NAME_CHARS = 200
ARGS_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str  # "/init", "/plugin:command"
    args: str  # "" when none

    @property
    def text(self) -> str:
        """The command as the person typed it."""
        return f"{self.name} {self.args}".strip()


def slash_command(text: str) -> SlashCommand | None:
    """The slash command a user line's text holds, or None when it is not one."""
    head = text.lstrip()
    if not head.startswith(("<command-name>", "<command-message>", "<command-args>")):
        return None
    tags: dict[str, str] = {}
    for tag, value in _TAG.findall(text):
        tags.setdefault(tag, value.strip())
    name = tags.get("command-name") or ""
    if not name:
        message = tags.get("command-message") or ""
        name = message.split()[0] if message.split() else ""
    name = " ".join(name.split())[:NAME_CHARS]
    if not name:
        return None
    if not name.startswith("/"):
        name = "/" + name
    return SlashCommand(name, tags.get("command-args", "")[:ARGS_CHARS])


def command_output(text: str) -> str | None:
    """What a local command printed (stdout, then stderr), or None when ``text`` is not that."""
    if not text.lstrip().startswith(("<local-command-stdout>", "<local-command-stderr>")):
        return None
    return "\n".join(part.strip() for _, part in _OUTPUT.findall(text) if part.strip())
