"""Claude's slash-command lines read as what the person typed: the command's name and its
arguments, and the output a local command printed (pure; any thread).

Claude Code writes ``/init`` or ``/plugin:command args`` as a user line of tags,
``<command-name>/plugin:command</command-name> <command-message>plugin:command is running…
</command-message> <command-args>args</command-args>`` in any order (2.1.x writes the same text
as the ``content`` of a ``system`` ``local_command`` line), and what a local command printed as
``<local-command-stdout>…</local-command-stdout>`` (agent-formats.md 1.4, 1.5). A shell command
typed in bash mode (``! ls``) is ``<bash-input>ls</bash-input>``, its output
``<bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>``: the same, named ``!``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAG = re.compile(r"<(command-name|command-message|command-args)>(.*?)</\1>", re.DOTALL)
_OUTPUT = re.compile(
    r"<(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>(.*?)(?:</\1>|\Z)",
    re.DOTALL,
)
_BASH_INPUT = re.compile(r"<bash-input>(.*?)(?:</bash-input>|\Z)", re.DOTALL)
BASH_MODE = "!"  # the name of a shell command typed in bash mode ("! ls")
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
    if head.startswith("<bash-input>"):
        typed = _BASH_INPUT.match(head)
        line = typed.group(1).strip()[:ARGS_CHARS] if typed else ""
        return SlashCommand(BASH_MODE, line) if line else None
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


_OUTPUT_TAGS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
)


def command_output(text: str) -> str | None:
    """What a local command or a bash-mode command printed (its stdout, then stderr), or None
    when ``text`` is not that."""
    if not text.lstrip().startswith(_OUTPUT_TAGS):
        return None
    return "\n".join(part.strip() for _, part in _OUTPUT.findall(text) if part.strip())
