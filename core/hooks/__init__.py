"""agentbar's hooks for Claude Code and Codex: the command, per-launch settings layers, and the
installer for the user's own settings files (headless; main thread).

The hook program itself is ``agentbar/assets/hooks/agentbar_hook.py``; the engine reads what it
writes through ``agentbar.core.sources.hook_events``.
"""
