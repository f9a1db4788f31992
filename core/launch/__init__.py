"""Launched agents: tasks that run an agent CLI in a pseudo-terminal agentbar owns, bound to the
session they start, answerable from the tray, the window and the shell (see ``manager.py``)."""
