"""Agents on other machines: a remote is a command that reaches a machine (``ssh HOST``,
``docker exec -i C``, ``wsl.exe -d D``) over which a headless agentbar on the other side is
talked to through the channel's standard input and output."""
